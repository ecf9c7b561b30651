//! The ingest step: input files are read and parsed on all cores, each becomes a run
//! ready to commit ([`prepare`]), and every file that parsed is committed in one
//! transaction ([`Warehouse::commit`]). A file that fails is reported with its line and
//! reason, and nothing of it is written.

mod inputs;
mod prepare;

pub use inputs::expand_inputs;
pub use prepare::{prepare, prepare_bytes, prepare_file, run_id};

use crate::devices::Table;
use crate::formats::Format;
use crate::model::{self, RunMeta};
use crate::timing::trace;
use crate::warehouse::{Outcome, Prepared, Warehouse, WarehouseError};
use std::path::PathBuf;

/// The format recorded for a failed run whose output matched no format.
pub const NO_FORMAT: &str = "none";

/// Why one input file was not ingested.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("{path}: cannot read: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}:{line}: not UTF-8 text (invalid byte at offset {offset}){hint}")]
    NotText {
        path: String,
        line: usize,
        offset: usize,
        /// What the bytes look like instead, when that is known (UTF-16).
        hint: &'static str,
    },
    #[error("{path}:{line}: a NUL byte at offset {offset}: not a text log (binary data, or a file cut off while it was written)")]
    Nul {
        path: String,
        line: usize,
        offset: usize,
    },
    #[error("{path}{}: {reason}", if *line > 0 { format!(":{line}") } else { String::new() })]
    Parse {
        path: String,
        line: usize,
        reason: String,
    },
}

/// The result of ingesting one file.
#[derive(Debug)]
pub struct FileReport {
    pub path: String,
    pub result: Result<Ingested, FileError>,
}

#[derive(Debug, Clone)]
pub struct Ingested {
    /// `None` for a failed run with no readable output (stored as [`NO_FORMAT`]).
    pub format: Option<Format>,
    pub run_id: String,
    /// `Some(trial)` when added, `None` when it was already in the warehouse.
    pub trial: Option<i32>,
    /// Run id and trial of each further repetition the output held (google-benchmark).
    pub repetitions: Vec<(String, Option<i32>)>,
    pub tables: Vec<(String, usize)>,
    pub rows: usize,
    /// Blocks skipped and columns not classified, each with its line.
    pub warnings: Vec<model::Warning>,
    /// The harness said the run failed (`TS_KERNEL_FAIL`): its words.
    pub failed: Option<String>,
    /// TFLOPS and TB/s values held against no peak: the run names no known device.
    pub unknown_device_rows: usize,
}

/// Ingest `files` into `wh`: parse each (on all cores), then commit every file that
/// parsed in one transaction. Files that fail are reported and nothing of them is written.
/// `devices` is the table a run's device is found in (`devices::builtin`, or the one
/// perfdb.toml's `[[device]]` entries make).
pub fn ingest_files(
    wh: &Warehouse,
    files: &[PathBuf],
    format: Option<Format>,
    meta: &RunMeta,
    devices: &Table,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<Vec<FileReport>, WarehouseError> {
    let mut t = std::time::Instant::now();
    let results = prepare_files(files, format, meta, devices, progress);
    trace("read and parse", &mut t);
    let paths = files.iter().map(|f| f.display().to_string()).collect();
    let r = commit_prepared(wh, paths, results);
    trace("commit", &mut t);
    r
}

/// Read and parse `files` on all cores into runs ready to commit (or to compare, held
/// in memory), one result a file, in order.
pub fn prepare_files(
    files: &[PathBuf],
    format: Option<Format>,
    meta: &RunMeta,
    devices: &Table,
    progress: &(dyn Fn(usize) + Sync),
) -> Vec<Result<Prepared, FileError>> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(files.len().max(1));
    let done = std::sync::atomic::AtomicUsize::new(0);
    let chunk = files.len().div_ceil(threads).max(1);
    let mut results: Vec<Result<Prepared, FileError>> = Vec::with_capacity(files.len());
    std::thread::scope(|s| {
        let handles: Vec<_> = files
            .chunks(chunk)
            .map(|part| {
                let done = &done;
                s.spawn(move || {
                    part.iter()
                        .map(|f| {
                            let r = prepare_file(f, format, meta, devices);
                            progress(done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1);
                            r
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for h in handles {
            results.extend(h.join().expect("parser thread panicked"));
        }
    });
    results
}

/// Ingest one text read from elsewhere (standard input) under the source name `name`:
/// the name stands in for a file path in the run id and the provenance.
pub fn ingest_bytes(
    wh: &Warehouse,
    name: &str,
    bytes: &[u8],
    format: Option<Format>,
    meta: &RunMeta,
    devices: &Table,
) -> Result<Vec<FileReport>, WarehouseError> {
    let result = prepare_bytes(name, bytes, format, meta, devices);
    ingest_prepared(wh, name, result)
}

/// Commit one text already prepared ([`prepare_bytes`]) under the source name `name`: for
/// a caller that reads the parsed rows before storing them.
pub fn ingest_prepared(
    wh: &Warehouse,
    name: &str,
    result: Result<Prepared, FileError>,
) -> Result<Vec<FileReport>, WarehouseError> {
    commit_prepared(wh, vec![name.to_string()], vec![result])
}

/// Commit every prepared file in one transaction; one report per path, in order.
fn commit_prepared(
    wh: &Warehouse,
    paths: Vec<String>,
    results: Vec<Result<Prepared, FileError>>,
) -> Result<Vec<FileReport>, WarehouseError> {
    // Failed files keep their error; parsed ones are committed together, each file's
    // repetitions right after it. A parsed file's report is written before the commit
    // and gets its run id and trial from it.
    let mut reports: Vec<Result<Ingested, FileError>> = Vec::with_capacity(results.len());
    let mut runs: Vec<Prepared> = Vec::new();
    let mut n_reps: Vec<usize> = Vec::new();
    for r in results {
        match r {
            Ok(mut p) => {
                reports.push(Ok(Ingested {
                    format: p.run.format,
                    run_id: String::new(),
                    trial: None,
                    repetitions: Vec::new(),
                    tables: p.tables.clone(),
                    rows: p.measurements.len(),
                    warnings: std::mem::take(&mut p.warnings),
                    failed: (p.run.verdict == Some(model::RunVerdict::Fail))
                        .then(|| p.run.verdict_detail.clone().unwrap_or_default()),
                    unknown_device_rows: p.unknown_device_rows,
                }));
                let reps = std::mem::take(&mut p.repetitions);
                n_reps.push(reps.len());
                runs.push(p);
                runs.extend(reps);
            }
            Err(e) => reports.push(Err(e)),
        }
    }
    let mut committed = wh.commit(runs)?.into_iter();
    let mut n_reps = n_reps.into_iter();
    for report in reports.iter_mut().flatten() {
        let first = committed.next().expect("one outcome per run");
        (report.run_id, report.trial) = first.run_and_trial();
        let n = n_reps.next().expect("a repetition count per parsed file");
        report.repetitions = committed
            .by_ref()
            .take(n)
            .map(Outcome::run_and_trial)
            .collect();
    }
    Ok(paths
        .into_iter()
        .zip(reports)
        .map(|(path, result)| FileReport { path, result })
        .collect())
}
