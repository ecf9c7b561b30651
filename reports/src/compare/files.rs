//! A side read straight from benchmark files (`perfdb compare base/ head/`): each file
//! prepared as `ingest` prepares it (the same readers, provenance, profiled-run marks and
//! device checks), then held in memory as the warehouse hands a side's runs to the
//! comparison: [`side_info`] is step 1's [`SideInfo`], [`loaded`] step 2's [`Loaded`].
//! From there a file side goes through the warehouse side's own steps (`compare_sides`):
//! one comparator, no Parquet, no DuckDB.

use super::load::{per_run, Counters, Loaded, Value};
use super::select::distinct;
use super::{CompareError, FailedRun, MatchedBy, SideInfo};
use perfdb_ingest::devices::Table;
use perfdb_ingest::model::SeriesKey;
use perfdb_ingest::model::{metric, Direction, Measurement, RunVerdict};
use perfdb_ingest::warehouse::Prepared;
use std::collections::HashMap;

/// The runs of one side read from files: every file's run and its repetitions' (as
/// `ingest` would commit them), in the order the files were given.
pub struct FileRuns {
    /// The side as the command line gave it (`head/`, `'head/*.log'`).
    pub spec: String,
    pub runs: Vec<Prepared>,
}

impl FileRuns {
    /// The side of `spec`'s prepared files, each file's repetitions after it.
    pub fn new(spec: &str, prepared: Vec<Prepared>) -> FileRuns {
        let mut runs = Vec::with_capacity(prepared.len());
        for mut p in prepared {
            let reps = std::mem::take(&mut p.repetitions);
            runs.push(p);
            runs.extend(reps);
        }
        // A file given twice is one run, as ingest keeps it once.
        let mut seen = std::collections::HashSet::new();
        runs.retain(|p| seen.insert(p.run.run_id.clone()));
        FileRuns {
            spec: spec.to_string(),
            runs,
        }
    }
}

fn tag<'a>(p: &'a Prepared, name: &str) -> &'a str {
    p.run
        .tags
        .iter()
        .find(|(k, _)| k == name)
        .map_or("", |(_, v)| v.as_str())
}

/// Step 1 for a file side: what `select` makes of the same runs in the warehouse.
pub(super) fn side_info(side: &FileRuns, devices: &Table) -> SideInfo {
    let runs = &side.runs;
    let mut labels: Vec<String> = runs.iter().map(|r| r.run.label.clone()).collect();
    labels.dedup();
    let device = |p: &Prepared| {
        devices
            .resolve(
                Some(tag(p, "device")),
                Some(tag(p, "machine")),
                Some(p.run.arch.as_deref().unwrap_or("")),
            )
            .map(|d| d.id.clone())
            .unwrap_or_default()
    };
    let mut device_ids: Vec<String> = runs.iter().map(device).filter(|d| !d.is_empty()).collect();
    device_ids.sort();
    device_ids.dedup();
    let profiled: Vec<String> = runs
        .iter()
        .filter(|p| p.run.tags.iter().any(|(k, _)| k == "profiled"))
        .map(|p| p.run.run_id.clone())
        .collect();
    SideInfo {
        selector: side.spec.clone(),
        matched_by: MatchedBy::Files,
        commits: distinct(runs, |r| r.run.commit.as_deref().unwrap_or("")),
        archs: distinct(runs, |r| r.run.arch.as_deref().unwrap_or("")),
        image_digests: distinct(runs, |r| r.run.image_digest.as_deref().unwrap_or("")),
        machines: distinct(runs, |r| tag(r, "machine")),
        methods: distinct(runs, |r| tag(r, "method")),
        devices: device_ids,
        failed_runs: runs
            .iter()
            .filter(|r| r.run.verdict == Some(RunVerdict::Fail))
            .map(|r| FailedRun {
                run_id: r.run.run_id.clone(),
                source_path: r.run.source_path.clone(),
                detail: r.run.verdict_detail.clone().unwrap_or_default(),
            })
            .collect(),
        labels,
        gpu_tags: runs
            .iter()
            .filter(|r| r.run.tags.iter().any(|(k, _)| k.starts_with("gpu_")))
            .map(|r| perfdb_ingest::warehouse::schema::tags_json(&r.run.tags))
            .collect(),
        profiled_runs: profiled.len(),
        profiled_run_ids: profiled,
        runs: runs.iter().map(|r| r.run.run_id.clone()).collect(),
        not_timed: Vec::new(),
        identity_runs: Vec::new(),
    }
}

