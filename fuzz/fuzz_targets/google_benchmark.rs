#![no_main]
// Any input read as `google-benchmark`: see perfdb_ingest::testing::roundtrip::check.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    perfdb_ingest::testing::roundtrip::check(Some("google-benchmark".parse().unwrap()), data);
});
