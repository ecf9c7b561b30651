//! Chart data from the warehouse, and SVG charts drawn with plotters. One step per file:
//! `shapes` (a metric per shape and variant for one run selection), `history` (one series
//! over commits, with change points), `ratio` (a comparison's ratios), and here what they
//! share: errors, the table/metric catalog, natural ordering and the SVG helpers.

mod history;
pub mod ratio;
pub mod roofline;
mod shapes;

pub use history::{
    history_data, history_svg, key_labels, series_of, HistoryData, HistoryPoint, Series,
};
pub use ratio::{ratio_svg, trials_strip};
pub use shapes::{chart_data, chart_svg, ChartData, ShapePoint};

use plotters::coord::CoordTranslate;

use crate::compare::CompareError;
use crate::db::{Db, DbError};
use crate::fmt::natural_cmp;
use plotters::prelude::*;
use serde::Serialize;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::Once;

#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    #[error(transparent)]
    Db(#[from] DbError),
    #[error("{0}")]
    Select(#[from] CompareError),
    #[error("unknown table '{0}'; tables: {1}")]
    UnknownTable(String, String),
    #[error("unknown metric '{0}' for table '{1}'; metrics: {2}")]
    UnknownMetric(String, String, String),
    #[error("no values for this selection")]
    Empty,
    #[error("unknown {0}")]
    Unknown(String),
}

impl From<duckdb::Error> for ChartError {
    fn from(e: duckdb::Error) -> Self {
        ChartError::Db(DbError::Query(e))
    }
}

static FONT: Once = Once::new();

/// Charts measure their text with an embedded font (DejaVu Sans, permissive licence).
fn register_font() {
    FONT.call_once(|| {
        let bytes: &'static [u8] = include_bytes!("../../assets/DejaVuSans.ttf");
        plotters::style::register_font("sans-serif", FontStyle::Normal, bytes)
            .unwrap_or_else(|_| panic!("embedded font is valid"));
    });
}

/// Tables and their compared metrics, for pickers: from the series list the database
/// keeps per warehouse state (`Db::series`).
pub fn catalog(db: &Db) -> Result<Vec<(String, Vec<String>)>, ChartError> {
    let mut cat: std::collections::BTreeMap<&str, std::collections::BTreeSet<&str>> =
        Default::default();
    let series = db.series()?;
    for s in series.iter().filter(|s| s.compared) {
        cat.entry(&s.table).or_default().insert(&s.metric);
    }
    Ok(cat
        .into_iter()
        .map(|(t, m)| (t.to_string(), m.into_iter().map(String::from).collect()))
        .collect())
}

fn check_table_metric(db: &Db, table: &str, metric: &str) -> Result<(), ChartError> {
    let cat = catalog(db)?;
    let Some((_, metrics)) = cat.iter().find(|(t, _)| t == table) else {
        let names: Vec<&str> = cat.iter().map(|(t, _)| t.as_str()).collect();
        return Err(ChartError::UnknownTable(table.into(), names.join(", ")));
    };
    if !metrics.iter().any(|m| m == metric) {
        return Err(ChartError::UnknownMetric(
            metric.into(),
            table.into(),
            metrics.join(", "),
        ));
    }
    Ok(())
}

/// Natural order of keys: cell by cell, numbers as numbers.
fn key_cmp(a: &[(String, String)], b: &[(String, String)]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        match natural_cmp(&x.1, &y.1) {
            Ordering::Equal => continue,
            o => return o,
        }
    }
    a.len().cmp(&b.len())
}

/// One trial of a chart point, drawn as a dot: the run's median for the series (its
/// only value, usually) and which run it is.
#[derive(Debug, Clone, Serialize)]
pub struct Trial {
    pub value: f64,
    pub run_id: String,
    pub label: String,
    pub trial: i32,
    pub commit: Option<String>,
}

/// A run as a dot's hover names it.
#[derive(Debug, Clone)]
pub(crate) struct RunRef {
    label: String,
    trial: i32,
    commit: Option<String>,
}

