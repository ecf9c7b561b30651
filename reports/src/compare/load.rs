//! Step 2: load each side's values from the warehouse, one entry per row identity with
//! its trials, straight from DuckDB as Arrow.

use super::{CompareError, MatchedBy, Options, SideInfo, Strata};
use crate::db::{sql_str, Db};
use arrow::array::{Array, ArrayRef, Float64Array, Int8Array, ListArray, StringArray, UInt64Array};
use perfdb_ingest::model::{metric, Direction, Numerics, SeriesKey};
use std::collections::{BTreeMap, HashMap};

pub(crate) struct Value {
    pub(crate) value: Option<f64>,
    pub(crate) numerics: Numerics,
    /// The GPU its run ran on, when the look says (`Options::strata`).
    pub(crate) gpu: Option<u32>,
}

/// Every counter value of a side, by identity.
pub(crate) type Counters = BTreeMap<SeriesKey, Vec<f64>>;

pub(super) struct Loaded {
    pub(super) rows: BTreeMap<SeriesKey, (Direction, Vec<Value>)>,
    /// (table, key) -> the key's source order (`["M","N","K"]`), for display.
    pub(super) orders: HashMap<(String, String), String>,
    /// Rows some run printed more than once: the most times one run printed it.
    pub(super) repeated: BTreeMap<SeriesKey, usize>,
    /// Head-side numerics evidence from derived `err` columns: (table, variant, key).
    pub(super) err_nonzero: HashMap<(String, String, String), bool>,
    pub(super) derived_columns: BTreeMap<String, Vec<String>>,
    /// Hardware counters (never judged: [`super::counters`] diffs them).
    pub(super) counters: Counters,
}

impl Loaded {
    /// No rows yet, and a side's counters.
    pub(super) fn with_counters(counters: Counters) -> Loaded {
        Loaded {
            rows: BTreeMap::new(),
            orders: HashMap::new(),
            repeated: BTreeMap::new(),
            err_nonzero: HashMap::new(),
            derived_columns: BTreeMap::new(),
            counters,
        }
    }
}

fn filter_sql(filters: &[(String, String)]) -> String {
    let mut conds = Vec::new();
    for (k, raw) in filters {
        let v = sql_str(raw);
        let c = match k.as_str() {
            "table" => format!("m.table_name = {v}"),
            "variant" => format!("m.variant = {v}"),
            "metric" => format!("m.metric = {v}"),
            "unit" => format!("m.unit = {v}"),
            "arch" => format!("r.arch = {v}"),
            "format" => format!("r.format = {v}"),
            "commit" => format!("starts_with(r.\"commit\", {v})"),
            other => format!(
                "({} OR {})",
                crate::db::json_has_pair("r.tags", other, raw),
                crate::db::json_has_pair("m.key", other, raw)
            ),
        };
        conds.push(c);
    }
    conds.iter().map(|c| format!(" AND {c}")).collect()
}

/// The query that reads a side's rows, each with its values as lists.
fn side_query(
    db: &Db,
    side: &SideInfo,
    filters: &[(String, String)],
    strata: bool,
) -> Result<String, CompareError> {
    // Selected by label: all runs of those partitions, no run list to check against.
    // Else only the files that may hold the runs (a commit of a year: one file).
    let (source, run_pred) = if side.matched_by == MatchedBy::Label {
        ("measurements".to_string(), String::new())
    } else {
        db.selection_table("sel", &side.runs)?;
        let source = db.measurements_of_selection("sel")?;
        (
            source,
            " AND m.run_id IN (SELECT run_id FROM sel)".to_string(),
        )
    };
    // The label predicate lets DuckDB skip every other Hive partition's files; grouping
    // in DuckDB hands over one row per identity with its values as lists, each with a
    // hash of its run (the lists of one group are built from the same rows in the same
    // order, so they line up). The trial is the run: `per_run` reduces a run's repeats.
    let labels: Vec<String> = side.labels.iter().map(|l| sql_str(l)).collect();
    // A profiled run (tagged `profiled`, `SideInfo::profiled_run_ids`) holds counters and
    // its own timing rows, run under the profiler's replay: none of it is a trial. Its
    // counters are read by `counters_of` alone; a side without one reads as before.
    let not_profiled = if side.profiled_run_ids.is_empty() {
        String::new()
    } else {
        format!(" AND m.run_id NOT IN ({})", ids(&side.profiled_run_ids))
    };
    let sql = format!(
        "SELECT m.table_name, m.variant, m.key, m.metric, m.unit, any_value(m.direction), any_value(m.column_name), \
                list(m.value), list(CASE m.numerics WHEN 'pass' THEN 0 WHEN 'fail' THEN 2 ELSE 1 END::TINYINT), \
                any_value(m.key_order), list(hash(m.run_id)){} \
         FROM {source} m {} \
         WHERE m.label IN ({}){run_pred}{not_profiled}{} \
         GROUP BY m.table_name, m.variant, m.key, m.metric, m.unit",
        // The runs' own ids only when the look says which GPU ran each.
        if strata { ", list(m.run_id)" } else { "" },
        // Run-level filters need the runs; without them the join is skipped.
        if filters.is_empty() { "" } else { "JOIN runs r ON m.run_id = r.run_id" },
        labels.join(", "),
        filter_sql(filters)
    );
    Ok(sql)
}

