#![no_main]
// Any input read as `aorta-matrix`: see perfdb_ingest::roundtrip::check.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    perfdb_ingest::roundtrip::check(Some("aorta-matrix".parse().unwrap()), data);
});
