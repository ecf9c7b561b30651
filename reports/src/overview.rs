//! The overview of one label on one machine class: every compared series with its
//! commit medians over the newest commits, its latest change point, its open alerts and
//! the last commit that measured it, worst first. The web's `/` and `perfdb status`
//! read it.
//!
//! Points are the label's commits (runs without a commit: the label itself), ordered as
//! the history orders them (commit time, then first ingest, then name), on the machine
//! class asked for (default: the class with the most runs of the label). A series'
//! value at a commit is the median of its runs' medians there; its change points are
//! the history chart's ([`crate::stats::changepoint`]) over the window's per-run
//! medians, with the thresholds of `[detect]`. Attention order: open alerts (pending or
//! active), then the largest latest step for the worse, then the most commits since the
//! series was last measured, then any latest step.

use crate::config::DetectConfig;
use crate::db::{list_f64, series_key, series_key_sql, sql_str, Db, DbError, MACHINE_CLASS_SQL};
use crate::fmt::natural_cmp;
use crate::stats::changepoint;
use perfdb_ingest::model::{
    in_source_order, key_display, key_from_json, AlertStatus, Direction, SeriesKey,
};
use serde::Serialize;
use std::collections::HashMap;

/// Commits an overview spans unless asked otherwise.
pub const COMMITS: usize = 30;

/// What to show.
#[derive(Debug, Clone, Default)]
pub struct Ask {
    /// Default: the label with the most commits.
    pub label: Option<String>,
    /// Default: the label's machine class with the most runs.
    pub machine: Option<String>,
    /// Newest commits spanned (0: [`COMMITS`]).
    pub commits: usize,
    pub table: Option<String>,
    pub variant: Option<String>,
    pub metric: Option<String>,
}

/// The latest change point of a series within the window.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    /// The first commit at the new level.
    pub commit: String,
    /// New level over old (medians).
    pub ratio: f64,
    /// Whether the step goes against the metric's direction.
    pub worse: bool,
}

/// One series.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub table: String,
    pub variant: String,
    /// The canonical key (`measurements.key`).
    pub key: String,
    pub key_text: String,
    pub metric: String,
    pub unit: String,
    pub direction: Direction,
    /// The median at each commit of the window (`null`: not measured there).
    pub medians: Vec<Option<f64>>,
    pub last_commit: String,
    /// Commits of the window newer than the last that measured the series.
    pub commits_since: usize,
    pub step: Option<Step>,
    /// Open (pending or active) alerts of this series.
    pub open_alerts: Vec<String>,
    /// The newest median as a percent of the series' peak on the class's device, when
    /// the device and the data type are known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percent_of_peak: Option<f64>,
}

