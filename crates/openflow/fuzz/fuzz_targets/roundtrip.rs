//! Whatever decodes must survive encode -> decode unchanged.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    baton_openflow::fuzzing::roundtrip(data);
});
