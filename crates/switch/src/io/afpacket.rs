//! Real interfaces through AF_PACKET with memory-mapped rings
//! (`PACKET_MMAP`, TPACKET_V2; Linux `Documentation/networking/packet_mmap.rst`),
//! so the switch can take Open vSwitch's place on veth pairs.
//!
//! Each port is a raw packet socket bound to one interface, in
//! promiscuous mode, with an RX ring and a TX ring in one shared mapping:
//! receiving reads frames in place from the RX ring (no copy, no
//! syscall per frame), sending copies the frame into a TX ring slot and
//! one `send` per batch hands the slots to the kernel. Frames the kernel
//! hands back as our own (`PACKET_OUTGOING`) are skipped; VLAN tags the
//! kernel stripped into the ring header are put back.
//!
//! A port's link state is the interface's `IFF_UP` and `IFF_RUNNING`,
//! read when the port opens and then as the kernel announces changes
//! ([`super::netlink`]).
//!
//! The syscalls go through `libc`; every `unsafe` block says why it is
//! sound. Like Open vSwitch's userspace datapath on veth, large GSO
//! frames are not supported: turn offloads off (`ethtool -K IF tx off gso
//! off tso off`) on the interfaces; a frame larger than a ring slot is
//! counted as a receive error and dropped.
//!
//! Why one file of about 700 lines: the RX and TX rings, their memory
//! maps and the port set around them share one `unsafe` boundary (the
//! ring frames' headers), which is easier to audit in one place.

use super::netlink::{LinkMonitor, Notice};
use super::{Backend, update_link};
use crate::datapath::Transmit;
use crate::port::PortSpec;
use crate::switch::Switch;
use baton_openflow::types::{MacAddr, PortNo};
use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{Ordering, fence};
use std::time::Instant;

/// Bytes per ring slot: the TPACKET_V2 header and address (the frame
/// starts at offset 66 in an RX slot, 32 in a TX slot) and a 1518-byte
/// frame with a VLAN tag fit; slots stay 16-byte aligned, and two fill a
/// page, so a ring of many slots costs half of what page-sized slots did.
const FRAME_SIZE: usize = 2048;
/// Slots per ring block (one 64 KiB block holds 32 slots).
const FRAMES_PER_BLOCK: usize = 32;
/// RX blocks per port: 4,096 slots (8 MiB). What the ring holds is what
/// the switch may fall behind by before the kernel drops: at 250,000
/// 64-byte frames/s on one veth (what one core of a 2-vCPU VM sends),
/// 16 ms, longer than a scheduler time slice, so a switch that shares
/// its core with another busy process (a compiler, on a shared machine)
/// loses nothing when it is preempted once. With 256 slots (1 ms) the
/// kernel dropped about three quarters of such a stream at the ring on a
/// loaded 2-vCPU VM, and forwarding fell below Open vSwitch's; with 4,096,
/// 3 to 12 % (BENCHMARKS.md, "The software switch").
const RX_BLOCKS: usize = 128;
const RX_FRAMES: usize = FRAMES_PER_BLOCK * RX_BLOCKS;
/// TX blocks per port: 1,024 slots (2 MiB). The loop hands queued slots
/// to the kernel every [`TX_KICK`] frames and at the end of each batch,
/// and a veth sends them within that call, so only the frames between
/// two kicks need room.
const TX_BLOCKS: usize = 32;
const TX_FRAMES: usize = FRAMES_PER_BLOCK * TX_BLOCKS;
/// Where frame data starts in a TX slot: `TPACKET2_HDRLEN - sizeof(struct
/// sockaddr_ll)` (packet_mmap.rst, "TX ring").
const TX_DATA: usize = 32;
/// The shortest frame a TX slot may hold: an Ethernet header. The kernel
/// refuses a shorter one (`dev_validate_header`).
const MIN_FRAME: usize = 14;
/// `PACKET_OUTGOING`: a frame this host sent.
const PACKET_OUTGOING: u8 = 4;
/// Kick the kernel after this many queued TX slots even mid-batch.
const TX_KICK: usize = 64;

