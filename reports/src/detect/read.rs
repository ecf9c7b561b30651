//! Reading a label's history for detect, one series at a time in bounded memory.
//!
//! One scan of the measurements turns each row into three numbers (series code, run
//! code, value); the rows are spread over groups of about `rows_per_pass` rows, whole
//! series to a group (files in a temporary directory when there is more than one
//! group), and each group is then read back, sorted by series and run, and handed out
//! one series at a time. DuckDB reads the string columns once, not once a pass.
//!
//! The codes are DuckDB's `hash()` of the series' names and of the run id, mapped to
//! dense indices here; when two series or two runs share a hash (possible, never yet
//! seen) the scan joins dense indices instead, which is exact and a few times slower.

use super::DetectError;
use crate::db::{run_device, sql_str, Db, MACHINE_CLASS_SQL, RUN_DEVICE_SQL};
use duckdb::arrow::array::{Array, Float64Array, UInt64Array};
use perfdb_ingest::devices::check::{HeldRow, Limit};
use perfdb_ingest::hash::Fx;
use perfdb_ingest::model::Direction;
use std::collections::HashMap;
use std::io::{BufReader, BufWriter, Read, Write};

/// A run's place in history.
pub(super) struct RunPoint<'d> {
    pub run_id: String,
    pub commit: String,
    pub commit_time: i64,
    pub ingested_at: i64,
    pub machine: String,
    /// The device the run names: its values above the device's peak are never read.
    pub device: Option<&'d perfdb_ingest::devices::Device>,
    hash: u64,
}

/// The label's runs, ordered by run id: a run's code is its index here.
pub(super) fn runs_of<'d>(db: &'d Db, label: &str) -> Result<Vec<RunPoint<'d>>, DetectError> {
    let sql = format!(
        "SELECT run_id, coalesce(\"commit\", run_id), epoch_us(coalesce(commit_time, ingested_at)), \
                epoch_us(ingested_at), {MACHINE_CLASS_SQL}, hash(run_id), \
                {RUN_DEVICE_SQL} \
         FROM runs r WHERE label = {} ORDER BY run_id",
        sql_str(label)
    );
    let mut stmt = db.conn.prepare(&sql)?;
    let rows = stmt
        .query_map([], |r| {
            Ok(RunPoint {
                run_id: r.get(0)?,
                commit: r.get(1)?,
                commit_time: r.get(2)?,
                ingested_at: r.get(3)?,
                machine: r.get(4)?,
                hash: r.get(5)?,
                device: run_device(&db.devices, r, 6)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}

/// One series: its names (table, variant, key, metric, unit), direction, the key's
/// printed order, and how many measurement rows it has.
pub(super) struct Series {
    pub names: [String; 5],
    pub direction: Direction,
    pub key_order: Option<String>,
    rows: usize,
    hash: u64,
}

/// One measurement row of a series: the run's code and the value.
#[derive(Clone, Copy)]
pub(super) struct Row {
    pub run: u32,
    pub value: f64,
}

/// The runs [`possible`] holds values against: all of them when some run names a
/// device, else none (nothing to hold).
pub(super) fn held_to_devices<'r, 'd>(runs: &'r [RunPoint<'d>]) -> &'r [RunPoint<'d>] {
    if runs.iter().any(|r| r.device.is_some()) {
        runs
    } else {
        &[]
    }
}

/// The rows of `series` its runs' devices could have produced: a value above its
/// device's peak (`perfdb devices`) never raises or resolves an alert. `runs` are the
/// label's runs when any of them names a device, else empty (nothing to hold).
pub(super) fn possible<'a>(
    series: &Series,
    rows: &'a [Row],
    runs: &[RunPoint],
) -> std::borrow::Cow<'a, [Row]> {
    let [_, _, key, metric, unit] = &series.names;
    if runs.is_empty() {
        return rows.into();
    }
    let Some(held) = HeldRow::of_json(metric, unit, key) else {
        return rows.into();
    };
    // One limit a device: a series' runs are of one machine class, mostly one device.
    let mut limits: Vec<(&str, Option<Limit>)> = Vec::new();
    let mut ok = |r: &Row| {
        let Some(d) = runs.get(r.run as usize).and_then(|p| p.device) else {
            return true;
        };
        let limit = match limits.iter().find(|(id, _)| *id == d.id) {
            Some((_, l)) => *l,
            None => {
                let l = held.limit(d);
                limits.push((&d.id, l));
                l
            }
        };
        limit.is_none_or(|l| !l.impossible(r.value))
    };
    let keep: Vec<bool> = rows.iter().map(&mut ok).collect();
    if keep.iter().all(|k| *k) {
        return rows.into();
    }
    rows.iter()
        .zip(keep)
        .filter_map(|(r, k)| k.then_some(*r))
        .collect::<Vec<_>>()
        .into()
}

/// How the scan codes series and runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coding {
    /// DuckDB's `hash()`, when no two series and no two runs share one (the fast way).
    Hashed,
    /// Dense indices joined in the scan: exact whatever the hashes.
    Joined,
}

