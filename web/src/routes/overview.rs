//! `/` and `/api/overview`: every compared series of a label on one machine class over
//! its newest commits, worst first ([`perfdb_reports::overview`]), grouped by table and
//! variant, each row linking to its history.

use crate::page::{empty_warehouse, esc, layout, select};
use crate::query::Query;
use crate::url::url_encode;
use crate::{blocking, AppError, AppState};
use axum::extract::State;
use axum::response::Html;
use axum::Json;
use perfdb_reports::fmt::ratio_pct as percent;
use perfdb_reports::overview::{overview, spark_svg, Ask, Overview, OverviewError};
use serde::Deserialize;

#[derive(Debug, Deserialize, Default, Clone)]
#[serde(deny_unknown_fields)]
pub struct OverviewQuery {
    /// The label [default: the one with the most commits].
    pub label: Option<String>,
    /// The machine class [default: the label's with the most runs].
    pub machine: Option<String>,
    /// Newest commits spanned [default: 30].
    pub commits: Option<usize>,
    pub table: Option<String>,
    pub variant: Option<String>,
    pub metric: Option<String>,
}

fn load(state: &AppState, q: &OverviewQuery) -> Result<Option<Overview>, AppError> {
    let db = state.db()?;
    let ask = Ask {
        label: q.label.clone(),
        machine: q.machine.clone(),
        commits: q.commits.unwrap_or(0),
        table: q.table.clone(),
        variant: q.variant.clone(),
        metric: q.metric.clone(),
    };
    match overview(&db, &ask, &state.config.detect) {
        Ok(o) => Ok(Some(o)),
        Err(OverviewError::Empty) => Ok(None),
        Err(e @ OverviewError::Unknown(..)) => Err(AppError::bad_request(e.to_string())),
        Err(e) => Err(AppError::internal(e.to_string())),
    }
}

pub async fn api(
    State(s): State<AppState>,
    Query(q): Query<OverviewQuery>,
) -> Result<Json<Overview>, AppError> {
    blocking(s.clone(), move || load(&s, &q))
        .await
        .map_err(AppError::json)?
        .map(Json)
        .ok_or_else(|| AppError::bad_request("no runs yet: `perfdb ingest` adds some").json())
}

/// Rows shown per page at most; the rest are counted (filters narrow them).
const MAX_ROWS: usize = 500;