/// TPACKET_V2 per-slot header (`struct tpacket2_hdr`).
#[repr(C)]
struct Tpacket2Hdr {
    tp_status: u32,
    tp_len: u32,
    tp_snaplen: u32,
    tp_mac: u16,
    tp_net: u16,
    tp_sec: u32,
    tp_nsec: u32,
    tp_vlan_tci: u16,
    tp_vlan_tpid: u16,
    tp_padding: [u8; 4],
}

const TP_STATUS_USER: u32 = 1;
const TP_STATUS_VLAN_VALID: u32 = 1 << 4;
const TP_STATUS_VLAN_TPID_VALID: u32 = 1 << 6;
const TP_STATUS_AVAILABLE: u32 = 0;
const TP_STATUS_SEND_REQUEST: u32 = 1;
const TPACKET_V2: libc::c_int = 1;
const SOL_PACKET: libc::c_int = 263;
const PACKET_ADD_MEMBERSHIP: libc::c_int = 1;
const PACKET_RX_RING: libc::c_int = 5;
const PACKET_VERSION: libc::c_int = 10;
const PACKET_TX_RING: libc::c_int = 13;
const PACKET_STATISTICS: libc::c_int = 6;
const PACKET_LOSS: libc::c_int = 14;
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
const PACKET_MR_PROMISC: libc::c_ushort = 1;

#[repr(C)]
struct TpacketReq {
    tp_block_size: libc::c_uint,
    tp_block_nr: libc::c_uint,
    tp_frame_size: libc::c_uint,
    tp_frame_nr: libc::c_uint,
}

/// `struct tpacket_stats` (TPACKET_V2): frames seen and frames dropped
/// because the RX ring was full, since the last read (reading resets).
#[repr(C)]
#[derive(Default)]
struct TpacketStats {
    tp_packets: libc::c_uint,
    tp_drops: libc::c_uint,
}

/// Frames the kernel dropped on `fd` because its RX ring was full, since
/// the last call.
fn ring_drops(fd: RawFd) -> u64 {
    let mut st = TpacketStats::default();
    let mut len = std::mem::size_of::<TpacketStats>() as libc::socklen_t;
    // SAFETY: the kernel writes at most `len` bytes into `st`, which
    // lives for the call, and updates `len`.
    let r = unsafe {
        libc::getsockopt(
            fd,
            SOL_PACKET,
            PACKET_STATISTICS,
            (&mut st as *mut TpacketStats).cast(),
            &mut len,
        )
    };
    if r == 0 { u64::from(st.tp_drops) } else { 0 }
}

#[repr(C)]
struct PacketMreq {
    mr_ifindex: libc::c_int,
    mr_type: libc::c_ushort,
    mr_alen: libc::c_ushort,
    mr_address: [u8; 8],
}

fn check(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn setsockopt<T>(fd: RawFd, level: libc::c_int, name: libc::c_int, v: &T) -> io::Result<()> {
    // SAFETY: `v` points to a live `T` of the size passed, which the
    // kernel only reads.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (v as *const T).cast(),
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
    check(r).map(|_| ())
}

/// An `ifreq` naming `name`.
fn ifreq(name: &str) -> io::Result<libc::ifreq> {
    let bytes = name.as_bytes();
    if bytes.is_empty() || bytes.len() >= libc::IFNAMSIZ {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "bad interface name",
        ));
    }
    // SAFETY: ifreq is plain old data; all zeros is a valid value.
    let mut r: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in r.ifr_name.iter_mut().zip(bytes) {
        *d = *s as libc::c_char;
    }
    Ok(r)
}

