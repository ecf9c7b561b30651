#![no_main]
// Any input read as `tritonbench`: see perfdb_ingest::testing::roundtrip::check.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    perfdb_ingest::testing::roundtrip::check(Some("tritonbench".parse().unwrap()), data);
});