impl Trial {
    /// The trial of run `run_id` (named through `refs`) with its `value`.
    pub(crate) fn of(value: f64, run_id: String, refs: &HashMap<String, RunRef>) -> Trial {
        let r = refs.get(&run_id);
        Trial {
            value,
            label: r.map(|r| r.label.clone()).unwrap_or_default(),
            trial: r.map(|r| r.trial).unwrap_or(0),
            commit: r.and_then(|r| r.commit.clone()),
            run_id,
        }
    }
}

/// Label, trial and commit of the runs `r` matching `runs_where` (SQL over `runs r`).
pub(crate) fn run_refs(db: &Db, runs_where: &str) -> Result<HashMap<String, RunRef>, ChartError> {
    let mut stmt = db.conn.prepare(&format!(
        "SELECT r.run_id, r.label, r.trial, r.\"commit\" FROM runs r WHERE {runs_where}"
    ))?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                RunRef {
                    label: r.get(1)?,
                    trial: r.get(2)?,
                    commit: r.get(3)?,
                },
            ))
        })?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}

/// At most this many trial dots per point; more are thinned evenly.
pub const MAX_DOTS: usize = 48;
/// At most about this many trial dots in one chart: a chart of many points shows fewer
/// per point (never fewer than 3: lowest, middle, highest).
pub const MAX_DOTS_PER_CHART: usize = 3000;

/// Dots per point for a chart of `points` points.
pub(crate) fn dots_per_point(points: usize) -> usize {
    (MAX_DOTS_PER_CHART / points.max(1)).clamp(3, MAX_DOTS)
}

/// Which of `n` trials sorted by value are drawn when at most about `cap` may be: the
/// lowest, the highest, and the first of each of `cap` equal runs of ranks. One rule, in
/// Rust (`thin`) and in SQL (`thin_sql`).
pub(crate) fn keep_dot(i: usize, n: usize, cap: usize) -> bool {
    let cap = cap.max(2);
    n <= cap || i == 0 || i + 1 == n || (i * (cap - 1)) / (n - 1) != ((i - 1) * (cap - 1)) / (n - 1)
}

/// `keep_dot` as a SQL condition on rank column `i` (0-based) among `n`.
pub(crate) fn thin_sql(i: &str, n: &str, cap: usize) -> String {
    let c = cap.max(2) - 1;
    format!(
        "({n} <= {} OR {i} = 0 OR {i} = {n} - 1 OR ({i} * {c}) // ({n} - 1) <> (({i} - 1) * {c}) // ({n} - 1))",
        c + 1
    )
}

/// The trials of `sorted` (ascending by value) that `keep_dot` keeps.
pub(crate) fn thin<T>(sorted: Vec<T>, cap: usize) -> Vec<T> {
    let n = sorted.len();
    sorted
        .into_iter()
        .enumerate()
        .filter(|(i, _)| keep_dot(*i, n, cap))
        .map(|(_, t)| t)
        .collect()
}

/// Draw `trials` as small hollow dots spread around `x`, each titled with its run.
#[allow(clippy::too_many_arguments)]
pub(crate) fn draw_dots<CT>(
    chart: &mut ChartContext<'_, SVGBackend<'_>, CT>,
    titles: &mut Vec<String>,
    x: f64,
    trials: &[Trial],
    color: RGBColor,
    what: &str,
    unit: &str,
    machine: &str,
) where
    CT: CoordTranslate<From = (f64, f64)>,
{
    let n = trials.len().max(2) as f64;
    for t in trials {
        let commit = t
            .commit
            .as_deref()
            .map(|c| format!(", commit {}", &c[..c.len().min(12)]))
            .unwrap_or_default();
        titles.push(format!(
            "{what}: {} {unit} — trial {} of {}{commit}, on {machine} (run {})",
            crate::fmt::num(t.value),
            t.trial,
            t.label,
            &t.run_id[..t.run_id.len().min(12)]
        ));
    }
    let _ = chart.draw_series(trials.iter().enumerate().map(|(i, t)| {
        let dx = (i as f64 / (n - 1.0) - 0.5) * 0.16;
        Circle::new((x + dx, t.value), 3, color.mix(0.6).stroke_width(1))
    }));
}