/// The interface's flags.
fn if_flags(fd: RawFd, name: &str) -> io::Result<libc::c_short> {
    let mut r = ifreq(name)?;
    // SAFETY: SIOCGIFFLAGS reads the name and writes the flags of the
    // ifreq we pass, which lives for the call.
    check(unsafe { libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut r) })?;
    // SAFETY: the kernel filled the flags member of the union.
    Ok(unsafe { r.ifr_ifru.ifru_flags })
}

/// The link state of interface `name`: administratively up and running.
pub fn link_up(fd: RawFd, name: &str) -> bool {
    let want = (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
    if_flags(fd, name).is_ok_and(|f| f & want == want)
}

/// The interface's hardware address.
fn hw_addr(fd: RawFd, name: &str) -> io::Result<MacAddr> {
    let mut r = ifreq(name)?;
    // SAFETY: SIOCGIFHWADDR writes a sockaddr into the ifreq we pass.
    check(unsafe { libc::ioctl(fd, libc::SIOCGIFHWADDR, &mut r) })?;
    // SAFETY: the kernel filled the hwaddr member of the union.
    let sa = unsafe { r.ifr_ifru.ifru_hwaddr };
    let mut m = [0u8; 6];
    for (d, s) in m.iter_mut().zip(sa.sa_data.iter()) {
        *d = *s as u8;
    }
    Ok(MacAddr(m))
}

/// Brings interface `name` up if it is down (as Open vSwitch does for
/// its ports).
fn set_up(fd: RawFd, name: &str) -> io::Result<()> {
    let flags = if_flags(fd, name)?;
    if flags & libc::IFF_UP as libc::c_short != 0 {
        return Ok(());
    }
    let mut r = ifreq(name)?;
    r.ifr_ifru.ifru_flags = flags | libc::IFF_UP as libc::c_short;
    // SAFETY: SIOCSIFFLAGS reads the ifreq we pass.
    check(unsafe { libc::ioctl(fd, libc::SIOCSIFFLAGS, &r) }).map(|_| ())
}

/// One packet socket and its ring mapping.
struct Sock {
    fd: OwnedFd,
    map: *mut u8,
    map_len: usize,
    name: String,
    ifindex: u32,
}

impl Drop for Sock {
    fn drop(&mut self) {
        // SAFETY: `map` is the mapping of `map_len` bytes made in
        // `open_sock`, owned by this Sock; the rings that point into it
        // are declared before `socks` in `AfPacket` and so dropped first.
        unsafe {
            libc::munmap(self.map.cast(), self.map_len);
        }
    }
}

struct RxRing {
    base: *mut u8,
    next: usize,
    port: PortNo,
}

struct TxRing {
    fd: RawFd,
    base: *mut u8,
    next: usize,
    queued: usize,
    /// The kernel left frames in the ring at the last kick.
    pending: bool,
}

/// The TX rings of every port, as the switch's [`Transmit`].
struct TxRings {
    rings: Vec<TxRing>,
    dropped: u64,
}

fn open_sock(name: &str) -> io::Result<Sock> {
    let proto = (libc::ETH_P_ALL as u16).to_be();
    // SAFETY: plain socket(2); the descriptor is owned right away.
    let raw = check(unsafe {
        libc::socket(
            libc::AF_PACKET,
            libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            libc::c_int::from(proto),
        )
    })?;
    // SAFETY: `raw` is a fresh descriptor nobody else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let cname = CString::new(name)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "bad interface name"))?;
    // SAFETY: `cname` is a valid NUL-terminated string for the call.
    let ifindex = unsafe { libc::if_nametoindex(cname.as_ptr()) };
    if ifindex == 0 {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("no interface {name}"),
        ));
    }
    setsockopt(raw, SOL_PACKET, PACKET_VERSION, &TPACKET_V2)?;
    // Not seeing our own transmissions saves work; older kernels lack the
    // option, and the RX loop skips PACKET_OUTGOING frames anyway.
    let _ = setsockopt(raw, SOL_PACKET, PACKET_IGNORE_OUTGOING, &1 as &libc::c_int);
    let req = |blocks: usize| TpacketReq {
        tp_block_size: (FRAME_SIZE * FRAMES_PER_BLOCK) as libc::c_uint,
        tp_block_nr: blocks as libc::c_uint,
        tp_frame_size: FRAME_SIZE as libc::c_uint,
        tp_frame_nr: (blocks * FRAMES_PER_BLOCK) as libc::c_uint,
    };
    // A TX slot the kernel finds malformed (a frame longer than the
    // interface's MTU allows, say) is skipped rather than left marked
    // TP_STATUS_WRONG_FORMAT, where it would stop every later frame
    // (packet_mmap.rst, PACKET_LOSS).
    setsockopt(raw, SOL_PACKET, PACKET_LOSS, &1 as &libc::c_int)?;
    setsockopt(raw, SOL_PACKET, PACKET_RX_RING, &req(RX_BLOCKS))?;
    setsockopt(raw, SOL_PACKET, PACKET_TX_RING, &req(TX_BLOCKS))?;
    let map_len = FRAME_SIZE * (RX_FRAMES + TX_FRAMES);
    // SAFETY: maps the two rings the kernel just set up for this socket
    // (RX first, then TX, packet_mmap.rst); the result is checked.
    let map = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            map_len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            raw,
            0,
        )
    };
    if map == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    let sock = Sock {
        fd,
        map: map.cast(),
        map_len,
        name: name.to_string(),
        ifindex,
    };
    // SAFETY: sockaddr_ll is plain old data; all zeros is valid.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_protocol = proto;
    sll.sll_ifindex = ifindex as libc::c_int;
    // SAFETY: binds to a sockaddr_ll that lives for the call.
    check(unsafe {
        libc::bind(
            raw,
            (&sll as *const libc::sockaddr_ll).cast(),
            std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    })?;
    let mreq = PacketMreq {
        mr_ifindex: ifindex as libc::c_int,
        mr_type: PACKET_MR_PROMISC,
        mr_alen: 0,
        mr_address: [0; 8],
    };
    setsockopt(raw, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mreq)?;
    set_up(raw, name)?;
    Ok(sock)
}

