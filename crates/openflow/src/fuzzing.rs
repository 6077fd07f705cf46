//! The checks the fuzz targets run (`crates/openflow/fuzz`), kept in the
//! library so that the regression test over the stored corpus
//! (`tests/fuzz_corpus.rs`) runs exactly the same code on stable Rust.
//!
//! Both functions panic only when the codec breaks its contract (see the
//! crate documentation): a decoder panicking, or a decoded message that
//! does not survive encode -> decode unchanged.

use crate::{PortNo, hello, neutral, packet, v10, v13};

/// Feeds `data` to every decoder and view, in both versions. Must not panic.
pub fn decode_any(data: &[u8]) {
    let _ = crate::frame(data);
    let _ = crate::Header::parse(data);
    let _ = v10::decode(data);
    let _ = v13::decode(data);
    let _ = hello::Hello::decode_body(data, 8);
    if let Ok(pi) = neutral::PacketIn::parse(data) {
        let _ = pi.key();
        let _ = (pi.in_port(), pi.buffer_id(), pi.reason(), pi.data());
    }
    if let Ok(v) = v10::FlowModView::parse(data) {
        let _ = v.match_();
        v.actions().for_each(drop);
    }
    if let Ok(v) = v10::PacketOutView::parse(data) {
        v.actions().for_each(drop);
        let _ = v.data();
    }
    if let Ok(v) = v13::FlowModView::parse(data) {
        v.match_fields().for_each(drop);
        v.instructions().for_each(drop);
    }
    if let Ok(v) = v13::PacketOutView::parse(data) {
        v.actions().for_each(drop);
        let _ = v.data();
    }
    let key = packet::FlowKey::extract(PortNo(1), data);
    let _ = key.to_match10();
    let mut out = Vec::new();
    key.emit_oxm_match(&mut out);
}

/// Decode, then encode, then decode again: the two decoded messages must be
/// equal and the two encodings identical.
pub fn roundtrip(data: &[u8]) {
    if let Ok((xid, m)) = v10::decode(data) {
        let mut out = Vec::new();
        m.encode(xid, &mut out);
        let (xid2, m2) =
            v10::decode(&out).unwrap_or_else(|e| panic!("1.0 re-decode of {m:?} failed: {e}"));
        assert_eq!((xid, &m), (xid2, &m2), "1.0 round trip changed the message");
        let mut again = Vec::new();
        m2.encode(xid2, &mut again);
        assert_eq!(out, again, "1.0 encoding is not stable");
    }
    if let Ok((xid, m)) = v13::decode(data) {
        let mut out = Vec::new();
        m.encode(xid, &mut out);
        let (xid2, m2) =
            v13::decode(&out).unwrap_or_else(|e| panic!("1.3 re-decode of {m:?} failed: {e}"));
        assert_eq!((xid, &m), (xid2, &m2), "1.3 round trip changed the message");
        let mut again = Vec::new();
        m2.encode(xid2, &mut again);
        assert_eq!(out, again, "1.3 encoding is not stable");
    }
}
