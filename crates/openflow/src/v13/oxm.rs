//! OXM, the OpenFlow Extensible Match (1.3.5 §7.2.3): TLV headers, the
//! table of the 40 `OFPXMT_OFB_*` basic fields, the typed [`Oxm`] value, the
//! owned [`Match13`] (`ofp_match`), the zero-allocation [`OxmIter`] and
//! [`MatchRef`] used by the views, and the low-level [`start_match`] /
//! [`finish_match`] helpers that write an `ofp_match` without building a
//! `Vec`.
//!
//! One table, [`OXM_BASIC_FIELDS`], gives each basic field's value length
//! and whether it may carry a mask; decoding checks every TLV against it
//! before reading a byte of the value. Prerequisites (§7.2.3.6) are the
//! switch's business and are not checked here.
//!
//! Parts, each in its own file: the constants, the TLV header and the
//! field table (`field.rs`); reading TLVs (`tlv.rs`); the typed value (`value.rs`);
//! `ofp_match` (`ofmatch.rs`); the exact match of a frame's key
//! (`exact.rs`). This module only gathers their public items.

mod exact;
mod field;
mod ofmatch;
mod tlv;
mod value;

pub use exact::{
    L2_TLVS_LEN, emit_exact_match, for_each_exact_oxm, l2_tlvs, put_exact_match,
    put_exact_match_frame, put_l2_match,
};
pub use field::{
    OFPMT_OXM, OFPVID_NONE, OFPVID_PRESENT, OFPXMC_EXPERIMENTER, OFPXMC_NXM_0, OFPXMC_NXM_1,
    OFPXMC_OPENFLOW_BASIC, OXM_BASIC_FIELDS, OXM_HEADER_LEN, OxmField, OxmFieldInfo, OxmHeader,
    ipv6_exthdr,
};
pub use ofmatch::{
    MATCH_BUF, Match13, MatchRef, emit_match, emit_match_with, finish_match, put_match_with,
    start_match,
};
pub use tlv::{OxmIter, OxmRef};
pub use value::Oxm;