/// Switch ports on real interfaces.
///
/// Link changes come from the kernel as they happen ([`LinkMonitor`]):
/// the backend's event sources are its ports' sockets, then the link
/// monitor's, and [`Backend::reports_links`] tells the runner it need not
/// poll. Where the monitor cannot be opened the runner polls
/// [`Backend::links`] once a second, as it did before there was one.
pub struct AfPacket {
    rx: Vec<RxRing>,
    tx: TxRings,
    scratch: Vec<u8>,
    monitor: Option<LinkMonitor>,
    // Last: dropped after the rings that point into its mappings.
    socks: Vec<Sock>,
}

// SAFETY: the raw pointers point into mappings owned by `socks` in the
// same value; nothing else refers to them, so moving the whole value to
// another thread is sound.
unsafe impl Send for AfPacket {}

impl AfPacket {
    /// Opens one port per interface, numbered from 1 in order, and the
    /// link monitor, first, so no change made after [`AfPacket::port_specs`]
    /// reads the links goes unheard.
    pub fn open(names: &[String]) -> io::Result<AfPacket> {
        let monitor = LinkMonitor::open()
            .inspect_err(|e| {
                tracing::warn!(error = %e, "no link notifications: link states are polled once a second");
            })
            .ok();
        let mut socks = Vec::new();
        let mut rx = Vec::new();
        let mut rings = Vec::new();
        for (i, name) in names.iter().enumerate() {
            let s =
                open_sock(name).map_err(|e| io::Error::new(e.kind(), format!("{name}: {e}")))?;
            rx.push(RxRing {
                base: s.map,
                next: 0,
                port: PortNo(i as u32 + 1),
            });
            rings.push(TxRing {
                fd: s.fd.as_raw_fd(),
                // SAFETY: the TX ring follows the RX ring inside the
                // mapping of FRAME_SIZE * (RX_FRAMES + TX_FRAMES) bytes.
                base: unsafe { s.map.add(FRAME_SIZE * RX_FRAMES) },
                next: 0,
                queued: 0,
                pending: false,
            });
            socks.push(s);
        }
        Ok(AfPacket {
            rx,
            tx: TxRings { rings, dropped: 0 },
            scratch: Vec::with_capacity(FRAME_SIZE),
            monitor,
            socks,
        })
    }

