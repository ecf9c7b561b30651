#![no_main]
// Any input read as `torch-compare`: see perfdb_ingest::roundtrip::check.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    perfdb_ingest::roundtrip::check(Some("torch-compare".parse().unwrap()), data);
});
