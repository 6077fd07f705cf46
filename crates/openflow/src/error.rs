//! Decode errors, each of which names the OFPT_ERROR type and code the
//! controller should send back (OpenFlow 1.0.0 §5.4.4, 1.3.5 §7.4.4).
//!
//! A [`DecodeError`] says what was wrong ([`ErrorKind`]), where (the byte
//! offset within the message) and in which structure. [`DecodeError::reply`]
//! maps it to the wire error for the connection's version, so the runtime
//! never has to guess.

use crate::version::Version;
use std::fmt;

/// Everything that can be wrong with received bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input ended before a structure was complete.
    TooShort {
        /// Bytes the structure needed from this offset.
        need: usize,
        /// Bytes that were left.
        have: usize,
    },
    /// A length field disagrees with the structure or the bytes present.
    BadLength {
        /// The length the field claimed.
        claimed: usize,
    },
    /// The header's version is not the one this decoder handles.
    BadVersion(u8),
    /// Unknown message type (`ofp_type`).
    UnknownType(u8),
    /// Unknown statistics / multipart type.
    UnknownStatsType(u16),
    /// A vendor / experimenter id the decoder does not know where a body is
    /// required.
    BadExperimenter(u32),
    /// Unknown action type.
    BadActionType(u16),
    /// An action whose length field is wrong for its type or not a multiple
    /// of 8.
    BadActionLength(u16),
    /// Unknown instruction type (1.3).
    BadInstructionType(u16),
    /// An instruction whose length field is wrong.
    BadInstructionLength(u16),
    /// Match type other than OFPMT_OXM (1.3), or malformed `ofp_match`.
    BadMatchType(u16),
    /// A match whose length field is wrong.
    BadMatchLength(u16),
    /// An OXM TLV whose class/field is unknown or whose length does not fit
    /// the field.
    BadOxmField {
        /// `oxm_class`.
        class: u16,
        /// `oxm_field` (without the has-mask bit).
        field: u8,
    },
    /// An OXM TLV whose length disagrees with its field and has-mask bit.
    BadOxmLength {
        /// `oxm_field`.
        field: u8,
        /// `oxm_length` as received.
        length: u8,
    },
    /// The same OXM field appears twice in one match.
    DuplicateOxmField(u8),
    /// A HELLO element that is malformed.
    BadHelloElement,
    /// A field holds a value that the spec does not allow (e.g. an unknown
    /// enum value where no unknown is representable).
    BadValue {
        /// The value.
        value: u64,
    },
    /// A table feature property (1.3 §7.3.5.5.2) whose length is wrong:
    /// OFPET_TABLE_FEATURES_FAILED / OFPTFFC_BAD_LEN.
    BadTablePropLength(u16),
    /// Bytes left after a complete structure.
    TrailingBytes {
        /// How many.
        extra: usize,
    },
}

/// A received message could not be decoded.
///
/// Implements `std::error::Error + Send + Sync`; carries the reply that the
/// controller should send ([`DecodeError::reply`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    kind: ErrorKind,
    offset: usize,
    what: &'static str,
}

impl DecodeError {
    /// An error of `kind` at absolute byte `offset`, while decoding `what`.
    pub fn new(kind: ErrorKind, offset: usize, what: &'static str) -> Self {
        DecodeError { kind, offset, what }
    }