    /// Applies to `sw` the link changes the kernel has reported since the
    /// last call (what the runner does when the monitor's socket is
    /// readable); where notifications were lost, reads every port's link
    /// afresh.
    pub fn read_link_changes(&mut self, sw: &mut Switch) {
        let Some(monitor) = self.monitor.as_mut() else {
            return;
        };
        let socks = &self.socks;
        let mut lost = false;
        monitor.read(|n| match n {
            Notice::Link(m) => {
                let Some(i) = socks.iter().position(|s| s.ifindex == m.index) else {
                    return;
                };
                tracing::debug!(
                    interface = m.name.as_deref().unwrap_or_default(),
                    flags = m.flags,
                    operstate = m.operstate,
                    deleted = m.deleted,
                    "link message"
                );
                update_link(sw, PortNo(i as u32 + 1), m.is_up());
            }
            Notice::Lost => lost = true,
        });
        if lost {
            tracing::info!("link notifications lost: reading every port's link");
            for (port, up) in self.links() {
                update_link(sw, port, up);
            }
        }
    }

    /// What the switch should know of each port: the interface's name,
    /// address and link state.
    pub fn port_specs(&self) -> io::Result<Vec<PortSpec>> {
        self.socks
            .iter()
            .map(|s| {
                let fd = s.fd.as_raw_fd();
                Ok(PortSpec {
                    name: s.name.clone(),
                    hw_addr: hw_addr(fd, &s.name)?,
                    link_up: link_up(fd, &s.name),
                    speed_kbps: 10_000_000,
                })
            })
            .collect()
    }

    /// Sends a frame out of `port` (for tests that play hosts).
    pub fn send_frame(&mut self, port: PortNo, frame: &[u8]) {
        self.tx.transmit(port, frame);
        self.flush();
    }

    /// Calls `f` with every frame waiting on `port` (for tests that play
    /// hosts).
    pub fn recv_frames(&mut self, port: PortNo, mut f: impl FnMut(&[u8])) {
        if let Some(r) = self.rx.get_mut((port.0 as usize).wrapping_sub(1)) {
            r.drain(&mut self.scratch, |_, frame, _| f(frame));
        }
    }

    /// Frames dropped because a TX ring was full or a frame too long.
    pub fn tx_dropped(&self) -> u64 {
        self.tx.dropped
    }
}

