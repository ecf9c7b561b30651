//! perfdb-ingest: input formats -> canonical records -> the Parquet warehouse.
//!
//! Every other perfdb crate depends on this one: it owns the canonical model
//! ([`model`]), the one Arrow schema ([`schema`]), the parsers ([`formats`]) and the
//! warehouse layout with its atomic writes ([`warehouse`]).

pub mod compact;
pub mod delta;
pub mod formats;
pub mod gpu_state;
pub mod migrate;
pub mod model;
pub mod roundtrip;
pub mod schema;
pub mod summary;
pub mod tables;
pub mod test_stores;
pub mod text;
pub mod units;
pub mod warehouse;

use formats::{Format, ParseError};
use model::RunMeta;
use std::path::{Path, PathBuf};
use warehouse::{Outcome, Prepared, Warehouse, WarehouseError};

/// With `PERFDB_TRACE=1`, print how long the phase since `t` took (to stderr); `t`
/// restarts for the next phase. Ingest and compare report their phases this way.
pub fn trace(phase: &str, t: &mut std::time::Instant) {
    if std::env::var_os("PERFDB_TRACE").is_some() {
        eprintln!("trace: {phase}: {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
    }
    *t = std::time::Instant::now();
}

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
    /// The format's name ([`NO_FORMAT`] for a failed run with no readable output).
    pub format: String,
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
}

/// Expand directories (recursively, sorted) into files; files stay as given. Symbolic
/// links are followed, but a directory is walked once however many links reach it, so
/// a link loop (`logs/again -> ..`) ends instead of repeating its files.
pub fn expand_inputs(paths: &[PathBuf]) -> Result<Vec<PathBuf>, FileError> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for p in paths {
        if p.is_dir() {
            let mut files = Vec::new();
            walk(p, &mut files, &mut seen).map_err(|source| FileError::Read {
                path: p.display().to_string(),
                source,
            })?;
            files.sort();
            out.extend(files);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

fn walk(
    dir: &Path,
    out: &mut Vec<PathBuf>,
    seen: &mut std::collections::HashSet<PathBuf>,
) -> std::io::Result<()> {
    if !seen.insert(std::fs::canonicalize(dir)?) {
        return Ok(());
    }
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.starts_with('.') {
            continue;
        }
        if p.is_dir() {
            walk(&p, out, seen)?;
        } else {
            out.push(p);
        }
    }
    Ok(())
}

/// What text that is not UTF-8 looks like, for the error: UTF-16 by its byte-order mark.
fn text_hint(bytes: &[u8]) -> &'static str {
    match bytes {
        [0xFF, 0xFE, ..] | [0xFE, 0xFF, ..] => {
            ": UTF-16 text (a byte-order mark); convert it first: iconv -f UTF-16 -t UTF-8"
        }
        _ => "",
    }
}

/// Read and parse one file into a run ready to commit.
pub fn prepare_file(
    path: &Path,
    format: Option<Format>,
    meta: &RunMeta,
) -> Result<Prepared, FileError> {
    let display = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| FileError::Read {
        path: display.clone(),
        source,
    })?;
    prepare_bytes(&display, &bytes, format, meta)
}

/// Parse `bytes` (the content of `path`) into a run ready to commit.
pub fn prepare_bytes(
    path: &str,
    bytes: &[u8],
    format: Option<Format>,
    meta: &RunMeta,
) -> Result<Prepared, FileError> {
    let line_at = |offset: usize| 1 + bytes[..offset].iter().filter(|b| **b == b'\n').count();
    let text = std::str::from_utf8(bytes).map_err(|e| FileError::NotText {
        path: path.to_string(),
        line: line_at(e.valid_up_to()),
        offset: e.valid_up_to(),
        hint: text_hint(bytes),
    })?;
    // UTF-8, but a NUL byte is never part of a benchmark's text: binary data, or a log
    // a crashed writer left with a hole. Rejected, not read as a value.
    if let Some(offset) = memchr::memchr(0, bytes) {
        return Err(FileError::Nul {
            path: path.to_string(),
            line: line_at(offset),
            offset,
        });
    }
    let cx = formats::Context {
        source: path,
        unit: meta.unit.as_deref(),
    };
    let (format, parsed) = match formats::parse_in(text, format, &cx) {
        Ok((format, parsed)) => (format.name(), parsed),
        // A command `perfdb run` saw fail is a failed run even when it printed nothing
        // readable: kept with its verdict, no values, and why its output was not read.
        Err(ParseError { line, reason }) if meta.failed.is_some() => {
            let mut parsed = model::Parsed::default();
            parsed.warnings.push(model::Warning {
                line,
                reason: format!("output not read: {reason}"),
            });
            (NO_FORMAT, parsed)
        }
        Err(ParseError { line, reason }) => {
            return Err(FileError::Parse {
                path: path.to_string(),
                line,
                reason,
            })
        }
    };
    Ok(warehouse::prepare(path, bytes, format, parsed, meta))
}

