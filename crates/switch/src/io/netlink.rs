//! Link changes as the kernel makes them: an rtnetlink socket
//! (`NETLINK_ROUTE`, `rtnetlink(7)`) subscribed to the `RTMGRP_LINK`
//! group, which the kernel sends an `RTM_NEWLINK` message on whenever an
//! interface's flags or operational state change (and `RTM_DELLINK` when
//! one goes), so [`super::afpacket::AfPacket`] reports a port's link going
//! down or up within the loop pass that reads the message instead of at
//! its next poll.
//!
//! A port's link is up when its interface is `IFF_UP` and `IFF_RUNNING`,
//! the test [`super::afpacket::link_up`] makes with `SIOCGIFFLAGS`: the
//! kernel sets `IFF_RUNNING` in a message's `ifi_flags` exactly when the
//! operational state (RFC 2863, `IFLA_OPERSTATE`) is up or unknown, so the
//! flags alone decide; the state is read for the log.
//!
//! The messages are read with `netlink-packet-core`'s buffers (the
//! `nlmsghdr` and each attribute, lengths checked) and
//! `netlink-packet-route`'s link header and attribute types, but not
//! with its whole-message parser: that decodes every attribute, and one
//! it cannot parse fails the message (its issues #54, a VXLAN link on
//! Linux 6.5; #151; pull request #332, the `IFLA_STATS` of kernels
//! before 6.9 failing every link message). A switch that drops a link
//! message misses a link change, so only the two attributes the switch
//! reads (`IFLA_IFNAME`, `IFLA_OPERSTATE`) are decoded, one at a time,
//! and the rest are skipped by their length. None of this is on the
//! datapath: a message arrives only when a link changes. The socket is
//! three `libc` calls like the AF_PACKET ones beside it, and mio polls it
//! as a [`mio::unix::SourceFd`]; `netlink-sys` would add a socket type
//! and two crates for that.
//!
//! Notifications can be lost: when the socket's buffer overflows the
//! kernel drops messages and the next read fails with `ENOBUFS`. That, a
//! datagram larger than the buffer, and a message that does not parse are
//! reported as [`Notice::Lost`], after which the caller reads every port's
//! state afresh.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use netlink_packet_core::{NetlinkBuffer, NlasIterator, ParseableParametrized};
use netlink_packet_route::link::{LinkAttribute, LinkHeader};

/// `struct ifinfomsg`: family, pad, type, index, flags, change (the
/// attributes follow it).
const LINK_HEADER_LEN: usize = 16;

/// `NLMSG_OVERRUN`: data lost (a message type of `linux/netlink.h`).
const NLMSG_OVERRUN: u16 = libc::NLMSG_OVERRUN as u16;
/// `IFLA_IFNAME` (`linux/if_link.h`): the name, NUL-terminated.
const IFLA_IFNAME: u16 = libc::IFLA_IFNAME;
/// `IFLA_OPERSTATE`: one byte, `IF_OPER_*`.
const IFLA_OPERSTATE: u16 = libc::IFLA_OPERSTATE;
/// `IF_OPER_UP`.
pub const IF_OPER_UP: u8 = 6;
/// How large a datagram the socket reads at once. A link message is 1-2
/// KiB (most of it statistics); the kernel puts one in a datagram.
const RECV_BUF: usize = 64 * 1024;
/// The socket's receive buffer asked for: room for hundreds of messages
/// (a burst of changes, or the loop held up) before the kernel drops any.
const SO_RCVBUF_SIZE: libc::c_int = 1 << 20;

/// What an `RTM_NEWLINK` or `RTM_DELLINK` message says of an interface.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkMsg {
    /// The interface's index.
    pub index: u32,
    /// Its `IFF_*` flags.
    pub flags: u32,
    /// Its name, if the message has one (the kernel's always do).
    pub name: Option<String>,
    /// Its operational state (`IF_OPER_*`), if the message has one.
    pub operstate: Option<u8>,
    /// `RTM_DELLINK`: the interface is gone.
    pub deleted: bool,
}

impl LinkMsg {
    /// Whether the interface can carry frames: not deleted, up and running.
    pub fn is_up(&self) -> bool {
        let want = (libc::IFF_UP | libc::IFF_RUNNING) as u32;
        !self.deleted && self.flags & want == want
    }
}

/// What the socket had to say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// An interface changed (or was announced unchanged).
    Link(LinkMsg),
    /// Messages were lost or could not be read: every link state must be
    /// read afresh.
    Lost,
}

/// A datagram that does not parse as netlink messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Malformed;