impl RxRing {
    /// Hands every frame waiting in the ring to `f` (port, frame,
    /// truncated) and gives its slot back.
    fn drain(&mut self, scratch: &mut Vec<u8>, mut f: impl FnMut(PortNo, &[u8], bool)) {
        loop {
            // SAFETY: `next < RX_FRAMES`, so the slot lies inside the RX ring
            // of the mapping; slots are FRAME_SIZE-aligned, which aligns
            // the header.
            let slot = unsafe { self.base.add(self.next * FRAME_SIZE) };
            let hdr = slot.cast::<Tpacket2Hdr>();
            // SAFETY: the kernel writes tp_status concurrently, so it is
            // read volatile; the pointer is valid as above.
            let status = unsafe { std::ptr::addr_of!((*hdr).tp_status).read_volatile() };
            if status & TP_STATUS_USER == 0 {
                return;
            }
            // Order the reads of the slot after seeing its status.
            fence(Ordering::Acquire);
            // SAFETY: the slot belongs to us until we hand it back; its
            // header is initialised by the kernel.
            let h = unsafe { &*hdr };
            // The sockaddr_ll follows the aligned header; sll_pkttype is
            // its 11th byte.
            // SAFETY: inside the slot (32 + 10 < FRAME_SIZE).
            let pkttype = unsafe { slot.add(32 + 10).read() };
            let mac = usize::from(h.tp_mac);
            let snap = h.tp_snaplen as usize;
            if pkttype != PACKET_OUTGOING && mac + snap <= FRAME_SIZE {
                // SAFETY: tp_mac..tp_mac+tp_snaplen lies inside the slot
                // (checked just above) and was written by the kernel.
                let data = unsafe { std::slice::from_raw_parts(slot.add(mac), snap) };
                let truncated = snap < h.tp_len as usize;
                if status & TP_STATUS_VLAN_VALID != 0 && data.len() >= 12 {
                    // The kernel took the tag out of the frame: put it back.
                    let tpid = if status & TP_STATUS_VLAN_TPID_VALID != 0 {
                        h.tp_vlan_tpid
                    } else {
                        0x8100
                    };
                    scratch.clear();
                    scratch.extend_from_slice(&data[..12]);
                    scratch.extend_from_slice(&tpid.to_be_bytes());
                    scratch.extend_from_slice(&h.tp_vlan_tci.to_be_bytes());
                    scratch.extend_from_slice(&data[12..]);
                    f(self.port, scratch, truncated);
                } else {
                    f(self.port, data, truncated);
                }
            }
            fence(Ordering::Release);
            // SAFETY: hands the slot back to the kernel; volatile since
            // the kernel reads it concurrently.
            unsafe { std::ptr::addr_of_mut!((*hdr).tp_status).write_volatile(0) };
            self.next = (self.next + 1) % RX_FRAMES;
        }
    }
}

impl TxRing {
    /// The status of slot `i`.
    fn status(&self, i: usize) -> u32 {
        // SAFETY: `i < TX_FRAMES`, so the slot lies inside the TX ring;
        // the status is read volatile as the kernel writes it.
        unsafe {
            let hdr = self.base.add(i * FRAME_SIZE).cast::<Tpacket2Hdr>();
            std::ptr::addr_of!((*hdr).tp_status).read_volatile()
        }
    }

    /// Hands the queued slots to the kernel.
    ///
    /// The kernel sends them in ring order and stops at the first it
    /// cannot send (the interface not up yet, a full socket buffer, a
    /// veth whose peer is down), leaving that slot and the ones after it
    /// marked SEND_REQUEST; it tries them again only at the next send(2)
    /// on this socket. So the ring stays pending, and is kicked again at
    /// every flush, until the slot queued last has left: otherwise a frame
    /// refused once would wait for the next frame out of the same port,
    /// which may be seconds later (a topology probe sent 3.6 s late, and
    /// dropped as stale by the controller, after a link came back).
    fn kick(&mut self) {
        if self.queued == 0 && !self.pending {
            return;
        }
        // SAFETY: send(2) with no buffer asks the kernel to transmit
        // the slots marked SEND_REQUEST (packet_mmap.rst).
        unsafe {
            libc::send(self.fd, std::ptr::null(), 0, libc::MSG_DONTWAIT);
        }
        self.queued = 0;
        let last = (self.next + TX_FRAMES - 1) % TX_FRAMES;
        self.pending = self.status(last) == TP_STATUS_SEND_REQUEST;
    }
}

