#![no_main]
// Any input read as `triton-perf-report`: see perfdb_ingest::testing::roundtrip::check.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    perfdb_ingest::testing::roundtrip::check(Some("triton-perf-report".parse().unwrap()), data);
});
