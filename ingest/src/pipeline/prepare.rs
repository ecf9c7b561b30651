//! One file's bytes -> parsed records -> a run ready to commit: text checks (UTF-8, no
//! NUL), the format (given or detected), the run id, the run's tags and verdict.

use super::{FileError, NO_FORMAT};
use crate::call_energy;
use crate::devices;
use crate::formats::{self, Format, ParseError};
use crate::hash::{hex, sha256_hex};
use crate::model::{self, Keys, Parsed, Run, RunMeta};
use crate::warehouse::{schema, Prepared};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

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
    devices: &devices::Table,
) -> Result<Prepared, FileError> {
    let display = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| FileError::Read {
        path: display.clone(),
        source,
    })?;
    prepare_bytes(&display, &bytes, format, meta, devices)
}

/// Parse `bytes` (the content of `path`) into a run ready to commit.
pub fn prepare_bytes(
    path: &str,
    bytes: &[u8],
    format: Option<Format>,
    meta: &RunMeta,
    devices: &devices::Table,
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
        variant_axis: meta.variant_axis.as_deref(),
    };
    // `perfdb-energy` lines (energy per call, measured by the benchmark) are read here
    // and blanked for the format's parser, their line numbers kept.
    let energy = call_energy::read(text);
    let text = energy.as_ref().map_or(text, |(t, _)| t.as_str());
    let (format, mut parsed) = match formats::parse_in(text, format, &cx) {
        Ok((format, parsed)) => (Some(format), parsed),
        // A command `perfdb run` saw fail is a failed run even when it printed nothing
        // readable: kept with its verdict, no values, and why its output was not read.
        Err(ParseError { line, reason }) if meta.failed.is_some() => {
            let mut parsed = model::Parsed::default();
            parsed.warnings.push(model::Warning {
                line,
                reason: format!("output not read: {reason}"),
            });
            (None, parsed)
        }
        Err(ParseError { line, reason }) => {
            return Err(FileError::Parse {
                path: path.to_string(),
                line,
                reason,
            })
        }
    };
    // A commit the file names (when --commit gives none) is data that reaches git and
    // printed hints: one git would read as an option refuses the file.
    if meta.commit.is_none() {
        let named = std::iter::once(&parsed.provenance)
            .chain(&parsed.trial_provenance)
            .filter_map(|p| p.commit.as_deref());
        for c in named {
            if let Some(why) = model::commit_name_problem(c) {
                return Err(FileError::Parse {
                    path: path.to_string(),
                    line: 0,
                    reason: format!(
                        "the file names commit `{}`: {why}; give the right one with --commit",
                        c.escape_debug()
                    ),
                });
            }
        }
    }
    if let Some((_, lines)) = energy {
        call_energy::attach(&mut parsed, lines);
    }
    Ok(prepare(path, bytes, format, parsed, meta, devices))
}

/// The run id: a hash of one ingested file — its content, its name and its metadata —
/// so re-ingesting the same file with the same metadata is recognised, the same file
/// under another label is not, and two trial files that happen to hold the same text
/// (a stable GPU printing `10.00 us` four times) are two trials.
pub fn run_id(source_sha256: &str, source_name: &str, format: &str, meta: &RunMeta) -> String {
    let mut h = Sha256::new();
    let name = source_name_key(source_name);
    for part in [
        source_sha256,
        &*name,
        format,
        &meta.label,
        meta.commit.as_deref().unwrap_or(""),
        meta.arch.as_deref().unwrap_or(""),
        &schema::tags_json(&meta.tags),
    ] {
        h.update(part.as_bytes());
        h.update([0u8]);
    }
    hex(&h.finalize()[..10])
}

/// The part of a source path that identifies the file: its canonical absolute path when
/// it names a file here (so `logs/t1.log`, `./logs/t1.log` and `/ci/logs/t1.log` are one
/// file), else the path as given without a leading `./` (standard input, a command's
/// output; a repetition `path#2` keeps its suffix on the canonical path).
fn source_name_key(path: &str) -> std::borrow::Cow<'_, str> {
    let (file, suffix) = match path.rsplit_once('#') {
        Some((f, n)) if n.chars().all(|c| c.is_ascii_digit()) && !n.is_empty() => (f, Some(n)),
        _ => (path, None),
    };
    if let Ok(abs) = std::fs::canonicalize(file) {
        if let Some(abs) = abs.to_str() {
            return match suffix {
                Some(n) => format!("{abs}#{n}").into(),
                None => abs.to_string().into(),
            };
        }
    }
    let mut p = path;
    while let Some(rest) = p.strip_prefix("./") {
        p = rest;
    }
    p.into()
}

/// Turn one parsed file into a run ready to commit (trial is assigned at commit);
/// `format` is `None` for a failed run whose output matched none.
pub fn prepare(
    source_path: &str,
    bytes: &[u8],
    format: Option<Format>,
    parsed: Parsed,
    meta: &RunMeta,
    devices: &devices::Table,
) -> Prepared {
    prepare_keyed(source_path, bytes, format, parsed, None, meta, devices)
}

/// What a run's device makes of it.
struct OnDevice {
    /// The `device` tag to store ([`devices::RunDevice::tag`]).
    tag: Option<String>,
    /// Its values the device cannot produce.
    impossible: Vec<devices::check::Impossible>,
    /// Its TFLOPS and TB/s values when no device is known: no percent of peak.
    unknown_device_rows: usize,
}

