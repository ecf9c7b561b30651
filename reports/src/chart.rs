//! Chart data from the warehouse, and SVG charts drawn with plotters: throughput per shape
//! and variant, one series over commits (with change points), and compare ratios.

use crate::compare::{select_runs, CompareError, Report, Verdict};
use crate::db::{list_f64, sql_str, Db, DbError, MACHINE_CLASS_SQL};
use crate::stats;
use perfdb_ingest::model::{key_display, key_from_json};
use plotters::prelude::*;
use plotters::style::FontTransform;
use serde::Serialize;
use std::cmp::Ordering;
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
        let bytes: &'static [u8] = include_bytes!("../assets/DejaVuSans.ttf");
        plotters::style::register_font("sans-serif", FontStyle::Normal, bytes)
            .unwrap_or_else(|_| panic!("embedded font is valid"));
    });
}

/// Tables and their primary (compared) metrics, for pickers.
pub fn catalog(db: &Db) -> Result<Vec<(String, Vec<String>)>, ChartError> {
    if let Some(c) = db.catalog.get() {
        return Ok(c.clone());
    }
    let c = compute_catalog(db)?;
    let _ = db.catalog.set(c.clone());
    Ok(c)
}

fn compute_catalog(db: &Db) -> Result<Vec<(String, Vec<String>)>, ChartError> {
    let mut stmt = db.conn.prepare(
        "SELECT table_name, list(DISTINCT metric ORDER BY metric) FILTER (WHERE direction <> 'none') \
         FROM measurements GROUP BY table_name ORDER BY table_name",
    )?;
    let rows = stmt
        .query_map([], |r| {
            let t: String = r.get(0)?;
            let v: duckdb::types::Value = r.get(1)?;
            Ok((t, v))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows
        .into_iter()
        .map(|(t, v)| {
            let metrics = match v {
                duckdb::types::Value::List(items) => items
                    .into_iter()
                    .filter_map(|i| match i {
                        duckdb::types::Value::Text(s) => Some(s),
                        _ => None,
                    })
                    .collect(),
                _ => Vec::new(),
            };
            (t, metrics)
        })
        .filter(|(_, m): &(String, Vec<String>)| !m.is_empty())
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

/// Compare two strings with digit runs compared as numbers: `M=16` < `M=128`.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (mut a, mut b) = (a.as_bytes(), b.as_bytes());
    loop {
        match (a.first(), b.first()) {
            (None, None) => return Ordering::Equal,
            (None, _) => return Ordering::Less,
            (_, None) => return Ordering::Greater,
            (Some(x), Some(y)) if x.is_ascii_digit() && y.is_ascii_digit() => {
                let la = a.iter().take_while(|c| c.is_ascii_digit()).count();
                let lb = b.iter().take_while(|c| c.is_ascii_digit()).count();
                let na: u128 = std::str::from_utf8(&a[..la])
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0);
                let nb: u128 = std::str::from_utf8(&b[..lb])
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0);
                match na.cmp(&nb) {
                    Ordering::Equal => {
                        a = &a[la..];
                        b = &b[lb..];
                    }
                    o => return o,
                }
            }
            (Some(x), Some(y)) => match x.cmp(y) {
                Ordering::Equal => {
                    a = &a[1..];
                    b = &b[1..];
                }
                o => return o,
            },
        }
    }
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

#[derive(Debug, Clone, Serialize)]
pub struct ShapePoint {
    pub shape: usize,
    pub variant: String,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub n: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct ChartData {
    pub table: String,
    pub metric: String,
    pub unit: String,
    pub runs: String,
    pub n_runs: usize,
    /// Short labels: only the key cells that vary between shapes.
    pub shape_labels: Vec<String>,
    pub shapes: Vec<String>,
    /// Key cells shared by every shape (shown once in the subtitle).
    pub constant: String,
    pub variants: Vec<String>,
    pub points: Vec<ShapePoint>,
    /// The machine class shown: a chart never pools machine classes.
    pub machine: String,
    /// Every machine class among the selected runs.
    pub machines: Vec<String>,
}

/// Values of `metric` in `table` per shape and variant, over the runs `runs` selects
/// (a label, commit prefix or run id prefix; default: the label of the newest run) on
/// one machine class (`machine`; default: the one with the most runs).
pub fn chart_data(
    db: &Db,
    table: &str,
    metric: &str,
    runs: Option<&str>,
    machine: Option<&str>,
) -> Result<ChartData, ChartError> {
    check_table_metric(db, table, metric)?;
    let spec = match runs {
        Some(r) if !r.is_empty() => r.to_string(),
        _ => db.conn.query_row(
            "SELECT label FROM runs r WHERE EXISTS (SELECT 1 FROM measurements m WHERE m.run_id = r.run_id AND m.table_name = ?) ORDER BY ingested_at DESC, trial DESC LIMIT 1",
            [table],
            |r| r.get::<_, String>(0),
        )?,
    };
    // A label selects whole Hive partitions: no run list to join against. This is
    // `select_runs`' first rule (label before commit and run id), counted instead of
    // listed: a chart over 10,000 runs does not need their ids.
    let label_runs: i64 = db.conn.query_row(
        "SELECT count(*) FROM runs WHERE label = ?",
        [spec.as_str()],
        |r| r.get(0),
    )?;
    let (mut runs_pred, mut n_runs, on_runs) = if label_runs > 0 {
        (
            format!("label = {}", sql_str(&spec)),
            label_runs as usize,
            format!("r.label = {}", sql_str(&spec)),
        )
    } else {
        let side = select_runs(db, &spec)?;
        db.selection_table("chart_sel", &side.runs)?;
        (
            "run_id IN (SELECT run_id FROM chart_sel)".to_string(),
            side.runs.len(),
            "r.run_id IN (SELECT run_id FROM chart_sel)".to_string(),
        )
    };
    // One machine class: the one asked for, else the one with the most runs. The run
    // filter is added only when the selection spans several (the common case stays a
    // plain partition scan).
    let classes_where = |extra: &str| -> Result<Vec<(String, i64)>, ChartError> {
        let mut stmt = db.conn.prepare(&format!(
            "SELECT {MACHINE_CLASS_SQL} AS class, count(*) AS n FROM runs r WHERE {on_runs}{extra} \
             GROUP BY class ORDER BY n DESC, class"
        ))?;
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    };
    // Cheap first (the runs alone); only when they span classes, count the runs that
    // measured this table and metric.
    let mut classes = classes_where("")?;
    if classes.len() > 1 {
        classes = classes_where(&format!(
            " AND r.run_id IN (SELECT run_id FROM measurements WHERE {runs_pred} AND table_name = {} AND metric = {})",
            sql_str(table),
            sql_str(metric)
        ))?;
    }
    let machines: Vec<String> = classes.iter().map(|(c, _)| c.clone()).collect();
    let chosen = match machine.filter(|m| !m.is_empty()) {
        Some(m) => classes.iter().find(|(c, _)| c == m).ok_or_else(|| {
            ChartError::Unknown(format!("machine '{m}'; known: {}", machines.join(", ")))
        })?,
        None => classes.first().ok_or(ChartError::Empty)?,
    };
    let machine = chosen.0.clone();
    if classes.len() > 1 {
        runs_pred = format!(
            "{runs_pred} AND run_id IN (SELECT r.run_id FROM runs r WHERE {on_runs} AND {MACHINE_CLASS_SQL} = {})",
            sql_str(&machine)
        );
        n_runs = chosen.1 as usize;
    }
    let sql = format!(
        "SELECT key, variant, any_value(unit), median(value), min(value), max(value), count(value), \
                any_value(key_order) \
         FROM measurements WHERE table_name = {} AND metric = {} AND value IS NOT NULL \
         AND {runs_pred} GROUP BY key, variant",
        sql_str(table),
        sql_str(metric)
    );
    let mut stmt = db.conn.prepare(&sql)?;
    type Agg = (String, String, String, f64, f64, f64, i64, Option<String>);
    let rows: Vec<Agg> = stmt
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
                r.get(7)?,
            ))
        })?
        .collect::<Result<_, _>>()?;
    // Keys are stored in canonical order; shapes read in the order the log printed them.
    let shown = |k: &str, order: &Option<String>| {
        perfdb_ingest::model::in_source_order(key_from_json(k), order.as_deref().unwrap_or("[]"))
    };
    if rows.is_empty() {
        return Err(ChartError::Empty);
    }
    let mut keys: Vec<Vec<(String, String)>> = Vec::new();
    for (k, .., order) in &rows {
        let kk = shown(k, order);
        if !keys.contains(&kk) {
            keys.push(kk);
        }
    }
    keys.sort_by(|a, b| key_cmp(a, b));
    let mut variants: Vec<String> = rows.iter().map(|r| r.1.clone()).collect();
    variants.sort();
    variants.dedup();
    let varying: Vec<bool> = (0..keys[0].len())
        .map(|i| keys.iter().any(|k| k.get(i) != keys[0].get(i)))
        .collect();
    let short = |k: &[(String, String)]| -> String {
        let parts: Vec<&str> = k
            .iter()
            .enumerate()
            .filter(|(i, _)| varying.get(*i).copied().unwrap_or(true))
            .map(|(_, (_, v))| v.as_str())
            .collect();
        if parts.is_empty() {
            "(all)".into()
        } else {
            parts.join("×")
        }
    };
    let constant = keys[0]
        .iter()
        .enumerate()
        .filter(|(i, _)| !varying.get(*i).copied().unwrap_or(true))
        .map(|(_, (k, v))| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ");
    let names: Vec<&str> = keys[0]
        .iter()
        .enumerate()
        .filter(|(i, _)| varying.get(*i).copied().unwrap_or(true))
        .map(|(_, (k, _))| k.as_str())
        .collect();
    let points = rows
        .iter()
        .map(|(k, v, _, med, lo, hi, n, order)| {
            let kk = shown(k, order);
            ShapePoint {
                shape: keys.iter().position(|x| *x == kk).expect("collected"),
                variant: v.clone(),
                median: *med,
                min: *lo,
                max: *hi,
                n: *n as usize,
            }
        })
        .collect();
    Ok(ChartData {
        table: table.into(),
        metric: metric.into(),
        unit: rows[0].2.clone(),
        runs: spec,
        n_runs,
        machine,
        machines,
        shape_labels: keys.iter().map(|k| short(k)).collect(),
        shapes: keys.iter().map(|k| key_display(k)).collect(),
        constant: if names.is_empty() {
            constant
        } else {
            format!("shape = {}; {constant}", names.join("×"))
        },
        variants,
        points,
    })
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

/// Per shape and variant: the median over trials as a point, min-max as a bar.
pub fn chart_svg(d: &ChartData) -> String {
    register_font();
    let n = d.shape_labels.len();
    let (lo, hi) = log_range(
        d.points.iter().map(|p| p.min).fold(f64::MAX, f64::min),
        d.points.iter().map(|p| p.max).fold(f64::MIN, f64::max),
    );
    let mut svg = String::new();
    let mut titles = Vec::new();
    {
        let width = (160 + 70 * n as u32).clamp(640, 1400);
        let root = SVGBackend::with_string(&mut svg, (width, 520)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let caption = format!(
            "{} — {} ({}) per shape, runs '{}' (n={})",
            d.table, d.metric, d.unit, d.runs, d.n_runs
        );
        let mut chart = ChartBuilder::on(&root)
            .caption(caption, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(110)
            .y_label_area_size(80)
            .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), (lo..hi).log_scale())
            .expect("chart coordinates");
        let _ = chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_desc(format!("{} ({}), log scale", d.metric, d.unit))
            .x_desc(d.constant.clone())
            .axis_desc_style(("sans-serif", 14))
            .draw();
        let nv = d.variants.len().max(1) as f64;
        for (vi, v) in d.variants.iter().enumerate() {
            let color = PALETTE[vi % PALETTE.len()];
            let off = (vi as f64 - (nv - 1.0) / 2.0) * (0.5 / nv);
            let pts: Vec<&ShapePoint> = d.points.iter().filter(|p| &p.variant == v).collect();
            let _ = chart.draw_series(pts.iter().map(|p| {
                let x = p.shape as f64 + off;
                PathElement::new(vec![(x, p.min), (x, p.max)], color.stroke_width(2))
            }));
            for p in &pts {
                titles.push(format!(
                    "{} {}: median {} {} (min {}, max {}, {} trial(s))",
                    v,
                    d.shapes[p.shape],
                    crate::render::num(p.median),
                    d.unit,
                    crate::render::num(p.min),
                    crate::render::num(p.max),
                    p.n
                ));
            }
            let _ = chart
                .draw_series(
                    pts.iter()
                        .map(|p| Circle::new((p.shape as f64 + off, p.median), 4, color.filled())),
                )
                .map(|s| {
                    s.label(v.clone())
                        .legend(move |(x, y)| Circle::new((x + 10, y), 4, color.filled()))
                });
        }
        let _ = chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 14))
            .draw();
        let style = ("sans-serif", 12)
            .into_font()
            .transform(FontTransform::Rotate90)
            .color(&BLACK);
        for (i, label) in d.shape_labels.iter().enumerate() {
            let (px, py) = chart.backend_coord(&(i as f64, lo));
            let _ = root.draw(&Text::new(label.clone(), (px - 6, py + 8), style.clone()));
        }
        let _ = root.present();
    }
    add_titles(svg, &titles)
}

