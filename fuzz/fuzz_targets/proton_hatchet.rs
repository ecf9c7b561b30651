#![no_main]
// Any input read as `proton-hatchet`: see perfdb_ingest::testing::roundtrip::check.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    perfdb_ingest::testing::roundtrip::check(Some("proton-hatchet".parse().unwrap()), data);
});