/// Ingest `files` into `wh`: parse each (on all cores), then commit every file that
/// parsed in one transaction. Files that fail are reported and nothing of them is written.
pub fn ingest_files(
    wh: &Warehouse,
    files: &[PathBuf],
    format: Option<Format>,
    meta: &RunMeta,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<Vec<FileReport>, WarehouseError> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(files.len().max(1));
    let mut t = std::time::Instant::now();
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
                            let r = prepare_file(f, format, meta);
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
    trace("read and parse", &mut t);
    let paths = files.iter().map(|f| f.display().to_string()).collect();
    let r = commit_prepared(wh, paths, results);
    trace("commit", &mut t);
    r
}

/// Ingest one text read from elsewhere (standard input) under the source name `name`:
/// the name stands in for a file path in the run id and the provenance.
pub fn ingest_bytes(
    wh: &Warehouse,
    name: &str,
    bytes: &[u8],
    format: Option<Format>,
    meta: &RunMeta,
) -> Result<Vec<FileReport>, WarehouseError> {
    let result = prepare_bytes(name, bytes, format, meta);
    commit_prepared(wh, vec![name.to_string()], vec![result])
}

/// Commit every prepared file in one transaction; one report per path, in order.
fn commit_prepared(
    wh: &Warehouse,
    paths: Vec<String>,
    results: Vec<Result<Prepared, FileError>>,
) -> Result<Vec<FileReport>, WarehouseError> {
    // Failed files keep their error; parsed ones are committed together, each file's
    // repetitions right after it.
    let mut ok: Vec<Prepared> = Vec::new();
    let mut errors: Vec<Option<FileError>> = Vec::with_capacity(results.len());
    let mut n_reps: Vec<usize> = Vec::new();
    for r in results {
        match r {
            Ok(p) => {
                ok.push(p);
                errors.push(None);
            }
            Err(e) => errors.push(Some(e)),
        }
    }
    type Summary = (
        String,
        Vec<(String, usize)>,
        usize,
        Vec<model::Warning>,
        Option<String>,
    );
    let summaries: Vec<Summary> = ok
        .iter_mut()
        .map(|p| {
            let fmt = p.run.format.clone();
            let failed = (p.run.verdict.as_deref() == Some("fail"))
                .then(|| p.run.verdict_detail.clone().unwrap_or_default());
            let warnings = std::mem::take(&mut p.warnings);
            (
                fmt,
                p.tables.clone(),
                p.measurements.len(),
                warnings,
                failed,
            )
        })
        .collect();
    let mut all: Vec<Prepared> = Vec::with_capacity(ok.len());
    for mut p in ok {
        let reps = std::mem::take(&mut p.repetitions);
        n_reps.push(reps.len());
        all.push(p);
        all.extend(reps);
    }
    let mut committed = wh.commit(all)?.into_iter();
    let mut outcomes = n_reps.into_iter().zip(summaries).map(|(n, s)| {
        let first = committed.next().expect("one outcome per run");
        let reps: Vec<Outcome> = committed.by_ref().take(n).collect();
        (first, reps, s)
    });
    let reports = paths
        .into_iter()
        .zip(errors)
        .map(|(path, err)| {
            let result = match err {
                Some(e) => Err(e),
                None => {
                    let (outcome, reps, (format, tables, rows, warnings, failed)) =
                        outcomes.next().expect("one outcome per parsed file");
                    let (run_id, trial) = outcome.run_and_trial();
                    Ok(Ingested {
                        format,
                        run_id,
                        trial,
                        repetitions: reps.into_iter().map(Outcome::run_and_trial).collect(),
                        tables,
                        rows,
                        warnings,
                        failed,
                    })
                }
            };
            FileReport { path, result }
        })
        .collect();
    Ok(reports)
}
