//! OpenFlow 1.0 actions (1.0.0 §5.2.4): the [`Action`] enum, its encoder,
//! and [`ActionIter`], which walks an actions region without allocating.
//!
//! Every action is a TLV whose length is a multiple of 8 and fixed per type
//! (only `OFPAT_VENDOR` is variable). A wrong length is
//! [`ErrorKind::BadActionLength`], an unknown type
//! [`ErrorKind::BadActionType`], the codes a switch itself would send back
//! (`OFPBAC_BAD_LEN`, `OFPBAC_BAD_TYPE`).

use crate::error::{DecodeError, ErrorKind};
use crate::types::{MacAddr, PortNo};
use crate::v10::ofmatch::port_to_wire;
use crate::wire::{Put, Reader, pad8};
use std::net::Ipv4Addr;

/// `OFPAT_OUTPUT`.
pub const OFPAT_OUTPUT: u16 = 0;
/// `OFPAT_SET_VLAN_VID`.
pub const OFPAT_SET_VLAN_VID: u16 = 1;
/// `OFPAT_SET_VLAN_PCP`.
pub const OFPAT_SET_VLAN_PCP: u16 = 2;
/// `OFPAT_STRIP_VLAN`.
pub const OFPAT_STRIP_VLAN: u16 = 3;
/// `OFPAT_SET_DL_SRC`.
pub const OFPAT_SET_DL_SRC: u16 = 4;
/// `OFPAT_SET_DL_DST`.
pub const OFPAT_SET_DL_DST: u16 = 5;
/// `OFPAT_SET_NW_SRC`.
pub const OFPAT_SET_NW_SRC: u16 = 6;
/// `OFPAT_SET_NW_DST`.
pub const OFPAT_SET_NW_DST: u16 = 7;
/// `OFPAT_SET_NW_TOS`.
pub const OFPAT_SET_NW_TOS: u16 = 8;
/// `OFPAT_SET_TP_SRC`.
pub const OFPAT_SET_TP_SRC: u16 = 9;
/// `OFPAT_SET_TP_DST`.
pub const OFPAT_SET_TP_DST: u16 = 10;
/// `OFPAT_ENQUEUE`.
pub const OFPAT_ENQUEUE: u16 = 11;
/// `OFPAT_VENDOR`.
pub const OFPAT_VENDOR: u16 = 0xffff;

/// Size of `ofp_action_header` and of most actions.
const ACTION_HEADER_LEN: usize = 8;
/// Bytes of an `ofp_action_output`.
pub const ACTION_OUTPUT_LEN: usize = 8;

/// One OpenFlow 1.0 action (1.0.0 §5.2.4).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Action {
    /// `ofp_action_output`: send out of `port`; `max_len` bytes to the
    /// controller when `port` is `OFPP_CONTROLLER`.
    Output {
        /// Output port.
        port: PortNo,
        /// Bytes of the packet sent to the controller.
        max_len: u16,
    },
    /// `ofp_action_vlan_vid`: set the 802.1Q VLAN id (12 bits used).
    SetVlanVid(u16),
    /// `ofp_action_vlan_pcp`: set the 802.1Q priority (3 bits used).
    SetVlanPcp(u8),
    /// `OFPAT_STRIP_VLAN`: remove the 802.1Q header.
    StripVlan,
    /// `ofp_action_dl_addr` (`OFPAT_SET_DL_SRC`).
    SetDlSrc(MacAddr),
    /// `ofp_action_dl_addr` (`OFPAT_SET_DL_DST`).
    SetDlDst(MacAddr),
    /// `ofp_action_nw_addr` (`OFPAT_SET_NW_SRC`).
    SetNwSrc(Ipv4Addr),
    /// `ofp_action_nw_addr` (`OFPAT_SET_NW_DST`).
    SetNwDst(Ipv4Addr),
    /// `ofp_action_nw_tos`: set the IP ToS (DSCP in the upper 6 bits).
    SetNwTos(u8),
    /// `ofp_action_tp_port` (`OFPAT_SET_TP_SRC`).
    SetTpSrc(u16),
    /// `ofp_action_tp_port` (`OFPAT_SET_TP_DST`).
    SetTpDst(u16),
    /// `ofp_action_enqueue`: output to a queue of a port.
    Enqueue {
        /// Port the queue belongs to.
        port: PortNo,
        /// Queue id.
        queue_id: u32,
    },
    /// `ofp_action_vendor_header` and its body.
    Vendor {
        /// Vendor id.
        vendor: u32,
        /// The bytes after the vendor id. On the wire the whole action is a
        /// multiple of 8 long, so a decoded `data` is 8n+0 bytes; a `data`
        /// of another length is written zero-padded to the next multiple.
        data: Vec<u8>,
    },
}

