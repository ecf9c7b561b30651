//! A metric per shape and variant over one run selection, on one machine class.

use super::{
    add_titles, check_table_metric, dots_per_point, draw_dots, key_cmp, log_range, register_font,
    run_refs, thin_sql, ChartError, Trial, PALETTE,
};
use crate::compare::select_runs;
use crate::db::{one_device, run_device, sql_str, Db, MACHINE_CLASS_SQL, RUN_DEVICE_SQL};
use perfdb_ingest::model::{key_display, key_from_json};
use plotters::prelude::*;
use plotters::style::FontTransform;
use serde::Serialize;

/// One shape and variant: the median of the trials' medians, their range, and the
/// trials themselves, ascending (thinned by `dots_per_point`, lowest and highest kept).
#[derive(Debug, Clone, Serialize)]
pub struct ShapePoint {
    pub shape: usize,
    pub variant: String,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// Trials (runs) that measured it.
    pub n: usize,
    pub trials: Vec<Trial>,
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
    /// Each shape's ceiling on the device the class's runs name (`perfdb devices`), in
    /// shape order; `null` where the device or the shape's data type is not known.
    pub peaks: Vec<Option<perfdb_ingest::devices::Peak>>,
}

/// What the x axis shows of each shape: the key cells that vary (`512×4096`); and, once,
/// their names and the cells every shape shares (`shape = M×N; K=4096 dtype=bf16`).
fn shape_labels(keys: &[Vec<(String, String)>]) -> (Vec<String>, String) {
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
    let constant = if names.is_empty() {
        constant
    } else {
        format!("shape = {}; {constant}", names.join("×"))
    };
    (keys.iter().map(|k| short(k)).collect(), constant)
}

/// One machine class: the one asked for, else the one with the most runs; the classes
/// the selection spans; and, when it spans several, the chosen class's runs (the run
/// filter is then added: the common case stays a plain partition scan).
fn machine_class(
    db: &Db,
    on_runs: &str,
    sums: &str,
    runs_pred: &str,
    (table, metric): (&str, &str),
    machine: Option<&str>,
) -> Result<(String, Vec<String>, Option<usize>), ChartError> {
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
            " AND r.run_id IN (SELECT run_id FROM {sums} WHERE {runs_pred} AND table_name = {} AND metric = {})",
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
    let class_runs = (classes.len() > 1).then_some(chosen.1 as usize);
    Ok((chosen.0.clone(), machines, class_runs))
}

