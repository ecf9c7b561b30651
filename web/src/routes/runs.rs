//! `/` and `/api/runs`: every run.

use crate::page::{empty_warehouse, esc, layout};
use crate::{blocking, AppError, AppState};
use axum::extract::State;
use axum::response::Html;
use axum::Json;
use serde::Serialize;

#[derive(Debug, Serialize)]
pub struct RunRow {
    pub run_id: String,
    pub label: String,
    pub trial: i32,
    pub format: String,
    pub commit: Option<String>,
    pub arch: Option<String>,
    pub ingested_at: String,
    pub values: i64,
    pub tables: i32,
    pub verdict: Option<String>,
    pub source_path: String,
}

pub fn load(state: &AppState) -> Result<Vec<RunRow>, AppError> {
    let db = state.db()?;
    let mut stmt = db
        .conn
        .prepare(
            "SELECT run_id, label, trial, format, \"commit\", arch, strftime(ingested_at, '%Y-%m-%d %H:%M:%S'), \
             n_measurements, n_tables, verdict, source_path FROM runs ORDER BY ingested_at DESC, label, trial DESC",
        )
        .map_err(|e| AppError::internal(e.to_string()))?;
    let rows = stmt
        .query_map([], |r| {
            Ok(RunRow {
                run_id: r.get(0)?,
                label: r.get(1)?,
                trial: r.get(2)?,
                format: r.get(3)?,
                commit: r.get(4)?,
                arch: r.get(5)?,
                ingested_at: r.get(6)?,
                values: r.get(7)?,
                tables: r.get(8)?,
                verdict: r.get(9)?,
                source_path: r.get(10)?,
            })
        })
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| AppError::internal(e.to_string()))?;
    Ok(rows)
}

pub async fn api(State(s): State<AppState>) -> Result<Json<Vec<RunRow>>, AppError> {
    blocking(move || load(&s))
        .await
        .map(Json)
        .map_err(AppError::json)
}

pub async fn page(State(s): State<AppState>) -> Result<Html<String>, AppError> {
    let root = s.root.clone();
    let rows = blocking(move || load(&s)).await?;
    if rows.is_empty() {
        return Ok(Html(layout("Runs", &empty_warehouse(&root))));
    }
    let mut labels: Vec<&str> = rows.iter().map(|r| r.label.as_str()).collect();
    labels.sort();
    labels.dedup();
    let mut body = format!(
        "<p>{} run(s) in {} label(s). Compare two labels: ",
        rows.len(),
        labels.len()
    );
    for l in &labels {
        body.push_str(&format!(
            "<a href=\"/chart?runs={l}\">chart {l}</a> · ",
            l = esc(l)
        ));
    }
    if labels.len() >= 2 {
        body.push_str(&format!(
            "<a href=\"/compare?base={}&amp;head={}\">compare {} → {}</a>",
            esc(labels[0]),
            esc(labels[1]),
            esc(labels[0]),
            esc(labels[1])
        ));
    }
    body.push_str("</p><table><tr><th>run</th><th>label</th><th>trial</th><th>commit</th><th>arch</th><th>format</th><th>ingested (UTC)</th><th>values</th><th>tables</th><th>verdict</th><th>source</th></tr>");
    for r in &rows {
        body.push_str(&format!(
            "<tr><td><code>{}</code></td><td><a href=\"/chart?runs={l}\">{l}</a></td><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td class=\"muted\">{}</td></tr>",
            esc(&r.run_id), r.trial,
            esc(r.commit.as_deref().unwrap_or("")), esc(r.arch.as_deref().unwrap_or("")), esc(&r.format),
            esc(&r.ingested_at), r.values, r.tables, esc(r.verdict.as_deref().unwrap_or("—")), esc(&r.source_path),
            l = esc(&r.label)
        ));
    }
    body.push_str("</table>");
    Ok(Html(layout("Runs", &body)))
}