impl Action {
    /// The `OFPAT_*` type of this action.
    #[inline]
    pub fn action_type(&self) -> u16 {
        match self {
            Action::Output { .. } => OFPAT_OUTPUT,
            Action::SetVlanVid(_) => OFPAT_SET_VLAN_VID,
            Action::SetVlanPcp(_) => OFPAT_SET_VLAN_PCP,
            Action::StripVlan => OFPAT_STRIP_VLAN,
            Action::SetDlSrc(_) => OFPAT_SET_DL_SRC,
            Action::SetDlDst(_) => OFPAT_SET_DL_DST,
            Action::SetNwSrc(_) => OFPAT_SET_NW_SRC,
            Action::SetNwDst(_) => OFPAT_SET_NW_DST,
            Action::SetNwTos(_) => OFPAT_SET_NW_TOS,
            Action::SetTpSrc(_) => OFPAT_SET_TP_SRC,
            Action::SetTpDst(_) => OFPAT_SET_TP_DST,
            Action::Enqueue { .. } => OFPAT_ENQUEUE,
            Action::Vendor { .. } => OFPAT_VENDOR,
        }
    }

    /// Bytes this action takes on the wire (always a multiple of 8).
    #[inline]
    pub fn wire_len(&self) -> usize {
        match self {
            Action::SetDlSrc(_) | Action::SetDlDst(_) | Action::Enqueue { .. } => 16,
            Action::Vendor { data, .. } => ACTION_HEADER_LEN + data.len() + pad8(data.len()),
            _ => ACTION_HEADER_LEN,
        }
    }

    /// The wire bytes of an output action, `None` for any other.
    #[inline]
    pub fn output_bytes(&self) -> Option<[u8; ACTION_OUTPUT_LEN]> {
        let Action::Output { port, max_len } = self else {
            return None;
        };
        let [t0, t1] = OFPAT_OUTPUT.to_be_bytes();
        let [p0, p1] = port_to_wire(*port).to_be_bytes();
        let [m0, m1] = max_len.to_be_bytes();
        Some([t0, t1, 0, 8, p0, p1, m0, m1])
    }

    /// Appends the action. A vendor action too long for the 16-bit length
    /// field is written with a saturated length (the caller's bug).
    #[inline]
    pub fn emit(&self, out: &mut Vec<u8>) {
        if let Some(bytes) = self.output_bytes() {
            // The common case, with one copy.
            out.put_slice(&bytes);
            return;
        }
        let len = self.wire_len().min(0xfff8) as u16;
        out.put_u16(self.action_type());
        out.put_u16(len);
        match self {
            Action::Output { port, max_len } => {
                out.put_u16(port_to_wire(*port));
                out.put_u16(*max_len);
            }
            Action::SetVlanVid(vid) => {
                out.put_u16(*vid);
                out.put_zeros(2);
            }
            Action::SetVlanPcp(v) | Action::SetNwTos(v) => {
                out.put_u8(*v);
                out.put_zeros(3);
            }
            Action::StripVlan => out.put_zeros(4),
            Action::SetDlSrc(m) | Action::SetDlDst(m) => {
                out.put_slice(&m.0);
                out.put_zeros(6);
            }
            Action::SetNwSrc(a) | Action::SetNwDst(a) => out.put_u32((*a).into()),
            Action::SetTpSrc(p) | Action::SetTpDst(p) => {
                out.put_u16(*p);
                out.put_zeros(2);
            }
            Action::Enqueue { port, queue_id } => {
                out.put_u16(port_to_wire(*port));
                out.put_zeros(6);
                out.put_u32(*queue_id);
            }
            Action::Vendor { vendor, data } => {
                out.put_u32(*vendor);
                out.put_slice(data);
                out.put_zeros(pad8(data.len()));
            }
        }
    }

