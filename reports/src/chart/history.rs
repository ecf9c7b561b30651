//! One series (table, variant, key, metric) over commits, with its change points.

use super::{
    add_titles, check_table_metric, draw_dots, register_font, thin, ChartError, Trial, PALETTE,
};
use crate::db::{one_device, run_device, sql_str, Db, MACHINE_CLASS_SQL, RUN_DEVICE_SQL};
use crate::fmt::natural_cmp;
use crate::stats;
use perfdb_ingest::model::{key_display, key_from_json};
use plotters::prelude::*;
use plotters::style::FontTransform;
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct HistoryPoint {
    /// Commit, or label when the runs have no commit.
    pub point: String,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// Each trial's median for the series, by trial number (change points use these).
    pub values: Vec<f64>,
    /// The trials as dots, ascending (thinned by `dots_per_point`, lowest and highest kept).
    pub trials: Vec<Trial>,
    /// Trials of this point its device cannot have produced (`devices::check::Limit`):
    /// drawn, but never read by the change points (as `detect` never reads them).
    #[serde(skip_serializing_if = "is_zero")]
    pub impossible: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

#[derive(Debug, Clone, Serialize)]
pub struct HistoryData {
    pub table: String,
    pub variant: String,
    pub key: String,
    pub metric: String,
    pub unit: String,
    pub points: Vec<HistoryPoint>,
    /// Indices of points where a new level starts (change points).
    pub change_points: Vec<usize>,
    /// Points of the whole series, before `points` was thinned to `MAX_POINTS` (change
    /// points and their neighbours kept).
    pub n_points: usize,
    /// The machine class shown (arch and `machine` tag): a history never mixes classes.
    pub machine: String,
    /// Every machine class the series was measured on.
    pub machines: Vec<String>,
    /// The series' ceiling on the device the shown class's runs name (`perfdb
    /// devices`), when that and the data type are known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak: Option<perfdb_ingest::devices::Peak>,
}

/// Variants and keys of a table, for pickers.
pub fn series_of(
    db: &Db,
    table: &str,
    metric: &str,
) -> Result<(Vec<String>, Vec<String>), ChartError> {
    check_table_metric(db, table, metric)?;
    let series = db.series()?;
    let of = |f: fn(&crate::db::SeriesEntry) -> &String| -> Vec<String> {
        let mut v: Vec<String> = series
            .iter()
            .filter(|s| s.table == table && s.metric == metric)
            .map(|s| f(s).clone())
            .collect();
        v.sort_by(|a, b| natural_cmp(a, b));
        v.dedup();
        v
    };
    Ok((of(|s| &s.variant), of(|s| &s.key)))
}

/// How each key of a table's metric reads: `name=value` in the order the log printed
/// the cells (keys are stored in canonical order).
pub fn key_labels(
    db: &Db,
    table: &str,
    metric: &str,
) -> Result<std::collections::HashMap<String, String>, ChartError> {
    Ok(db
        .series()?
        .iter()
        .filter(|s| s.table == table && s.metric == metric)
        .map(|s| {
            let shown = key_display(&perfdb_ingest::model::in_source_order(
                key_from_json(&s.key),
                s.key_order.as_deref().unwrap_or("[]"),
            ));
            (s.key.clone(), shown)
        })
        .collect())
}

/// Which series a history shows: (table, variant, canonical key, metric), optionally
/// only one label's runs, on one machine class.
pub struct Series<'a> {
    pub table: &'a str,
    pub variant: &'a str,
    pub key: &'a str,
    pub metric: &'a str,
    pub label: Option<&'a str>,
    /// Machine class; default the one with the most runs.
    pub machine: Option<&'a str>,
}

/// One run of the series: its class, point, times, trial and unit.
struct RunPoint<'d> {
    class: String,
    /// The device the run names (in the database's device table).
    device: Option<&'d perfdb_ingest::devices::Device>,
    point: String,
    ingested: i64,
    committed: Option<i64>,
    trial: Trial,
    unit: String,
}

