#![no_main]
// The fast JSON reader never reads a text otherwise than serde_json:
// see perfdb_ingest::testing::roundtrip::check_json_reader.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    perfdb_ingest::testing::roundtrip::check_json_reader(data);
});
