//! `/chart`: a metric per shape and variant, for a table and a run selection.

use crate::page::{empty_warehouse, esc, layout, select};
use crate::query::Query;
use crate::{blocking, AppError, AppState};
use axum::extract::State;
use axum::http::header;
use axum::response::{Html, IntoResponse};
use axum::Json;
use perfdb_reports::chart::{catalog, chart_data, chart_svg, ChartData};
use serde::Deserialize;

#[derive(Debug, Deserialize, Default, Clone)]
#[serde(deny_unknown_fields)]
pub struct ChartQuery {
    pub table: Option<String>,
    pub metric: Option<String>,
    /// A label, commit prefix or run id prefix.
    pub runs: Option<String>,
    /// Machine class (arch and `machine` tag) [default: the one with the most runs].
    pub machine: Option<String>,
}

/// Tables with their metrics, and the chart asked for.
type Resolved = (Vec<(String, Vec<String>)>, ChartData);

/// Pick defaults: the first table, its throughput metric if it has one.
fn resolve(state: &AppState, q: &ChartQuery) -> Result<Option<Resolved>, AppError> {
    let mut t = std::time::Instant::now();
    let db = state.db()?;
    perfdb_ingest::timing::trace("chart: db", &mut t);
    let cat = catalog(&db)?;
    perfdb_ingest::timing::trace("chart: catalog", &mut t);
    if cat.is_empty() {
        return Ok(None);
    }
    let table = q
        .table
        .clone()
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| cat[0].0.clone());
    let metric = match q.metric.clone().filter(|m| !m.is_empty()) {
        Some(m) => m,
        None => {
            let metrics = cat
                .iter()
                .find(|(t, _)| *t == table)
                .map(|(_, m)| m.clone())
                .unwrap_or_default();
            ["throughput", "bandwidth", "latency"]
                .iter()
                .find(|m| metrics.iter().any(|x| x == *m))
                .map(|m| m.to_string())
                .or_else(|| metrics.first().cloned())
                .unwrap_or_default()
        }
    };
    let data = chart_data(
        &db,
        &table,
        &metric,
        q.runs.as_deref(),
        q.machine.as_deref(),
    )?;
    perfdb_ingest::timing::trace("chart: data", &mut t);
    Ok(Some((cat, data)))
}

pub async fn api(
    State(s): State<AppState>,
    Query(q): Query<ChartQuery>,
) -> Result<Json<Option<ChartData>>, AppError> {
    blocking(s.clone(), move || resolve(&s, &q))
        .await
        .map(|r| Json(r.map(|x| x.1)))
        .map_err(AppError::json)
}

pub async fn svg(
    State(s): State<AppState>,
    Query(q): Query<ChartQuery>,
) -> Result<impl IntoResponse, AppError> {
    let r = blocking(s.clone(), move || resolve(&s, &q)).await?;
    let (_, data) = r.ok_or_else(|| AppError::bad_request("the warehouse has no runs yet"))?;
    Ok(([(header::CONTENT_TYPE, "image/svg+xml")], chart_svg(&data)))
}

pub async fn page(
    State(s): State<AppState>,
    Query(q): Query<ChartQuery>,
) -> Result<Html<String>, AppError> {
    let root = s.root.clone();
    let Some((cat, data)) = blocking(s.clone(), move || resolve(&s, &q)).await? else {
        return Ok(Html(layout("Chart", &empty_warehouse(&root))));
    };
    let tables: Vec<String> = cat.iter().map(|(t, _)| t.clone()).collect();
    let metrics = cat
        .iter()
        .find(|(t, _)| *t == data.table)
        .map(|(_, m)| m.clone())
        .unwrap_or_default();
    // A chart shows one machine class; offer the others when there are some.
    let machine = if data.machines.len() > 1 {
        select("machine", &data.machines, &data.machine)
    } else {
        String::new()
    };
    let form = format!(
        "<form method=\"get\">{}{}{machine}<label>runs <input name=\"runs\" value=\"{}\" size=\"12\"></label><button>Show</button></form>",
        select("table", &tables, &data.table),
        select("metric", &metrics, &data.metric),
        esc(&data.runs)
    );
    let mut rows = String::from("<table><tr><th>shape</th>");
    for v in &data.variants {
        rows.push_str(&format!("<th>{} median</th><th>min – max</th>", esc(v)));
    }
    rows.push_str("</tr>");
    for (i, shape) in data.shapes.iter().enumerate() {
        rows.push_str(&format!("<tr><td>{}</td>", esc(shape)));
        for v in &data.variants {
            match data.points.iter().find(|p| p.shape == i && &p.variant == v) {
                Some(p) => rows.push_str(&format!(
                    "<td class=\"num\">{}</td><td class=\"num muted\">{} – {} (n={})</td>",
                    perfdb_reports::fmt::num(p.median),
                    perfdb_reports::fmt::num(p.min),
                    perfdb_reports::fmt::num(p.max),
                    p.n
                )),
                None => rows.push_str("<td>—</td><td></td>"),
            }
        }
        rows.push_str("</tr>");
    }
    rows.push_str("</table>");
    let body = format!(
        "{form}<figure id=\"chart\">{}</figure><p class=\"muted\">Filled points are medians over the selected runs' trials (each trial counted once, by its own median); bars span min to max; hollow dots are the trials themselves. Hover a dot to see its run (trial, commit, machine).</p>{rows}",
        chart_svg(&data)
    );
    Ok(Html(layout(
        &format!("{} · {}", data.table, data.metric),
        &body,
    )))
}