impl Row {
    /// Sort key, most attention first.
    fn attention(&self) -> (usize, i64, usize, i64) {
        let size = |s: &Step| (s.ratio.ln().abs() * 1e6) as i64;
        let worse = self.step.as_ref().filter(|s| s.worse).map_or(0, size);
        let any = self.step.as_ref().map_or(0, size);
        (self.open_alerts.len(), worse, self.commits_since, any)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Overview {
    pub label: String,
    /// Every label, most commits first.
    pub labels: Vec<String>,
    pub machine: String,
    /// The label's machine classes, most runs first.
    pub machines: Vec<String>,
    /// The device the class's runs name (`perfdb devices`), when they name one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// The window's commits, oldest first.
    pub commits: Vec<String>,
    /// Worst first.
    pub rows: Vec<Row>,
    /// Open stale alerts of the whole machine class: it stopped reporting.
    pub class_stale: Vec<String>,
    /// The values the filters offer (before filtering).
    pub tables: Vec<String>,
    pub variants: Vec<String>,
    pub metrics: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum OverviewError {
    #[error(transparent)]
    Db(#[from] DbError),
    #[error("no runs yet: `perfdb ingest` adds some")]
    Empty,
    #[error("unknown {0} '{1}'; known: {2}")]
    Unknown(&'static str, String, String),
    #[error("reading the triage: {0}")]
    Triage(#[from] crate::alerts::TriageError),
}

impl From<duckdb::Error> for OverviewError {
    fn from(e: duckdb::Error) -> Self {
        OverviewError::Db(DbError::Query(e))
    }
}

fn strings(db: &Db, sql: &str) -> Result<Vec<String>, OverviewError> {
    let mut stmt = db.conn.prepare(sql)?;
    let out = stmt
        .query_map([], |r| r.get::<_, String>(0))?
        .collect::<Result<_, _>>()?;
    Ok(out)
}

/// One of `known`, the asked one when given (else an error naming the known ones), or
/// the first.
fn pick(
    what: &'static str,
    asked: Option<&str>,
    known: &[String],
) -> Result<String, OverviewError> {
    match asked.filter(|a| !a.is_empty()) {
        Some(a) if known.iter().any(|k| k == a) => Ok(a.to_string()),
        Some(a) => Err(OverviewError::Unknown(
            what,
            a.to_string(),
            known.join(", "),
        )),
        None => known.first().cloned().ok_or(OverviewError::Empty),
    }
}

/// A compared series and its direction (`lower` or `higher`, as stored).
type Compared = (SeriesKey, String);

/// Every compared series' per-run medians at each commit of the window (a list a
/// commit), read from the files holding the window's runs (a year's compacted files: the
/// newest); and each key's source order.
#[allow(clippy::type_complexity)]
fn window_series(
    db: &Db,
    label: &str,
    in_class: &str,
    commits: &[String],
) -> Result<(HashMap<Compared, Vec<Vec<f64>>>, HashMap<String, String>), OverviewError> {
    let at: HashMap<&str, usize> = commits
        .iter()
        .enumerate()
        .map(|(i, c)| (c.as_str(), i))
        .collect();
    let window = commits
        .iter()
        .map(|c| sql_str(c))
        .collect::<Vec<_>>()
        .join(", ");
    let in_window = format!("{in_class} AND coalesce(r.\"commit\", r.label) IN ({window})");
    let runs = strings(
        db,
        &format!("SELECT r.run_id FROM runs r WHERE {in_window}"),
    )?;
    let source = db.summaries_of_runs(&runs)?;
    let mut stmt = db.conn.prepare(&format!(
        "SELECT {}, s.direction, \
                coalesce(r.\"commit\", r.label) AS point, list(s.median ORDER BY r.trial), \
                any_value(s.key_order) \
         FROM {source} s JOIN runs r ON s.run_id = r.run_id \
         WHERE s.label = {} AND {in_window} AND s.direction IN ('lower', 'higher') \
           AND s.median IS NOT NULL \
         GROUP BY ALL",
        series_key_sql("s"),
        sql_str(label)
    ))?;
    let mut series: HashMap<Compared, Vec<Vec<f64>>> = HashMap::new();
    let rows = stmt.query_map([], |r| {
        Ok((
            (series_key(r, 0)?, r.get::<_, String>(5)?),
            r.get::<_, String>(6)?,
            list_f64(r.get(7)?),
            r.get::<_, Option<String>>(8)?,
        ))
    })?;
    let mut key_orders: HashMap<String, String> = HashMap::new();
    for row in rows {
        let (id, point, trials, order) = row?;
        if let Some(o) = order {
            key_orders.insert(id.0.key.clone(), o);
        }
        let Some(&i) = at.get(point.as_str()) else {
            continue;
        };
        let v = series
            .entry(id)
            .or_insert_with(|| vec![Vec::new(); commits.len()]);
        v[i].extend(trials);
    }
    Ok((series, key_orders))
}

/// One series' overview row: its medians by commit, its latest step, its open alerts.
fn series_row(
    (
        SeriesKey {
            table,
            variant,
            key,
            metric,
            unit,
        },
        direction,
    ): Compared,
    per_commit: Vec<Vec<f64>>,
    commits: &[String],
    open: &[&crate::alerts::AlertView],
    key_orders: &HashMap<String, String>,
    detect: &DetectConfig,
) -> Row {
    let direction = Direction::parse(&direction);
    let medians: Vec<Option<f64>> = per_commit
        .iter()
        .map(|t| (!t.is_empty()).then(|| crate::stats::median(t)))
        .collect();
    let last = medians.iter().rposition(Option::is_some).unwrap_or(0);
    // Change points over the commits that measured the series.
    let measured: Vec<(usize, &Vec<f64>)> = per_commit
        .iter()
        .enumerate()
        .filter(|(_, t)| !t.is_empty())
        .collect();
    let trials: Vec<Vec<f64>> = measured.iter().map(|(_, t)| (*t).clone()).collect();
    let params = detect.for_series(&table, &variant);
    let step = changepoint::detect_with(&trials, &params)
        .last()
        .map(|cp| Step {
            commit: commits[measured[cp.index].0].clone(),
            ratio: cp.ratio,
            worse: match direction {
                Direction::Lower => cp.ratio > 1.0,
                Direction::Higher => cp.ratio < 1.0,
                Direction::None => false,
            },
        });
    let open_alerts = open
        .iter()
        .filter(|a| {
            a.table == table
                && a.variant == variant
                && a.key_json == key
                && a.metrics.contains(&metric)
        })
        .map(|a| a.id.clone())
        .collect();
    Row {
        key_text: key_display(&in_source_order(
            key_from_json(&key),
            key_orders.get(&key).map_or("[]", String::as_str),
        )),
        table,
        variant,
        key,
        metric,
        unit,
        direction,
        last_commit: commits[last].clone(),
        commits_since: commits.len() - 1 - last,
        medians,
        step,
        open_alerts,
        percent_of_peak: None,
    }
}

/// The trials its device could not have produced, taken out of a series: never a
/// median, never a step (`detect` never reads them either).
fn drop_impossible(
    per_commit: &mut [Vec<f64>],
    d: &perfdb_ingest::devices::Device,
    (
        SeriesKey {
            key, metric, unit, ..
        },
        _,
    ): &Compared,
) {
    let held = perfdb_ingest::devices::check::HeldRow::of_json(metric, unit, key);
    if let Some(limit) = held.and_then(|h| h.limit(d)) {
        for trials in per_commit {
            trials.retain(|v| !limit.impossible(*v));
        }
    }
}

/// The one device the runs of a class name, if they all name the same one.
fn class_device<'d>(
    db: &'d Db,
    in_class: &str,
) -> Result<Option<&'d perfdb_ingest::devices::Device>, OverviewError> {
    let sql = format!(
        "SELECT DISTINCT {} FROM runs r WHERE {in_class}",
        crate::db::RUN_DEVICE_SQL
    );
    let mut stmt = db.conn.prepare(&sql).map_err(DbError::from)?;
    let named: Vec<_> = stmt
        .query_map([], |r| crate::db::run_device(&db.devices, r, 0))
        .map_err(DbError::from)?
        .collect::<Result<_, _>>()
        .map_err(DbError::from)?;
    Ok(crate::db::one_device(named))
}

/// The alerts still open (pending or active) of `label` on `machine`.
fn open_alerts<'a>(
    alerts: &'a [crate::alerts::AlertView],
    label: &str,
    machine: &str,
) -> Vec<&'a crate::alerts::AlertView> {
    alerts
        .iter()
        .filter(|a| {
            matches!(a.status, AlertStatus::Pending | AlertStatus::Active)
                && a.label == label
                && a.machine == machine
        })
        .collect()
}

/// The series that need attention first, then by name as people sort names.
fn worst_first(rows: &mut [Row]) {
    rows.sort_by(|a, b| {
        b.attention()
            .cmp(&a.attention())
            .then_with(|| natural_cmp(&a.table, &b.table))
            .then_with(|| natural_cmp(&a.variant, &b.variant))
            .then_with(|| natural_cmp(&a.key_text, &b.key_text))
            .then_with(|| a.metric.cmp(&b.metric))
    });
}

/// The overview `ask` asks for.
pub fn overview(db: &Db, ask: &Ask, detect: &DetectConfig) -> Result<Overview, OverviewError> {
    let labels = strings(
        db,
        "SELECT label FROM runs GROUP BY label \
         ORDER BY count(DISTINCT coalesce(\"commit\", run_id)) DESC, label",
    )?;
    let label = pick("label", ask.label.as_deref(), &labels)?;
    let machines = strings(
        db,
        &format!(
            "SELECT {MACHINE_CLASS_SQL} AS class FROM runs r WHERE r.label = {} \
             GROUP BY class ORDER BY count(*) DESC, class",
            sql_str(&label)
        ),
    )?;
    let machine = pick("machine", ask.machine.as_deref(), &machines)?;
    let in_class = format!(
        "r.label = {} AND {MACHINE_CLASS_SQL} = {}",
        sql_str(&label),
        sql_str(&machine)
    );
    // The window: the newest commits, in history order.
    let points = crate::db::history_points(db, &in_class)?;
    let n = if ask.commits == 0 {
        COMMITS
    } else {
        ask.commits
    };
    let commits: Vec<String> = points
        .iter()
        .skip(points.len().saturating_sub(n))
        .cloned()
        .collect();
    let (series, key_orders) = window_series(db, &label, &in_class, &commits)?;
    let mut tables: Vec<String> = series.keys().map(|k| k.0.table.clone()).collect();
    let mut variants: Vec<String> = series.keys().map(|k| k.0.variant.clone()).collect();
    let mut metrics: Vec<String> = series.keys().map(|k| k.0.metric.clone()).collect();
    for v in [&mut tables, &mut variants, &mut metrics] {
        v.sort_by(|a, b| natural_cmp(a, b));
        v.dedup();
    }
    for (what, asked, known) in [
        ("table", &ask.table, &tables),
        ("variant", &ask.variant, &variants),
        ("metric", &ask.metric, &metrics),
    ] {
        if let Some(a) = asked.as_deref().filter(|a| !a.is_empty()) {
            pick(what, Some(a), known)?;
        }
    }
    // Open alerts by series.
    let alerts = crate::alerts::list(db, None)?;
    let open = open_alerts(&alerts, &label, &machine);
    let class_stale: Vec<String> = open
        .iter()
        .filter(|a| a.table.is_empty())
        .map(|a| a.id.clone())
        .collect();
    let keep = |f: &Option<String>, v: &str| f.as_deref().is_none_or(|f| f.is_empty() || f == v);
    let mut out: Vec<Row> = Vec::new();
    let device = class_device(db, &in_class)?;
    for (id, mut per_commit) in series {
        let s = &id.0;
        if !(keep(&ask.table, &s.table)
            && keep(&ask.variant, &s.variant)
            && keep(&ask.metric, &s.metric))
        {
            continue;
        }
        if let Some(d) = device {
            drop_impossible(&mut per_commit, d, &id);
        }
        out.push(series_row(
            id,
            per_commit,
            &commits,
            &open,
            &key_orders,
            detect,
        ));
    }
    if let Some(d) = device {
        for r in &mut out {
            let peak = d.peak_for(
                &r.metric,
                &r.unit,
                &perfdb_ingest::model::key_from_json(&r.key),
            );
            let last = r.medians.iter().rev().flatten().next().copied();
            r.percent_of_peak = peak.zip(last).map(|(p, v)| p.percent(v));
        }
    }
    worst_first(&mut out);
    Ok(Overview {
        label,
        labels,
        machine,
        machines,
        device: device.map(|d| d.id.clone()),
        commits,
        rows: out,
        class_stale,
        tables,
        variants,
        metrics,
    })
}

/// The range a sparkline spans: the medians' own, widened to at least [`SPARK_SPAN`]
/// of their middle, so a flat series draws flat instead of its noise magnified.
fn scale(medians: &[Option<f64>]) -> (f64, f64) {
    let vals: Vec<f64> = medians.iter().flatten().copied().collect();
    let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mid = (lo + hi) / 2.0;
    let half = ((hi - lo) / 2.0).max(SPARK_SPAN * mid.abs() / 2.0);
    (mid - half, mid + half)
}

/// The smallest span of a sparkline, relative to its middle.
pub const SPARK_SPAN: f64 = 0.10;

/// `▁▂▅█` of the medians (a space where a commit did not measure the series).
pub fn spark_text(medians: &[Option<f64>]) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let (lo, hi) = scale(medians);
    medians
        .iter()
        .map(|m| match m {
            None => ' ',
            Some(v) if hi > lo => BARS[(((v - lo) / (hi - lo)) * 7.0).round() as usize],
            Some(_) => BARS[3],
        })
        .collect()
}

/// A small SVG line of the medians: gaps where a commit did not measure the series, the
/// latest step's first commit marked (red when for the worse).
pub fn spark_svg(row: &Row, commits: &[String]) -> String {
    let (w, h, pad) = (120.0, 24.0, 2.0);
    let (lo, hi) = scale(&row.medians);
    let n = row.medians.len().max(2) as f64;
    let x = |i: usize| pad + (w - 2.0 * pad) * i as f64 / (n - 1.0);
    let y = |v: f64| {
        if hi > lo {
            h - pad - (h - 2.0 * pad) * (v - lo) / (hi - lo)
        } else {
            h / 2.0
        }
    };
    let mut lines = Vec::new();
    let mut cur: Vec<String> = Vec::new();
    for (i, m) in row.medians.iter().enumerate() {
        match m {
            Some(v) => cur.push(format!("{:.1},{:.1}", x(i), y(*v))),
            None if !cur.is_empty() => lines.push(std::mem::take(&mut cur)),
            None => {}
        }
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    let mut svg = format!(
        "<svg class=\"spark\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" role=\"img\"><title>{} commit medians</title>",
        row.medians.iter().flatten().count()
    );
    for l in lines {
        if l.len() == 1 {
            let (cx, cy) = l[0].split_once(',').unwrap_or(("0", "0"));
            svg.push_str(&format!(
                "<circle cx=\"{cx}\" cy=\"{cy}\" r=\"1.5\" fill=\"#2563eb\"/>"
            ));
        } else {
            svg.push_str(&format!(
                "<polyline fill=\"none\" stroke=\"#2563eb\" stroke-width=\"1.5\" points=\"{}\"/>",
                l.join(" ")
            ));
        }
    }
    if let Some(s) = &row.step {
        if let Some(i) = commits.iter().position(|c| *c == s.commit) {
            if let Some(v) = row.medians[i] {
                svg.push_str(&format!(
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{}\"/>",
                    x(i),
                    y(v),
                    if s.worse { "#dc2626" } else { "#16a34a" }
                ));
            }
        }
    }
    svg.push_str("</svg>");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparks_scale_to_the_window_and_leave_gaps() {
        assert_eq!(spark_text(&[Some(1.0), None, Some(2.0), Some(1.5)]), "▁ █▅");
        assert_eq!(spark_text(&[Some(3.0), Some(3.0)]), "▅▅");
        // 2% of noise on a flat series stays in the middle bars.
        assert_eq!(spark_text(&[Some(100.0), Some(102.0), Some(101.0)]), "▄▅▅");
        assert_eq!(crate::fmt::ratio_pct(1.123), "+12.3%");
        assert_eq!(crate::fmt::ratio_pct(0.9), "-10.0%");
    }
}
