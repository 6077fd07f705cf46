//! Messages whose OpenFlow 1.0 and 1.3 forms differ only in constants (the
//! version, the message type, field offsets, the width of a port, the
//! version's actions), written once and instantiated per version, so that
//! a fix made in one version cannot miss the other.
//!
//! Each macro here expands, inside a version's module, to what that
//! module would otherwise spell out: the view over received bytes, the
//! owned form, the encoders and the tests that hold in every version (run
//! with that version's offsets). The version's file gives the constants
//! and keeps the tests of what is its own.

/// OFPT_PACKET_OUT (`ofp_packet_out`): the view, the owned form and the
/// encoders, for the version whose constants are given:
///
/// ```text
/// crate::twin::packet_out! {
///     version: V10, msg_type: MsgType10, spec: "1.0.0 §5.3.6",
///     action: super::action,
///     in_port: 12..14, read |b, f| ..., write |b, f, port| ...,
///     in_port_doc: "...",
///     actions_len: 14..16, actions: 16,
/// }
/// ```
macro_rules! packet_out {
    (
        version: $version:ident,
        msg_type: $msg_type:ident,
        spec: $spec:literal,
        action: $($action:ident)::+,
        in_port: $in_port:expr, read $read_port:expr, write $write_port:expr,
        in_port_doc: $in_port_doc:literal,
        actions_len: $actions_len:expr,
        actions: $actions:expr $(,)?
    ) => {
        use $crate::error::{DecodeError, ErrorKind};
        use $crate::header::{self, Header, MsgKind, finish_message, start_message};
        use $crate::types::{BufferId, PortNo, Xid};
        use $crate::version::Version;
        use $crate::wire::{Put, get_u16, get_u32, set_u16, set_u32};
        use $($action)::+::{Action, ActionIter, emit_actions};

        /// Byte offsets of `ofp_packet_out`, header included. The actions
        /// take `actions_len` bytes from [`ACTIONS`](field::ACTIONS); the
        /// frame follows them.
        mod field {
            use $crate::wire::Field;

            pub const BUFFER_ID: Field = 8..12;
            pub const IN_PORT: Field = $in_port;
            pub const ACTIONS_LEN: Field = $actions_len;
            pub const ACTIONS: usize = $actions;
        }

        $crate::header::message_view! {
            #[doc = concat!("A view of an OFPT_PACKET_OUT in a buffer (", $spec, ").")]
            ///
            /// [`PacketOutView::new_checked`] checks the header and that
            /// `actions_len` fits the message; the actions are checked as
            /// they are iterated. Accessors never panic.
            PacketOutView
        }

        impl<T: AsRef<[u8]>> PacketOutView<T> {
            /// A view of `buffer`, which must hold exactly one
            /// OFPT_PACKET_OUT whose `actions_len` fits in it
            /// ([`ErrorKind::BadLength`] otherwise).
            #[inline]
            pub fn new_checked(buffer: T) -> Result<Self, DecodeError> {
                let b = buffer.as_ref();
                Header::check_kind(b, Version::$version, &[MsgKind::PacketOut])?;
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
                ($read_port)(self.buffer.as_ref(), field::IN_PORT)
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
                ($write_port)(self.buffer.as_mut(), field::IN_PORT, v);
            }

            /// Sets `actions_len` (the actions and the frame must then be
            /// where it says).
            #[inline]
            pub fn set_actions_len(&mut self, v: u16) {
                set_u16(self.buffer.as_mut(), field::ACTIONS_LEN, v);
            }
        }

        #[doc = concat!("The body of OFPT_PACKET_OUT (`ofp_packet_out`, ", $spec, "), owned.")]
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub struct PacketOut {
            /// `buffer_id`, or [`BufferId::NONE`] when the frame is in `data`.
            pub buffer_id: BufferId,
            #[doc = $in_port_doc]
            pub in_port: PortNo,
            /// `actions`.
            pub actions: Vec<Action>,
            /// `data`.
            pub data: Vec<u8>,
        }

        impl PacketOut {
            /// The owned form of a checked view; fails on the first bad
            /// action.
            pub fn parse<T: AsRef<[u8]> + ?Sized>(
                v: &PacketOutView<&T>,
            ) -> Result<Self, DecodeError> {
                Ok(PacketOut {
                    buffer_id: v.buffer_id(),
                    in_port: v.in_port(),
                    actions: v.actions().collect::<Result<_, _>>()?,
                    data: v.data().to_vec(),
                })
            }

            /// Appends the whole message, [`PacketOut::buffer_len`] bytes
            /// (through [`encode_packet_out`]).
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
                field::ACTIONS
                    + self.actions.iter().map(Action::wire_len).sum::<usize>()
                    + self.data.len()
            }
        }

        #[doc = concat!("Appends an OFPT_PACKET_OUT (", $spec, ") with `actions` and `data`.")]
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

        /// Appends an OFPT_PACKET_OUT whose actions `write_actions`
        /// appends (each with [`Action::emit`]); `actions_len` is filled
        /// in afterwards.
        #[inline]
        pub fn encode_packet_out_with(
            out: &mut Vec<u8>,
            xid: Xid,
            buffer_id: BufferId,
            in_port: PortNo,
            write_actions: impl FnOnce(&mut Vec<u8>),
            data: &[u8],
        ) {
            let at = start_message(out, Version::$version, $crate::header::$msg_type::PacketOut.into(), xid);
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

        /// The version's PACKET_OUT, checked with this version's offsets.
        #[cfg(test)]
        mod twin_tests {
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
                assert_eq!(v.actions().collect::<Result<Vec<_>, _>>().unwrap(), actions);
                assert_eq!((v.in_port(), v.data()), (PortNo(1), &b"xy"[..]));
                assert_eq!(PacketOut::parse(&v).unwrap().buffer_len(), out.len());
                let actions_len = actions[0].wire_len();
                assert_eq!(usize::from(v.actions_len()), actions_len);
                // One byte more than the message holds after the fixed part.
                let claimed = out.len() - field::ACTIONS + 1;
                set_u16(&mut out, field::ACTIONS_LEN, claimed as u16);
                let e = PacketOutView::new_checked(&out[..]).unwrap_err();
                assert_eq!(e.kind(), &ErrorKind::BadLength { claimed });
                // Fits, but cuts into the frame: the next "action" is cut.
                set_u16(&mut out, field::ACTIONS_LEN, (actions_len + 2) as u16);
                let v = PacketOutView::new_checked(&out[..]).unwrap();
                assert!(v.actions().any(|a| a.is_err()));
            }
        }
    };
}
pub(crate) use packet_out;

