#![no_main]
// Any input read as `ncu-csv`: see perfdb_ingest::testing::roundtrip::check.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    perfdb_ingest::testing::roundtrip::check(Some("ncu-csv".parse().unwrap()), data);
});
