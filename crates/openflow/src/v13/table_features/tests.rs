//! Tests of the parent module.

use super::*;

fn round_trip(p: &TableFeatureProp) -> Vec<u8> {
    let mut out = Vec::new();
    p.emit(&mut out);
    assert_eq!(out.len() % 8, 0);
    let mut r = Reader::new(&out);
    assert_eq!(&TableFeatureProp::parse(&mut r).unwrap(), p);
    assert!(r.is_empty());
    out
}

#[test]
fn instruction_ids_layout() {
    let p = TableFeatureProp::Instructions(vec![
        InstructionId::Standard(InstructionType::GotoTable),
        InstructionId::Experimenter {
            experimenter: 0x2320,
            data: vec![],
        },
    ]);
    let out = round_trip(&p);
    assert_eq!(
        out,
        [0, 0, 0, 16, 0, 1, 0, 4, 0xff, 0xff, 0, 8, 0, 0, 0x23, 0x20]
    );
}

#[test]
fn oxm_ids_with_experimenter_are_64_bit() {
    let p = TableFeatureProp::Match(vec![
        OxmId::new(OxmHeader::from_u32(0x8000_0004)),
        OxmId {
            header: OxmHeader::from_u32(0xffff_0208),
            experimenter: Some(0x4f4e_4600),
        },
    ]);
    let out = round_trip(&p);
    assert_eq!(&out[..4], &[0, 8, 0, 16]);
    assert_eq!(out.len(), 16);
    // An experimenter header with its id cut off.
    let bad = [0, 8, 0, 8, 0xff, 0xff, 2, 8];
    let e = TableFeatureProp::parse(&mut Reader::new(&bad)).unwrap_err();
    assert!(matches!(e.kind(), ErrorKind::BadTablePropLength(_)));
}

#[test]
fn padding_is_required_and_lengths_checked() {
    // next-tables with 3 entries: length 7, one pad byte.
    let ok = [0, 2, 0, 7, 1, 2, 3, 0];
    let p = TableFeatureProp::parse(&mut Reader::new(&ok)).unwrap();
    assert_eq!(p, TableFeatureProp::NextTables(vec![1, 2, 3]));
    for bad in [
        &ok[..7],
        &[0, 2, 0, 3, 0, 0, 0, 0],
        &[0, 2, 0, 9, 0, 0, 0, 0],
    ] {
        let e = TableFeatureProp::parse(&mut Reader::new(bad)).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::BadTablePropLength(_)), "{e}");
    }
    // Two stray bytes after an action id.
    let bad = [0, 6, 0, 10, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0];
    let e = TableFeatureProp::parse(&mut Reader::new(&bad)).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::BadTablePropLength(2));
    assert_eq!(e.offset(), 8);
    // A standard action id with a body is malformed.
    let bad = [0, 4, 0, 12, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0];
    let e = TableFeatureProp::parse(&mut Reader::new(&bad)).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::BadTablePropLength(8));
    assert_eq!(e.offset(), 4);
    // OFPET_TABLE_FEATURES_FAILED / OFPTFFC_BAD_LEN.
    let code = e.reply(crate::version::Version::V13);
    assert_eq!((code.error_type, code.code), (13, 3));
}

#[test]
fn unknown_property_round_trips() {
    round_trip(&TableFeatureProp::Unknown {
        prop_type: 99,
        data: vec![1, 2, 3, 4, 5],
    });
    round_trip(&TableFeatureProp::ExperimenterMiss {
        experimenter: 1,
        exp_type: 2,
        data: vec![9; 3],
    });
}

#[test]
fn table_features_round_trip_and_length() {
    let t = TableFeatures {
        table_id: 3,
        name: "acl".into(),
        metadata_match: u64::MAX,
        metadata_write: 0xff,
        config: 3,
        max_entries: 1000,
        properties: vec![
            TableFeatureProp::NextTables(vec![4, 5]),
            TableFeatureProp::ApplyActions(vec![ActionId::Standard(ActionType::Output)]),
        ],
    };
    let mut out = Vec::new();
    t.emit(&mut out);
    assert_eq!(out.len(), 64 + 8 + 8);
    assert_eq!(&out[..2], &[0, 80]);
    assert_eq!(TableFeatures::parse(&mut Reader::new(&out)).unwrap(), t);
    for n in 0..out.len() {
        assert!(TableFeatures::parse(&mut Reader::new(&out[..n])).is_err());
    }
}
