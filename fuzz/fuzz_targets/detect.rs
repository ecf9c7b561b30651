#![no_main]
// Any input read as detected: see perfdb_ingest::roundtrip::check.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    perfdb_ingest::roundtrip::check(None, data);
});
