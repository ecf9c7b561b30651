#![no_main]
// Any input read as `triton-csv`: see perfdb_ingest::testing::roundtrip::check.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    perfdb_ingest::testing::roundtrip::check(Some("triton-csv".parse().unwrap()), data);
});