/// Calls `f` with every link message in `datagram` (netlink messages
/// back to back, host byte order, `linux/netlink.h`), in order; other
/// message types are skipped. Stops at the first header that does not
/// fit and says so; what came before it has been reported. An
/// `NLMSG_OVERRUN` counts as malformed too: messages were lost.
pub fn parse(datagram: &[u8], mut f: impl FnMut(LinkMsg)) -> Result<(), Malformed> {
    let mut at = 0;
    while at < datagram.len() {
        let message = NetlinkBuffer::new_checked(&datagram[at..]).map_err(|_| Malformed)?;
        let len = message.length() as usize;
        match message.message_type() {
            libc::RTM_NEWLINK | libc::RTM_DELLINK => f(parse_link(
                message.payload(),
                message.message_type() == libc::RTM_DELLINK,
            )?),
            NLMSG_OVERRUN => return Err(Malformed),
            _ => {}
        }
        // NLMSG_ALIGN: messages start on multiples of 4.
        at = at.saturating_add(len.next_multiple_of(4));
    }
    Ok(())
}

/// An `ifinfomsg` and its attributes. Attributes from one whose length
/// does not fit are left out, and a name or state that does not decode
/// is left unsaid: the flags alone decide the link state.
fn parse_link(payload: &[u8], deleted: bool) -> Result<LinkMsg, Malformed> {
    let header = LinkHeader::parse(payload).map_err(|_| Malformed)?;
    let mut msg = LinkMsg {
        index: header.index,
        flags: header.flags.bits(),
        name: None,
        operstate: None,
        deleted,
    };
    let attributes = payload.get(LINK_HEADER_LEN..).unwrap_or_default();
    for nla in NlasIterator::new(attributes).map_while(Result::ok) {
        if !matches!(nla.kind(), IFLA_IFNAME | IFLA_OPERSTATE) {
            continue;
        }
        match LinkAttribute::parse_with_param(&nla, header.interface_family) {
            Ok(LinkAttribute::IfName(name)) => msg.name = Some(name),
            Ok(LinkAttribute::OperState(state)) => msg.operstate = Some(state.into()),
            _ => {}
        }
    }
    Ok(msg)
}

fn check(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// An rtnetlink socket that hears of every interface's link changes in
/// the network namespace it was opened in.
pub struct LinkMonitor {
    fd: OwnedFd,
    buf: Vec<u8>,
}

impl LinkMonitor {
    /// Opens a non-blocking socket subscribed to `RTMGRP_LINK` (no
    /// privilege needed).
    pub fn open() -> io::Result<LinkMonitor> {
        // SAFETY: plain socket(2); the descriptor is owned right away.
        let raw = check(unsafe {
            libc::socket(
                libc::AF_NETLINK,
                libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                libc::NETLINK_ROUTE,
            )
        })?;
        // SAFETY: `raw` is a fresh descriptor nobody else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // Best effort: a smaller buffer only makes a lost message (and a
        // fresh read of every link) likelier.
        // SAFETY: the value is a live c_int of the size passed.
        unsafe {
            libc::setsockopt(
                raw,
                libc::SOL_SOCKET,
                libc::SO_RCVBUF,
                (&SO_RCVBUF_SIZE as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
        // SAFETY: sockaddr_nl is plain old data; all zeros is valid.
        let mut addr: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        addr.nl_family = libc::AF_NETLINK as libc::sa_family_t;
        addr.nl_groups = libc::RTMGRP_LINK as u32;
        // SAFETY: binds to a sockaddr_nl that lives for the call.
        check(unsafe {
            libc::bind(
                raw,
                (&addr as *const libc::sockaddr_nl).cast(),
                std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
            )
        })?;
        Ok(LinkMonitor {
            fd,
            buf: vec![0; RECV_BUF],
        })
    }

    /// Calls `f` with what every pending datagram says, in order, until
    /// none is left (the socket is edge-triggered in mio). Datagrams from
    /// anyone but the kernel are ignored.
    pub fn read(&mut self, mut f: impl FnMut(Notice)) {
        loop {
            // SAFETY: sockaddr_nl is plain old data; all zeros is valid.
            let mut from: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
            let mut from_len = std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t;
            // SAFETY: the kernel writes at most `buf.len()` bytes into
            // `buf` and at most `from_len` into `from`, both live for the
            // call. MSG_TRUNC makes it return a datagram's whole length
            // even when the buffer was shorter.
            let n = unsafe {
                libc::recvfrom(
                    self.fd.as_raw_fd(),
                    self.buf.as_mut_ptr().cast(),
                    self.buf.len(),
                    libc::MSG_TRUNC,
                    (&mut from as *mut libc::sockaddr_nl).cast(),
                    &mut from_len,
                )
            };
            if n < 0 {
                let e = io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::EAGAIN) => return,
                    Some(libc::EINTR) => continue,
                    Some(libc::ENOBUFS) => {
                        tracing::debug!("link notifications lost (socket buffer full)");
                        f(Notice::Lost);
                        continue;
                    }
                    _ => {
                        tracing::warn!(error = %e, "reading link notifications failed");
                        f(Notice::Lost);
                        return;
                    }
                }
            }
            let n = n as usize;
            if from.nl_pid != 0 {
                continue;
            }
            if n > self.buf.len() {
                f(Notice::Lost);
                continue;
            }
            if parse(&self.buf[..n], |m| f(Notice::Link(m))).is_err() {
                f(Notice::Lost);
            }
        }
    }
}

impl AsRawFd for LinkMonitor {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

#[cfg(test)]
mod tests;