/// The views and encoders of OFPT_ECHO_REQUEST, OFPT_ECHO_REPLY,
/// OFPT_BARRIER_REQUEST and OFPT_BARRIER_REPLY, whose bodies are the same
/// in every version (`crate::echo`), for the version given, with the
/// sections of its specification that define them.
macro_rules! echo_and_barrier {
    (
        version: $version:ident,
        echo_request: $echo_request:literal,
        echo_reply: $echo_reply:literal,
        barrier: $barrier:literal $(,)?
    ) => {
        #[doc = concat!(
            "A view of an OFPT_ECHO_REQUEST or OFPT_ECHO_REPLY (",
            $echo_request, ", ", $echo_reply, ")."
        )]
        pub type EchoView<T> =
            $crate::echo::EchoView<T, { $crate::version::Version::$version.wire() }>;

        #[doc = concat!("A view of an OFPT_BARRIER_REQUEST or OFPT_BARRIER_REPLY (", $barrier, ").")]
        pub type BarrierView<T> =
            $crate::echo::BarrierView<T, { $crate::version::Version::$version.wire() }>;

        #[doc = concat!("Appends an OFPT_ECHO_REQUEST (", $echo_request, ").")]
        #[inline]
        pub fn encode_echo_request(out: &mut Vec<u8>, xid: $crate::types::Xid, payload: &[u8]) {
            $crate::echo::encode_echo(
                out,
                $crate::version::Version::$version,
                $crate::header::Direction::Request,
                xid,
                payload,
            );
        }

        #[doc = concat!(
            "Appends an OFPT_ECHO_REPLY (", $echo_reply,
            "), which must echo the request's xid and payload."
        )]
        #[inline]
        pub fn encode_echo_reply(out: &mut Vec<u8>, xid: $crate::types::Xid, payload: &[u8]) {
            $crate::echo::encode_echo(
                out,
                $crate::version::Version::$version,
                $crate::header::Direction::Reply,
                xid,
                payload,
            );
        }

        #[doc = concat!("Appends an OFPT_BARRIER_REQUEST (", $barrier, ").")]
        #[inline]
        pub fn encode_barrier_request(out: &mut Vec<u8>, xid: $crate::types::Xid) {
            $crate::echo::encode_barrier(
                out,
                $crate::version::Version::$version,
                $crate::header::Direction::Request,
                xid,
            );
        }

        #[doc = concat!("Appends an OFPT_BARRIER_REPLY (", $barrier, ").")]
        #[inline]
        pub fn encode_barrier_reply(out: &mut Vec<u8>, xid: $crate::types::Xid) {
            $crate::echo::encode_barrier(
                out,
                $crate::version::Version::$version,
                $crate::header::Direction::Reply,
                xid,
            );
        }
    };
}
pub(crate) use echo_and_barrier;

/// The port bits whose values 1.0 and 1.3 share (1.0.0 §5.2.1, 1.3.5
/// §7.2.1); each version's `config`, `state` and `features` modules
/// re-export them beside the bits of its own.
pub(crate) mod port_bits {
    /// `ofp_port_config` bits defined alike in both versions.
    pub mod config {
        /// `OFPPC_PORT_DOWN`: port is administratively down.
        pub const PORT_DOWN: u32 = 1 << 0;
        /// `OFPPC_NO_RECV`: drop the packets the port receives (1.0: all
        /// but 802.1D spanning tree).
        pub const NO_RECV: u32 = 1 << 2;
        /// `OFPPC_NO_FWD`: drop packets forwarded to the port.
        pub const NO_FWD: u32 = 1 << 5;
        /// `OFPPC_NO_PACKET_IN`: do not send packet-in messages for the port.
        pub const NO_PACKET_IN: u32 = 1 << 6;
    }

    /// `ofp_port_state` bits defined alike in both versions.
    pub mod state {
        /// `OFPPS_LINK_DOWN`: no physical link present.
        pub const LINK_DOWN: u32 = 1 << 0;
    }

    /// `ofp_port_features` rate bits defined alike in both versions (1.3
    /// adds faster rates after them, which moves the medium bits).
    pub mod rates {
        /// `OFPPF_10MB_HD`.
        pub const F_10MB_HD: u32 = 1 << 0;
        /// `OFPPF_10MB_FD`.
        pub const F_10MB_FD: u32 = 1 << 1;
        /// `OFPPF_100MB_HD`.
        pub const F_100MB_HD: u32 = 1 << 2;
        /// `OFPPF_100MB_FD`.
        pub const F_100MB_FD: u32 = 1 << 3;
        /// `OFPPF_1GB_HD`.
        pub const F_1GB_HD: u32 = 1 << 4;
        /// `OFPPF_1GB_FD`.
        pub const F_1GB_FD: u32 = 1 << 5;
        /// `OFPPF_10GB_FD`.
        pub const F_10GB_FD: u32 = 1 << 6;
    }
}

