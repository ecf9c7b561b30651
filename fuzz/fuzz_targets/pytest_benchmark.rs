#![no_main]
// Any input read as `pytest-benchmark`: see perfdb_ingest::testing::roundtrip::check.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    perfdb_ingest::testing::roundtrip::check(Some("pytest-benchmark".parse().unwrap()), data);
});
