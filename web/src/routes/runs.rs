//! `/runs` and `/api/runs`: every run, newest first, a page at a time.

use crate::page::{empty_warehouse, esc, layout};
use crate::paging::{Page, PageQuery, Paged};
use crate::query::Query;
use crate::{blocking, AppError, AppState};
use axum::extract::State;
use axum::response::Html;
use axum::Json;
use perfdb_reports::db::{MACHINE_TAG_SQL, METHOD_TAG_SQL};
use serde::Serialize;

#[derive(Debug, Serialize)]
pub struct RunRow {
    pub run_id: String,
    pub label: String,
    pub trial: i32,
    pub format: String,
    pub commit: Option<String>,
    pub arch: Option<String>,
    /// The `machine` tag (`''` without one).
    pub machine: String,
    /// How the values were measured: the `method` tag (`''` without one).
    pub method: String,
    pub ingested_at: String,
    pub values: i64,
    pub tables: i32,
    pub verdict: Option<String>,
    pub source_path: String,
}

/// Labels with their run counts, for the page's links.
pub struct Listing {
    pub runs: Paged<RunRow>,
    pub labels: Vec<(String, i64)>,
}

pub fn load(state: &AppState, page: Page) -> Result<Listing, AppError> {
    let db = state.db()?;
    let internal = |e: duckdb::Error| AppError::internal(e.to_string());
    let mut stmt = db
        .conn
        .prepare(&format!(
            "SELECT run_id, label, trial, format, \"commit\", arch, strftime(ingested_at, '%Y-%m-%d %H:%M:%S'), \
             n_measurements, n_tables, verdict, source_path, {MACHINE_TAG_SQL}, {METHOD_TAG_SQL} \
             FROM runs r ORDER BY ingested_at DESC, label, trial DESC \
             LIMIT {} OFFSET {}",
            page.limit, page.offset
        ))
        .map_err(internal)?;
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
                machine: r.get(11)?,
                method: r.get(12)?,
            })
        })
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(internal)?;
    let mut stmt = db
        .conn
        .prepare("SELECT label, count(*) FROM runs GROUP BY label ORDER BY label")
        .map_err(internal)?;
    let labels: Vec<(String, i64)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(internal)?;
    let total = labels.iter().map(|(_, n)| *n as usize).sum();
    Ok(Listing {
        runs: page.wrap(rows, total, "/api/runs", ""),
        labels,
    })
}

pub async fn api(
    State(s): State<AppState>,
    Query(q): Query<PageQuery>,
) -> Result<Json<Paged<RunRow>>, AppError> {
    let page = q.page().map_err(AppError::json)?;
    blocking(s.clone(), move || load(&s, page))
        .await
        .map(|l| Json(l.runs))
        .map_err(AppError::json)
}

/// Label links shown at most; the rest are counted.
const LABEL_LINKS: usize = 60;

pub async fn page(
    State(s): State<AppState>,
    Query(q): Query<PageQuery>,
) -> Result<Html<String>, AppError> {
    let root = s.root.clone();
    let page = q.page()?;
    let Listing { runs, labels } = blocking(s.clone(), move || load(&s, page)).await?;
    if runs.total == 0 {
        return Ok(Html(layout("Runs", &empty_warehouse(&root))));
    }
    let rows = &runs.items;
    let mut body = format!(
        "<p>{} run(s) in {} label(s). Chart a label: ",
        runs.total,
        labels.len()
    );
    let labels: Vec<&str> = labels.iter().map(|(l, _)| l.as_str()).collect();
    for l in labels.iter().take(LABEL_LINKS) {
        body.push_str(&format!(
            "<a href=\"/chart?runs={l}\">chart {l}</a> · ",
            l = esc(l)
        ));
    }
    if labels.len() > LABEL_LINKS {
        body.push_str(&format!("… and {} more · ", labels.len() - LABEL_LINKS));
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
    body.push_str("</p><table><tr><th>run</th><th>label</th><th>trial</th><th>commit</th><th>arch</th><th>machine</th><th>method</th><th>format</th><th>ingested (UTC)</th><th>values</th><th>tables</th><th>verdict</th><th>source</th></tr>");
    for r in rows {
        body.push_str(&format!(
            "<tr><td><code>{}</code></td><td><a href=\"/chart?runs={l}\">{l}</a></td><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td class=\"muted\">{}</td></tr>",
            esc(&r.run_id), r.trial,
            esc(r.commit.as_deref().unwrap_or("")), esc(r.arch.as_deref().unwrap_or("")),
            esc(&r.machine), esc(&r.method), esc(&r.format),
            esc(&r.ingested_at), r.values, r.tables, esc(r.verdict.as_deref().unwrap_or("—")), esc(&r.source_path),
            l = esc(&r.label)
        ));
    }
    body.push_str("</table>");
    body.push_str(&runs.nav("/runs", ""));
    Ok(Html(layout("Runs", &body)))
}