/// `'a', 'b'`: run ids as an SQL list.
fn ids(runs: &[String]) -> String {
    runs.iter()
        .map(|r| sql_str(r))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The counters of a side's profiled runs (none without one: no query).
fn counters_of(db: &Db, side: &SideInfo) -> Result<Counters, CompareError> {
    if side.profiled_run_ids.is_empty() {
        return Ok(Counters::new());
    }
    let cond = format!(" AND m.run_id IN ({})", ids(&side.profiled_run_ids));
    counters_where(db, &side.labels, &cond)
}

pub(super) fn load_side(db: &Db, side: &SideInfo, opt: &Options) -> Result<Loaded, CompareError> {
    let strata = opt.strata.as_deref();
    let sql = side_query(db, side, &opt.filters, strata.is_some())?;
    let mut loaded = Loaded::with_counters(counters_of(db, side)?);
    // Arrow straight from DuckDB: no per-value conversion on the way.
    let (_, batches) = db.query(&sql)?;
    for batch in &batches {
        let text = |i: usize| utf8(batch.column(i));
        let (tables, variants, keys, metrics, units, directions, columns) = (
            text(0)?,
            text(1)?,
            text(2)?,
            text(3)?,
            text(4)?,
            text(5)?,
            text(6)?,
        );
        let value_lists = list(batch.column(7))?;
        let numerics_lists = list(batch.column(8))?;
        let key_orders = text(9)?;
        let run_lists = list(batch.column(10))?;
        let id_lists = strata.map(|_| list(batch.column(11))).transpose()?;
        for i in 0..batch.num_rows() {
            let table = tables.value(i).to_string();
            let variant = variants.value(i).to_string();
            let key = keys.value(i).to_string();
            if !key_orders.is_null(i) {
                loaded
                    .orders
                    .entry((table.clone(), key.clone()))
                    .or_insert_with(|| key_orders.value(i).to_string());
            }
            let metric_name = metrics.value(i).to_string();
            let direction = Direction::parse(directions.value(i));
            let values_arr = value_lists.value(i);
            let values = values_arr
                .as_any()
                .downcast_ref::<Float64Array>()
                .ok_or_else(|| unexpected("value list is not DOUBLE"))?;
            let id_of = |table, variant, key, metric| SeriesKey {
                table,
                variant,
                key,
                metric,
                unit: units.value(i).to_string(),
            };
            if metric::is_derived(&metric_name) || direction == Direction::None {
                let nonzero = values.iter().any(|v| v.is_some_and(|x| x != 0.0));
                if metric_name == metric::ERROR && !variant.is_empty() && nonzero {
                    loaded
                        .err_nonzero
                        .insert((table.clone(), variant.clone(), key.clone()), true);
                }
                let cols = loaded.derived_columns.entry(table).or_default();
                let column = columns.value(i);
                if !cols.iter().any(|c| c == column) {
                    cols.push(column.to_string());
                }
                continue;
            }
            let numerics_arr = numerics_lists.value(i);
            let numerics = numerics_arr
                .as_any()
                .downcast_ref::<Int8Array>()
                .ok_or_else(|| unexpected("numerics list is not TINYINT"))?;
            let gpus = match (strata, &id_lists) {
                (Some(st), Some(l)) => Some(gpus_of(st, &utf8(&l.value(i))?)),
                _ => None,
            };
            let gpu = |j: usize| gpus.as_ref().and_then(|g| g[j]);
            let vals: Vec<Value> = (0..values.len())
                .map(|j| Value {
                    gpu: gpu(j),
                    value: values.is_valid(j).then(|| values.value(j)),
                    numerics: match numerics.value(j) {
                        0 => Numerics::Pass,
                        2 => Numerics::Fail,
                        _ => Numerics::NotChecked,
                    },
                })
                .collect();
            let runs_arr = run_lists.value(i);
            let runs = runs_arr
                .as_any()
                .downcast_ref::<UInt64Array>()
                .ok_or_else(|| unexpected("run hash list is not UBIGINT"))?;
            let (mut vals, mut runs) = (vals, runs.values().to_vec());
            if let Some(g) = &gpus {
                // A run the look does not list is not one of its trials (its GPU's
                // blocks were dropped).
                let kept: Vec<bool> = g.iter().map(Option::is_some).collect();
                let mut k = kept.iter();
                vals.retain(|_| *k.next().unwrap_or(&true));
                let mut k = kept.iter();
                runs.retain(|_| *k.next().unwrap_or(&true));
                if vals.is_empty() {
                    continue;
                }
            }
            let (vals, most) = per_run(vals, &runs);
            let id = id_of(table, variant, key, metric_name);
            if most > 1 {
                loaded.repeated.insert(id.clone(), most);
            }
            loaded.rows.insert(id, (direction, vals));
        }
    }
    Ok(loaded)
}

/// The trial is the run: values of one row grouped by run (`runs[j]` identifies the run
/// of `vals[j]`), each run's reduced to its median with its worst numerics. Returns the
/// trials and the most values one run gave (1 when no run repeated the row, which is
/// checked first and costs no copy).
pub(super) fn per_run(vals: Vec<Value>, runs: &[u64]) -> (Vec<Value>, usize) {
    let mut sorted: Vec<(u64, usize)> = runs.iter().copied().zip(0..).collect();
    sorted.sort_unstable();
    if sorted.windows(2).all(|w| w[0].0 != w[1].0) {
        return (vals, 1);
    }
    // The trials in the order their runs first appear (as a side read from files lists
    // them), not in the order of the runs' hashes.
    let mut groups: Vec<&[(u64, usize)]> = sorted.chunk_by(|a, b| a.0 == b.0).collect();
    groups.sort_by_key(|g| g.iter().map(|(_, j)| *j).min());
    let mut out = Vec::new();
    let mut most = 1;
    for group in groups {
        most = most.max(group.len());
        let mut present: Vec<f64> = group.iter().filter_map(|(_, j)| vals[*j].value).collect();
        let numerics = group
            .iter()
            .map(|(_, j)| vals[*j].numerics)
            .reduce(Numerics::worst)
            .unwrap_or(Numerics::NotChecked);
        let value = (!present.is_empty()).then(|| crate::stats::median_in_place(&mut present));
        let gpu = vals[group[0].1].gpu;
        out.push(Value {
            value,
            numerics,
            gpu,
        });
    }
    (out, most)
}

/// Each value's GPU, from its run's id (`None`: not a trial of the look).
fn gpus_of(strata: &Strata, ids: &StringArray) -> Vec<Option<u32>> {
    (0..ids.len())
        .map(|j| strata.gpu_of.get(ids.value(j)).copied())
        .collect()
}

fn unexpected(what: &str) -> CompareError {
    CompareError::Db(crate::db::DbError::Unexpected(what.to_string()))
}

/// A text column as Utf8 (DuckDB may hand over other string layouts).
fn utf8(a: &ArrayRef) -> Result<StringArray, CompareError> {
    let cast = arrow::compute::cast(a, &arrow::datatypes::DataType::Utf8)
        .map_err(|e| unexpected(&format!("text column: {e}")))?;
    cast.as_any()
        .downcast_ref::<StringArray>()
        .cloned()
        .ok_or_else(|| unexpected("text column is not Utf8"))
}

fn list(a: &ArrayRef) -> Result<ListArray, CompareError> {
    a.as_any()
        .downcast_ref::<ListArray>()
        .cloned()
        .ok_or_else(|| unexpected("expected a LIST column"))
}

/// Every counter value the runs of `labels` hold that meet `run_cond` (SQL over
/// measurements `m`, starting with ` AND`, or empty): known by the reader that stored
/// them, never by a table's name.
pub(crate) fn counters_where(
    db: &Db,
    labels: &[String],
    run_cond: &str,
) -> Result<Counters, CompareError> {
    let list = labels
        .iter()
        .map(|s| sql_str(s))
        .collect::<Vec<_>>()
        .join(", ");
    let sql = format!(
        "SELECT m.table_name, m.variant, m.key, m.metric, m.unit, list(m.value) \
         FROM measurements m WHERE m.label IN ({list}) AND {} \
         AND m.value IS NOT NULL{run_cond} GROUP BY 1, 2, 3, 4, 5",
        perfdb_ingest::formats::counters::counter_sql("m")
    );
    let mut stmt = db.conn.prepare(&sql)?;
    let rows = stmt.query_map([], |r| {
        let values = crate::db::list_f64(r.get(5)?);
        Ok((
            SeriesKey {
                table: r.get(0)?,
                variant: r.get(1)?,
                key: r.get(2)?,
                metric: r.get(3)?,
                unit: r.get(4)?,
            },
            values,
        ))
    })?;
    let mut out = Counters::new();
    for row in rows {
        let (id, v) = row?;
        out.insert(id, v);
    }
    Ok(out)
}