impl Transmit for TxRings {
    fn transmit(&mut self, port: PortNo, frame: &[u8]) {
        let Some(r) = self.rings.get_mut((port.0 as usize).wrapping_sub(1)) else {
            return;
        };
        if frame.len() > FRAME_SIZE - TX_DATA || frame.len() < MIN_FRAME {
            self.dropped += 1;
            return;
        }
        // SAFETY: `next < TX_FRAMES`: the slot lies inside the TX ring.
        let slot = unsafe { r.base.add(r.next * FRAME_SIZE) };
        let hdr = slot.cast::<Tpacket2Hdr>();
        // SAFETY: valid slot header, read volatile as the kernel updates it.
        let mut status = unsafe { std::ptr::addr_of!((*hdr).tp_status).read_volatile() };
        if status != TP_STATUS_AVAILABLE {
            r.kick();
            // SAFETY: as above.
            status = unsafe { std::ptr::addr_of!((*hdr).tp_status).read_volatile() };
            if status != TP_STATUS_AVAILABLE {
                self.dropped += 1;
                return;
            }
        }
        fence(Ordering::Acquire);
        // SAFETY: the slot is ours (status AVAILABLE); the frame fits
        // after TX_DATA (checked above).
        unsafe {
            std::ptr::copy_nonoverlapping(frame.as_ptr(), slot.add(TX_DATA), frame.len());
            std::ptr::addr_of_mut!((*hdr).tp_len).write(frame.len() as u32);
        }
        fence(Ordering::Release);
        // SAFETY: hands the slot to the kernel.
        unsafe { std::ptr::addr_of_mut!((*hdr).tp_status).write_volatile(TP_STATUS_SEND_REQUEST) };
        r.next = (r.next + 1) % TX_FRAMES;
        r.queued += 1;
        if r.queued >= TX_KICK {
            r.kick();
        }
    }
}

impl Backend for AfPacket {
    fn register(
        &mut self,
        registry: &Registry,
        first: usize,
        _waker: &std::sync::Arc<mio::Waker>,
    ) -> io::Result<usize> {
        for (i, s) in self.socks.iter().enumerate() {
            let fd = s.fd.as_raw_fd();
            registry.register(&mut SourceFd(&fd), Token(first + i), Interest::READABLE)?;
        }
        let mut n = self.socks.len();
        if let Some(m) = &self.monitor {
            let fd = m.as_raw_fd();
            registry.register(&mut SourceFd(&fd), Token(first + n), Interest::READABLE)?;
            n += 1;
        }
        Ok(n)
    }

    fn on_readable(&mut self, index: usize, now: Instant, sw: &mut Switch) {
        if index == self.socks.len() {
            self.read_link_changes(sw);
            return;
        }
        let Some(r) = self.rx.get_mut(index) else {
            return;
        };
        let tx = &mut self.tx;
        r.drain(&mut self.scratch, |port, frame, truncated| {
            if truncated {
                if let Some(p) = sw.dp.ports.get_mut(port) {
                    p.counters.rx_errors += 1;
                }
                return;
            }
            sw.receive(now, port, frame, tx);
        });
    }

    fn transmit(&mut self) -> &mut dyn Transmit {
        &mut self.tx
    }

    fn flush(&mut self) {
        for r in &mut self.tx.rings {
            r.kick();
        }
    }

    fn reports_links(&self) -> bool {
        self.monitor.is_some()
    }

    fn links(&mut self) -> Vec<(PortNo, bool)> {
        self.socks
            .iter()
            .enumerate()
            .map(|(i, s)| (PortNo(i as u32 + 1), link_up(s.fd.as_raw_fd(), &s.name)))
            .collect()
    }

    /// Frames the kernel dropped because a port's RX ring was full count
    /// as that port's `rx_dropped` (OpenFlow 1.0.0 §5.3.5, 1.3.5
    /// §7.3.5.6: "packets dropped by RX"), so `ovs-ofctl dump-ports`
    /// shows when the switch falls behind.
    fn update_counters(&mut self, sw: &mut Switch) {
        for (i, s) in self.socks.iter().enumerate() {
            let drops = ring_drops(s.fd.as_raw_fd());
            if drops > 0 {
                if let Some(p) = sw.dp.ports.get_mut(PortNo(i as u32 + 1)) {
                    p.counters.rx_dropped += drops;
                }
            }
        }
    }
}
