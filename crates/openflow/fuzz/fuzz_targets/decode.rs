//! Arbitrary bytes into every decoder and view: no panic, no hang.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    baton_openflow::fuzzing::decode_any(data);
});
