#![no_main]
// Any input read as `perf-lines`: see perfdb_ingest::testing::roundtrip::check.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    perfdb_ingest::testing::roundtrip::check(Some("perf-lines".parse().unwrap()), data);
});
