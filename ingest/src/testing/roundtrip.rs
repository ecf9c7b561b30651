//! What any input must satisfy, checked by the fuzz targets (`fuzz/`) and by the tests
//! that replay what fuzzing found: parsing never panics; a rejected input names a line
//! that exists; an accepted one gives values within bounds of its size, and its runs,
//! measurements and summaries survive a write to Parquet and a read back unchanged,
//! exactly as a commit would store them.

use crate::formats::Format;
use crate::model::RunMeta;
use crate::warehouse::{schema, summary};
use crate::{prepare_bytes, FileError};
use arrow::array::RecordBatch;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;

/// Check one input read as `format` (`None`: detected). Panics on a violation.
pub fn check(format: Option<Format>, bytes: &[u8]) {
    let meta = RunMeta {
        label: "fuzz".into(),
        ..Default::default()
    };
    let lines = 1 + bytes.iter().filter(|b| **b == b'\n').count();
    let prepared = match prepare_bytes(
        "input.log",
        bytes,
        format,
        &meta,
        &crate::devices::builtin(),
    ) {
        Ok(p) => p,
        Err(FileError::Parse { line, reason, .. }) => {
            assert!(line <= lines, "error at line {line} of {lines}: {reason}");
            assert!(!reason.is_empty(), "an error without a reason");
            return;
        }
        Err(FileError::NotText { line, offset, .. }) => {
            assert!(std::str::from_utf8(bytes).is_err());
            assert!(line <= lines && offset < bytes.len());
            return;
        }
        Err(FileError::Nul { line, offset, .. }) => {
            assert_eq!(bytes[offset], 0);
            assert!(line <= lines);
            return;
        }
        Err(e @ FileError::Read { .. }) => panic!("{e}"),
    };
    let mut all = vec![&prepared];
    all.extend(prepared.repetitions.iter());
    let values: usize = all.iter().map(|p| p.measurements.len()).sum();
    // Bounded output: a value needs at least one byte of its own in the input.
    assert!(
        values <= bytes.len(),
        "{values} values from {} bytes",
        bytes.len()
    );
    for p in all {
        assert!(
            p.measurements.iter().all(|m| (m.line as usize) <= lines),
            "a value on a line past the end"
        );
        let runs = schema::runs_batch(&[&p.run]);
        let ms = schema::measurements_batch(&[(p.run.run_id.as_str(), &p.measurements, &p.keys)]);
        // Summaries are computed from the measurements as a commit computes them (their
        // columns are the measurements' own, so their round trip adds nothing but time:
        // half of each fuzz execution went to Parquet).
        let sums = summary::from_batch(&ms);
        assert!(sums.num_rows() <= ms.num_rows().max(1));
        for batch in [runs, ms] {
            let back = through_parquet(&batch);
            assert_eq!(back, batch, "changed by a Parquet round trip");
        }
    }
}

/// Check the fast JSON reader against serde_json on one input (see
/// `formats::json_scan`). Panics where they disagree.
pub fn check_json_reader(bytes: &[u8]) {
    if let Ok(text) = std::str::from_utf8(bytes) {
        crate::formats::support::json_scan::check_against_serde(text);
    }
}

/// `batch` written as a Parquet file in memory, with the warehouse's writer properties,
/// and read back as one batch.
fn through_parquet(batch: &RecordBatch) -> RecordBatch {
    let mut buf = Vec::new();
    let props = crate::warehouse::writer_properties(None);
    let mut w = ArrowWriter::try_new(&mut buf, batch.schema(), Some(props)).expect("writer");
    w.write(batch).expect("write");
    w.close().expect("close");
    let reader = ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(buf))
        .expect("a readable file")
        .build()
        .expect("reader");
    let batches: Vec<RecordBatch> = reader.map(|b| b.expect("a readable batch")).collect();
    arrow::compute::concat_batches(&batch.schema(), &batches).expect("one schema")
}
