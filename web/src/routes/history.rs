//! `/history`: one metric of one table/variant/shape over commits, with change points.

use crate::page::{empty_warehouse, esc, layout, select};
use crate::query::Query;
use crate::{blocking, AppError, AppState};
use axum::extract::State;
use axum::response::Html;
use axum::Json;
use perfdb_reports::chart::{
    catalog, history_data, history_svg, key_labels, series_of, HistoryData,
};
use serde::Deserialize;

#[derive(Debug, Deserialize, Default, Clone)]
#[serde(deny_unknown_fields)]
pub struct HistoryQuery {
    pub table: Option<String>,
    pub variant: Option<String>,
    /// The identity key as stored (JSON object text).
    pub key: Option<String>,
    pub metric: Option<String>,
    /// Only runs with this label (e.g. the branch whose commits make the history).
    pub label: Option<String>,
    /// The machine class (arch and `machine` tag) whose history to show [default: the
    /// one with the most runs]: a history never mixes machine classes.
    pub machine: Option<String>,
}

struct Resolved {
    tables: Vec<String>,
    metrics: Vec<String>,
    variants: Vec<String>,
    keys: Vec<String>,
    /// How each key reads (cells in the order the log printed them).
    labels: std::collections::HashMap<String, String>,
    data: HistoryData,
}

fn pick(given: &Option<String>, options: &[String], what: &str) -> Result<String, AppError> {
    match given.as_deref().filter(|g| !g.is_empty()) {
        Some(g) if options.iter().any(|o| o == g) => Ok(g.to_string()),
        Some(g) => Err(AppError::bad_request(format!(
            "unknown {what} '{g}'; known: {}",
            options.join(", ")
        ))),
        None => options
            .first()
            .cloned()
            .ok_or_else(|| AppError::bad_request(format!("no {what} to show"))),
    }
}

fn resolve(state: &AppState, q: &HistoryQuery) -> Result<Option<Resolved>, AppError> {
    let db = state.db()?;
    let cat = catalog(&db)?;
    if cat.is_empty() {
        return Ok(None);
    }
    let tables: Vec<String> = cat.iter().map(|(t, _)| t.clone()).collect();
    let table = pick(&q.table, &tables, "table")?;
    let metrics = cat
        .iter()
        .find(|(t, _)| *t == table)
        .map(|(_, m)| m.clone())
        .unwrap_or_default();
    let metric = pick(&q.metric, &metrics, "metric")?;
    let (variants, keys) = series_of(&db, &table, &metric)?;
    let variant = pick(&q.variant, &variants, "variant")?;
    // Keys are stored canonical (cells sorted by name): a key given in any order works.
    let given_key = q.key.as_deref().map(|k| {
        let cells = perfdb_ingest::model::key_from_json(k);
        if cells.is_empty() {
            k.to_string()
        } else {
            perfdb_ingest::model::key_of(&cells).0.to_string()
        }
    });
    let key = pick(&given_key, &keys, "key")?;
    // The detector `perfdb detect` runs, with the same perfdb.toml thresholds.
    let params = state.config.detect.for_series(&table, &variant);
    let series = perfdb_reports::chart::Series {
        table: &table,
        variant: &variant,
        key: &key,
        metric: &metric,
        label: q.label.as_deref(),
        machine: q.machine.as_deref(),
    };
    let data = history_data(&db, &series, &params)?;
    let labels = key_labels(&db, &table, &metric)?;
    Ok(Some(Resolved {
        tables,
        metrics,
        variants,
        keys,
        labels,
        data,
    }))
}

pub async fn api(
    State(s): State<AppState>,
    Query(q): Query<HistoryQuery>,
) -> Result<Json<Option<HistoryData>>, AppError> {
    blocking(s.clone(), move || resolve(&s, &q))
        .await
        .map(|r| Json(r.map(|x| x.data)))
        .map_err(AppError::json)
}

pub async fn page(
    State(s): State<AppState>,
    Query(q): Query<HistoryQuery>,
) -> Result<Html<String>, AppError> {
    let label = q.label.clone().unwrap_or_default();
    let root = s.root.clone();
    let Some(r) = blocking(s.clone(), move || resolve(&s, &q)).await? else {
        return Ok(Html(layout("History", &empty_warehouse(&root))));
    };
    let d = &r.data;
    let key_options: String = r
        .keys
        .iter()
        .map(|k| {
            let shown = r.labels.get(k).cloned().unwrap_or_else(|| k.clone());
            let sel = if shown == d.key { " selected" } else { "" };
            format!("<option value=\"{}\"{sel}>{}</option>", esc(k), esc(&shown))
        })
        .collect();
    let label_input = format!(
        "<label>label <input name=\"label\" value=\"{}\" size=\"10\"></label><button>Show</button>",
        esc(&label)
    );
    let form = format!(
        "<form method=\"get\">{}{}{}<label>shape <select name=\"key\" data-submit>{key_options}</select></label>{}{}</form>",
        select("table", &r.tables, &d.table),
        select("metric", &r.metrics, &d.metric),
        select("variant", &r.variants, &d.variant),
        select("machine", &d.machines, &d.machine),
        label_input,
    );
    let steps = if d.change_points.is_empty() {
        "<p>No change point: no step beyond 5% that the trials support.</p>".to_string()
    } else {
        let items: Vec<String> = d
            .change_points
            .iter()
            .map(|&i| {
                let before = d.points[i - 1].median;
                let after = d.points[i].median;
                format!(
                    "<li class=\"change\">step at <b>{}</b>: {} → {} {} ({:+.1}%)</li>",
                    esc(&d.points[i].point),
                    perfdb_reports::fmt::num(before),
                    perfdb_reports::fmt::num(after),
                    esc(&d.unit),
                    (after / before - 1.0) * 100.0
                )
            })
            .collect();
        format!("<ul>{}</ul>", items.join(""))
    };
    let thinned = if d.n_points > d.points.len() {
        format!(
            " Showing {} of {} commits: evenly spaced, with every change point and the commit before it.",
            d.points.len(),
            d.n_points
        )
    } else {
        String::new()
    };
    let peak = match (&d.peak, d.points.last()) {
        (Some(p), Some(last)) => format!(
            "<p id=\"peak\">Peak: <b>{} {}</b>, the {}'s dense {} (<a href=\"/devices\">device table</a>); the last commit's median is <b>{:.1}%</b> of it. The dashed line is the peak.</p>",
            perfdb_reports::fmt::num(p.value),
            esc(&p.unit),
            esc(&p.device_name),
            esc(&p.quantity),
            p.percent(last.median)
        ),
        _ => String::new(),
    };
    let body = format!(
        "{form}{peak}<figure id=\"chart\">{}</figure><p class=\"muted\">Each commit: the median of its trials (filled), min to max (bar), the trials themselves (hollow dots; hover one for its run); red lines mark change points.{thinned}</p>{steps}",
        history_svg(d)
    );
    Ok(Html(layout(
        &format!("History · {} {} {}", d.table, d.variant, d.key),
        &body,
    )))
}
