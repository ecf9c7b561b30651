//! `compare BASE HEAD`: match rows like with like, reduce trials, test, gate on a
//! control, apply thresholds, and decide. The method is documented in docs/STATS.md.

use crate::db::{sql_str, Db, DbError};
use crate::stats;
use arrow::array::{Array, ArrayRef, Float64Array, Int8Array, ListArray, StringArray};
use perfdb_ingest::model::{self, key_from_json, metric, Direction, Numerics};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Reduce {
    Best,
    Median,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Test {
    Welch,
    MannWhitney,
}

/// Fewest trials a side for Welch's test.
pub const MIN_TRIALS_WELCH: usize = 3;
/// Side size from which the U test's p is reported next to Welch's.
pub const MIN_TRIALS_REPORT_MW: usize = 4;

#[derive(Debug, Clone, Serialize)]
pub struct Options {
    pub threshold: f64,
    pub alpha: f64,
    pub reduce: Reduce,
    pub test: Test,
    /// Case-insensitive substrings naming the control variant(s).
    pub control: Vec<String>,
    pub control_tol: f64,
    #[serde(skip)]
    pub overrides: Vec<crate::config::Override>,
    /// `k=v` filters: table/variant/metric/unit on rows, arch/format/commit on runs,
    /// anything else a run tag or an identity key cell.
    pub filters: Vec<(String, String)>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            threshold: 0.05,
            alpha: 0.05,
            reduce: Reduce::Median,
            test: Test::Welch,
            control: Vec::new(),
            control_tol: 0.10,
            overrides: Vec::new(),
            filters: Vec::new(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    #[error(transparent)]
    Db(#[from] DbError),
    #[error("no runs match '{0}' (tried label, commit prefix and run id prefix); `perfdb runs` lists them")]
    NoRuns(String),
    #[error("invalid --where '{0}': expected key=value")]
    BadFilter(String),
}

impl From<duckdb::Error> for CompareError {
    fn from(e: duckdb::Error) -> Self {
        CompareError::Db(DbError::Query(e))
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct SideInfo {
    pub selector: String,
    /// How the selector matched: label, commit or run_id.
    pub matched_by: String,
    pub runs: Vec<String>,
    pub labels: Vec<String>,
    pub commits: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SideStats {
    pub n: usize,
    pub values: Vec<Option<f64>>,
    pub best: Option<f64>,
    pub median: Option<f64>,
    /// Distribution-free 95% CI of the median; `null` ends are infinite (< 6 trials).
    pub median_ci: (Option<f64>, Option<f64>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Regression,
    Improvement,
    WithinThreshold,
    NoSignificantChange,
    Insufficient,
    Invalid,
    Withheld,
    Unreliable,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Regression => "regression",
            Verdict::Improvement => "improvement",
            Verdict::WithinThreshold => "within threshold",
            Verdict::NoSignificantChange => "no significant change",
            Verdict::Insufficient => "insufficient",
            Verdict::Invalid => "invalid",
            Verdict::Withheld => "withheld",
            Verdict::Unreliable => "unreliable",
        }
    }
    /// Could this row be compared at all?
    pub fn is_decided(self) -> bool {
        matches!(
            self,
            Verdict::Regression
                | Verdict::Improvement
                | Verdict::WithinThreshold
                | Verdict::NoSignificantChange
        )
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub table: String,
    pub variant: String,
    #[serde(serialize_with = "ser_key")]
    pub key: Vec<(String, String)>,
    /// The key as text in source order (`M=512 N=4096 K=4096`): JSON objects lose order.
    pub key_text: String,
    pub metric: String,
    pub unit: String,
    pub direction: Direction,
    pub base: SideStats,
    pub head: SideStats,
    /// head / base of the chosen reduction.
    pub ratio: Option<f64>,
    /// 95% CI of head / base as a ratio of geometric means (Welch, log scale).
    pub ratio_ci: Option<(f64, f64)>,
    /// Direction-normalised relative change: > 0 is worse (slower) whatever the metric.
    pub change: Option<f64>,
    pub p: Option<f64>,
    /// Mann-Whitney p, reported next to Welch's when both sides have >= 4 trials.
    pub p_mann_whitney: Option<f64>,
    pub q: Option<f64>,
    pub threshold: f64,
    pub verdict: Verdict,
    pub reason: String,
    pub control: bool,
    pub head_numerics: Numerics,
    pub base_numerics: Numerics,
}

impl Row {
    pub fn key_display(&self) -> String {
        model::key_display(&self.key)
    }
    pub fn numerics_failed(&self) -> bool {
        self.head_numerics == Numerics::Fail
    }
}

fn ser_key<S: serde::Serializer>(key: &[(String, String)], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut m = s.serialize_map(Some(key.len()))?;
    for (k, v) in key {
        m.serialize_entry(k, v)?;
    }
    m.end()
}

#[derive(Debug, Clone, Serialize)]
pub struct ControlMetric {
    pub metric: String,
    /// Geometric mean of the control's direction-normalised ratios (> 1 = slower).
    pub ratio: f64,
    pub rows: usize,
    pub passed: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct ControlStatus {
    pub variant: Vec<String>,
    pub matched_variants: Vec<String>,
    pub tolerance: f64,
    pub metrics: Vec<ControlMetric>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// Geometric mean over compared non-control rows of the direction-normalised ratio
    /// (> 1 = slower), benchstat's definition.
    pub geomean_ratio: Option<f64>,
    /// Stratified bootstrap 95% CI (fixed seed).
    pub ci: Option<(f64, f64)>,
    /// t-interval over rows, a secondary figure.
    pub t_ci: Option<(f64, f64)>,
    pub rows: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Overall {
    Ok,
    Regression,
    Inconclusive,
    Unreliable,
}

impl Overall {
    /// The process exit code CI acts on.
    pub fn exit_code(self) -> u8 {
        match self {
            Overall::Ok => 0,
            Overall::Regression => 1,
            Overall::Inconclusive | Overall::Unreliable => 3,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct OneSided {
    pub table: String,
    pub variant: String,
    #[serde(serialize_with = "ser_key")]
    pub key: Vec<(String, String)>,
    pub metric: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct KeyBasis {
    pub table: String,
    pub key_columns: Vec<String>,
    pub derived_columns_excluded: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub verdict: Overall,
    pub reason: String,
    pub base: SideInfo,
    pub head: SideInfo,
    pub options: Options,
    pub control: Option<ControlStatus>,
    pub summary: Summary,
    pub rows: Vec<Row>,
    pub only_in_base: Vec<OneSided>,
    pub only_in_head: Vec<OneSided>,
    /// Rows whose every value is missing on both sides (e.g. `tflops=None`).
    pub not_measured: usize,
    pub key_basis: Vec<KeyBasis>,
    pub warnings: Vec<String>,
}

impl Report {
    pub fn count(&self, v: Verdict) -> usize {
        self.rows
            .iter()
            .filter(|r| !r.control && r.verdict == v)
            .count()
    }
    pub fn numerics_failures(&self) -> Vec<&Row> {
        self.rows.iter().filter(|r| r.numerics_failed()).collect()
    }
}

/// Resolve a selector: label, else commit prefix, else run id prefix.
pub fn select_runs(db: &Db, spec: &str) -> Result<SideInfo, CompareError> {
    let s = sql_str(spec);
    for (by, cond) in [
        ("label", format!("label = {s}")),
        ("commit", format!("starts_with(\"commit\", {s})")),
        ("run_id", format!("starts_with(run_id, {s})")),
    ] {
        let sql = format!(
            "SELECT run_id, label, coalesce(\"commit\", '') FROM runs WHERE {cond} ORDER BY label, trial"
        );
        let mut stmt = db.conn.prepare(&sql)?;
        let rows: Vec<(String, String, String)> = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<Result<_, _>>()?;
        if !rows.is_empty() {
            let mut labels: Vec<String> = rows.iter().map(|r| r.1.clone()).collect();
            labels.dedup();
            let mut commits: Vec<String> = rows
                .iter()
                .map(|r| r.2.clone())
                .filter(|c| !c.is_empty())
                .collect();
            commits.sort();
            commits.dedup();
            return Ok(SideInfo {
                selector: spec.to_string(),
                matched_by: by.to_string(),
                runs: rows.into_iter().map(|r| r.0).collect(),
                labels,
                commits,
            });
        }
    }
    Err(CompareError::NoRuns(spec.to_string()))
}

pub(crate) struct Value {
    pub(crate) value: Option<f64>,
    pub(crate) numerics: Numerics,
}

/// table, variant, key (canonical JSON), metric, unit.
pub(crate) type RowId = (String, String, String, String, String);

struct Loaded {
    rows: BTreeMap<RowId, (Direction, Vec<Value>)>,
    /// (table, key) -> the key's source order (`["M","N","K"]`), for display.
    orders: HashMap<(String, String), String>,
    /// Head-side numerics evidence from derived `err` columns: (table, variant, key).
    err_nonzero: HashMap<(String, String, String), bool>,
    derived_columns: BTreeMap<String, Vec<String>>,
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

fn load_side(
    db: &Db,
    side: &SideInfo,
    filters: &[(String, String)],
) -> Result<Loaded, CompareError> {
    // Selected by label: all runs of those partitions, no run list to check against.
    let run_pred = if side.matched_by == "label" {
        String::new()
    } else {
        db.selection_table("sel", &side.runs)?;
        " AND m.run_id IN (SELECT run_id FROM sel)".to_string()
    };
    // The label predicate lets DuckDB skip every other Hive partition's files; grouping
    // in DuckDB hands over one row per identity with its trials as lists (the lists of
    // one group are built from the same rows in the same order, so they line up).
    let labels: Vec<String> = side.labels.iter().map(|l| sql_str(l)).collect();
    let sql = format!(
        "SELECT m.table_name, m.variant, m.key, m.metric, m.unit, any_value(m.direction), any_value(m.column_name), \
                list(m.value), list(CASE m.numerics WHEN 'pass' THEN 0 WHEN 'fail' THEN 2 ELSE 1 END::TINYINT), \
                any_value(m.key_order) \
         FROM measurements m {} \
         WHERE m.label IN ({}){run_pred}{} \
         GROUP BY m.table_name, m.variant, m.key, m.metric, m.unit",
        // Run-level filters need the runs; without them the join is skipped.
        if filters.is_empty() { "" } else { "JOIN runs r ON m.run_id = r.run_id" },
        labels.join(", "),
        filter_sql(filters)
    );
    let mut loaded = Loaded {
        rows: BTreeMap::new(),
        orders: HashMap::new(),
        err_nonzero: HashMap::new(),
        derived_columns: BTreeMap::new(),
    };
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
            let vals: Vec<Value> = (0..values.len())
                .map(|j| Value {
                    value: values.is_valid(j).then(|| values.value(j)),
                    numerics: match numerics.value(j) {
                        0 => Numerics::Pass,
                        2 => Numerics::Fail,
                        _ => Numerics::NotChecked,
                    },
                })
                .collect();
            loaded.rows.insert(
                (table, variant, key, metric_name, units.value(i).to_string()),
                (direction, vals),
            );
        }
    }
    Ok(loaded)
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

fn is_control(variant: &str, control: &[String]) -> bool {
    let v = variant.to_lowercase();
    control.iter().any(|c| v.contains(&c.to_lowercase()))
}

fn reduce_best(values: &[f64], dir: Direction) -> f64 {
    match dir {
        Direction::Higher => values.iter().copied().fold(f64::MIN, f64::max),
        _ => values.iter().copied().fold(f64::MAX, f64::min),
    }
}

fn side_stats(vals: &[Value], dir: Direction) -> SideStats {
    let values: Vec<Option<f64>> = vals.iter().map(|v| v.value).collect();
    let ok: Vec<f64> = values.iter().flatten().copied().collect();
    let (best, median, ci) = if ok.is_empty() {
        (None, None, (None, None))
    } else {
        let (lo, hi) = stats::median_ci(&ok);
        (
            Some(reduce_best(&ok, dir)),
            Some(stats::median(&ok)),
            (lo.is_finite().then_some(lo), hi.is_finite().then_some(hi)),
        )
    };
    SideStats {
        n: vals.len(),
        values,
        best,
        median,
        median_ci: ci,
    }
}

/// Direction-normalised ratio: > 1 is worse.
fn normalised(ratio: f64, dir: Direction) -> f64 {
    match dir {
        Direction::Higher => 1.0 / ratio,
        _ => ratio,
    }
}

fn fmt_pct(x: f64) -> String {
    format!("{:+.1}%", x * 100.0)
}

/// Compare two sides of the warehouse.
pub fn compare(db: &Db, base: &str, head: &str, opt: &Options) -> Result<Report, CompareError> {
    let mut t = std::time::Instant::now();
    let base_side = select_runs(db, base)?;
    let head_side = select_runs(db, head)?;
    trace("select runs", &mut t);
    let b = load_side(db, &base_side, &opt.filters)?;
    let h = load_side(db, &head_side, &opt.filters)?;
    trace("load both sides", &mut t);
    let r = build_report(base_side, head_side, b, h, opt);
    trace("statistics (summary included)", &mut t);
    Ok(r)
}

/// With `PERFDB_TRACE=1`, print how long the phase since `t` took (to stderr); `t`
/// restarts for the next phase.
fn trace(phase: &str, t: &mut std::time::Instant) {
    if std::env::var_os("PERFDB_TRACE").is_some() {
        eprintln!("trace: {phase}: {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
    }
    *t = std::time::Instant::now();
}

fn build_report(
    base_side: SideInfo,
    head_side: SideInfo,
    mut b: Loaded,
    mut h: Loaded,
    opt: &Options,
) -> Report {
    let mut rows: Vec<Row> = Vec::new();
    let mut only_in_base = Vec::new();
    let mut only_in_head = Vec::new();
    let mut not_measured = 0usize;
    let mut key_names: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut warnings = crate::matching::reconcile_key_columns(&mut b.rows, &mut h.rows);
    let positional = crate::matching::positional_mismatches(&b.rows, &h.rows);
    warnings.extend(positional.iter().map(|m| m.warning()));
    let mut orders = std::mem::take(&mut h.orders);
    for (k, v) in std::mem::take(&mut b.orders) {
        orders.entry(k).or_insert(v);
    }
    let display_key = |table: &str, key_json: &str| -> Vec<(String, String)> {
        let key = key_from_json(key_json);
        match orders.get(&(table.to_string(), key_json.to_string())) {
            Some(order) => model::in_source_order(key, order),
            // A key re-made from the columns both sides share: any row of the table
            // with the fuller key gives the order.
            None => match orders.iter().find(|((t, _), _)| t == table) {
                Some((_, order)) => model::in_source_order(key, order),
                None => key,
            },
        }
    };

    let one_sided = |id: &RowId| OneSided {
        table: id.0.clone(),
        variant: id.1.clone(),
        key: display_key(&id.0, &id.2),
        metric: id.3.clone(),
    };
    for id in h.rows.keys() {
        if !b.rows.contains_key(id) {
            only_in_head.push(one_sided(id));
        }
    }
    let ids: Vec<RowId> = b.rows.keys().cloned().collect();
    for id in ids {
        let (dir, bvals) = b.rows.remove(&id).expect("key from map");
        let Some((_, hvals)) = h.rows.remove(&id) else {
            only_in_base.push(one_sided(&id));
            continue;
        };
        if bvals.iter().chain(&hvals).all(|v| v.value.is_none()) {
            not_measured += 1;
            continue;
        }
        let (table, variant, key_json, metric_name, unit) = id;
        let key = display_key(&table, &key_json);
        key_names
            .entry(table.clone())
            .or_insert_with(|| key.iter().map(|(k, _)| k.clone()).collect());
        let threshold = opt
            .overrides
            .iter()
            .find(|o| o.matches(&table, &variant, &metric_name))
            .map(|o| o.threshold)
            .unwrap_or(opt.threshold);
        let worst = |vals: &[Value]| {
            vals.iter()
                .map(|v| v.numerics)
                .reduce(Numerics::worst)
                .unwrap_or(Numerics::NotChecked)
        };
        let mut head_numerics = worst(&hvals);
        if h.err_nonzero
            .contains_key(&(table.clone(), variant.clone(), key_json.clone()))
        {
            head_numerics = Numerics::Fail;
        }
        let base_numerics = worst(&bvals);
        let control = is_control(&variant, &opt.control);
        let mut row = Row {
            base: side_stats(&bvals, dir),
            head: side_stats(&hvals, dir),
            table,
            variant,
            key_text: model::key_display(&key),
            key,
            metric: metric_name,
            unit,
            direction: dir,
            ratio: None,
            ratio_ci: None,
            change: None,
            p: None,
            p_mann_whitney: None,
            q: None,
            threshold,
            verdict: Verdict::Invalid,
            reason: String::new(),
            control,
            head_numerics,
            base_numerics,
        };
        assess(&mut row, &bvals, &hvals, opt);
        if let Some(m) = positional.iter().find(|m| m.covers(&row.table)) {
            row.verdict = Verdict::Invalid;
            row.p = None;
            row.reason = m.row_reason();
        }
        let _ = (&base_side, &head_side);
        rows.push(row);
    }

    let control = gate_on_control(&mut rows, opt);

    // Benjamini-Hochberg over every tested non-control row that is still in the family.
    let family: Vec<usize> = (0..rows.len())
        .filter(|i| {
            !rows[*i].control
                && rows[*i].p.is_some()
                && rows[*i].verdict == Verdict::NoSignificantChange
        })
        .collect();
    let ps: Vec<f64> = family
        .iter()
        .map(|i| rows[*i].p.expect("filtered"))
        .collect();
    let qs = stats::benjamini_hochberg(&ps);
    for (i, q) in family.iter().zip(qs) {
        rows[*i].q = Some(q);
    }
    for r in &mut rows {
        decide(r, opt.alpha);
    }

    let mut t = std::time::Instant::now();
    let summary = summarize(&rows, opt);
    trace("summary bootstrap", &mut t);
    if !only_in_base.is_empty() || !only_in_head.is_empty() {
        warnings.push(format!(
            "the two sides measured different row sets: {} row(s) only in base, {} only in head",
            only_in_base.len(),
            only_in_head.len()
        ));
    }
    if opt.control.is_empty() {
        warnings.push(
            "no --control given: machine drift between the sides cannot be told from a change"
                .to_string(),
        );
    } else if control
        .as_ref()
        .is_some_and(|c| c.matched_variants.is_empty())
    {
        warnings.push(format!(
            "--control {} matched no variant present on both sides",
            opt.control.join(",")
        ));
    }
    // Sort: numerics failures and regressions first, worst change first.
    rows.sort_by(|a, b| {
        (!a.numerics_failed(), a.control, a.verdict)
            .cmp(&(!b.numerics_failed(), b.control, b.verdict))
            .then(
                b.change
                    .unwrap_or(f64::NEG_INFINITY)
                    .total_cmp(&a.change.unwrap_or(f64::NEG_INFINITY)),
            )
    });
    let key_basis = key_names
        .into_iter()
        .map(|(table, key_columns)| KeyBasis {
            derived_columns_excluded: b
                .derived_columns
                .get(&table)
                .or(h.derived_columns.get(&table))
                .cloned()
                .unwrap_or_default(),
            table,
            key_columns,
        })
        .collect();
    let (verdict, reason) = overall(&rows, &control);
    let _ = (&mut b, &mut h);
    Report {
        verdict,
        reason,
        base: base_side,
        head: head_side,
        options: opt.clone(),
        control,
        summary,
        rows,
        only_in_base,
        only_in_head,
        not_measured,
        key_basis,
        warnings,
    }
}

/// Validity, sufficiency, ratio and test of one row (before gating and BH).
fn assess(row: &mut Row, bvals: &[Value], hvals: &[Value], opt: &Options) {
    let bad = |vals: &[Value], side: &str| -> Option<String> {
        let missing = vals.iter().filter(|v| v.value.is_none()).count();
        if missing > 0 {
            return Some(format!(
                "{missing} of {} {side} trial(s) have no value",
                vals.len()
            ));
        }
        vals.iter().find_map(|v| match v.value {
            Some(x) if !(x.is_finite() && x > 0.0) => {
                Some(format!("a {side} trial has value {x} (must be > 0)"))
            }
            _ => None,
        })
    };
    if let Some(reason) = bad(bvals, "base").or_else(|| bad(hvals, "head")) {
        row.verdict = Verdict::Invalid;
        row.reason = reason;
        return;
    }
    let bv: Vec<f64> = bvals.iter().filter_map(|v| v.value).collect();
    let hv: Vec<f64> = hvals.iter().filter_map(|v| v.value).collect();
    let (rb, rh) = match opt.reduce {
        Reduce::Best => (row.base.best, row.head.best),
        Reduce::Median => (row.base.median, row.head.median),
    };
    if let (Some(rb), Some(rh)) = (rb, rh) {
        let ratio = rh / rb;
        row.ratio = Some(ratio);
        row.change = Some(normalised(ratio, row.direction) - 1.0);
    }
    let (nb, nh) = (bv.len(), hv.len());
    row.ratio_ci = stats::geomean_ratio_ci(&hv, &bv);
    if nb >= MIN_TRIALS_REPORT_MW && nh >= MIN_TRIALS_REPORT_MW {
        row.p_mann_whitney = Some(stats::mann_whitney(&hv, &bv).p);
    }
    match opt.test {
        Test::Welch => {
            if nb < MIN_TRIALS_WELCH || nh < MIN_TRIALS_WELCH {
                row.verdict = Verdict::Insufficient;
                row.reason = format!(
                    "{nb} base and {nh} head trial(s); Welch's test needs at least {MIN_TRIALS_WELCH} a side"
                );
                return;
            }
            row.p = Some(stats::welch_log(&hv, &bv).p);
        }
        Test::MannWhitney => {
            let min_p = if nb == 0 || nh == 0 {
                1.0
            } else {
                stats::mw_min_p(nb, nh)
            };
            if min_p > opt.alpha {
                row.verdict = Verdict::Insufficient;
                row.reason = format!(
                    "{nb} base and {nh} head trial(s): the U test cannot reach p <= {} (smallest p {:.3}); run at least {} a side",
                    opt.alpha,
                    min_p,
                    stats::mw_trials_needed(opt.alpha)
                );
                return;
            }
            row.p = Some(stats::mann_whitney(&hv, &bv).p);
        }
    }
    // Tested; the final verdict comes after gating and BH.
    row.verdict = Verdict::NoSignificantChange;
}

/// Control gating per metric and per row (docs/STATS.md, "Control-column gating").
fn gate_on_control(rows: &mut [Row], opt: &Options) -> Option<ControlStatus> {
    if opt.control.is_empty() {
        return None;
    }
    let tol = (1.0 + opt.control_tol).ln();
    let mut matched: Vec<String> = Vec::new();
    let mut per_metric: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut per_key: HashMap<(String, String, String, String), Vec<f64>> = HashMap::new();
    for r in rows.iter().filter(|r| r.control) {
        if !matched.contains(&r.variant) {
            matched.push(r.variant.clone());
        }
        if let Some(ratio) = r.ratio {
            let lw = normalised(ratio, r.direction).ln();
            per_metric.entry(r.metric.clone()).or_default().push(lw);
            per_key
                .entry((
                    r.table.clone(),
                    model::key_of(&r.key).0.to_string(),
                    r.metric.clone(),
                    r.unit.clone(),
                ))
                .or_default()
                .push(lw);
        }
    }
    let metrics: Vec<ControlMetric> = per_metric
        .iter()
        .map(|(m, lws)| {
            let g = stats::mean(lws);
            ControlMetric {
                metric: m.clone(),
                ratio: g.exp(),
                rows: lws.len(),
                passed: g.abs() <= tol,
            }
        })
        .collect();
    for r in rows
        .iter_mut()
        .filter(|r| !r.control && r.verdict == Verdict::NoSignificantChange)
    {
        if let Some(cm) = metrics.iter().find(|c| c.metric == r.metric && !c.passed) {
            r.verdict = Verdict::Unreliable;
            r.reason = format!(
                "control moved {} on {} (tolerance ±{:.0}%)",
                fmt_pct(cm.ratio - 1.0),
                cm.metric,
                opt.control_tol * 100.0
            );
            continue;
        }
        let k = (
            r.table.clone(),
            model::key_of(&r.key).0.to_string(),
            r.metric.clone(),
            r.unit.clone(),
        );
        if let Some(lws) = per_key.get(&k) {
            let g = stats::mean(lws);
            if g.abs() > tol {
                r.verdict = Verdict::Withheld;
                r.reason = format!(
                    "this row's control moved {} (tolerance ±{:.0}%)",
                    fmt_pct(g.exp() - 1.0),
                    opt.control_tol * 100.0
                );
            }
        }
    }
    Some(ControlStatus {
        variant: opt.control.clone(),
        matched_variants: matched,
        tolerance: opt.control_tol,
        metrics,
    })
}

/// Final verdict of a tested row from q (p for control rows), change and threshold.
fn decide(r: &mut Row, alpha: f64) {
    if r.verdict != Verdict::NoSignificantChange {
        return;
    }
    let (Some(change), Some(p)) = (r.change, if r.control { r.p } else { r.q }) else {
        return;
    };
    let what = if r.control { "p" } else { "q" };
    if p > alpha {
        r.verdict = Verdict::NoSignificantChange;
        r.reason = format!("{what} = {p:.3} > {alpha}");
    } else if change > r.threshold {
        r.verdict = Verdict::Regression;
        r.reason = format!(
            "{} worse than the {:.0}% threshold, {what} = {p:.2e}",
            fmt_pct(change),
            r.threshold * 100.0
        );
    } else if change < -r.threshold {
        r.verdict = Verdict::Improvement;
        r.reason = format!("{} better, {what} = {p:.2e}", fmt_pct(-change));
    } else {
        r.verdict = Verdict::WithinThreshold;
        r.reason = format!(
            "significant ({what} = {p:.2e}) but {} is within ±{:.0}%",
            fmt_pct(change),
            r.threshold * 100.0
        );
    }
}

fn summarize(rows: &[Row], opt: &Options) -> Summary {
    let compared: Vec<&Row> = rows
        .iter()
        .filter(|r| !r.control && r.change.is_some() && r.verdict != Verdict::Invalid)
        .collect();
    if compared.is_empty() {
        return Summary {
            geomean_ratio: None,
            ci: None,
            t_ci: None,
            rows: 0,
        };
    }
    let ws: Vec<f64> = compared
        .iter()
        .map(|r| 1.0 + r.change.expect("filtered"))
        .collect();
    let (g, t_ci) = stats::geomean_t_ci(&ws);
    // Bootstrap on lower-is-better values: invert higher-is-better ones.
    let strata: Vec<(Vec<f64>, Vec<f64>)> = compared
        .iter()
        .map(|r| {
            let f = |s: &SideStats| -> Vec<f64> {
                s.values
                    .iter()
                    .flatten()
                    .map(|v| {
                        if r.direction == Direction::Higher {
                            1.0 / v
                        } else {
                            *v
                        }
                    })
                    .collect()
            };
            (f(&r.base), f(&r.head))
        })
        .collect();
    let ci = match opt.reduce {
        Reduce::Best => stats::bootstrap_geomean_ci(&strata, stats::Statistic::Min),
        Reduce::Median => stats::bootstrap_geomean_ci(&strata, stats::Statistic::Median),
    };
    Summary {
        geomean_ratio: Some(g),
        ci,
        t_ci,
        rows: compared.len(),
    }
}

fn overall(rows: &[Row], control: &Option<ControlStatus>) -> (Overall, String) {
    let numerics: Vec<&Row> = rows.iter().filter(|r| r.numerics_failed()).collect();
    let regressions = rows
        .iter()
        .filter(|r| !r.control && r.verdict == Verdict::Regression)
        .count();
    if regressions > 0 || !numerics.is_empty() {
        let mut parts = Vec::new();
        if regressions > 0 {
            parts.push(format!("{regressions} regression(s)"));
        }
        if !numerics.is_empty() {
            parts.push(format!("{} row(s) failed numerics on head", numerics.len()));
        }
        return (Overall::Regression, parts.join(" and "));
    }
    if let Some(c) = control {
        let failed: Vec<String> = c
            .metrics
            .iter()
            .filter(|m| !m.passed)
            .map(|m| format!("{} {}", m.metric, fmt_pct(m.ratio - 1.0)))
            .collect();
        if !failed.is_empty() {
            return (
                Overall::Unreliable,
                format!(
                    "the control moved beyond ±{:.0}% ({}): those metrics cannot be judged",
                    c.tolerance * 100.0,
                    failed.join(", ")
                ),
            );
        }
    }
    let judged: Vec<&Row> = rows.iter().filter(|r| !r.control).collect();
    if judged.is_empty() {
        return (
            Overall::Inconclusive,
            "no row matched across the two sides".to_string(),
        );
    }
    let undecided = judged.iter().filter(|r| !r.verdict.is_decided()).count();
    if undecided > 0 {
        return (
            Overall::Inconclusive,
            format!(
                "{undecided} of {} row(s) could not be compared (insufficient, invalid or withheld)",
                judged.len()
            ),
        );
    }
    (
        Overall::Ok,
        format!("no regression in {} compared row(s)", judged.len()),
    )
}
