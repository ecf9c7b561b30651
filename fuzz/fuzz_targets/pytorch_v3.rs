#![no_main]
// Any input read as `pytorch-v3`: see perfdb_ingest::testing::roundtrip::check.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    perfdb_ingest::testing::roundtrip::check(Some("pytorch-v3".parse().unwrap()), data);
});