/// The series' machine classes, most runs first, and the one shown: the one asked for,
/// else the first.
fn machine_class(
    runs: &[RunPoint],
    machine: Option<&str>,
) -> Result<(String, Vec<String>), ChartError> {
    let mut classes: Vec<(String, usize)> = Vec::new();
    for r in runs {
        match classes.iter_mut().find(|(c, _)| *c == r.class) {
            Some((_, n)) => *n += 1,
            None => classes.push((r.class.clone(), 1)),
        }
    }
    classes.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let machines: Vec<String> = classes.into_iter().map(|(c, _)| c).collect();
    let chosen = match machine.filter(|m| !m.is_empty()) {
        Some(m) if machines.iter().any(|c| c == m) => m.to_string(),
        Some(m) => {
            return Err(ChartError::Unknown(format!(
                "machine '{m}'; known: {}",
                machines.join(", ")
            )))
        }
        None => machines.first().cloned().unwrap_or_default(),
    };
    Ok((chosen, machines))
}

/// Every run of the series `s` (of its label, when it names one) with its median for
/// the series, what names its point and its device: one pass over the summaries. A
/// profiled run (tagged `profiled`: its times ran under a profiler's replay) is no point.
fn run_points<'d>(db: &'d Db, s: &Series) -> Result<Vec<RunPoint<'d>>, ChartError> {
    let Series {
        table,
        variant,
        key,
        metric,
        label,
        ..
    } = *s;
    let label_pred = label
        .filter(|l| !l.is_empty())
        .map(|l| format!(" AND s.label = {}", sql_str(l)))
        .unwrap_or_default();
    let sql = format!(
        "SELECT {MACHINE_CLASS_SQL} AS class, coalesce(r.\"commit\", r.label) AS point, \
                epoch_us(r.ingested_at), epoch_us(r.commit_time), r.trial, r.label, r.\"commit\", \
                r.run_id, s.median, s.unit, {RUN_DEVICE_SQL} \
         FROM summaries s JOIN runs r ON s.run_id = r.run_id \
         WHERE s.table_name = {} AND s.variant = {} AND s.key = {} AND s.metric = {}{label_pred} \
         AND NOT contains(r.tags, '\"profiled\":')",
        sql_str(table),
        sql_str(variant),
        sql_str(key),
        sql_str(metric)
    );
    let mut stmt = db.conn.prepare(&sql)?;
    let runs: Vec<RunPoint> = stmt
        .query_map([], |r| {
            Ok(RunPoint {
                class: r.get(0)?,
                point: r.get(1)?,
                ingested: r.get(2)?,
                committed: r.get(3)?,
                trial: Trial {
                    trial: r.get(4)?,
                    label: r.get(5)?,
                    commit: r.get(6)?,
                    run_id: r.get(7)?,
                    value: r.get(8)?,
                },
                unit: r.get(9)?,
                device: run_device(&db.devices, r, 10)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    Ok(runs)
}

/// One series over commits (ordered by commit time, then first ingest time), every
/// trial of each commit (its median for the series), from the per-run summaries, with
/// the change points over the whole series; thinned to `MAX_POINTS` for drawing.
pub fn history_data(
    db: &Db,
    s: &Series,
    params: &stats::changepoint::Params,
) -> Result<HistoryData, ChartError> {
    let Series {
        table,
        variant,
        key,
        metric,
        machine,
        ..
    } = *s;
    check_table_metric(db, table, metric)?;
    let runs = run_points(db, s)?;
    let (machine, machines) = machine_class(&runs, machine)?;
    // Points by commit (or label), ordered by commit time, then first ingest, then name.
    let shown: Vec<RunPoint> = runs.into_iter().filter(|r| r.class == machine).collect();
    let peak = series_peak(&shown, metric, key);
    let mut by_point: std::collections::HashMap<String, Vec<RunPoint>> = Default::default();
    for r in shown {
        by_point.entry(r.point.clone()).or_default().push(r);
    }
    if by_point.is_empty() {
        return Err(ChartError::Empty);
    }
    let mut groups: Vec<Vec<RunPoint>> = by_point.into_values().collect();
    let order = |g: &[RunPoint]| {
        let committed = g.iter().filter_map(|r| r.committed).min();
        let first = g.iter().map(|r| r.ingested).min().unwrap_or(0);
        (committed.is_none(), committed, first, g[0].point.clone())
    };
    groups.sort_by_cached_key(|g| order(g));
    let unit = groups[0][0].unit.clone();
    let per_point = super::dots_per_point(groups.len().min(MAX_POINTS));
    let held = perfdb_ingest::devices::check::HeldRow::of_json(metric, &unit, key);
    let points: Vec<HistoryPoint> = groups
        .into_iter()
        .map(|mut g| {
            g.sort_by_key(|r| r.trial.trial);
            let impossible = held.map_or(0, |h| {
                g.iter()
                    .filter(|r| !h.possible(r.device, r.trial.value))
                    .count()
            });
            let values: Vec<f64> = g.iter().map(|r| r.trial.value).collect();
            let point = g[0].point.clone();
            let mut trials: Vec<Trial> = g.into_iter().map(|r| r.trial).collect();
            trials.sort_by(|a, b| a.value.total_cmp(&b.value));
            HistoryPoint {
                point,
                median: stats::median(&values),
                min: values.iter().copied().fold(f64::MAX, f64::min),
                max: values.iter().copied().fold(f64::MIN, f64::max),
                values,
                trials: thin(trials, per_point),
                impossible,
            }
        })
        .collect();
    let change_points = change_points(&points, params);
    let n_points = points.len();
    let (points, change_points) = thin_points(points, &change_points);
    Ok(HistoryData {
        table: table.into(),
        variant: variant.into(),
        key: key_labels(db, table, metric)?
            .remove(key)
            .unwrap_or_else(|| key_display(&key_from_json(key))),
        metric: metric.into(),
        unit,
        change_points,
        n_points,
        machine,
        machines,
        points,
        peak,
    })
}

/// Change points over the points the device could have produced (a point with an
/// impossible trial is drawn, never read), indexed back into `points`.
fn change_points(points: &[HistoryPoint], params: &stats::changepoint::Params) -> Vec<usize> {
    let read: Vec<usize> = (0..points.len())
        .filter(|&i| points[i].impossible == 0)
        .collect();
    let series: Vec<Vec<f64>> = read.iter().map(|&i| points[i].values.clone()).collect();
    stats::changepoint::detect_with(&series, params)
        .iter()
        .map(|c| read[c.index])
        .collect()
}

/// The peak of a series whose runs all name one device.
fn series_peak(runs: &[RunPoint], metric: &str, key: &str) -> Option<perfdb_ingest::devices::Peak> {
    let unit = &runs.first()?.unit;
    one_device(runs.iter().map(|r| r.device))?.peak_for(metric, unit, &key_from_json(key))
}

/// At most this many points in a history chart; longer series are thinned.
pub const MAX_POINTS: usize = 300;

/// Thin `points` to `MAX_POINTS`: evenly spaced, plus every change point and the point
/// before it (so each level shift shows as drawn). Returns the kept points and the
/// change points' indices among them.
fn thin_points(points: Vec<HistoryPoint>, cps: &[usize]) -> (Vec<HistoryPoint>, Vec<usize>) {
    let n = points.len();
    if n <= MAX_POINTS {
        return (points, cps.to_vec());
    }
    let mut keep: std::collections::BTreeSet<usize> = cps
        .iter()
        .flat_map(|&c| [c.saturating_sub(1), c])
        .chain([0, n - 1])
        .collect();
    let room = MAX_POINTS.saturating_sub(keep.len()).max(2);
    keep.extend((0..room).map(|i| i * (n - 1) / (room - 1)));
    let kept: Vec<usize> = keep.into_iter().collect();
    let new_cps = cps
        .iter()
        .filter_map(|c| kept.iter().position(|k| k == c))
        .collect();
    let mut points: Vec<Option<HistoryPoint>> = points.into_iter().map(Some).collect();
    (
        kept.iter().filter_map(|&i| points[i].take()).collect(),
        new_cps,
    )
}

/// The chart's caption; with `no_ceiling`, the peak said as far above.
fn caption(h: &HistoryData, no_ceiling: bool) -> String {
    let far = match (&h.peak, no_ceiling) {
        (Some(p), true) => format!("; peak {} {} far above", crate::fmt::num(p.value), p.unit),
        _ => String::new(),
    };
    format!(
        "{} {} {} — {} ({}) over commits{far}",
        h.table, h.variant, h.key, h.metric, h.unit
    )
}

/// The series over commits as SVG: each commit's trials and median, its change points,
/// and its device's peak as a ceiling when the series reaches a quarter of it.
pub fn history_svg(h: &HistoryData) -> String {
    register_font();
    let n = h.points.len();
    let lo = h.points.iter().map(|p| p.min).fold(f64::MAX, f64::min);
    let hi = h.points.iter().map(|p| p.max).fold(f64::MIN, f64::max);
    // The ceiling is drawn when the series reaches a quarter of it; below that it would
    // flatten the series, and the caption says it instead.
    let ceiling = h.peak.as_ref().filter(|p| hi >= 0.25 * p.value);
    let hi = ceiling.map_or(hi, |p| hi.max(p.value));
    let pad = ((hi - lo) * 0.15).max(hi.abs() * 0.02);
    let mut svg = String::new();
    let mut titles = Vec::new();
    {
        let root = SVGBackend::with_string(&mut svg, (960, 480)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let mut chart = ChartBuilder::on(&root)
            .caption(caption(h, ceiling.is_none()), ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(70)
            .y_label_area_size(80)
            .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), (lo - pad).max(0.0)..(hi + pad))
            .expect("chart coordinates");
        let _ = chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_desc(format!("{} ({})", h.metric, h.unit))
            .x_desc("commit (by commit time)")
            .axis_desc_style(("sans-serif", 14))
            .draw();
        if let Some(p) = ceiling {
            super::draw_ceiling(&mut chart, &mut titles, (-0.5, n as f64 - 0.5), p, "peak");
        }
        for &cp in &h.change_points {
            let x = cp as f64 - 0.5;
            let _ = chart.draw_series(std::iter::once(PathElement::new(
                vec![(x, (lo - pad).max(0.0)), (x, hi + pad)],
                RED.stroke_width(2),
            )));
        }
        let color = PALETTE[0];
        let _ = chart.draw_series(h.points.iter().enumerate().map(|(i, p)| {
            PathElement::new(
                vec![(i as f64, p.min), (i as f64, p.max)],
                color.stroke_width(2),
            )
        }));
        for (i, p) in h.points.iter().enumerate() {
            let what = format!("{} {}", p.point, h.variant);
            draw_dots(
                &mut chart,
                &mut titles,
                i as f64,
                &p.trials,
                color,
                &what,
                &h.unit,
                &h.machine,
            );
        }
        let _ = chart.draw_series(LineSeries::new(
            h.points
                .iter()
                .enumerate()
                .map(|(i, p)| (i as f64, p.median)),
            color.stroke_width(1),
        ));
        for p in &h.points {
            let of_peak = super::of_peak(h.peak.as_ref(), p.median);
            titles.push(format!(
                "{}: median {} {} over {} trial(s){of_peak}",
                p.point,
                crate::fmt::num(p.median),
                h.unit,
                p.values.len()
            ));
        }
        let _ = chart.draw_series(
            h.points
                .iter()
                .enumerate()
                .map(|(i, p)| Circle::new((i as f64, p.median), 4, color.filled())),
        );
        let style = ("sans-serif", 12)
            .into_font()
            .transform(FontTransform::Rotate90)
            .color(&BLACK);
        for (i, p) in h.points.iter().enumerate() {
            let (px, py) = chart.backend_coord(&(i as f64, (lo - pad).max(0.0)));
            let _ = root.draw(&Text::new(p.point.clone(), (px - 6, py + 8), style.clone()));
        }
        let _ = root.present();
    }
    add_titles(svg, &titles)
}
