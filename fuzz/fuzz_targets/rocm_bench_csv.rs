#![no_main]
// Any input read as `rocm-bench-csv`: see perfdb_ingest::testing::roundtrip::check.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    perfdb_ingest::testing::roundtrip::check(Some("rocm-bench-csv".parse().unwrap()), data);
});