const SERIES_COLUMNS: &str = "table_name, variant, key, metric, unit";

fn rows_filter(label: &str) -> String {
    format!(
        "label = {} AND value IS NOT NULL AND direction <> 'none'",
        sql_str(label)
    )
}

/// Where detect reads a label's rows: every measurement, or those of a window's runs
/// (from the files that may hold them; [`Db::measurements_of_selection`]).
pub(super) struct Scope {
    source: String,
    filter: String,
    runs_filter: String,
}

impl Scope {
    pub(super) fn new(db: &Db, label: &str, runs: Option<&[String]>) -> Result<Scope, DetectError> {
        let mut scope = Scope {
            source: "measurements".into(),
            filter: rows_filter(label),
            runs_filter: format!("label = {}", sql_str(label)),
        };
        if let Some(runs) = runs {
            db.selection_table("detect_sel", runs)?;
            scope.source = db.measurements_of_selection("detect_sel")?;
            let only = " AND run_id IN (SELECT run_id FROM detect_sel)";
            scope.filter.push_str(only);
            scope.runs_filter.push_str(only);
        }
        Ok(scope)
    }
}

/// Every series of `label` with rows, in name order: a series' code is its index here.
fn series_of(db: &Db, scope: &Scope) -> Result<Vec<Series>, DetectError> {
    let sql = format!(
        "SELECT {SERIES_COLUMNS}, any_value(direction), any_value(key_order), count(*), \
                hash({SERIES_COLUMNS}) \
         FROM {} AS src WHERE {} GROUP BY {SERIES_COLUMNS} ORDER BY {SERIES_COLUMNS}",
        scope.source, scope.filter
    );
    let mut stmt = db.conn.prepare(&sql)?;
    let rows = stmt
        .query_map([], |r| {
            let dir: String = r.get(5)?;
            Ok(Series {
                names: [r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?],
                direction: Direction::parse(&dir),
                key_order: r.get(6)?,
                rows: r.get::<_, i64>(7)?.max(0) as usize,
                hash: r.get(8)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}

/// hash -> index, or `None` when two items share a hash.
fn unique_codes(hashes: impl Iterator<Item = u64>) -> Option<HashMap<u64, u32, Fx>> {
    let mut map = HashMap::default();
    for (i, h) in hashes.enumerate() {
        if map.insert(h, i as u32).is_some() {
            return None;
        }
    }
    Some(map)
}

/// Where one group's rows wait for the end of the scan.
enum Sink {
    Memory(Vec<(u32, Row)>),
    File(BufWriter<std::fs::File>, std::path::PathBuf),
}

const RECORD: usize = 16;

impl Sink {
    fn push(&mut self, series: u32, row: Row) -> std::io::Result<()> {
        match self {
            Sink::Memory(v) => {
                v.push((series, row));
                Ok(())
            }
            Sink::File(w, _) => {
                let mut b = [0u8; RECORD];
                b[..4].copy_from_slice(&series.to_le_bytes());
                b[4..8].copy_from_slice(&row.run.to_le_bytes());
                b[8..].copy_from_slice(&row.value.to_le_bytes());
                w.write_all(&b)
            }
        }
    }

    fn into_rows(self) -> std::io::Result<Vec<(u32, Row)>> {
        match self {
            Sink::Memory(v) => Ok(v),
            Sink::File(w, path) => {
                drop(w.into_inner().map_err(|e| e.into_error())?);
                let file = std::fs::File::open(&path)?;
                let len = file.metadata()?.len() as usize;
                let mut r = BufReader::new(file);
                let mut out = Vec::with_capacity(len / RECORD);
                let mut b = [0u8; RECORD];
                for _ in 0..len / RECORD {
                    r.read_exact(&mut b)?;
                    let word = |s: &[u8]| u32::from_le_bytes(s.try_into().expect("4 bytes"));
                    out.push((
                        word(&b[..4]),
                        Row {
                            run: word(&b[4..8]),
                            value: f64::from_le_bytes(b[8..].try_into().expect("8 bytes")),
                        },
                    ));
                }
                std::fs::remove_file(&path)?;
                Ok(out)
            }
        }
    }
}

fn spill_error(e: std::io::Error) -> DetectError {
    DetectError::Spill(e.to_string())
}

/// Where each group's rows go while the scan runs: memory when there is one group,
/// else a file each in a temporary folder (kept alive by the returned handle).
fn sinks(
    groups: usize,
    rows: usize,
) -> Result<(Option<tempfile::TempDir>, Vec<Sink>), DetectError> {
    let dir = if groups > 1 {
        Some(
            tempfile::Builder::new()
                .prefix("perfdb-detect-")
                .tempdir()
                .map_err(spill_error)?,
        )
    } else {
        None
    };
    let sinks: Vec<Sink> = (0..groups)
        .map(|g| match &dir {
            None => Ok(Sink::Memory(Vec::with_capacity(rows))),
            Some(d) => {
                let path = d.path().join(format!("group-{g}"));
                let f = std::fs::File::create(&path)?;
                Ok(Sink::File(BufWriter::with_capacity(1 << 16, f), path))
            }
        })
        .collect::<std::io::Result<_>>()
        .map_err(spill_error)?;
    Ok((dir, sinks))
}

/// Hand every series of `label` with its rows (sorted by run code) to `each`, a group
/// of series at a time (in series order), holding about `rows_per_pass` rows at once.
pub(super) fn for_each_group(
    db: &Db,
    scope: &Scope,
    runs: &[RunPoint],
    rows_per_pass: usize,
    coding: Coding,
    mut each: impl FnMut(&[(&Series, &[Row])]),
) -> Result<(), DetectError> {
    let mut t = std::time::Instant::now();
    let series = series_of(db, scope)?;
    perfdb_ingest::timing::trace("detect: series", &mut t);
    let series_codes = unique_codes(series.iter().map(|s| s.hash));
    let run_codes = unique_codes(runs.iter().map(|r| r.hash));
    let codes = match (coding, series_codes, run_codes) {
        (Coding::Hashed, Some(s), Some(r)) => Some((s, r)),
        _ => None,
    };
    // Whole series to a group, in code order, each group about `rows_per_pass` rows.
    let mut group_of = Vec::with_capacity(series.len());
    let mut groups = 0usize;
    let mut in_group = 0usize;
    for s in &series {
        if in_group > 0 && in_group + s.rows > rows_per_pass {
            groups += 1;
            in_group = 0;
        }
        group_of.push(groups as u32);
        in_group += s.rows;
    }
    let groups = if series.is_empty() { 0 } else { groups + 1 };
    let (_dir, mut sinks) = sinks(groups, series.iter().map(|s| s.rows).sum())?;

    let (source, filter) = (&scope.source, &scope.filter);
    let sql = match &codes {
        Some(_) => format!(
            "SELECT hash({SERIES_COLUMNS}), hash(run_id), value FROM {source} AS src WHERE {filter}"
        ),
        None => format!(
            "WITH s AS (SELECT CAST(row_number() OVER (ORDER BY {SERIES_COLUMNS}) - 1 AS UBIGINT) AS sid, {SERIES_COLUMNS} \
                        FROM (SELECT DISTINCT {SERIES_COLUMNS} FROM {source} AS src WHERE {filter})), \
                  r AS (SELECT CAST(row_number() OVER (ORDER BY run_id) - 1 AS UBIGINT) AS rid, run_id \
                        FROM runs WHERE {}) \
             SELECT s.sid, r.rid, m.value FROM {source} m \
             JOIN s USING ({SERIES_COLUMNS}) JOIN r USING (run_id) WHERE {filter}",
            scope.runs_filter
        ),
    };
    let mut stmt = db.conn.prepare(&sql)?;
    for batch in stmt.stream_arrow([])? {
        let batch = batch?;
        let column = |i: usize| batch.column(i).as_any();
        let (Some(s), Some(r), Some(v)) = (
            column(0).downcast_ref::<UInt64Array>(),
            column(1).downcast_ref::<UInt64Array>(),
            column(2).downcast_ref::<Float64Array>(),
        ) else {
            return Err(DetectError::Spill(format!(
                "the scan returned {:?}, not (UBIGINT, UBIGINT, DOUBLE)",
                batch.schema()
            )));
        };
        for i in 0..batch.num_rows() {
            if s.is_null(i) || r.is_null(i) || v.is_null(i) {
                continue;
            }
            let (sc, rc) = match &codes {
                Some((sm, rm)) => match (sm.get(&s.value(i)), rm.get(&r.value(i))) {
                    (Some(&a), Some(&b)) => (a, b),
                    // A row of a run the label's runs do not list: not history.
                    _ => continue,
                },
                None => (s.value(i) as u32, r.value(i) as u32),
            };
            let g = group_of[sc as usize] as usize;
            sinks[g]
                .push(
                    sc,
                    Row {
                        run: rc,
                        value: v.value(i),
                    },
                )
                .map_err(spill_error)?;
        }
    }
    drop(stmt);
    perfdb_ingest::timing::trace("detect: scan", &mut t);
    for sink in sinks {
        let mut rows = sink.into_rows().map_err(spill_error)?;
        rows.sort_unstable_by_key(|a| (a.0, a.1.run));
        let just_rows: Vec<Row> = rows.iter().map(|r| r.1).collect();
        let mut group = Vec::new();
        let mut start = 0;
        while start < rows.len() {
            let code = rows[start].0;
            let end = start + rows[start..].partition_point(|r| r.0 == code);
            group.push((&series[code as usize], &just_rows[start..end]));
            start = end;
        }
        each(&group);
    }
    perfdb_ingest::timing::trace("detect: series examined", &mut t);
    Ok(())
}
