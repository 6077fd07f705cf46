//! OFPT_PACKET_OUT (`ofp_packet_out`, 1.3.5 §7.3.7): the view over
//! received bytes, the owned form and the encoders.

use crate::error::{DecodeError, ErrorKind};
use crate::header::{self, Header, MsgKind, MsgType13, finish_message, start_message};
use crate::types::{BufferId, PortNo, Xid};
use crate::v13::action::{Action, ActionIter, emit_actions};
use crate::version::Version;
use crate::wire::{Put, get_u16, get_u32, set_u16, set_u32};

/// Byte offsets of `ofp_packet_out`, header included. The actions take
/// `actions_len` bytes from [`ACTIONS`](field::ACTIONS); the frame follows
/// them.
mod field {
    use crate::wire::Field;

    pub const BUFFER_ID: Field = 8..12;
    pub const IN_PORT: Field = 12..16;
    pub const ACTIONS_LEN: Field = 16..18;
    // 18..24: padding.
    pub const ACTIONS: usize = 24;
}

crate::header::message_view! {
    /// A view of an OFPT_PACKET_OUT in a buffer (1.3.5 §7.3.7).
    ///
    /// [`PacketOutView::new_checked`] checks the header and that `actions_len`
    /// fits the message; the actions are checked as they are iterated.
    /// Accessors never panic.
    PacketOutView
}

impl<T: AsRef<[u8]>> PacketOutView<T> {
    /// A view of `buffer`, which must hold exactly one OFPT_PACKET_OUT
    /// whose `actions_len` fits in it ([`ErrorKind::BadLength`]
    /// otherwise).
    #[inline]
    pub fn new_checked(buffer: T) -> Result<Self, DecodeError> {
        let b = buffer.as_ref();
        Header::check_kind(b, Version::V13, &[MsgKind::PacketOut])?;
        let v = PacketOutView::new_unchecked(b);
        if v.data_start() > b.len() {
            return Err(DecodeError::new(
                ErrorKind::BadLength {
                    claimed: usize::from(v.actions_len()),
                },
                field::ACTIONS_LEN.start,
                "ofp_packet_out.actions_len",
            ));
        }
        Ok(PacketOutView { buffer })
    }

    /// `buffer_id` ([`BufferId::NONE`] when the frame is in `data`).
    #[inline]
    pub fn buffer_id(&self) -> BufferId {
        BufferId(get_u32(self.buffer.as_ref(), field::BUFFER_ID))
    }

    /// `in_port`.
    #[inline]
    pub fn in_port(&self) -> PortNo {
        PortNo(get_u32(self.buffer.as_ref(), field::IN_PORT))
    }

    /// `actions_len`: bytes of actions.
    #[inline]
    pub fn actions_len(&self) -> u16 {
        get_u16(self.buffer.as_ref(), field::ACTIONS_LEN)
    }

    /// Where the frame starts.
    #[inline]
    fn data_start(&self) -> usize {
        field::ACTIONS + usize::from(self.actions_len())
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> PacketOutView<&'a T> {
    /// The raw actions region (`actions_len` bytes).
    #[inline]
    pub fn actions_bytes(&self) -> &'a [u8] {
        let end = self.data_start();
        self.buffer.as_ref().get(field::ACTIONS..end).unwrap_or(&[])
    }

    /// The actions, each checked as it is reached.
    #[inline]
    pub fn actions(&self) -> ActionIter<'a> {
        ActionIter::new(self.actions_bytes(), field::ACTIONS)
    }

    /// `data`: the frame, when `buffer_id` is [`BufferId::NONE`].
    #[inline]
    pub fn data(&self) -> &'a [u8] {
        let start = self.data_start();
        self.buffer.as_ref().get(start..).unwrap_or(&[])
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> PacketOutView<T> {
    /// Sets `buffer_id`.
    #[inline]
    pub fn set_buffer_id(&mut self, v: BufferId) {
        set_u32(self.buffer.as_mut(), field::BUFFER_ID, v.0);
    }

    /// Sets `in_port`.
    #[inline]
    pub fn set_in_port(&mut self, v: PortNo) {
        set_u32(self.buffer.as_mut(), field::IN_PORT, v.0);
    }

    /// Sets `actions_len` (the actions and the frame must then be where it
    /// says).
    #[inline]
    pub fn set_actions_len(&mut self, v: u16) {
        set_u16(self.buffer.as_mut(), field::ACTIONS_LEN, v);
    }
}