pub async fn page(
    State(s): State<AppState>,
    Query(q): Query<OverviewQuery>,
) -> Result<Html<String>, AppError> {
    let root = s.root.clone();
    let q2 = q.clone();
    let Some(o) = blocking(s.clone(), move || load(&s, &q2)).await? else {
        return Ok(Html(layout("Overview", &empty_warehouse(&root))));
    };
    let all = |v: &[String]| {
        let mut out = vec![String::new()];
        out.extend(v.iter().cloned());
        out
    };
    let opt = |v: &Option<String>| v.clone().unwrap_or_default();
    let mut body = format!(
        "<form method=\"get\">{}{}{}{}{}<label>commits <input name=\"commits\" value=\"{}\" size=\"4\"></label><button>Show</button></form>",
        select("label", &o.labels, &o.label),
        select("machine", &o.machines, &o.machine),
        select("table", &all(&o.tables), &opt(&q.table)),
        select("variant", &all(&o.variants), &opt(&q.variant)),
        select("metric", &all(&o.metrics), &opt(&q.metric)),
        q.commits.unwrap_or(perfdb_reports::overview::COMMITS),
    );
    let alerts = o.rows.iter().filter(|r| !r.open_alerts.is_empty()).count();
    let worse = o
        .rows
        .iter()
        .filter(|r| r.step.as_ref().is_some_and(|s| s.worse))
        .count();
    let stale = o.rows.iter().filter(|r| r.commits_since > 0).count();
    body.push_str(&format!(
        "<p id=\"summary\">{} series of <b>{}</b> on <b>{}</b> over the newest {} commit(s) ({} .. {}): \
         {alerts} with open alerts, {worse} stepped for the worse, {stale} not measured at the newest commit. Worst first.</p>",
        o.rows.len(),
        esc(&o.label),
        esc(&o.machine),
        o.commits.len(),
        esc(o.commits.first().map(String::as_str).unwrap_or("-")),
        esc(o.commits.last().map(String::as_str).unwrap_or("-")),
    ));
    if !o.class_stale.is_empty() {
        body.push_str(&format!(
            "<p class=\"regression\" id=\"class-stale\">{} stopped reporting: stale alert {}.</p>",
            esc(&o.machine),
            o.class_stale
                .iter()
                .map(|a| format!("<a href=\"/alerts/{a}\">{a}</a>", a = esc(a)))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    // Groups (table, variant) in the order of their worst row.
    let mut groups: Vec<(&str, &str, Vec<usize>)> = Vec::new();
    for (i, r) in o.rows.iter().enumerate().take(MAX_ROWS) {
        match groups
            .iter_mut()
            .find(|g| g.0 == r.table && g.1 == r.variant)
        {
            Some(g) => g.2.push(i),
            None => groups.push((&r.table, &r.variant, vec![i])),
        }
    }
    body.push_str("<table id=\"overview\"><tr><th>shape</th><th>metric</th><th>last commits</th><th>latest step</th><th>open alerts</th><th>last measured</th><th></th></tr>");
    for (table, variant, rows) in &groups {
        body.push_str(&format!(
            "<tr class=\"group\"><th colspan=\"7\">{} · {}</th></tr>",
            esc(table),
            esc(variant)
        ));
        for &i in rows {
            body.push_str(&row_html(&o.rows[i], &o));
        }
    }
    body.push_str("</table>");
    if o.rows.len() > MAX_ROWS {
        body.push_str(&format!(
            "<p class=\"muted\">{} more series not shown: filter by table, variant or metric.</p>",
            o.rows.len() - MAX_ROWS
        ));
    }
    Ok(Html(layout("Overview", &body)))
}

/// One series' row of the overview table: its shape and metric, the spark of its last
/// commits, its latest step, its open alerts, when it was last measured, its history.
fn row_html(r: &perfdb_reports::overview::Row, o: &perfdb_reports::overview::Overview) -> String {
    let history = format!(
        "/history?table={}&variant={}&metric={}&label={}&machine={}&key={}",
        url_encode(&r.table),
        url_encode(&r.variant),
        url_encode(&r.metric),
        url_encode(&o.label),
        url_encode(&o.machine),
        url_encode(&r.key)
    );
    let step = match &r.step {
        Some(s) => format!(
            "<span class=\"{}\">{}</span> at {}",
            if s.worse { "regression" } else { "improvement" },
            percent(s.ratio),
            esc(&s.commit)
        ),
        None => "<span class=\"muted\">none</span>".to_string(),
    };
    let alerts: String = r
        .open_alerts
        .iter()
        .map(|a| format!("<a href=\"/alerts\">{}</a> ", esc(a)))
        .collect();
    let last = if r.commits_since == 0 {
        esc(&r.last_commit)
    } else {
        format!(
            "{} <span class=\"regression\">({} commits ago)</span>",
            esc(&r.last_commit),
            r.commits_since
        )
    };
    format!(
        "<tr><td>{}</td><td>{} <span class=\"muted\">{}</span>{}</td><td>{}</td><td>{step}</td><td>{alerts}</td><td>{last}</td><td><a class=\"history\" href=\"{}\">history</a></td></tr>",
        esc(&r.key_text),
        esc(&r.metric),
        esc(&r.unit),
        r.percent_of_peak
            .map(|p| format!(" <span class=\"peak\" title=\"the newest median against the device's peak\">{p:.1}% of peak</span>"))
            .unwrap_or_default(),
        spark_svg(r, &o.commits),
        esc(&history)
    )
}