    /// Reads one action. `r` must be positioned at an action header; on
    /// success exactly the action's `len` bytes have been consumed.
    pub fn parse(r: &mut Reader<'_>) -> Result<Action, DecodeError> {
        let at = r.offset();
        if r.remaining() < ACTION_HEADER_LEN {
            // Not even a header's worth of bytes: the region's length is
            // not a sum of whole actions.
            return Err(DecodeError::new(
                ErrorKind::BadActionLength(r.remaining() as u16),
                at,
                "ofp_action_header",
            ));
        }
        let action_type = r.u16("ofp_action_header.type")?;
        let len = r.u16("ofp_action_header.len")?;
        let bad_len = || {
            DecodeError::new(
                ErrorKind::BadActionLength(len),
                at + 2,
                "ofp_action_header.len",
            )
        };
        let body_len = usize::from(len)
            .checked_sub(4)
            .filter(|_| usize::from(len) >= ACTION_HEADER_LEN && len % 8 == 0)
            .ok_or_else(bad_len)?;
        if body_len > r.remaining() {
            return Err(bad_len());
        }
        let mut b = r.sub(body_len, "action body")?;
        let expect = |want: usize| {
            if usize::from(len) == want {
                Ok(())
            } else {
                Err(bad_len())
            }
        };
        let action = match action_type {
            OFPAT_OUTPUT => {
                expect(8)?;
                let port = PortNo::from_of10(b.u16("ofp_action_output.port")?);
                let max_len = b.u16("ofp_action_output.max_len")?;
                Action::Output { port, max_len }
            }
            OFPAT_SET_VLAN_VID => {
                expect(8)?;
                Action::SetVlanVid(b.u16("ofp_action_vlan_vid.vlan_vid")?)
            }
            OFPAT_SET_VLAN_PCP => {
                expect(8)?;
                Action::SetVlanPcp(b.u8("ofp_action_vlan_pcp.vlan_pcp")?)
            }
            OFPAT_STRIP_VLAN => {
                expect(8)?;
                Action::StripVlan
            }
            OFPAT_SET_DL_SRC => {
                expect(16)?;
                Action::SetDlSrc(MacAddr(b.array("ofp_action_dl_addr.dl_addr")?))
            }
            OFPAT_SET_DL_DST => {
                expect(16)?;
                Action::SetDlDst(MacAddr(b.array("ofp_action_dl_addr.dl_addr")?))
            }
            OFPAT_SET_NW_SRC => {
                expect(8)?;
                Action::SetNwSrc(b.u32("ofp_action_nw_addr.nw_addr")?.into())
            }
            OFPAT_SET_NW_DST => {
                expect(8)?;
                Action::SetNwDst(b.u32("ofp_action_nw_addr.nw_addr")?.into())
            }
            OFPAT_SET_NW_TOS => {
                expect(8)?;
                Action::SetNwTos(b.u8("ofp_action_nw_tos.nw_tos")?)
            }
            OFPAT_SET_TP_SRC => {
                expect(8)?;
                Action::SetTpSrc(b.u16("ofp_action_tp_port.tp_port")?)
            }
            OFPAT_SET_TP_DST => {
                expect(8)?;
                Action::SetTpDst(b.u16("ofp_action_tp_port.tp_port")?)
            }
            OFPAT_ENQUEUE => {
                expect(16)?;
                let port = PortNo::from_of10(b.u16("ofp_action_enqueue.port")?);
                b.skip(6, "ofp_action_enqueue.pad")?;
                let queue_id = b.u32("ofp_action_enqueue.queue_id")?;
                Action::Enqueue { port, queue_id }
            }
            OFPAT_VENDOR => {
                let vendor = b.u32("ofp_action_vendor_header.vendor")?;
                Action::Vendor {
                    vendor,
                    data: b.take_rest().to_vec(),
                }
            }
            other => {
                return Err(DecodeError::new(
                    ErrorKind::BadActionType(other),
                    at,
                    "ofp_action_header.type",
                ));
            }
        };
        // Whatever is left of a fixed-size body is padding.
        Ok(action)
    }
}

/// Total wire length of a list of actions.
#[inline]
pub fn actions_len(actions: &[Action]) -> usize {
    actions.iter().map(Action::wire_len).sum()
}

/// Appends a list of actions, back to back.
#[inline]
pub fn emit_actions(out: &mut Vec<u8>, actions: &[Action]) {
    for a in actions {
        a.emit(out);
    }
}

/// An iterator over an actions region that yields each action or the first
/// error, then stops (quinn's frame-iterator style). It allocates only for
/// the body of a vendor action.
#[derive(Debug, Clone)]
pub struct ActionIter<'a> {
    r: Reader<'a>,
    done: bool,
}

impl<'a> ActionIter<'a> {
    /// Iterates the actions in `region`, which starts at byte `base` of the
    /// message (for error offsets).
    #[inline]
    pub fn new(region: &'a [u8], base: usize) -> Self {
        ActionIter {
            r: Reader::with_base(region, base),
            done: false,
        }
    }

    /// Collects every action, or returns the first error.
    pub fn collect_vec(self) -> Result<Vec<Action>, DecodeError> {
        self.collect()
    }
}

