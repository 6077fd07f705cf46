//! Regression test: every input the fuzzers kept (crates/openflow/fuzz/
//! corpus/{decode,roundtrip}) goes through the same checks as the fuzz
//! targets, on stable Rust, in CI.

use std::path::Path;

fn run_corpus(target: &str, check: fn(&[u8])) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        let result = std::panic::catch_unwind(|| check(&data));
        assert!(result.is_ok(), "{} fails on {}", target, path.display());
        n += 1;
    }
    n
}

#[test]
fn decode_corpus_never_panics() {
    let n = run_corpus("decode", baton_openflow::fuzzing::decode_any);
    assert!(n > 0, "the decode corpus is empty");
}

#[test]
fn roundtrip_corpus_round_trips() {
    let n = run_corpus("roundtrip", baton_openflow::fuzzing::roundtrip);
    assert!(n > 0, "the roundtrip corpus is empty");
}