/// Where a chart's summaries are read from, for the runs `spec` selects: the run
/// predicate, how many runs, the predicate on `runs r`, and the summaries' source.
fn selection(db: &Db, spec: &str) -> Result<(String, usize, String, String), ChartError> {
    // A label selects whole Hive partitions: no run list to join against. This is
    // `select_runs`' first rule (label before commit and run id), counted instead of
    // listed: a chart over 10,000 runs does not need their ids.
    let label_runs: i64 =
        db.conn
            .query_row("SELECT count(*) FROM runs WHERE label = ?", [spec], |r| {
                r.get(0)
            })?;
    // Where the summaries are read from: a label's are the view's label partitions; a
    // few runs' (a commit's) only the files that hold them.
    Ok(if label_runs > 0 {
        (
            format!("label = {}", sql_str(spec)),
            label_runs as usize,
            format!("r.label = {}", sql_str(spec)),
            "summaries".to_string(),
        )
    } else {
        let side = select_runs(db, spec)?;
        db.selection_table("chart_sel", &side.runs)?;
        (
            "run_id IN (SELECT run_id FROM chart_sel)".to_string(),
            side.runs.len(),
            "r.run_id IN (SELECT run_id FROM chart_sel)".to_string(),
            db.summaries_of_runs(&side.runs)?,
        )
    })
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
            "SELECT label FROM runs r WHERE EXISTS (SELECT 1 FROM summaries s WHERE s.run_id = r.run_id AND s.table_name = ?) ORDER BY ingested_at DESC, trial DESC LIMIT 1",
            [table],
            |r| r.get::<_, String>(0),
        )?,
    };
    let (mut runs_pred, mut n_runs, on_runs, sums) = selection(db, &spec)?;
    let (machine, machines, class_runs) =
        machine_class(db, &on_runs, &sums, &runs_pred, (table, metric), machine)?;
    if let Some(n) = class_runs {
        runs_pred = format!(
            "{runs_pred} AND run_id IN (SELECT r.run_id FROM runs r WHERE {on_runs} AND {MACHINE_CLASS_SQL} = {})",
            sql_str(&machine)
        );
        n_runs = n;
    }
    // Per-run summaries: each trial counts once, whatever it measured repeatedly.
    let sql = format!(
        "SELECT key, variant, any_value(unit), median(median), min(min), max(max), count(*), \
                any_value(key_order) \
         FROM {sums} WHERE table_name = {} AND metric = {} \
         AND {runs_pred} GROUP BY key, variant ORDER BY key, variant",
        sql_str(table),
        sql_str(metric)
    );
    let mut stmt = db.conn.prepare(&sql)?;
    type Agg = (String, String, String, f64, f64, f64, i64, Option<String>);
    let rows: Vec<Agg> = stmt
        .query_map([], |r| r.try_into())?
        .collect::<Result<_, _>>()?;
    let filter = format!(
        "table_name = {} AND metric = {} AND {runs_pred}",
        sql_str(table),
        sql_str(metric)
    );
    let most = rows.iter().map(|r| r.6 as usize).max().unwrap_or(0);
    let mut dots = trial_dots(db, &sums, &filter, dots_per_point(rows.len()), most)?;
    let refs = run_refs(db, &on_runs)?;
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
    let (shape_labels, constant) = shape_labels(&keys);
    let unit = rows[0].2.clone();
    let peaks = match class_device(db, &on_runs, &machine)? {
        Some(d) => keys.iter().map(|k| d.peak_for(metric, &unit, k)).collect(),
        None => vec![None; keys.len()],
    };
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
                trials: dots
                    .remove(&(k.clone(), v.clone()))
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(value, run_id)| Trial::of(value, run_id, &refs))
                    .collect(),
            }
        })
        .collect();
    Ok(ChartData {
        table: table.into(),
        metric: metric.into(),
        unit,
        runs: spec,
        n_runs,
        machine,
        machines,
        shape_labels,
        shapes: keys.iter().map(|k| key_display(k)).collect(),
        constant,
        variants,
        points,
        peaks,
    })
}

/// Each shape's peak as a short dashed line over its place on the x axis.
fn draw_ceilings<CT>(
    chart: &mut ChartContext<'_, SVGBackend<'_>, CT>,
    titles: &mut Vec<String>,
    d: &ChartData,
) where
    CT: CoordTranslate<From = (f64, f64)>,
{
    for (i, p) in d.peaks.iter().enumerate() {
        if let Some(p) = p {
            let (x, what) = (i as f64, format!("{}: peak", d.shapes[i]));
            super::draw_ceiling(chart, titles, (x - 0.45, x + 0.45), p, &what);
        }
    }
}

/// The one device every run of the class names, if they all name the same one.
fn class_device<'d>(
    db: &'d Db,
    on_runs: &str,
    machine: &str,
) -> Result<Option<&'d perfdb_ingest::devices::Device>, ChartError> {
    let sql = format!(
        "SELECT DISTINCT {RUN_DEVICE_SQL} FROM runs r WHERE {on_runs} AND {MACHINE_CLASS_SQL} = {}",
        sql_str(machine)
    );
    let mut stmt = db.conn.prepare(&sql)?;
    let named: Vec<_> = stmt
        .query_map([], |r| run_device(&db.devices, r, 0))?
        .collect::<Result<_, _>>()?;
    Ok(one_device(named))
}