impl Iterator for ActionIter<'_> {
    type Item = Result<Action, DecodeError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.r.is_empty() {
            return None;
        }
        let item = Action::parse(&mut self.r);
        if item.is_err() {
            self.done = true;
        }
        Some(item)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        if self.done {
            (0, Some(0))
        } else {
            (0, Some(self.r.remaining() / ACTION_HEADER_LEN))
        }
    }
}

impl std::iter::FusedIterator for ActionIter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(actions: &[Action]) -> Vec<u8> {
        let mut out = Vec::new();
        emit_actions(&mut out, actions);
        out
    }

    fn first_err(b: &[u8]) -> ErrorKind {
        ActionIter::new(b, 0)
            .find_map(Result::err)
            .expect("an error")
            .kind()
            .clone()
    }

    #[test]
    fn output_bytes_match_the_spec() {
        let b = bytes(&[Action::Output {
            port: PortNo::CONTROLLER,
            max_len: 128,
        }]);
        assert_eq!(b, [0, 0, 0, 8, 0xff, 0xfd, 0, 128]);
    }

    #[test]
    fn every_action_round_trips_with_its_length() {
        let all = vec![
            Action::Output {
                port: PortNo(3),
                max_len: 0,
            },
            Action::SetVlanVid(0x0fff),
            Action::SetVlanPcp(7),
            Action::StripVlan,
            Action::SetDlSrc(MacAddr([1, 2, 3, 4, 5, 6])),
            Action::SetDlDst(MacAddr::BROADCAST),
            Action::SetNwSrc(Ipv4Addr::new(1, 2, 3, 4)),
            Action::SetNwDst(Ipv4Addr::new(5, 6, 7, 8)),
            Action::SetNwTos(0xfc),
            Action::SetTpSrc(80),
            Action::SetTpDst(8080),
            Action::Enqueue {
                port: PortNo::IN_PORT,
                queue_id: 9,
            },
            Action::Vendor {
                vendor: 0x2320,
                data: vec![1, 2, 3, 4, 5, 6, 7, 8],
            },
            Action::Vendor {
                vendor: 0x2320,
                data: vec![],
            },
        ];
        let b = bytes(&all);
        assert_eq!(b.len(), actions_len(&all));
        assert_eq!(b.len(), 8 * 9 + 16 * 3 + 16 + 8);
        let back = ActionIter::new(&b, 0).collect_vec().unwrap();
        assert_eq!(back, all);
    }

    #[test]
    fn odd_vendor_data_is_padded() {
        let a = Action::Vendor {
            vendor: 1,
            data: vec![9; 3],
        };
        assert_eq!(a.wire_len(), 16);
        let b = bytes(std::slice::from_ref(&a));
        assert_eq!(b.len(), 16);
        assert_eq!(&b[2..4], &[0, 16]);
    }

    #[test]
    fn lengths_are_checked() {
        // Output with len 16.
        let mut b = bytes(&[Action::StripVlan, Action::StripVlan]);
        b[3] = 16;
        assert_eq!(first_err(&b), ErrorKind::BadActionLength(16));
        // Not a multiple of 8.
        assert_eq!(
            first_err(&[0, 0, 0, 12, 0, 1, 0, 0, 0, 0, 0, 0]),
            ErrorKind::BadActionLength(12)
        );
        // Below the header size.
        assert_eq!(
            first_err(&[0, 0, 0, 0, 0, 1, 0, 0]),
            ErrorKind::BadActionLength(0)
        );
        // Runs past the region.
        assert_eq!(
            first_err(&[0, 4, 0, 16, 0, 1, 0, 0]),
            ErrorKind::BadActionLength(16)
        );
        // Trailing scraps shorter than a header.
        assert_eq!(
            first_err(&[0, 3, 0, 8, 0, 0, 0, 0, 1, 2]),
            ErrorKind::BadActionLength(2)
        );
        // SET_DL_SRC must be 16.
        assert_eq!(
            first_err(&[0, 4, 0, 8, 0, 0, 0, 0]),
            ErrorKind::BadActionLength(8)
        );
    }

    #[test]
    fn unknown_type_is_bad_type_and_iteration_stops() {
        let mut b = vec![0, 12, 0, 8, 0, 0, 0, 0];
        b.extend(bytes(&[Action::StripVlan]));
        let mut it = ActionIter::new(&b, 16);
        let e = it.next().unwrap().unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::BadActionType(12));
        assert_eq!(e.offset(), 16);
        assert!(it.next().is_none());
    }
}
