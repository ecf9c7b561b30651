#![no_main]
// Any input read as `aiter-tuned-csv`: see perfdb_ingest::testing::roundtrip::check.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    perfdb_ingest::testing::roundtrip::check(Some("aiter-tuned-csv".parse().unwrap()), data);
});
