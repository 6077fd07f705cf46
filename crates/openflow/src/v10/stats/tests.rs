//! Tests of the stats bodies.

use super::*;
use crate::error::{DecodeError, ErrorKind};
use crate::types::{Cookie, PortNo};
use crate::v10::{Action, Match10};
use crate::wire::Reader;

fn req_round_trip(body: &[u8]) -> Result<StatsRequest, DecodeError> {
    let s = StatsRequest::parse(&mut Reader::with_base(body, 8))?;
    let mut out = Vec::new();
    s.emit(&mut out);
    assert_eq!(out, body);
    Ok(s)
}

#[test]
fn requests_decode() {
    let s = req_round_trip(&[0, 0, 0, 0]).unwrap();
    assert_eq!(s.body, StatsRequestBody::Desc);
    let s = req_round_trip(&[0, 4, 0, 0, 0xff, 0xff, 0, 0, 0, 0, 0, 0]).unwrap();
    assert_eq!(
        s.body,
        StatsRequestBody::Port {
            port_no: PortNo::ANY
        }
    );
    let s = req_round_trip(&[0xff, 0xff, 0, 0, 0, 0, 0x23, 0x20, 9]).unwrap();
    assert_eq!(
        s.body,
        StatsRequestBody::Vendor {
            vendor: 0x2320,
            data: vec![9]
        }
    );
}

#[test]
fn errors_have_precise_kinds() {
    let e = StatsRequest::parse(&mut Reader::with_base(&[0, 6, 0, 0], 8)).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::UnknownStatsType(6));
    assert_eq!(e.offset(), 8);
    let e = StatsReply::parse(&mut Reader::new(&[0, 9, 0, 1])).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::UnknownStatsType(9));
    // Desc request with a body.
    let e = StatsRequest::parse(&mut Reader::new(&[0, 0, 0, 0, 1])).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::TrailingBytes { extra: 1 });
    // Port stats reply not a multiple of 104.
    let e = StatsReply::parse(&mut Reader::new(&[0, 4, 0, 0, 1])).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::BadLength { claimed: 1 });
    // Flow stats entry claiming less than its fixed part.
    let mut b = vec![0, 1, 0, 0, 0, 8];
    b.resize(4 + 88, 0);
    let e = StatsReply::parse(&mut Reader::new(&b)).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::BadLength { claimed: 8 });
    // Flow stats entry claiming more than is there.
    b[4..6].copy_from_slice(&96u16.to_be_bytes());
    let e = StatsReply::parse(&mut Reader::new(&b)).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::BadLength { claimed: 96 });
    // Vendor without a vendor id.
    assert!(StatsReply::parse(&mut Reader::new(&[0xff, 0xff, 0, 0, 1])).is_err());
}

#[test]
fn flow_stats_entries_with_actions() {
    let entry = FlowStats {
        table_id: 1,
        match_: Match10::ALL,
        duration_sec: 2,
        duration_nsec: 3,
        priority: 4,
        idle_timeout: 5,
        hard_timeout: 6,
        cookie: Cookie(7),
        packet_count: 8,
        byte_count: 9,
        actions: vec![Action::Output {
            port: PortNo(1),
            max_len: 0,
        }],
    };
    let reply = StatsReply {
        flags: OFPSF_REPLY_MORE,
        body: StatsReplyBody::Flow(vec![entry.clone(), entry]),
    };
    let mut out = Vec::new();
    reply.emit(&mut out);
    assert_eq!(out.len(), 4 + 2 * 96);
    assert_eq!(&out[4..6], &[0, 96]);
    let back = StatsReply::parse(&mut Reader::new(&out)).unwrap();
    assert_eq!(back, reply);
    assert!(back.more());
}
