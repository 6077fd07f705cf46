//! [`Message`]: any message of either version, decoded into the owned
//! form of its version.

use crate::error::{DecodeError, ErrorKind};
use crate::types::Xid;
use crate::version::Version;
use crate::{v10, v13};

/// A whole message of either version, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// An OpenFlow 1.0 message.
    V10(v10::Message),
    /// An OpenFlow 1.3 message.
    V13(v13::Message),
}

impl Message {
    /// Decodes one whole message, choosing the version from its header
    /// ([`ErrorKind::BadVersion`] for a version baton does not speak).
    pub fn decode(msg: &[u8]) -> Result<(Xid, Message), DecodeError> {
        match msg.first().copied().and_then(Version::from_wire) {
            Some(Version::V10) => v10::decode(msg).map(|(x, m)| (x, Message::V10(m))),
            Some(Version::V13) => v13::decode(msg).map(|(x, m)| (x, Message::V13(m))),
            None => Err(match msg.first() {
                None => DecodeError::new(ErrorKind::TooShort { need: 8, have: 0 }, 0, "ofp_header"),
                Some(&v) => DecodeError::new(ErrorKind::BadVersion(v), 0, "ofp_header.version"),
            }),
        }
    }

    /// Appends the message with `xid`.
    pub fn encode(&self, xid: Xid, out: &mut Vec<u8>) {
        match self {
            Message::V10(m) => m.encode(xid, out),
            Message::V13(m) => m.encode(xid, out),
        }
    }

    /// The message's version.
    pub fn version(&self) -> Version {
        match self {
            Message::V10(_) => Version::V10,
            Message::V13(_) => Version::V13,
        }
    }
}

impl From<v10::Message> for Message {
    fn from(m: v10::Message) -> Message {
        Message::V10(m)
    }
}

impl From<v13::Message> for Message {
    fn from(m: v13::Message) -> Message {
        Message::V13(m)
    }
}