/// A port's description (`ofp_phy_port` in 1.0, `ofp_port` in 1.3), the
/// OFPT_PORT_STATUS body and the OFPT_PORT_MOD body, for the version
/// whose layout is given. Both versions start a port's description and a
/// PORT_MOD with the port number and the hardware address (`head`, with
/// the version's width and padding) and share the fields after them; 1.3
/// adds the `extra` counters at the end of the description.
///
/// ```text
/// crate::twin::ports! {
///     desc: PhyPort, c: "ofp_phy_port", spec: "1.0.0 §5.2.1",
///     status_spec: "1.0.0 §5.4.3", mod_spec: "1.0.0 §5.3.3",
///     name_len: MAX_PORT_NAME_LEN,
///     head: read |r, [port_no, pad, hw_addr, pad2]| ..., write |out, port, hw_addr| ...,
///     extra: [],
///     parse: parse, emit: emit,
/// }
/// ```
macro_rules! ports {
    (
        desc: $desc:ident, c: $c:literal, spec: $spec:literal,
        status_spec: $status_spec:literal, mod_spec: $mod_spec:literal,
        name_len: $name_len:expr,
        head: read $read_head:expr, write $write_head:expr,
        extra: [$( $(#[$extra_meta:meta])* $extra:ident ),* $(,)?],
        parse: $parse:ident, emit: $emit:ident $(,)?
    ) => {
        #[doc = concat!("`", $c, "` (", $spec, "): a port's description.")]
        ///
        /// `name` is read up to its first NUL and never includes the
        /// field's last byte; bytes that are not UTF-8 become `?`. Names
        /// of at most 15 bytes without NUL survive a round trip; longer
        /// ones are cut on encode.
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub struct $desc {
            /// `port_no`.
            pub port_no: $crate::types::PortNo,
            /// `hw_addr`.
            pub hw_addr: $crate::types::MacAddr,
            /// `name`.
            pub name: String,
            /// `config`: `OFPPC_*` bits.
            pub config: u32,
            /// `state`: `OFPPS_*` bits.
            pub state: u32,
            /// `curr`: current features (`OFPPF_*` bits).
            pub curr: u32,
            /// `advertised`: features advertised by the port.
            pub advertised: u32,
            /// `supported`: features supported by the port.
            pub supported: u32,
            /// `peer`: features advertised by the peer.
            pub peer: u32,
            $( $(#[$extra_meta])* pub $extra: u32, )*
        }

        impl $desc {
            #[doc = concat!("Reads an `", $c, "`.")]
            pub fn parse(
                r: &mut $crate::wire::Reader<'_>,
            ) -> Result<$desc, $crate::error::DecodeError> {
                let (port_no, hw_addr) = ($read_head)(r, $crate::twin::head_names!($c))?;
                Ok($desc {
                    port_no,
                    hw_addr,
                    name: r.fixed_string($name_len, concat!($c, ".name"))?,
                    config: r.u32(concat!($c, ".config"))?,
                    state: r.u32(concat!($c, ".state"))?,
                    curr: r.u32(concat!($c, ".curr"))?,
                    advertised: r.u32(concat!($c, ".advertised"))?,
                    supported: r.u32(concat!($c, ".supported"))?,
                    peer: r.u32(concat!($c, ".peer"))?,
                    $( $extra: r.u32(concat!($c, ".", stringify!($extra)))?, )*
                })
            }

            #[doc = concat!("Appends the `", $c, "`.")]
            pub fn emit(&self, out: &mut Vec<u8>) {
                use $crate::wire::Put;
                ($write_head)(out, self.port_no, self.hw_addr);
                out.put_fixed_str(self.name.as_bytes(), $name_len);
                for v in [
                    self.config,
                    self.state,
                    self.curr,
                    self.advertised,
                    self.supported,
                    self.peer,
                    $( self.$extra, )*
                ] {
                    out.put_u32(v);
                }
            }
        }

        #[doc = concat!("The body of OFPT_PORT_STATUS (`ofp_port_status`, ", $status_spec, ").")]
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub struct PortStatus {
            /// `reason`.
            pub reason: $crate::types::PortReason,
            /// `desc`.
            pub desc: $desc,
        }

        impl PortStatus {
            /// Reads the body, from just after the header.
            pub fn $parse(
                r: &mut $crate::wire::Reader<'_>,
            ) -> Result<PortStatus, $crate::error::DecodeError> {
                let reason = r.u8("ofp_port_status.reason")?.into();
                r.skip(7, "ofp_port_status.pad")?;
                let desc = $desc::parse(r)?;
                Ok(PortStatus { reason, desc })
            }

            /// Appends the body.
            pub fn $emit(&self, out: &mut Vec<u8>) {
                use $crate::wire::Put;
                out.put_u8(self.reason.into());
                out.put_zeros(7);
                self.desc.emit(out);
            }
        }

        #[doc = concat!("The body of OFPT_PORT_MOD (`ofp_port_mod`, ", $mod_spec, ").")]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub struct PortMod {
            /// `port_no`.
            pub port_no: $crate::types::PortNo,
            /// `hw_addr`: must match the port's, as a sanity check.
            pub hw_addr: $crate::types::MacAddr,
            /// `config`: `OFPPC_*` bits to set.
            pub config: u32,
            /// `mask`: which `config` bits to change.
            pub mask: u32,
            /// `advertise`: `OFPPF_*` bits to advertise; 0 leaves them
            /// unchanged.
            pub advertise: u32,
        }

        impl PortMod {
            /// Reads the body, from just after the header.
            pub fn $parse(
                r: &mut $crate::wire::Reader<'_>,
            ) -> Result<PortMod, $crate::error::DecodeError> {
                let (port_no, hw_addr) = ($read_head)(r, $crate::twin::head_names!("ofp_port_mod"))?;
                let config = r.u32("ofp_port_mod.config")?;
                let mask = r.u32("ofp_port_mod.mask")?;
                let advertise = r.u32("ofp_port_mod.advertise")?;
                r.skip(4, "ofp_port_mod.pad3")?;
                Ok(PortMod {
                    port_no,
                    hw_addr,
                    config,
                    mask,
                    advertise,
                })
            }

            /// Appends the body.
            pub fn $emit(&self, out: &mut Vec<u8>) {
                use $crate::wire::Put;
                ($write_head)(out, self.port_no, self.hw_addr);
                out.put_u32(self.config);
                out.put_u32(self.mask);
                out.put_u32(self.advertise);
                out.put_zeros(4);
            }
        }
    };
}
pub(crate) use ports;

/// The names, for errors, of the fields that start a port's description
/// or a PORT_MOD in the structure `$c`: `port_no`, the padding after it,
/// `hw_addr` and the padding after that (1.0 has no padding).
macro_rules! head_names {
    ($c:literal) => {
        [
            concat!($c, ".port_no"),
            concat!($c, ".pad"),
            concat!($c, ".hw_addr"),
            concat!($c, ".pad2"),
        ]
    };
}
pub(crate) use head_names;

/// The offsets of the `ofp_packet_in` fields that both versions place at
/// the same bytes, header included; each version's `field` module
/// re-exports them.
pub(crate) mod packet_in_offsets {
    use crate::wire::Field;

    pub const BUFFER_ID: Field = 8..12;
    pub const TOTAL_LEN: Field = 12..14;
}

/// The reasons of `ofp_packet_in` (the two of 1.0, then the version's
/// `reasons`), and the check and the accessors of the fields that 1.0
/// and 1.3 place alike (`buffer_id`, `total_len`, `reason`), for the
/// version's `PacketInView`, whose `field` module gives their offsets
/// (those of `buffer_id` and `total_len` from [`packet_in_offsets`]);
/// and `packet_in_head`, which starts the version's `encode_packet_in`
/// with the header (of type `msg_type`) and those fields.
///
/// `new_checked` accepts at once what `fast` accepts (the message the
/// controller sees most, in a few compares) and sends anything else to
/// the header check, then the version's `then` check, out of line, for
/// the precise error. The owned `PacketIn` has those fields, then
/// `owned` (each with how `PacketIn::parse` reads it from the view),
/// then the frame; `emit` writes it through the version's
/// `encode_packet_in`, for `PacketIn::emit`.
macro_rules! packet_in_fields {
    (
        version: $version:ident,
        reason_spec: $reason_spec:literal,
        reasons: [$( $(#[$reason_meta:meta])* $reason:ident = $value:literal ),* $(,)?],
        new_checked_doc: $doc:literal,
        fast: $fast:expr,
        then: $then:expr,
        msg_type: $msg_type:path,
        owned: [$( $(#[$own_meta:meta])* $own:ident: $own_ty:ty = $get:expr ),* $(,)?],
        emit: $emit:expr $(,)?
    ) => {
        $crate::wire_enum! {
            #[doc = concat!("`ofp_packet_in_reason` (", $reason_spec, ").")]
            pub enum PacketInReason: u8 {
                /// `OFPR_NO_MATCH`: no matching flow (in 1.3, the table-miss
                /// flow entry).
                NoMatch = 0,
                /// `OFPR_ACTION`: an action said to send to the controller.
                Action = 1,
                $( $(#[$reason_meta])* $reason = $value, )*
            }
        }

        impl<T: AsRef<[u8]>> PacketInView<T> {
            #[doc = $doc]
            #[inline]
            pub fn new_checked(buffer: T) -> Result<Self, DecodeError> {
                let b = buffer.as_ref();
                if !($fast)(b) {
                    Self::check_slow(b)?;
                }
                Ok(PacketInView { buffer })
            }

            /// The full check, out of line so the fast path above stays small.
            #[cold]
            #[inline(never)]
            fn check_slow(b: &[u8]) -> Result<(), DecodeError> {
                $crate::header::Header::check_kind(
                    b,
                    $crate::version::Version::$version,
                    &[$crate::header::MsgKind::PacketIn],
                )?;
                ($then)(b)
            }

            /// `buffer_id` ([`BufferId::NONE`] when not buffered).
            #[inline]
            pub fn buffer_id(&self) -> BufferId {
                BufferId($crate::wire::get_u32(
                    self.buffer.as_ref(),
                    field::BUFFER_ID,
                ))
            }

            /// `total_len`: the length of the whole frame.
            #[inline]
            pub fn total_len(&self) -> u16 {
                $crate::wire::get_u16(self.buffer.as_ref(), field::TOTAL_LEN)
            }

            /// `reason`.
            #[inline]
            pub fn reason(&self) -> PacketInReason {
                PacketInReason::from($crate::wire::get_u8(self.buffer.as_ref(), field::REASON))
            }
        }

        impl<T: AsRef<[u8]> + AsMut<[u8]>> PacketInView<T> {
            /// Sets `buffer_id`.
            #[inline]
            pub fn set_buffer_id(&mut self, v: BufferId) {
                $crate::wire::set_u32(self.buffer.as_mut(), field::BUFFER_ID, v.0);
            }

            /// Sets `total_len`.
            #[inline]
            pub fn set_total_len(&mut self, v: u16) {
                $crate::wire::set_u16(self.buffer.as_mut(), field::TOTAL_LEN, v);
            }

            /// Sets `reason`.
            #[inline]
            pub fn set_reason(&mut self, v: PacketInReason) {
                $crate::wire::set_u8(self.buffer.as_mut(), field::REASON, v.into());
            }
        }

        #[doc = concat!("OFPT_PACKET_IN (`ofp_packet_in`, ", $reason_spec, "), owned.")]
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub struct PacketIn {
            /// `buffer_id`: where the switch buffered the packet, or
            /// [`BufferId::NONE`].
            pub buffer_id: BufferId,
            /// `total_len`: the length of the whole frame.
            pub total_len: u16,
            /// `reason`.
            pub reason: PacketInReason,
            $( $(#[$own_meta])* pub $own: $own_ty, )*
            /// The frame, or its first bytes when buffered.
            pub data: Vec<u8>,
        }

        impl PacketIn {
            /// The owned form of a checked view (never fails: a checked
            /// view has a value for every field).
            pub fn parse<T: AsRef<[u8]> + ?Sized>(
                v: &PacketInView<&T>,
            ) -> Result<Self, DecodeError> {
                let view = PacketInView {
                    buffer: v.buffer.as_ref(),
                };
                Ok(PacketIn {
                    buffer_id: view.buffer_id(),
                    total_len: view.total_len(),
                    reason: view.reason(),
                    $( $own: {
                        let get: fn(&PacketInView<&[u8]>) -> $own_ty = $get;
                        get(&view)
                    }, )*
                    data: view.data().to_vec(),
                })
            }

            /// Appends the whole message, [`PacketIn::buffer_len`] bytes
            /// (through [`encode_packet_in`]).
            pub fn emit(&self, xid: $crate::types::Xid, out: &mut Vec<u8>) {
                let emit: fn(&PacketIn, $crate::types::Xid, &mut Vec<u8>) = $emit;
                emit(self, xid, out);
            }
        }

        /// The first `N` bytes of an OFPT_PACKET_IN, for `encode_packet_in`:
        /// the header (placeholder length) and the fields both versions
        /// share; the rest zero, for the version's own fields.
        #[inline]
        fn packet_in_head<const N: usize>(
            xid: $crate::types::Xid,
            buffer_id: BufferId,
            total_len: u16,
            reason: PacketInReason,
        ) -> [u8; N] {
            let mut b = [0u8; N];
            b[..$crate::header::HEADER_LEN].copy_from_slice(&$crate::header::header_bytes(
                $crate::version::Version::$version,
                $msg_type.into(),
                xid,
            ));
            let mut v = PacketInView::new_unchecked(&mut b[..]);
            v.set_buffer_id(buffer_id);
            v.set_total_len(total_len);
            v.set_reason(reason);
            b
        }
    };
}
pub(crate) use packet_in_fields;

/// The fixed fields of OFPT_FLOW_MOD (`ofp_flow_mod`): `FlowModHead`,
/// the view's accessors of them (`FlowModView::head`, `set_head`) and
/// the owned `FlowMod`, for the version whose `field` module gives their
/// offsets. Both versions have `cookie`, `command`, `idle_timeout`,
/// `hard_timeout`, `priority`, `buffer_id`, `out_port` and `flags` (the
/// widths of `command` and `out_port` are the version's); `own` lists the
/// version's other fixed fields, which follow them in the structs, with
/// their accessors; `body` the owned form's fields after the fixed ones,
/// which `FlowMod::from_parts` takes in that order.
///
/// ```text
/// crate::twin::flow_mod_head! {
///     spec: "1.0.0 §5.3.3",
///     command: read |b: &[u8], f| ..., write |b: &mut [u8], f, v| ...,
///     out_port: read |b: &[u8], f| ..., write |b: &mut [u8], f, v| ...,
///     flags: "`OFPFF_*` bits",
///     own: [ /// `match`.
///            match_: Match10, read |b: &[u8]| ..., write |b: &mut [u8], v| ... ],
///     body: [ /// `actions`.
///             actions: Vec<Action> ],
/// }
/// ```
macro_rules! flow_mod_head {
    (
        spec: $spec:literal,
        command: read $read_command:expr, write $write_command:expr,
        out_port: read $read_out_port:expr, write $write_out_port:expr,
        flags: $flags_doc:literal,
        own: [$(
            $(#[$own_meta:meta])*
            $own:ident: $own_ty:ty, read $read_own:expr, write $write_own:expr
        );* $(;)?],
        body: [$( $(#[$body_meta:meta])* $body:ident: $body_ty:ty ),* $(,)?] $(,)?
    ) => {
        $crate::twin::flow_mod_head! {
            @struct flags: $flags_doc,
            #[doc = concat!("The fixed fields of an OFPT_FLOW_MOD (`ofp_flow_mod`, ", $spec, "),")]
            /// as the encoders take them: those both versions have, then the
            /// version's own.
            #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
            FlowModHead { $( $(#[$own_meta])* pub $own: $own_ty, )* }
        }

        $crate::twin::flow_mod_head! {
            @struct flags: $flags_doc,
            #[doc = concat!("OFPT_FLOW_MOD (`ofp_flow_mod`, ", $spec, "), owned: the fixed fields")]
            /// of [`FlowModHead`], then the body.
            #[derive(Debug, Clone, PartialEq, Eq, Hash)]
            FlowMod {
                $( $(#[$own_meta])* pub $own: $own_ty, )*
                $( $(#[$body_meta])* pub $body: $body_ty, )*
            }
        }

        impl<T: AsRef<[u8]>> FlowModView<T> {
            $crate::twin::flow_mod_head! {
                @get
                /// `cookie`.
                cookie: Cookie = |b: &[u8]| Cookie($crate::wire::get_u64(b, field::COOKIE));
                /// `command`.
                command: FlowModCommand = |b: &[u8]| ($read_command)(b, field::COMMAND);
                /// `idle_timeout`.
                idle_timeout: u16 = |b: &[u8]| $crate::wire::get_u16(b, field::IDLE_TIMEOUT);
                /// `hard_timeout`.
                hard_timeout: u16 = |b: &[u8]| $crate::wire::get_u16(b, field::HARD_TIMEOUT);
                /// `priority`.
                priority: u16 = |b: &[u8]| $crate::wire::get_u16(b, field::PRIORITY);
                /// `buffer_id`.
                buffer_id: BufferId = |b: &[u8]| BufferId($crate::wire::get_u32(b, field::BUFFER_ID));
                /// `out_port`.
                out_port: PortNo = |b: &[u8]| ($read_out_port)(b, field::OUT_PORT);
                /// `flags`.
                flags: u16 = |b: &[u8]| $crate::wire::get_u16(b, field::FLAGS);
                $( $(#[$own_meta])* $own: $own_ty = $read_own; )*
            }

            /// All fixed fields at once.
            #[inline]
            pub fn head(&self) -> FlowModHead {
                $crate::twin::flow_mod_head!(@copy self() => FlowModHead { $($own: self.$own(),)* })
            }
        }

        impl<T: AsRef<[u8]> + AsMut<[u8]>> FlowModView<T> {
            /// Sets every fixed field, each at its constant offset.
            #[inline]
            pub fn set_head(&mut self, h: &FlowModHead) {
                let b = self.buffer.as_mut();
                $crate::wire::set_u64(b, field::COOKIE, h.cookie.0);
                ($write_command)(b, field::COMMAND, h.command);
                $crate::wire::set_u16(b, field::IDLE_TIMEOUT, h.idle_timeout);
                $crate::wire::set_u16(b, field::HARD_TIMEOUT, h.hard_timeout);
                $crate::wire::set_u16(b, field::PRIORITY, h.priority);
                $crate::wire::set_u32(b, field::BUFFER_ID, h.buffer_id.0);
                ($write_out_port)(b, field::OUT_PORT, h.out_port);
                $crate::wire::set_u16(b, field::FLAGS, h.flags);
                $( ($write_own)(&mut *b, h.$own); )*
            }

            $crate::twin::flow_mod_head! {
                @set
                /// Sets `buffer_id`.
                set_buffer_id: BufferId =
                    |b: &mut [u8], v: BufferId| $crate::wire::set_u32(b, field::BUFFER_ID, v.0);
                /// Sets `priority`.
                set_priority: u16 = |b: &mut [u8], v| $crate::wire::set_u16(b, field::PRIORITY, v);
            }
        }

        impl FlowMod {
            /// The fixed fields.
            pub fn head(&self) -> FlowModHead {
                $crate::twin::flow_mod_head!(@copy self => FlowModHead { $($own: self.$own,)* })
            }

            /// A FLOW_MOD from its fixed fields and its body.
            pub fn from_parts(h: FlowModHead, $( $body: $body_ty ),*) -> FlowMod {
                $crate::twin::flow_mod_head!(@copy h => FlowMod { $($own: h.$own,)* $($body,)* })
            }
        }
    };
    // The view's getters, each reading its field with `read`.
    (@get $( $(#[$meta:meta])* $name:ident: $ty:ty = $read:expr; )*) => {
        $(
            $(#[$meta])*
            #[inline]
            pub fn $name(&self) -> $ty {
                ($read)(self.buffer.as_ref())
            }
        )*
    };
    // The view's setters, each writing its field with `write`.
    (@set $( $(#[$meta:meta])* $name:ident: $ty:ty = $write:expr; )*) => {
        $(
            $(#[$meta])*
            #[inline]
            pub fn $name(&mut self, v: $ty) {
                ($write)(self.buffer.as_mut(), v)
            }
        )*
    };
    // A struct with the fixed fields both versions have, then `rest`.
    (@struct flags: $flags_doc:literal, $(#[$meta:meta])* $name:ident { $($rest:tt)* }) => {
        $(#[$meta])*
        pub struct $name {
            /// `cookie`.
            pub cookie: Cookie,
            /// `command`.
            pub command: FlowModCommand,
            /// `idle_timeout` in seconds (0: none).
            pub idle_timeout: u16,
            /// `hard_timeout` in seconds (0: none).
            pub hard_timeout: u16,
            /// `priority`.
            pub priority: u16,
            /// `buffer_id`: a buffered packet to apply the flow to, or
            /// [`BufferId::NONE`].
            pub buffer_id: BufferId,
            /// `out_port`: for deletes, require an output action to this
            /// port; [`PortNo::ANY`] for no restriction.
            pub out_port: PortNo,
            #[doc = concat!("`flags`: ", $flags_doc, ".")]
            pub flags: u16,
            $($rest)*
        }
    };
    // `$name { .. }` with the shared fixed fields of `$from`, read with
    // its getters when `()` follows it, then `rest`.
    (@copy $from:ident $(($($call:tt)*))? => $name:ident { $($rest:tt)* }) => {
        $name {
            cookie: $from.cookie$(($($call)*))?,
            command: $from.command$(($($call)*))?,
            idle_timeout: $from.idle_timeout$(($($call)*))?,
            hard_timeout: $from.hard_timeout$(($($call)*))?,
            priority: $from.priority$(($($call)*))?,
            buffer_id: $from.buffer_id$(($($call)*))?,
            out_port: $from.out_port$(($($call)*))?,
            flags: $from.flags$(($($call)*))?,
            $($rest)*
        }
    };
}
pub(crate) use flow_mod_head;

/// A version's `Message` (one owned message, a variant per message type
/// of the version) with `msg_type`, `encoded_len` and `encode`. The
/// variants both versions have are listed here; `own` gives the version's
/// others, each named as its message type. `encode` writes the hot
/// messages, HELLO, ECHO and BARRIER through their own encoders, and any
/// other message as a header and the body that the version's
/// `Message::emit_body` appends. `header_only` lists the version's own
/// messages that are a bare header.
///
/// ```text
/// crate::twin::message! {
///     version: V10, msg_type: MsgType10, doc: "...",
///     header_only: [],
///     own: [ /// OFPT_VENDOR.
///            Vendor { vendor: u32, data: Vec<u8> }, ... ],
/// }
/// ```
macro_rules! message {
    (
        version: $version:ident,
        msg_type: $msg_type:ident,
        doc: $doc:literal,
        header_only: [$($header_only:ident),* $(,)?],
        bodies: $emit:ident, |$out:ident| { $($body_arms:tt)* },
        own: [$(
            $(#[$meta:meta])*
            $own:ident
            $(( $($tuple:ty),* ))?
            $({ $( $(#[$field_meta:meta])* $field:ident: $field_ty:ty ),* $(,)? })?
        ),* $(,)?] $(,)?
    ) => {
        #[doc = $doc]
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum Message {
            /// OFPT_HELLO, with the elements of its body (1.0 defines none:
            /// they are kept when they parse).
            Hello(Hello),
            /// OFPT_ERROR.
            Error(ErrorMsg),
            /// OFPT_ECHO_REQUEST with its payload.
            EchoRequest(Vec<u8>),
            /// OFPT_ECHO_REPLY with its payload.
            EchoReply(Vec<u8>),
            /// OFPT_FEATURES_REQUEST.
            FeaturesRequest,
            /// OFPT_FEATURES_REPLY.
            FeaturesReply(SwitchFeatures),
            /// OFPT_GET_CONFIG_REQUEST.
            GetConfigRequest,
            /// OFPT_GET_CONFIG_REPLY.
            GetConfigReply(SwitchConfig),
            /// OFPT_SET_CONFIG.
            SetConfig(SwitchConfig),
            /// OFPT_PACKET_IN.
            PacketIn(PacketIn),
            /// OFPT_FLOW_REMOVED.
            FlowRemoved(FlowRemoved),
            /// OFPT_PORT_STATUS.
            PortStatus(PortStatus),
            /// OFPT_PACKET_OUT.
            PacketOut(PacketOut),
            /// OFPT_FLOW_MOD.
            FlowMod(FlowMod),
            /// OFPT_PORT_MOD.
            PortMod(PortMod),
            /// OFPT_BARRIER_REQUEST.
            BarrierRequest,
            /// OFPT_BARRIER_REPLY.
            BarrierReply,
            /// OFPT_QUEUE_GET_CONFIG_REQUEST (`ofp_queue_get_config_request`).
            QueueGetConfigRequest {
                /// Port to query (`PortNo::ANY` for all, in 1.3).
                port: PortNo,
            },
            $(
                $(#[$meta])*
                $own
                $(( $($tuple),* ))?
                $({ $( $(#[$field_meta])* $field: $field_ty ),* })?,
            )*
        }

        impl Message {
            /// The message's type.
            pub fn msg_type(&self) -> $msg_type {
                use $msg_type as T;
                match self {
                    Message::Hello(_) => T::Hello,
                    Message::Error(_) => T::Error,
                    Message::EchoRequest(_) => T::EchoRequest,
                    Message::EchoReply(_) => T::EchoReply,
                    Message::FeaturesRequest => T::FeaturesRequest,
                    Message::FeaturesReply(_) => T::FeaturesReply,
                    Message::GetConfigRequest => T::GetConfigRequest,
                    Message::GetConfigReply(_) => T::GetConfigReply,
                    Message::SetConfig(_) => T::SetConfig,
                    Message::PacketIn(_) => T::PacketIn,
                    Message::FlowRemoved(_) => T::FlowRemoved,
                    Message::PortStatus(_) => T::PortStatus,
                    Message::PacketOut(_) => T::PacketOut,
                    Message::FlowMod(_) => T::FlowMod,
                    Message::PortMod(_) => T::PortMod,
                    Message::BarrierRequest => T::BarrierRequest,
                    Message::BarrierReply => T::BarrierReply,
                    Message::QueueGetConfigRequest { .. } => T::QueueGetConfigRequest,
                    $( Message::$own { .. } => T::$own, )*
                }
            }

            /// Appends the whole message with transaction id `xid`. A
            /// message too long for the 16-bit length field is written
            /// with a saturated length (the caller's bug; it never panics).
            pub fn encode(&self, xid: Xid, out: &mut Vec<u8>) {
                match self {
                    Message::Hello(h) => h.encode(Version::$version, xid, out),
                    Message::EchoRequest(p) => encode_echo_request(out, xid, p),
                    Message::EchoReply(p) => encode_echo_reply(out, xid, p),
                    Message::PacketIn(p) => p.emit(xid, out),
                    Message::PacketOut(p) => p.emit(xid, out),
                    Message::FlowMod(f) => f.emit(xid, out),
                    Message::BarrierRequest => encode_barrier_request(out, xid),
                    Message::BarrierReply => encode_barrier_reply(out, xid),
                    _ => {
                        let at = start_message(out, Version::$version, self.msg_type().into(), xid);
                        self.emit_body(out);
                        finish_message(out, at);
                    }
                }
            }

            /// Bytes [`Message::encode`] appends: from the structure for
            /// the hot messages and the header-only ones; the other bodies
            /// are written into a scratch buffer and counted (allocates;
            /// off the hot path).
            pub fn encoded_len(&self) -> usize {
                match self {
                    Message::EchoRequest(p) | Message::EchoReply(p) => HEADER_LEN + p.len(),
                    Message::PacketIn(p) => p.buffer_len(),
                    Message::PacketOut(p) => p.buffer_len(),
                    Message::FlowMod(f) => f.buffer_len(),
                    Message::FeaturesRequest
                    | Message::GetConfigRequest
                    $( | Message::$header_only )*
                    | Message::BarrierRequest
                    | Message::BarrierReply => HEADER_LEN,
                    _ => {
                        let mut scratch = Vec::new();
                        self.encode(Xid(0), &mut scratch);
                        scratch.len()
                    }
                }
            }

            /// Appends the body of a message that has no encoder of its
            /// own.
            fn emit_body(&self, $out: &mut Vec<u8>) {
                match self {
                    Message::Error(e) => e.$emit($out),
                    Message::FeaturesReply(f) => f.$emit($out),
                    Message::GetConfigReply(c) | Message::SetConfig(c) => c.encode_body($out),
                    Message::FlowRemoved(f) => f.$emit($out),
                    Message::PortStatus(p) => p.$emit($out),
                    Message::PortMod(p) => p.$emit($out),
                    $($body_arms)*
                    // Written by `encode` through their own encoders, or
                    // a bare header.
                    Message::Hello(_)
                    | Message::EchoRequest(_)
                    | Message::EchoReply(_)
                    | Message::PacketIn(_)
                    | Message::PacketOut(_)
                    | Message::FlowMod(_)
                    | Message::BarrierRequest
                    | Message::BarrierReply
                    | Message::FeaturesRequest
                    | Message::GetConfigRequest
                    $( | Message::$header_only )* => {}
                }
            }
        }
    };
}
pub(crate) use message;

/// `ofp_queue_stats`, one queue's counters, with its `parse` and `emit`,
/// for the version whose port layout is given: both versions have the
/// port (the version's width and padding, read and written by `port`),
/// `queue_id` and the three `tx_*` counters; `extra` lists the `u32`
/// fields the version adds after them.
///
/// ```text
/// crate::twin::queue_stats! {
///     spec: "1.0.0 §5.3.5",
///     port: read |r: &mut Reader<'_>| -> Result<PortNo, DecodeError> { ... },
///         write |out: &mut Vec<u8>, p| ...,
///     extra: [],
/// }
/// ```
macro_rules! queue_stats {
    (
        spec: $spec:literal,
        port: read $read_port:expr, write $write_port:expr,
        extra: [$( $(#[$extra_meta:meta])* $extra:ident ),* $(,)?] $(,)?
    ) => {
        #[doc = concat!("`ofp_queue_stats` (", $spec, "): one queue's counters.")]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub struct QueueStats {
            /// `port_no`.
            pub port_no: PortNo,
            /// `queue_id`.
            pub queue_id: u32,
            /// `tx_bytes`.
            pub tx_bytes: u64,
            /// `tx_packets`.
            pub tx_packets: u64,
            /// `tx_errors`.
            pub tx_errors: u64,
            $( $(#[$extra_meta])* pub $extra: u32, )*
        }

        impl QueueStats {
            /// Decodes `ofp_queue_stats`.
            pub fn parse(
                r: &mut $crate::wire::Reader<'_>,
            ) -> Result<Self, $crate::error::DecodeError> {
                Ok(QueueStats {
                    port_no: ($read_port)(&mut *r)?,
                    queue_id: r.u32("ofp_queue_stats.queue_id")?,
                    tx_bytes: r.u64("ofp_queue_stats.tx_bytes")?,
                    tx_packets: r.u64("ofp_queue_stats.tx_packets")?,
                    tx_errors: r.u64("ofp_queue_stats.tx_errors")?,
                    $( $extra: r.u32(concat!("ofp_queue_stats.", stringify!($extra)))?, )*
                })
            }

            /// Appends `ofp_queue_stats`.
            pub fn emit(&self, out: &mut Vec<u8>) {
                use $crate::wire::Put;
                ($write_port)(&mut *out, self.port_no);
                out.put_u32(self.queue_id);
                out.put_u64(self.tx_bytes);
                out.put_u64(self.tx_packets);
                out.put_u64(self.tx_errors);
                $( out.put_u32(self.$extra); )*
            }
        }
    };
}
pub(crate) use queue_stats;