/// Whether `m` of run `p` passes every `--where` filter, as the warehouse query reads
/// them: table, variant, metric and unit of the value; arch, format and commit (prefix)
/// of the run; any other name a tag of the run or a key column of the value.
fn passes(p: &Prepared, m: &Measurement, filters: &[(String, String)]) -> bool {
    filters.iter().all(|(k, v)| match k.as_str() {
        "table" => m.table.as_str() == v,
        "variant" => m.variant.as_str() == v,
        "metric" => m.metric.as_str() == v,
        "unit" => m.unit.as_str() == v,
        "arch" => p.run.arch.as_deref() == Some(v.as_str()),
        "format" => p.run.format.map(|f| f.name()) == Some(v.as_str()),
        "commit" => p
            .run
            .commit
            .as_deref()
            .is_some_and(|c| c.starts_with(v.as_str())),
        other => {
            p.run.tags.iter().any(|(t, x)| t == other && x == v)
                || perfdb_ingest::model::key_from_json(p.keys.get(m.key))
                    .iter()
                    .any(|(t, x)| t == other && x == v)
        }
    })
}

/// Step 2 for a file side: its values by row identity, one value a run (a run's
/// repeats reduced as `load` reduces them), derived columns and error evidence noted,
/// the counters of its profiled runs apart, as the warehouse side's [`Loaded`] holds
/// them.
pub(super) fn loaded(side: &FileRuns, info: &SideInfo, filters: &[(String, String)]) -> Loaded {
    struct Row<'a> {
        first: &'a Measurement,
        key: &'a str,
        values: Vec<Value>,
        runs: Vec<u64>,
    }
    // A row's identity while reading: interned names by their address (one word each,
    // no text hashed or copied per value) and the key's text borrowed from its file.
    type Ident<'a> = (usize, usize, &'a str, usize, usize);
    let addr = |n: perfdb_ingest::model::Name| n.as_str().as_ptr() as usize;
    let mut index: HashMap<Ident, usize, perfdb_ingest::hash::Fx> = HashMap::default();
    let mut rows: Vec<Row> = Vec::new();
    let mut counters = Counters::new();
    let profiled: std::collections::HashSet<&str> =
        info.profiled_run_ids.iter().map(String::as_str).collect();
    for (n, p) in side.runs.iter().enumerate() {
        let profiled = profiled.contains(p.run.run_id.as_str());
        for m in &p.measurements {
            let key = p.keys.get(m.key);
            if profiled {
                // A profiled run's counters are read apart; its own timing rows are
                // never a trial.
                if let (Some(v), true) = (m.value, perfdb_ingest::formats::counters::is_counter(m))
                {
                    counters.entry(row_id(m, key)).or_default().push(v);
                }
                continue;
            }
            if !filters.is_empty() && !passes(p, m, filters) {
                continue;
            }
            let ident = (
                addr(m.table),
                addr(m.variant),
                key,
                addr(m.metric),
                addr(m.unit),
            );
            let at = *index.entry(ident).or_insert_with(|| {
                rows.push(Row {
                    first: m,
                    key,
                    values: Vec::new(),
                    runs: Vec::new(),
                });
                rows.len() - 1
            });
            let row = &mut rows[at];
            row.values.push(Value {
                value: m.value,
                numerics: m.numerics,
                gpu: None,
            });
            row.runs.push(n as u64);
        }
    }
    let mut out = Loaded::with_counters(counters);
    for row in rows {
        let m = row.first;
        let id = row_id(m, row.key);
        out.orders
            .entry((id.table.clone(), id.key.clone()))
            .or_insert_with(|| m.key_order.to_string());
        if metric::is_derived(&id.metric) || m.direction == Direction::None {
            let nonzero = row.values.iter().any(|v| v.value.is_some_and(|x| x != 0.0));
            if id.metric == metric::ERROR && !id.variant.is_empty() && nonzero {
                out.err_nonzero
                    .insert((id.table.clone(), id.variant.clone(), id.key.clone()), true);
            }
            let cols = out.derived_columns.entry(id.table.clone()).or_default();
            let column = m.column.as_str();
            if !cols.iter().any(|c| c == column) {
                cols.push(column.to_string());
            }
            continue;
        }
        let (vals, most) = per_run(row.values, &row.runs);
        if most > 1 {
            out.repeated.insert(id.clone(), most);
        }
        out.rows.insert(id, (m.direction, vals));
    }
    out
}

fn row_id(m: &Measurement, key: &str) -> SeriesKey {
    SeriesKey {
        table: m.table.to_string(),
        variant: m.variant.to_string(),
        key: key.to_string(),
        metric: m.metric.to_string(),
        unit: m.unit.to_string(),
    }
}

/// A file side's runs, checked as a selector's are: none is an error.
pub(super) fn nonempty(side: &FileRuns) -> Result<(), CompareError> {
    if side.runs.is_empty() {
        Err(CompareError::NoRuns(side.spec.clone()))
    } else {
        Ok(())
    }
}
