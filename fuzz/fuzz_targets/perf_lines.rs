#![no_main]
// Any input read as `perf-lines`: see perfdb_ingest::roundtrip::check.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    perfdb_ingest::roundtrip::check(Some("perf-lines".parse().unwrap()), data);
});
