//! The handshake, liveness and error messages, in either version.

use crate::error::ErrorCode;
use crate::hello::Hello;
use crate::types::Xid;
use crate::version::Version;
use crate::{v10, v13};

/// Appends an ECHO_REPLY echoing a request's `xid` and `payload`
/// (1.0.0 §5.5.3, 1.3.5 §7.5.3).
pub fn encode_echo_reply(out: &mut Vec<u8>, version: Version, xid: Xid, payload: &[u8]) {
    match version {
        Version::V10 => v10::encode_echo_reply(out, xid, payload),
        Version::V13 => v13::encode_echo_reply(out, xid, payload),
    }
}

/// Appends an ECHO_REQUEST with `payload` (1.0.0 §5.5.2, 1.3.5 §7.5.2).
pub fn encode_echo_request(out: &mut Vec<u8>, version: Version, xid: Xid, payload: &[u8]) {
    match version {
        Version::V10 => v10::encode_echo_request(out, xid, payload),
        Version::V13 => v13::encode_echo_request(out, xid, payload),
    }
}

/// Appends an OFPT_ERROR with `code` (e.g. [`DecodeError::reply`](crate::DecodeError::reply)) and
/// `data`, usually the first 64 bytes of the offending message, or ASCII
/// text for HELLO_FAILED (1.0.0 §5.4.4, 1.3.5 §7.4.4). `data` is cut so
/// the message fits its 16-bit length. Allocates a copy of `data` (errors
/// are off the hot path and go through the owned encoders).
pub fn encode_error(out: &mut Vec<u8>, version: Version, xid: Xid, code: ErrorCode, data: &[u8]) {
    // Header (8) + type (2) + code (2).
    let data = data.get(..0xffff - 12).unwrap_or(data).to_vec();
    match version {
        Version::V10 => v10::Message::Error(v10::ErrorMsg {
            error_type: code.error_type,
            code: code.code,
            data,
        })
        .encode(xid, out),
        Version::V13 => v13::Message::Error(v13::ErrorMsg::Standard {
            error_type: code.error_type.into(),
            code: code.code,
            data,
        })
        .encode(xid, out),
    }
}

/// Appends a BARRIER_REQUEST (1.0.0 §5.3.7, 1.3.5 §7.3.8).
pub fn encode_barrier_request(out: &mut Vec<u8>, version: Version, xid: Xid) {
    match version {
        Version::V10 => v10::encode_barrier_request(out, xid),
        Version::V13 => v13::encode_barrier_request(out, xid),
    }
}

/// Appends baton's HELLO with header version `version` and a bitmap of
/// the versions baton speaks (1.3.5 §7.5.1). Allocates (connection setup
/// only).
pub fn encode_hello(out: &mut Vec<u8>, version: Version, xid: Xid) {
    Hello::baton().encode(version, xid, out);
}

/// Appends a FEATURES_REQUEST (1.0.0 §5.3.1, 1.3.5 §7.3.1).
pub fn encode_features_request(out: &mut Vec<u8>, version: Version, xid: Xid) {
    match version {
        Version::V10 => v10::Message::FeaturesRequest.encode(xid, out),
        Version::V13 => v13::Message::FeaturesRequest.encode(xid, out),
    }
}

/// Appends a SET_CONFIG with normal fragment handling and `miss_send_len`
/// (1.0.0 §5.3.2, 1.3.5 §7.3.2; 1.3's `OFPCML_NO_BUFFER` 0xffff sends
/// whole packets).
pub fn encode_set_config(out: &mut Vec<u8>, version: Version, xid: Xid, miss_send_len: u16) {
    match version {
        Version::V10 => v10::Message::SetConfig(v10::SwitchConfig {
            flags: 0,
            miss_send_len,
        })
        .encode(xid, out),
        Version::V13 => v13::Message::SetConfig(v13::SwitchConfig {
            flags: 0,
            miss_send_len,
        })
        .encode(xid, out),
    }
}
