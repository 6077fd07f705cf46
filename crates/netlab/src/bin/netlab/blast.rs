//! `netlab blast IFACE SIZE SECONDS`: the traffic generator of `netlab
//! measure forwarding`. Sends SIZE-byte Ethernet frames (IPv4/UDP,
//! 10.0.0.1 -> 10.0.0.2, destination port 9, 1,024 source ports in turn)
//! out of IFACE as fast as one core can for SECONDS, and prints
//! `sent N frames in T s`.
//!
//! Why its own: it must drive both switches in the same way, from inside
//! a host's namespace, at the highest rate a core gives, with 64-byte
//! frames (a UDP socket's generator, `iperf3`, spends most of a core in
//! the host's IP stack per datagram, and is not installed here). A raw
//! AF_PACKET socket with `PACKET_QDISC_BYPASS` and `sendmmsg` batches of
//! 64 costs one syscall per 64 frames and no IP stack; the frames are
//! built once. The destination MAC is nobody's (02:00:00:00:00:ff), so
//! the receiving host drops them at once as not for it: the receiver's
//! cost is the veth's, and its interface counters count what arrived.

use std::time::{Duration, Instant};

/// Frames per `sendmmsg`.
const BATCH: usize = 64;
/// Distinct frames (UDP source ports) sent in turn: enough that neither
/// switch serves the traffic from a single cached flow, few enough to
/// stay in both switches' exact-match caches.
const FLOWS: usize = 1024;
/// `PACKET_QDISC_BYPASS` (linux/if_packet.h).
const PACKET_QDISC_BYPASS: libc::c_int = 20;
const SOL_PACKET: libc::c_int = 263;

/// The destination MAC: locally administered, nobody's.
pub const DST_MAC: [u8; 6] = [2, 0, 0, 0, 0, 0xff];

/// Frame `i` of `size` bytes (at least 60): Ethernet, IPv4 with its
/// checksum, UDP without one, zero payload.
pub fn frame(size: usize, src_mac: [u8; 6], i: usize) -> Vec<u8> {
    let size = size.max(60);
    let mut f = vec![0u8; size];
    f[0..6].copy_from_slice(&DST_MAC);
    f[6..12].copy_from_slice(&src_mac);
    f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    let ip_len = (size - 14) as u16;
    let ip = &mut f[14..34];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&ip_len.to_be_bytes());
    ip[8] = 64;
    ip[9] = 17;
    ip[12..16].copy_from_slice(&[10, 0, 0, 1]);
    ip[16..20].copy_from_slice(&[10, 0, 0, 2]);
    let sum = ip
        .chunks(2)
        .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
        .sum::<u32>();
    let sum = (sum & 0xffff) + (sum >> 16);
    let sum = !((sum & 0xffff) + (sum >> 16)) as u16;
    ip[10..12].copy_from_slice(&sum.to_be_bytes());
    let udp = &mut f[34..42];
    udp[0..2].copy_from_slice(&(10_000 + i as u16).to_be_bytes());
    udp[2..4].copy_from_slice(&9u16.to_be_bytes());
    udp[4..6].copy_from_slice(&(ip_len - 20).to_be_bytes());
    f
}

fn os_err(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

/// `netlab blast IFACE SIZE SECONDS`.
pub fn main(args: &[String]) -> Result<(), String> {
    let [iface, size, secs] = args else {
        return Err("usage: netlab blast IFACE SIZE SECONDS".into());
    };
    let size: usize = size.parse().map_err(|_| "SIZE: bytes per frame")?;
    let secs: f64 = secs.parse().map_err(|_| "SECONDS: a number")?;
    if !(60..=1514).contains(&size) {
        return Err("SIZE must be 60 to 1514 bytes".into());
    }
    let name = std::ffi::CString::new(iface.as_str()).map_err(|_| "bad interface name")?;
    // SAFETY: a valid NUL-terminated string for the call.
    let ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) };
    if ifindex == 0 {
        return Err(os_err(iface));
    }
    let mac = std::fs::read_to_string(format!("/sys/class/net/{iface}/address"))
        .ok()
        .and_then(|s| {
            let b: Vec<u8> = s
                .trim()
                .split(':')
                .filter_map(|h| u8::from_str_radix(h, 16).ok())
                .collect();
            b.try_into().ok()
        })
        .unwrap_or([2, 0, 0, 0, 0, 1]);
    // Protocol 0: this socket receives nothing.
    // SAFETY: plain socket(2); the descriptor is closed at the end.
    let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(os_err("socket"));
    }
    let one: libc::c_int = 1;
    // SAFETY: passes a live c_int of the size given. Best effort: without
    // it frames go through the queueing discipline, slower but the same
    // for both switches.
    unsafe {
        libc::setsockopt(
            fd,
            SOL_PACKET,
            PACKET_QDISC_BYPASS,
            (&one as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
    // SAFETY: sockaddr_ll is plain old data; all zeros is valid.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_ifindex = ifindex as libc::c_int;
    sll.sll_halen = 6;
    sll.sll_addr[..6].copy_from_slice(&DST_MAC);
    let frames: Vec<Vec<u8>> = (0..FLOWS).map(|i| frame(size, mac, i)).collect();
    let mut iovs: Vec<libc::iovec> = frames
        .iter()
        .map(|f| libc::iovec {
            iov_base: f.as_ptr() as *mut libc::c_void,
            iov_len: f.len(),
        })
        .collect();
    let mut msgs: Vec<libc::mmsghdr> = iovs
        .iter_mut()
        .map(|iov| {
            // SAFETY: mmsghdr is plain old data; all zeros is valid.
            let mut m: libc::mmsghdr = unsafe { std::mem::zeroed() };
            m.msg_hdr.msg_name = (&mut sll as *mut libc::sockaddr_ll).cast();
            m.msg_hdr.msg_namelen = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
            m.msg_hdr.msg_iov = iov;
            m.msg_hdr.msg_iovlen = 1;
            m
        })
        .collect();
    let limit = Duration::from_secs_f64(secs);
    let start = Instant::now();
    let mut sent: u64 = 0;
    let mut errors: u64 = 0;
    let mut next = 0;
    while start.elapsed() < limit {
        // SAFETY: `msgs[next..next + BATCH]` lies inside `msgs` (FLOWS is
        // a multiple of BATCH); every header points at `sll` and an iovec
        // over a frame, all alive until the end of the function.
        let n =
            unsafe { libc::sendmmsg(fd, msgs.as_mut_ptr().add(next), BATCH as libc::c_uint, 0) };
        if n > 0 {
            sent += n as u64;
        } else {
            errors += 1;
        }
        next = (next + BATCH) % FLOWS;
    }
    let elapsed = start.elapsed().as_secs_f64();
    // SAFETY: our descriptor, closed once.
    unsafe { libc::close(fd) };
    println!("sent {sent} frames in {elapsed:.3} s ({errors} failed batches)");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_well_formed_ipv4_udp() {
        let f = frame(64, [2, 0, 0, 0, 0, 1], 3);
        assert_eq!(f.len(), 64);
        let ip = &f[14..34];
        // A correct IPv4 header sums to 0xffff with its checksum.
        let sum: u32 = ip
            .chunks(2)
            .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
            .sum();
        assert_eq!((sum & 0xffff) + (sum >> 16), 0xffff);
        assert_eq!(u16::from_be_bytes([f[16], f[17]]), 50);
        assert_eq!(u16::from_be_bytes([f[34], f[35]]), 10_003);
        assert_eq!(u16::from_be_bytes([f[38], f[39]]), 30);
        assert_eq!(frame(1500, [0; 6], 0).len(), 1500);
    }
}
