//! OFPT_ECHO_REQUEST and OFPT_ECHO_REPLY (1.0.0 §5.5.2, §5.5.3; 1.3.5
//! §7.5.2, §7.5.3), laid out the same in both versions: a header and an
//! opaque payload that a reply echoes. [`crate::v10::EchoView`] and
//! [`crate::v13::EchoView`] are this view for their version.

use crate::error::{DecodeError, ErrorKind};
use crate::header::{
    self, Direction, Header, MsgKind, MsgType10, MsgType13, finish_message, start_message,
};
use crate::types::Xid;
use crate::version::Version;
use crate::wire::Put;

crate::header::message_view! {
    /// A view of an ECHO_REQUEST or ECHO_REPLY of wire version `V` in a buffer.
    ///
    /// [`EchoView::new_checked`] checks the header; accessors never panic.
    EchoView<V>
}

impl<T: AsRef<[u8]>, const V: u8> EchoView<T, V> {
    /// A view of `buffer`, which must hold exactly one ECHO_REQUEST or
    /// ECHO_REPLY of version `V` (the header check).
    #[inline]
    pub fn new_checked(buffer: T) -> Result<Self, DecodeError> {
        let version = version_of::<V>()?;
        let kinds = [MsgKind::EchoRequest, MsgKind::EchoReply];
        Header::check_kind(buffer.as_ref(), version, &kinds)?;
        Ok(EchoView { buffer })
    }

    /// Request or reply.
    #[inline]
    pub fn direction(&self) -> Direction {
        direction_of::<V>(self.buffer.as_ref(), MsgKind::EchoRequest)
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized, const V: u8> EchoView<&'a T, V> {
    /// The arbitrary payload, which a reply echoes.
    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        self.buffer
            .as_ref()
            .get(header::HEADER_LEN..)
            .unwrap_or(&[])
    }
}

crate::header::message_view! {
    /// A view of a BARRIER_REQUEST or BARRIER_REPLY of wire version `V` in a
    /// buffer (1.0.0 §5.3.7, 1.3.5 §7.3.8): a header only.
    BarrierView<V>
}

impl<T: AsRef<[u8]>, const V: u8> BarrierView<T, V> {
    /// A view of `buffer`, which must hold exactly one BARRIER_REQUEST or
    /// BARRIER_REPLY of version `V` (the header check).
    #[inline]
    pub fn new_checked(buffer: T) -> Result<Self, DecodeError> {
        let version = version_of::<V>()?;
        let kinds = [MsgKind::BarrierRequest, MsgKind::BarrierReply];
        Header::check_kind(buffer.as_ref(), version, &kinds)?;
        Ok(BarrierView { buffer })
    }

    /// Request or reply.
    #[inline]
    pub fn direction(&self) -> Direction {
        direction_of::<V>(self.buffer.as_ref(), MsgKind::BarrierRequest)
    }
}

/// The version whose wire number is `V` (a constant, so this folds away).
#[inline]
fn version_of<const V: u8>() -> Result<Version, DecodeError> {
    Version::from_wire(V)
        .ok_or_else(|| DecodeError::new(ErrorKind::BadVersion(V), 0, "ofp_header.version"))
}

/// [`Direction::Request`] if the message in `b` is of kind `request`.
#[inline]
fn direction_of<const V: u8>(b: &[u8], request: MsgKind) -> Direction {
    let raw = b.get(header::field::TYPE).copied().unwrap_or(0);
    match Version::from_wire(V) {
        Some(v) if MsgKind::of(v, raw) == request => Direction::Request,
        _ => Direction::Reply,
    }
}

/// Appends an ECHO_REQUEST or ECHO_REPLY of `version` with `payload`.
#[inline]
pub fn encode_echo(
    out: &mut Vec<u8>,
    version: Version,
    direction: Direction,
    xid: Xid,
    payload: &[u8],
) {
    let ty = match (version, direction) {
        (Version::V10, Direction::Request) => MsgType10::EchoRequest.into(),
        (Version::V10, Direction::Reply) => MsgType10::EchoReply.into(),
        (Version::V13, Direction::Request) => MsgType13::EchoRequest.into(),
        (Version::V13, Direction::Reply) => MsgType13::EchoReply.into(),
    };
    let at = start_message(out, version, ty, xid);
    out.put_slice(payload);
    finish_message(out, at);
}

/// Appends a BARRIER_REQUEST or BARRIER_REPLY of `version`.
#[inline]
pub fn encode_barrier(out: &mut Vec<u8>, version: Version, direction: Direction, xid: Xid) {
    let ty = match (version, direction) {
        (Version::V10, Direction::Request) => MsgType10::BarrierRequest.into(),
        (Version::V10, Direction::Reply) => MsgType10::BarrierReply.into(),
        (Version::V13, Direction::Request) => MsgType13::BarrierRequest.into(),
        (Version::V13, Direction::Reply) => MsgType13::BarrierReply.into(),
    };
    let at = start_message(out, version, ty, xid);
    finish_message(out, at);
}
