#![no_main]
// Any input read as `ts-probe`: see perfdb_ingest::roundtrip::check.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    perfdb_ingest::roundtrip::check(Some("ts-probe".parse().unwrap()), data);
});