#[derive(Debug, Clone, Serialize)]
pub struct HistoryPoint {
    /// Commit, or label when the runs have no commit.
    pub point: String,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub values: Vec<f64>,
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
            "SELECT DISTINCT {col} FROM measurements WHERE table_name = {} AND metric = {}",
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
        "SELECT key, any_value(key_order) FROM measurements WHERE table_name = {} AND metric = {} GROUP BY key",
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
        .map(|l| format!(" AND m.label = {}", sql_str(l)))
        .unwrap_or_default();
    // The series' machine classes, most runs first: the one asked for, else the first.
    let classes_sql = format!(
        "SELECT {MACHINE_CLASS_SQL} AS class, count(DISTINCT r.run_id) AS n \
         FROM measurements m JOIN runs r ON m.run_id = r.run_id \
         WHERE m.table_name = {} AND m.variant = {} AND m.key = {} AND m.metric = {}{label_pred} \
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
        "SELECT coalesce(r.\"commit\", r.label) AS point, min(r.ingested_at) AS first, list(m.value ORDER BY r.trial), any_value(m.unit), \
                min(r.commit_time) AS committed \
         FROM measurements m JOIN runs r ON m.run_id = r.run_id \
         WHERE m.table_name = {} AND m.variant = {} AND m.key = {} AND m.metric = {} AND m.value IS NOT NULL{label_pred} \
         GROUP BY point ORDER BY committed, first, point",
        sql_str(table), sql_str(variant), sql_str(key), sql_str(metric)
    );
    let mut stmt = db.conn.prepare(&sql)?;
    let rows: Vec<(String, duckdb::types::Value, String)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(2)?, r.get(3)?)))?
        .collect::<Result<_, _>>()?;
    if rows.is_empty() {
        return Err(ChartError::Empty);
    }
    let unit = rows[0].2.clone();
    let points: Vec<HistoryPoint> = rows
        .into_iter()
        .map(|(point, list, _)| {
            let values = list_f64(list);
            HistoryPoint {
                point,
                median: stats::median(&values),
                min: values.iter().copied().fold(f64::MAX, f64::min),
                max: values.iter().copied().fold(f64::MIN, f64::max),
                values,
            }
        })
        .collect();
    let series: Vec<Vec<f64>> = points.iter().map(|p| p.values.clone()).collect();
    Ok(HistoryData {
        table: table.into(),
        variant: variant.into(),
        key: key_labels(db, table, metric)?
            .remove(key)
            .unwrap_or_else(|| key_display(&key_from_json(key))),
        metric: metric.into(),
        unit,
        change_points: stats::changepoint::detect_with(&series, params)
            .iter()
            .map(|c| c.index)
            .collect(),
        machine,
        machines,
        points,
    })
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

