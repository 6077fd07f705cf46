//! The sample corpus (`tests/samples`) as fuzzing seeds, and a cheap guard
//! that every sample stays valid.
//!
//! - `every_sample_encodes_and_decodes_back_equal` (always run): each
//!   sample's encoding has the right header and decodes back to the same
//!   message and xid, and re-encodes to the same bytes; each hand-laid spec
//!   vector decodes and re-encodes to itself.
//! - `seed_variants_hold_the_fuzz_contract` (always run): the seeds,
//!   truncated and mutated variants included, pass the very checks the fuzz
//!   targets run.
//! - `write_fuzz_corpus_seeds` (ignored; run with
//!   `cargo test -p baton-openflow --test seeds -- --ignored`) writes the
//!   seeds into `fuzz/corpus/decode/` and `fuzz/corpus/roundtrip/` as
//!   `seed-<sample name>[-<variant>]`, replacing earlier `seed-*` files and
//!   leaving everything else (what cargo-fuzz found) alone.

mod samples;

use baton_openflow::{Xid, fuzzing, v10, v13};
use std::collections::BTreeSet;
use std::path::Path;

/// Every sample's encoding and every spec vector, by unique name.
fn seeds() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for (i, (name, m)) in samples::samples_v10().iter().enumerate() {
        out.push((name.to_string(), samples::encode10(m, samples::xid_of(i))));
    }
    for (i, (name, m)) in samples::samples_v13().iter().enumerate() {
        out.push((name.to_string(), samples::encode13(m, samples::xid_of(i))));
    }
    for (i, (name, _, m)) in samples::samples_v13_outside_ovs().iter().enumerate() {
        out.push((name.to_string(), samples::encode13(m, samples::xid_of(i))));
    }
    for (name, b) in samples::spec_vectors() {
        out.push((name.to_string(), b));
    }
    out
}

/// FNV-1a, for deterministic positions.
fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn with_length(mut b: Vec<u8>) -> Vec<u8> {
    let len = b.len().min(usize::from(u16::MAX)) as u16;
    if let Some(l) = b.get_mut(2..4) {
        l.copy_from_slice(&len.to_be_bytes());
    }
    b
}

/// A seed and a few variants: cut in half and cut by one byte (header
/// length patched to agree), one body byte inverted at a position derived
/// from the name, and a header claiming 8 bytes more than there are.
fn variants(name: &str, b: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut v = vec![(format!("seed-{name}"), b.to_vec())];
    if b.len() > 9 {
        let half = (b.len() / 2).max(8);
        v.push((format!("seed-{name}-half"), with_length(b[..half].to_vec())));
        v.push((
            format!("seed-{name}-cut1"),
            with_length(b[..b.len() - 1].to_vec()),
        ));
        let mut flip = b.to_vec();
        let at = 8 + (fnv(name) % (b.len() as u64 - 8)) as usize;
        flip[at] ^= 0xff;
        v.push((format!("seed-{name}-flip{at}"), flip));
    }
    let mut long = b.to_vec();
    let claimed = (b.len() + 8).min(usize::from(u16::MAX)) as u16;
    long[2..4].copy_from_slice(&claimed.to_be_bytes());
    v.push((format!("seed-{name}-long"), long));
    v
}

fn all_variants() -> Vec<(String, Vec<u8>)> {
    seeds()
        .iter()
        .flat_map(|(name, b)| variants(name, b))
        .collect()
}

#[test]
fn every_sample_encodes_and_decodes_back_equal() {
    let mut names = BTreeSet::new();
    let check_header = |name: &str, b: &[u8], version: u8, ty: u8, xid: Xid| {
        assert_eq!(b[0], version, "{name}: version");
        assert_eq!(b[1], ty, "{name}: type");
        assert_eq!(
            usize::from(u16::from_be_bytes([b[2], b[3]])),
            b.len(),
            "{name}: length field"
        );
        assert_eq!(
            u32::from_be_bytes([b[4], b[5], b[6], b[7]]),
            xid.0,
            "{name}"
        );
    };
    for (i, (name, m)) in samples::samples_v10().iter().enumerate() {
        assert!(names.insert(*name), "duplicate sample name {name}");
        let xid = samples::xid_of(i);
        let b = samples::encode10(m, xid);
        check_header(name, &b, 1, m.msg_type().into(), xid);
        let (x, back) = v10::decode(&b).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!((x, &back), (xid, m), "{name}");
        assert_eq!(samples::encode10(&back, x), b, "{name}: re-encoding");
    }
    // Numbered as in seeds(): the outside-OVS list starts again at 0.
    let outside: Vec<_> = samples::samples_v13_outside_ovs()
        .into_iter()
        .map(|(n, _, m)| (n, m))
        .collect();
    for list in [samples::samples_v13(), outside] {
        for (i, (name, m)) in list.iter().enumerate() {
            assert!(names.insert(*name), "duplicate sample name {name}");
            let xid = samples::xid_of(i);
            let b = samples::encode13(m, xid);
            check_header(name, &b, 4, m.msg_type().into(), xid);
            let (x, back) = v13::decode(&b).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!((x, &back), (xid, m), "{name}");
            assert_eq!(samples::encode13(&back, x), b, "{name}: re-encoding");
        }
    }
    for (name, b) in samples::spec_vectors() {
        assert!(names.insert(name), "duplicate sample name {name}");
        let again = if b[0] == 1 {
            let (x, m) = v10::decode(&b).unwrap_or_else(|e| panic!("{name}: {e}"));
            samples::encode10(&m, x)
        } else {
            let (x, m) = v13::decode(&b).unwrap_or_else(|e| panic!("{name}: {e}"));
            samples::encode13(&m, x)
        };
        assert_eq!(again, b, "{name}: re-encoding");
    }
}

#[test]
fn seed_variants_hold_the_fuzz_contract() {
    let all = all_variants();
    let names: BTreeSet<_> = all.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names.len(), all.len(), "seed file names must be unique");
    for (name, b) in &all {
        let ok = std::panic::catch_unwind(|| {
            fuzzing::decode_any(b);
            fuzzing::roundtrip(b);
        });
        assert!(ok.is_ok(), "{name} breaks the fuzz contract");
    }
    // The unchanged seeds all decode.
    for (name, b) in seeds() {
        let ok = if b[0] == 1 {
            v10::decode(&b).is_ok()
        } else {
            v13::decode(&b).is_ok()
        };
        assert!(ok, "{name} does not decode");
    }
}

/// Writes the seeds into both fuzz corpus directories.
#[test]
#[ignore = "writes fuzz/corpus; run by hand with --ignored"]
fn write_fuzz_corpus_seeds() {
    let all = all_variants();
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
    for target in ["decode", "roundtrip"] {
        let dir = corpus.join(target);
        std::fs::create_dir_all(&dir).unwrap();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let stale = path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("seed-"));
            if stale {
                std::fs::remove_file(&path).unwrap();
            }
        }
        for (name, b) in &all {
            std::fs::write(dir.join(name), b).unwrap();
        }
        eprintln!("{}: {} seeds", dir.display(), all.len());
    }
}
