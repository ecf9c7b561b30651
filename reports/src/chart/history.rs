//! One series (table, variant, key, metric) over commits, with its change points.

use super::{
    add_titles, check_table_metric, draw_dots, natural_cmp, register_font, run_refs, thin,
    ChartError, Trial, PALETTE,
};
use crate::db::{list_f64, sql_str, Db, MACHINE_CLASS_SQL};
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
    /// The trials as dots (thinned to `MAX_DOTS`, lowest and highest kept).
    pub trials: Vec<Trial>,
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
}

/// Variants and keys of a table, for pickers.
pub fn series_of(
    db: &Db,
    table: &str,
    metric: &str,
) -> Result<(Vec<String>, Vec<String>), ChartError> {
    check_table_metric(db, table, metric)?;
    let q = |col: &str| -> Result<Vec<String>, ChartError> {
        let sql = format!(
            "SELECT DISTINCT {col} FROM summaries WHERE table_name = {} AND metric = {}",
            sql_str(table),
            sql_str(metric)
        );
        let mut stmt = db.conn.prepare(&sql)?;
        let mut v: Vec<String> = stmt
            .query_map([], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        v.sort_by(|a, b| natural_cmp(a, b));
        Ok(v)
    };
    Ok((q("variant")?, q("key")?))
}

/// How each key of a table's metric reads: `name=value` in the order the log printed
/// the cells (keys are stored in canonical order).
pub fn key_labels(
    db: &Db,
    table: &str,
    metric: &str,
) -> Result<std::collections::HashMap<String, String>, ChartError> {
    let sql = format!(
        "SELECT key, any_value(key_order) FROM summaries WHERE table_name = {} AND metric = {} GROUP BY key",
        sql_str(table),
        sql_str(metric)
    );
    let mut stmt = db.conn.prepare(&sql)?;
    let rows: Vec<(String, Option<String>)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    Ok(rows
        .into_iter()
        .map(|(k, order)| {
            let shown = key_display(&perfdb_ingest::model::in_source_order(
                key_from_json(&k),
                order.as_deref().unwrap_or("[]"),
            ));
            (k, shown)
        })
        .collect())
}

/// One series over commits (ordered by commit time, then first ingest time), all trials
/// per commit.
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
        label,
        machine,
    } = *s;
    check_table_metric(db, table, metric)?;
    let label_pred = label
        .filter(|l| !l.is_empty())
        .map(|l| format!(" AND s.label = {}", sql_str(l)))
        .unwrap_or_default();
    // The series' machine classes, most runs first: the one asked for, else the first.
    let classes_sql = format!(
        "SELECT {MACHINE_CLASS_SQL} AS class, count(DISTINCT r.run_id) AS n \
         FROM summaries s JOIN runs r ON s.run_id = r.run_id \
         WHERE s.table_name = {} AND s.variant = {} AND s.key = {} AND s.metric = {}{label_pred} \
         GROUP BY class ORDER BY n DESC, class",
        sql_str(table),
        sql_str(variant),
        sql_str(key),
        sql_str(metric)
    );
    let mut stmt = db.conn.prepare(&classes_sql)?;
    let machines: Vec<String> = stmt
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let machine = match machine.filter(|m| !m.is_empty()) {
        Some(m) if machines.iter().any(|c| c == m) => m.to_string(),
        Some(m) => {
            return Err(ChartError::Unknown(format!(
                "machine '{m}'; known: {}",
                machines.join(", ")
            )))
        }
        None => machines.first().cloned().unwrap_or_default(),
    };
    let label_pred = format!(
        "{label_pred} AND {MACHINE_CLASS_SQL} = {}",
        sql_str(&machine)
    );
    let sql = format!(
        "SELECT coalesce(r.\"commit\", r.label) AS point, min(r.ingested_at) AS first, list(s.median ORDER BY r.trial), any_value(s.unit), \
                min(r.commit_time) AS committed, list(s.run_id ORDER BY r.trial) \
         FROM summaries s JOIN runs r ON s.run_id = r.run_id \
         WHERE s.table_name = {} AND s.variant = {} AND s.key = {} AND s.metric = {}{label_pred} \
         GROUP BY point ORDER BY committed, first, point",
        sql_str(table), sql_str(variant), sql_str(key), sql_str(metric)
    );
    let mut stmt = db.conn.prepare(&sql)?;
    type Row = (String, duckdb::types::Value, String, duckdb::types::Value);
    let rows: Vec<Row> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(2)?, r.get(3)?, r.get(5)?)))?
        .collect::<Result<_, _>>()?;
    if rows.is_empty() {
        return Err(ChartError::Empty);
    }
    let unit = rows[0].2.clone();
    let refs = run_refs(
        db,
        &format!(
            "r.run_id IN (SELECT s.run_id FROM summaries s JOIN runs r ON s.run_id = r.run_id \
             WHERE s.table_name = {} AND s.variant = {} AND s.key = {} AND s.metric = {}{label_pred})",
            sql_str(table),
            sql_str(variant),
            sql_str(key),
            sql_str(metric)
        ),
    )?;
    let points: Vec<HistoryPoint> = rows
        .into_iter()
        .map(|(point, list, _, ids)| {
            let values = list_f64(list);
            let mut trials = Trial::zip(values.clone(), ids, &refs);
            trials.sort_by(|a, b| a.value.total_cmp(&b.value));
            HistoryPoint {
                point,
                median: stats::median(&values),
                min: values.iter().copied().fold(f64::MAX, f64::min),
                max: values.iter().copied().fold(f64::MIN, f64::max),
                values,
                trials: thin(trials),
            }
        })
        .collect();
    let series: Vec<Vec<f64>> = points.iter().map(|p| p.values.clone()).collect();
    let change_points: Vec<usize> = stats::changepoint::detect_with(&series, params)
        .iter()
        .map(|c| c.index)
        .collect();
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
    })
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

pub fn history_svg(h: &HistoryData) -> String {
    register_font();
    let n = h.points.len();
    let lo = h.points.iter().map(|p| p.min).fold(f64::MAX, f64::min);
    let hi = h.points.iter().map(|p| p.max).fold(f64::MIN, f64::max);
    let pad = ((hi - lo) * 0.15).max(hi.abs() * 0.02);
    let mut svg = String::new();
    let mut titles = Vec::new();
    {
        let root = SVGBackend::with_string(&mut svg, (960, 480)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!(
                    "{} {} {} — {} ({}) over commits",
                    h.table, h.variant, h.key, h.metric, h.unit
                ),
                ("sans-serif", 18),
            )
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
            titles.push(format!(
                "{}: median {} {} over {} trial(s)",
                p.point,
                crate::render::num(p.median),
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