/// Compare view: each compared row's direction-normalised ratio (> 1 = slower) with its
/// 95% interval (ratio of geometric means, Welch on logs), and the threshold band.
pub fn ratio_svg(report: &Report) -> String {
    register_font();
    let rows: Vec<&crate::compare::Row> =
        report.rows.iter().filter(|r| r.change.is_some()).collect();
    let n = rows.len().max(1);
    let w = |r: &crate::compare::Row| 1.0 + r.change.expect("filtered");
    let interval = |r: &crate::compare::Row| -> Option<(f64, f64)> {
        let (a, b) = r.ratio_ci?;
        Some(match r.direction {
            perfdb_ingest::model::Direction::Higher => (1.0 / b, 1.0 / a),
            _ => (a, b),
        })
    };
    let lo = rows
        .iter()
        .map(|r| interval(r).map(|i| i.0).unwrap_or(w(r)))
        .fold(1.0 - report.options.threshold, f64::min);
    let hi = rows
        .iter()
        .map(|r| interval(r).map(|i| i.1).unwrap_or(w(r)))
        .fold(1.0 + report.options.threshold, f64::max);
    let mut svg = String::new();
    let mut titles = Vec::new();
    {
        let height = (120 + 18 * n as u32).clamp(300, 2400);
        let root = SVGBackend::with_string(&mut svg, (960, height)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let mut chart = ChartBuilder::on(&root)
            .caption(
                "head vs base: direction-normalised ratio (> 1 = slower)",
                ("sans-serif", 16),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(360)
            .build_cartesian_2d((lo * 0.9)..(hi * 1.1), -0.5f64..(n as f64 - 0.5))
            .expect("chart coordinates");
        let _ = chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_desc("ratio")
            .draw();
        let t = report.options.threshold;
        let _ = chart.draw_series(std::iter::once(Rectangle::new(
            [(1.0 / (1.0 + t), -0.5), (1.0 + t, n as f64 - 0.5)],
            RGBColor(200, 200, 200).mix(0.4).filled(),
        )));
        let _ = chart.draw_series(std::iter::once(PathElement::new(
            vec![(1.0, -0.5), (1.0, n as f64 - 0.5)],
            BLACK,
        )));
        for (i, r) in rows.iter().enumerate() {
            let y = (n - 1 - i) as f64;
            let color = match r.verdict {
                Verdict::Regression if !r.control => RED,
                Verdict::Improvement if !r.control => GREEN,
                _ => RGBColor(90, 90, 90),
            };
            if let Some((a, b)) = interval(r) {
                let _ = chart.draw_series(std::iter::once(PathElement::new(
                    vec![(a, y), (b, y)],
                    color.stroke_width(2),
                )));
            }
            titles.push(format!(
                "{} {} {} {}: {} ({})",
                r.table,
                r.variant,
                r.key_display(),
                r.metric,
                r.verdict.as_str(),
                r.reason
            ));
            let _ = chart.draw_series(std::iter::once(Circle::new((w(r), y), 4, color.filled())));
            let (px, py) = chart.backend_coord(&(lo * 0.9, y));
            let label = format!(
                "{}{} {} {}",
                if r.control { "[control] " } else { "" },
                r.variant,
                r.key_display(),
                r.metric
            );
            let _ = root.draw(&Text::new(
                label,
                (px - 355, py - 6),
                ("sans-serif", 12).into_font(),
            ));
        }
        let _ = root.present();
    }
    add_titles(svg, &titles)
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
    fn titles_attach_to_circles() {
        let svg = "<svg><circle cx=\"1\"/><circle cx=\"2\"/></svg>".to_string();
        let out = add_titles(svg, &["a<b".into(), "c".into()]);
        assert_eq!(out, "<svg><circle cx=\"1\"><title>a&lt;b</title></circle><circle cx=\"2\"><title>c</title></circle></svg>");
    }
}
