#![no_main]
// Any input read as `aorta-result`: see perfdb_ingest::roundtrip::check.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    perfdb_ingest::roundtrip::check(Some("aorta-result".parse().unwrap()), data);
});