/// The chart's caption; `far_peaks` when the ceilings are too far above to draw.
fn caption(d: &ChartData, far_peaks: bool) -> String {
    format!(
        "{} — {} ({}) per shape, runs '{}' (n={}){}",
        d.table,
        d.metric,
        d.unit,
        d.runs,
        d.n_runs,
        if far_peaks { "; peaks far above" } else { "" }
    )
}

/// A point's hover text: variant, shape, median, range, trials and percent of peak.
fn median_title(d: &ChartData, v: &str, p: &ShapePoint) -> String {
    let of_peak = super::of_peak(d.peaks[p.shape].as_ref(), p.median);
    format!(
        "{} {}: median {} {} (min {}, max {}, {} trial(s)){of_peak}",
        v,
        d.shapes[p.shape],
        crate::fmt::num(p.median),
        d.unit,
        crate::fmt::num(p.min),
        crate::fmt::num(p.max),
        p.n
    )
}

/// Per shape and variant: the median over trials as a point, min-max as a bar.
pub fn chart_svg(d: &ChartData) -> String {
    register_font();
    let n = d.shape_labels.len();
    let top = d.points.iter().map(|p| p.max).fold(f64::MIN, f64::max);
    // The ceilings are drawn when the values reach a tenth of them (one decade of the
    // log scale); below that they would squeeze the values, and the caption says so.
    let highest = d
        .peaks
        .iter()
        .flatten()
        .map(|p| p.value)
        .fold(f64::MIN, f64::max);
    let ceilings = highest > 0.0 && top >= 0.1 * highest;
    let (lo, hi) = log_range(
        d.points.iter().map(|p| p.min).fold(f64::MAX, f64::min),
        if ceilings { top.max(highest) } else { top },
    );
    let mut svg = String::new();
    let mut titles = Vec::new();
    {
        let width = (160 + 70 * n as u32).clamp(640, 1400);
        let root = SVGBackend::with_string(&mut svg, (width, 520)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let caption = caption(d, highest > 0.0 && !ceilings);
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
        if ceilings {
            draw_ceilings(&mut chart, &mut titles, d);
        }
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
                let what = format!("{v} {}", d.shapes[p.shape]);
                draw_dots(
                    &mut chart,
                    &mut titles,
                    p.shape as f64 + off,
                    &p.trials,
                    color,
                    &what,
                    &d.unit,
                    &d.machine,
                );
            }
            titles.extend(pts.iter().map(|p| median_title(d, v, p)));
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

/// Up to this many trials a point, the drawn ones are picked by rank (`thin_sql`); beyond
/// it, by a hash of the run (sorting every trial of a 10,000-run label took seconds).
const RANKED_UP_TO: usize = 1000;

/// Per (key, variant): (value, run id) of the trials drawn, ascending by value.
type Dots = std::collections::HashMap<(String, String), Vec<(f64, String)>>;

/// The trials drawn for the summaries `filter` selects, about `cap` a point: the lowest,
/// the highest, and either evenly spaced ranks or (points of more than `RANKED_UP_TO`
/// trials; `most` is the largest) a sample by run id hash.
/// The trial dots of each point: the rows of `sums` (the summaries, or a query over
/// some of their files) that `filter` picks.
fn trial_dots(
    db: &Db,
    sums: &str,
    filter: &str,
    cap: usize,
    most: usize,
) -> Result<Dots, ChartError> {
    trial_dots_ranked_up_to(db, sums, filter, cap, most, RANKED_UP_TO)
}

fn trial_dots_ranked_up_to(
    db: &Db,
    sums: &str,
    filter: &str,
    cap: usize,
    most: usize,
    ranked_up_to: usize,
) -> Result<Dots, ChartError> {
    let sql = if most <= ranked_up_to {
        format!(
            "SELECT key, variant, median, run_id FROM ( \
               SELECT key, variant, median, run_id, \
                      row_number() OVER (PARTITION BY key, variant ORDER BY median, run_id) - 1 AS i, \
                      count(*) OVER (PARTITION BY key, variant) AS n \
               FROM {sums} WHERE {filter}) \
             WHERE {}",
            thin_sql("i", "n", cap)
        )
    } else {
        let every = most.div_ceil(cap.max(1)).max(1);
        format!(
            "SELECT key, variant, median, run_id FROM {sums} WHERE {filter} AND hash(run_id) % {every} = 0 \
             UNION ALL \
             SELECT key, variant, min(median), arg_min(run_id, median) FROM {sums} WHERE {filter} GROUP BY key, variant \
             UNION ALL \
             SELECT key, variant, max(median), arg_max(run_id, median) FROM {sums} WHERE {filter} GROUP BY key, variant"
        )
    };
    let mut stmt = db.conn.prepare(&sql)?;
    let mut dots = Dots::default();
    for row in stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))? {
        let (k, v, value, run): (String, String, f64, String) = row?;
        dots.entry((k, v)).or_default().push((value, run));
    }
    for d in dots.values_mut() {
        d.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
        d.dedup_by(|a, b| a.1 == b.1);
    }
    Ok(dots)
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfdb_ingest::model::{Direction, Measurement, Numerics, Parsed, RunMeta};
    use perfdb_ingest::pipeline::prepare;
    use perfdb_ingest::warehouse::Warehouse;

    /// 40 runs of one series, run `i` measuring `i`.
    fn forty_runs(dir: &std::path::Path) -> Db {
        let (key, key_order) = perfdb_ingest::model::key_of(&[("M".to_string(), "1".to_string())]);
        let prepared = (0..40)
            .map(|i| {
                let mut keys = perfdb_ingest::model::Keys::default();
                let m = Measurement {
                    table: "t".into(),
                    variant: "v".into(),
                    key: keys.push(&key),
                    key_order,
                    metric: "latency".into(),
                    unit: "us".into(),
                    direction: Direction::Lower,
                    value: Some(i as f64),
                    raw: keys.raw(&i.to_string()),
                    column: "v us".into(),
                    numerics: Numerics::NotChecked,
                    line: 1,
                    note: None,
                };
                let parsed = Parsed {
                    measurements: vec![m],
                    keys,
                    ..Default::default()
                };
                let meta = RunMeta {
                    label: "l".into(),
                    ..Default::default()
                };
                prepare(
                    "x",
                    format!("run {i}").as_bytes(),
                    Some(perfdb_ingest::model::Format::PerfLines),
                    parsed,
                    &meta,
                    &perfdb_ingest::devices::builtin(),
                )
            })
            .collect();
        Warehouse::new(dir).commit(prepared).unwrap();
        Db::open(dir, &perfdb_ingest::devices::builtin()).unwrap()
    }

    #[test]
    fn dots_by_rank_and_by_sample_keep_the_extremes() {
        let dir = tempfile::tempdir().unwrap();
        let db = forty_runs(dir.path());
        let filter = "table_name = 't' AND metric = 'latency'";
        let key = |d: &Dots| d.values().next().unwrap().clone();
        // By rank: the ends and evenly spaced ranks between.
        let ranked = key(&trial_dots_ranked_up_to(&db, "summaries", filter, 5, 40, 1000).unwrap());
        let values: Vec<f64> = ranked.iter().map(|d| d.0).collect();
        assert_eq!(values, [0.0, 10.0, 20.0, 30.0, 39.0]);
        // By sample (as for a point of more trials than ranking is worth): the ends, some
        // between, each trial once, ascending.
        let sampled = key(&trial_dots_ranked_up_to(&db, "summaries", filter, 5, 40, 10).unwrap());
        let values: Vec<f64> = sampled.iter().map(|d| d.0).collect();
        assert_eq!((values[0], *values.last().unwrap()), (0.0, 39.0));
        assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");
        assert!(values.len() >= 2 && values.len() <= 20, "{values:?}");
    }
}