/// The device the run names (`--device`, its machine, the GPU its output prints, its
/// arch), and what of it that device could not have produced.
fn on_device(parsed: &Parsed, keys: &Keys, meta: &RunMeta, table: &devices::Table) -> OnDevice {
    let prov = parsed
        .trial_provenance
        .first()
        .unwrap_or(&parsed.provenance);
    let tag = |k: &str| {
        meta.tags
            .iter()
            .find(|(t, _)| t == k)
            .map(|(_, v)| v.as_str())
    };
    let device = table.of_output(
        tag("device"),
        tag("machine"),
        prov.machine.as_deref(),
        meta.arch.as_deref().or(prov.arch.as_deref()),
    );
    let (impossible, unknown_device_rows) = match device.known() {
        Some(d) => (devices::check::impossible(&parsed.measurements, keys, d), 0),
        None => (
            Vec::new(),
            parsed
                .measurements
                .iter()
                .filter(|m| devices::holds_a_peak(&m.metric, &m.unit))
                .count(),
        ),
    };
    OnDevice {
        tag: device.tag().map(String::from),
        impossible,
        unknown_device_rows,
    }
}

/// Values per table, tables in order of appearance (a log may print thousands of
/// tables: each is found by its interned name, not by scanning the list).
fn count_tables(measurements: &[model::Measurement]) -> Vec<(String, usize)> {
    let mut tables: Vec<(String, usize)> = Vec::new();
    let mut at: HashMap<crate::model::Name, usize> = HashMap::new();
    for m in measurements {
        match at.get(&m.table) {
            Some(&i) => tables[i].1 += 1,
            None => {
                at.insert(m.table, tables.len());
                tables.push((m.table.to_string(), 1));
            }
        }
    }
    tables
}

/// A run's tags: the command line's, then what the output says (its tags, machine and
/// the device found) that the command line did not; the output's tags are taken.
fn run_tags(
    meta: &RunMeta,
    p: &mut model::Provenance,
    device_tag: Option<String>,
) -> Vec<(String, String)> {
    let mut tags = meta.tags.clone();
    let mut from_output = std::mem::take(&mut p.tags);
    if let Some(m) = p.machine.take() {
        from_output.push(("machine".to_string(), m));
    }
    if let Some(d) = device_tag {
        from_output.push(("device".to_string(), d));
    }
    for (k, v) in from_output {
        if !tags.iter().any(|(t, _)| *t == k) {
            tags.push((k, v));
        }
    }
    tags
}

/// [`prepare`], for a repetition whose values' keys are its file's (`shared`).
fn prepare_keyed(
    source_path: &str,
    bytes: &[u8],
    format: Option<Format>,
    parsed: Parsed,
    shared: Option<&Keys>,
    meta: &RunMeta,
    devices: &devices::Table,
) -> Prepared {
    let sha = sha256_hex(bytes);
    let OnDevice {
        tag: device_tag,
        impossible,
        unknown_device_rows,
    } = on_device(&parsed, shared.unwrap_or(&parsed.keys), meta, devices);
    let tables = count_tables(&parsed.measurements);
    let keys = Arc::new(parsed.keys);
    let mut own = parsed.trial_provenance.into_iter();
    let provenance = own.next().unwrap_or(parsed.provenance);
    let repetitions: Vec<Prepared> = parsed
        .repetitions
        .into_iter()
        .enumerate()
        .map(|(i, measurements)| {
            let rep = Parsed {
                measurements,
                keys: Keys::default(),
                provenance: own.next().unwrap_or_else(|| provenance.clone()),
                ..Parsed::default()
            };
            Prepared {
                keys: keys.clone(),
                ..prepare_keyed(
                    &format!("{source_path}#{}", i + 2),
                    bytes,
                    format,
                    rep,
                    Some(&keys),
                    meta,
                    devices,
                )
            }
        })
        .collect();
    let mut p = provenance;
    let tags = run_tags(meta, &mut p, device_tag);
    let (verdict, verdict_detail) = match &meta.failed {
        Some(why) => (
            Some(model::RunVerdict::Fail),
            Some(match p.verdict_detail {
                Some(d) => format!("{why}; {d}"),
                None => why.clone(),
            }),
        ),
        None => (p.verdict, p.verdict_detail),
    };
    let run = Run {
        run_id: run_id(
            &sha,
            source_path,
            format.map_or(NO_FORMAT, Format::name),
            meta,
        ),
        ingested_at_us: 0,
        source_path: source_path.to_string(),
        source_sha256: sha,
        format,
        label: meta.label.clone(),
        commit: meta.commit.clone().or(p.commit),
        commit_time_us: meta.commit_time_us.or(p.commit_time_us).unwrap_or(0),
        arch: meta.arch.clone().or(p.arch),
        tags,
        trial: 0,
        verdict,
        verdict_detail,
        image_digest: p.image_digest,
        token: p.token,
        n_measurements: parsed.measurements.len() as i64,
        n_tables: tables.len() as i32,
    };
    Prepared {
        run,
        measurements: parsed.measurements,
        keys,
        tables,
        warnings: {
            let mut w = parsed.warnings;
            w.extend(impossible.into_iter().map(Into::into));
            w
        },
        repetitions,
        unknown_device_rows,
    }
}
