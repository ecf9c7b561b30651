#![no_main]
// Any input read as `nvbench-markdown`: see perfdb_ingest::testing::roundtrip::check.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    perfdb_ingest::testing::roundtrip::check(Some("nvbench-markdown".parse().unwrap()), data);
});