    /// What was wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// Byte offset within the message where the problem was found.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The structure or field being decoded.
    pub fn what(&self) -> &'static str {
        self.what
    }

    /// The OFPT_ERROR type and code to send back on a connection of
    /// `version`.
    pub fn reply(&self, version: Version) -> ErrorCode {
        use ErrorKind as K;
        match version {
            Version::V10 => {
                // OpenFlow 1.0.0 §5.4.4: ofp_error_type / ofp_*_code.
                const BAD_REQUEST: u16 = 1;
                const BAD_ACTION: u16 = 2;
                let (t, c) = match self.kind {
                    K::BadVersion(_) => (BAD_REQUEST, 0),
                    K::UnknownType(_) => (BAD_REQUEST, 1),
                    K::UnknownStatsType(_) => (BAD_REQUEST, 2),
                    K::BadExperimenter(_) => (BAD_REQUEST, 3),
                    K::BadActionType(_) => (BAD_ACTION, 0),
                    K::BadActionLength(_) => (BAD_ACTION, 1),
                    K::BadValue { .. } => (BAD_ACTION, 5),
                    K::TooShort { .. }
                    | K::BadLength { .. }
                    | K::TrailingBytes { .. }
                    | K::BadMatchType(_)
                    | K::BadMatchLength(_)
                    | K::BadOxmField { .. }
                    | K::BadOxmLength { .. }
                    | K::DuplicateOxmField(_)
                    | K::BadInstructionType(_)
                    | K::BadInstructionLength(_)
                    | K::BadTablePropLength(_)
                    | K::BadHelloElement => (BAD_REQUEST, 6),
                };
                ErrorCode::new(t, c)
            }
            Version::V13 => {
                // OpenFlow 1.3.5 §7.4.4: ofp_error_type / ofp_*_code.
                const BAD_REQUEST: u16 = 1;
                const BAD_ACTION: u16 = 2;
                const BAD_INSTRUCTION: u16 = 3;
                const BAD_MATCH: u16 = 4;
                const TABLE_FEATURES_FAILED: u16 = 13;
                let (t, c) = match self.kind {
                    K::BadVersion(_) => (BAD_REQUEST, 0),
                    K::UnknownType(_) => (BAD_REQUEST, 1),
                    K::UnknownStatsType(_) => (BAD_REQUEST, 2),
                    K::BadExperimenter(_) => (BAD_REQUEST, 3),
                    K::TooShort { .. }
                    | K::BadLength { .. }
                    | K::TrailingBytes { .. }
                    | K::BadHelloElement => (BAD_REQUEST, 6),
                    K::BadActionType(_) => (BAD_ACTION, 0),
                    K::BadActionLength(_) => (BAD_ACTION, 1),
                    K::BadValue { .. } => (BAD_ACTION, 5),
                    K::BadInstructionType(_) => (BAD_INSTRUCTION, 0),
                    K::BadInstructionLength(_) => (BAD_INSTRUCTION, 7),
                    K::BadMatchType(_) => (BAD_MATCH, 0),
                    K::BadMatchLength(_) => (BAD_MATCH, 1),
                    K::BadOxmLength { .. } => (BAD_MATCH, 1),
                    K::BadOxmField { .. } => (BAD_MATCH, 6),
                    K::DuplicateOxmField(_) => (BAD_MATCH, 10),
                    K::BadTablePropLength(_) => (TABLE_FEATURES_FAILED, 3),
                };
                ErrorCode::new(t, c)
            }
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ErrorKind as K;
        write!(f, "{} at byte {}: ", self.what, self.offset)?;
        match &self.kind {
            K::TooShort { need, have } => write!(f, "needs {need} bytes, {have} left"),
            K::BadLength { claimed } => write!(f, "length field {claimed} is invalid"),
            K::BadVersion(v) => write!(f, "unexpected version 0x{v:02x}"),
            K::UnknownType(t) => write!(f, "unknown message type {t}"),
            K::UnknownStatsType(t) => write!(f, "unknown stats/multipart type {t}"),
            K::BadExperimenter(e) => write!(f, "unknown vendor/experimenter 0x{e:08x}"),
            K::BadActionType(t) => write!(f, "unknown action type {t}"),
            K::BadActionLength(l) => write!(f, "bad action length {l}"),
            K::BadInstructionType(t) => write!(f, "unknown instruction type {t}"),
            K::BadInstructionLength(l) => write!(f, "bad instruction length {l}"),
            K::BadMatchType(t) => write!(f, "unsupported match type {t}"),
            K::BadMatchLength(l) => write!(f, "bad match length {l}"),
            K::BadOxmField { class, field } => {
                write!(f, "unknown OXM field class 0x{class:04x} field {field}")
            }
            K::BadOxmLength { field, length } => {
                write!(f, "OXM field {field} has bad length {length}")
            }
            K::DuplicateOxmField(field) => write!(f, "OXM field {field} appears twice"),
            K::BadHelloElement => write!(f, "malformed HELLO element"),
            K::BadValue { value } => write!(f, "value {value} is not allowed here"),
            K::BadTablePropLength(l) => write!(f, "bad table feature property length {l}"),
            K::TrailingBytes { extra } => write!(f, "{extra} unexpected trailing bytes"),
        }
    }
}

impl std::error::Error for DecodeError {}

/// An OFPT_ERROR `type` and `code` pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ErrorCode {
    /// `ofp_error_type`.
    pub error_type: u16,
    /// The type-specific code.
    pub code: u16,
}

impl ErrorCode {
    /// A pair.
    pub const fn new(error_type: u16, code: u16) -> Self {
        ErrorCode { error_type, code }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_to_version_specific_codes() {
        let e = DecodeError::new(ErrorKind::UnknownType(99), 1, "header");
        assert_eq!(e.reply(Version::V10), ErrorCode::new(1, 1));
        assert_eq!(e.reply(Version::V13), ErrorCode::new(1, 1));
        let e = DecodeError::new(ErrorKind::DuplicateOxmField(3), 40, "oxm");
        assert_eq!(e.reply(Version::V13), ErrorCode::new(4, 10));
        assert_eq!(e.reply(Version::V10), ErrorCode::new(1, 6));
        assert_eq!(e.to_string(), "oxm at byte 40: OXM field 3 appears twice");
    }
}
