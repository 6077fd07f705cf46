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
    if let Ok(v) = v10::PacketInView::new_checked(data) {
        let _ = (
            v.xid(),
            v.buffer_id(),
            v.total_len(),
            v.in_port(),
            v.reason(),
        );
        let _ = v10::PacketIn::parse(&v).map(|p| p.buffer_len());
    }
    if let Ok(v) = v10::FlowModView::new_checked(data) {
        let _ = (v.xid(), v.head());
        v.actions().for_each(drop);
        let _ = v10::FlowMod::parse(&v).map(|f| f.buffer_len());
    }
    if let Ok(v) = v10::PacketOutView::new_checked(data) {
        let _ = (v.xid(), v.buffer_id(), v.in_port());
        v.actions().for_each(drop);
        let _ = v.data();
        let _ = v10::PacketOut::parse(&v).map(|p| p.buffer_len());
    }
    if let Ok(v) = v13::PacketInView::new_checked(data) {
        let _ = (
            v.xid(),
            v.buffer_id(),
            v.total_len(),
            v.reason(),
            v.table_id(),
        );
        let _ = (v.cookie(), v.in_port(), v.data());
        assert!(v.match_fields().all(|o| o.is_ok()), "checked OXMs fail");
        let _ = v13::PacketIn::parse(&v).map(|p| p.buffer_len());
    }
    if let Ok(v) = v13::FlowModView::new_checked(data) {
        let _ = (v.xid(), v.head());
        assert!(v.match_fields().all(|o| o.is_ok()), "checked OXMs fail");
        assert!(
            v.instructions().all(|i| i.is_ok()),
            "checked instructions fail"
        );
        let _ = v13::FlowMod::parse(&v).map(|f| f.buffer_len());
    }
    if let Ok(v) = v13::PacketOutView::new_checked(data) {
        let _ = (v.xid(), v.buffer_id(), v.in_port());
        v.actions().for_each(drop);
        let _ = v.data();
        let _ = v13::PacketOut::parse(&v).map(|p| p.buffer_len());
    }
    if let Ok(v) = v10::EchoView::new_checked(data) {
        let _ = (v.xid(), v.direction(), v.payload());
    }
    if let Ok(v) = v13::EchoView::new_checked(data) {
        let _ = (v.xid(), v.direction(), v.payload());
    }
    if let Ok(v) = v10::BarrierView::new_checked(data) {
        let _ = (v.xid(), v.direction());
    }
    if let Ok(v) = v13::BarrierView::new_checked(data) {
        let _ = (v.xid(), v.direction());
    }
    for version in [crate::Version::V10, crate::Version::V13] {
        let _ = crate::Header::check(data, version);
    }
    let key = packet::FlowKey::extract(PortNo(1), data);
    let _ = v10::Match10::exact(&key);
    let mut out = Vec::new();
    v13::oxm::emit_exact_match(&mut out, &key);
}

/// Decode, then encode, then decode again: the two decoded messages must be
/// equal and the two encodings identical.
pub fn roundtrip(data: &[u8]) {
    if let Ok((xid, m)) = v10::decode(data) {
        let mut out = Vec::new();
        m.encode(xid, &mut out);
        assert_eq!(m.encoded_len(), out.len(), "1.0 encoded_len of {m:?}");
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
        assert_eq!(m.encoded_len(), out.len(), "1.3 encoded_len of {m:?}");
        let (xid2, m2) =
            v13::decode(&out).unwrap_or_else(|e| panic!("1.3 re-decode of {m:?} failed: {e}"));
        assert_eq!((xid, &m), (xid2, &m2), "1.3 round trip changed the message");
        let mut again = Vec::new();
        m2.encode(xid2, &mut again);
        assert_eq!(out, again, "1.3 encoding is not stable");
    }
}