/// The body of OFPT_PACKET_OUT (`ofp_packet_out`, 1.3.5 §7.3.7), owned.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PacketOut {
    /// `buffer_id`, or [`BufferId::NONE`] when the frame is in `data`.
    pub buffer_id: BufferId,
    /// `in_port`: the packet's input port (or `PortNo::CONTROLLER`).
    pub in_port: PortNo,
    /// `actions`.
    pub actions: Vec<Action>,
    /// `data`.
    pub data: Vec<u8>,
}

impl PacketOut {
    /// The owned form of a checked view; fails on the first bad action.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(v: &PacketOutView<&T>) -> Result<Self, DecodeError> {
        Ok(PacketOut {
            buffer_id: v.buffer_id(),
            in_port: v.in_port(),
            actions: v.actions().collect::<Result<_, _>>()?,
            data: v.data().to_vec(),
        })
    }

    /// Appends the whole message, [`PacketOut::buffer_len`] bytes (through
    /// [`encode_packet_out`]).
    pub fn emit(&self, xid: Xid, out: &mut Vec<u8>) {
        encode_packet_out(
            out,
            xid,
            self.buffer_id,
            self.in_port,
            &self.actions,
            &self.data,
        );
    }

    /// Bytes of the whole message.
    pub fn buffer_len(&self) -> usize {
        field::ACTIONS + self.actions.iter().map(Action::wire_len).sum::<usize>() + self.data.len()
    }
}

/// Appends an OFPT_PACKET_OUT (1.3.5 §7.3.7) with `actions` and `data`.
#[inline]
pub fn encode_packet_out(
    out: &mut Vec<u8>,
    xid: Xid,
    buffer_id: BufferId,
    in_port: PortNo,
    actions: &[Action],
    data: &[u8],
) {
    encode_packet_out_with(
        out,
        xid,
        buffer_id,
        in_port,
        |out| emit_actions(out, actions),
        data,
    );
}

/// Appends an OFPT_PACKET_OUT whose actions `write_actions` appends (each
/// with [`Action::emit`]); `actions_len` is filled in afterwards.
#[inline]
pub fn encode_packet_out_with(
    out: &mut Vec<u8>,
    xid: Xid,
    buffer_id: BufferId,
    in_port: PortNo,
    write_actions: impl FnOnce(&mut Vec<u8>),
    data: &[u8],
) {
    let at = start_message(out, Version::V13, MsgType13::PacketOut.into(), xid);
    out.put_zeros(field::ACTIONS - header::HEADER_LEN);
    let actions_at = out.len();
    write_actions(out);
    let actions_len = (out.len() - actions_at).min(usize::from(u16::MAX)) as u16;
    if let Some(b) = out.get_mut(at..) {
        let mut v = PacketOutView::new_unchecked(b);
        v.set_buffer_id(buffer_id);
        v.set_in_port(in_port);
        v.set_actions_len(actions_len);
    }
    out.put_slice(data);
    finish_message(out, at);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_len_is_checked() {
        let mut out = Vec::new();
        let actions = [Action::Output {
            port: PortNo::FLOOD,
            max_len: 0,
        }];
        encode_packet_out(&mut out, Xid(3), BufferId::NONE, PortNo(1), &actions, b"xy");
        let v = PacketOutView::new_checked(&out[..]).unwrap();
        assert_eq!((v.in_port(), v.data()), (PortNo(1), &b"xy"[..]));
        assert_eq!(PacketOut::parse(&v).unwrap().buffer_len(), out.len());
        assert_eq!(&out[16..18], &[0, 16]);
        out[17] = 19; // 24 + 19 > 42
        let e = PacketOutView::new_checked(&out[..]).unwrap_err();
        assert_eq!(e.kind(), &ErrorKind::BadLength { claimed: 19 });
    }
}