/// `, 70.8% of the NVIDIA H200 SXM's bf16 peak` for a hover text, empty without a peak.
pub(crate) fn of_peak(p: Option<&perfdb_ingest::devices::Peak>, v: f64) -> String {
    p.map(|k| {
        format!(
            ", {:.1}% of the {}'s {} peak",
            k.percent(v),
            k.device_name,
            k.quantity
        )
    })
    .unwrap_or_default()
}

/// A device's peak as a dashed line from `x.0` to `x.1`, with its hover text
/// (`{what}: 989.5 TFLOPS (NVIDIA H200 SXM dense bf16)`).
pub(crate) fn draw_ceiling<CT>(
    chart: &mut ChartContext<'_, SVGBackend<'_>, CT>,
    titles: &mut Vec<String>,
    x: (f64, f64),
    p: &perfdb_ingest::devices::Peak,
    what: &str,
) where
    CT: CoordTranslate<From = (f64, f64)>,
{
    let _ = chart.draw_series(DashedLineSeries::new(
        [(x.0, p.value), (x.1, p.value)],
        8,
        5,
        BLACK.mix(0.7).stroke_width(1),
    ));
    titles.push(format!(
        "{what}: {} {} ({} dense {})",
        crate::fmt::num(p.value),
        p.unit,
        p.device_name,
        p.quantity
    ));
}

const PALETTE: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

fn log_range(lo: f64, hi: f64) -> (f64, f64) {
    let lo = if lo > 0.0 { lo } else { hi.max(1e-9) * 1e-3 };
    (lo / 1.5, hi * 1.5)
}

/// Escape text for embedding in SVG/HTML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Add `<title>` hover details: plotters draws circles in series order, so the n-th
/// `<circle` gets the n-th title.
fn add_titles(svg: String, titles: &[String]) -> String {
    let mut out = String::with_capacity(svg.len() + titles.len() * 64);
    let mut rest = svg.as_str();
    let mut i = 0;
    while let Some(p) = rest.find("<circle") {
        let end = rest[p..].find("/>").map(|e| p + e).unwrap_or(rest.len());
        out.push_str(&rest[..end]);
        match titles.get(i) {
            Some(t) => {
                out.push_str("><title>");
                out.push_str(&esc(t));
                out.push_str("</title></circle>");
            }
            None => out.push_str("/>"),
        }
        rest = &rest[(end + 2).min(rest.len())..];
        i += 1;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natural_order_of_shapes() {
        let mut v = vec!["M=512", "M=16", "M=4096", "M=1", "M=128"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(v, ["M=1", "M=16", "M=128", "M=512", "M=4096"]);
    }

    #[test]
    fn dots_are_thinned_evenly_keeping_the_ends() {
        let kept: Vec<usize> = thin((0..1000).collect(), 48);
        assert!(kept.len() <= 49 && kept.len() >= 47, "{}", kept.len());
        assert_eq!((kept[0], *kept.last().unwrap()), (0, 999));
        let gaps: Vec<usize> = kept.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(gaps.iter().all(|g| (1..=22).contains(g)), "{gaps:?}");
        assert_eq!(thin((0..5).collect::<Vec<_>>(), 48), vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn sql_thins_as_rust_does() {
        let conn = duckdb::Connection::open_in_memory().unwrap();
        for (n, cap) in [
            (1000usize, 48usize),
            (49, 48),
            (7, 3),
            (3, 3),
            (2, 2),
            (10_000, 3),
        ] {
            let sql = format!(
                "SELECT i FROM (SELECT range AS i, {n} AS n FROM range({n})) WHERE {} ORDER BY i",
                thin_sql("i", "n", cap)
            );
            let mut stmt = conn.prepare(&sql).unwrap();
            let from_sql: Vec<i64> = stmt
                .query_map([], |r| r.get(0))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            let from_rust: Vec<i64> = thin((0..n as i64).collect(), cap);
            assert_eq!(from_sql, from_rust, "n={n} cap={cap}");
        }
    }

    #[test]
    fn titles_attach_to_circles() {
        let svg = "<svg><circle cx=\"1\"/><circle cx=\"2\"/></svg>".to_string();
        let out = add_titles(svg, &["a<b".into(), "c".into()]);
        assert_eq!(out, "<svg><circle cx=\"1\"><title>a&lt;b</title></circle><circle cx=\"2\"><title>c</title></circle></svg>");
    }
}
