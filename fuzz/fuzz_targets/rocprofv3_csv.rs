#![no_main]
// Any input read as `rocprofv3-csv`: see perfdb_ingest::testing::roundtrip::check.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    perfdb_ingest::testing::roundtrip::check(Some("rocprofv3-csv".parse().unwrap()), data);
});
