//! `/compare`: choose base and head; verdict, control status, rows worst first, ratios.

use crate::page::{empty_warehouse, esc, layout};
use crate::{blocking, AppError, AppState};
use axum::extract::{Query, State};
use axum::response::Html;
use axum::Json;
use perfdb_reports::compare::{compare, Options, Overall, Report};
use perfdb_reports::render::num;
use serde::Deserialize;

#[derive(Debug, Deserialize, Default, Clone)]
pub struct CompareQuery {
    pub base: Option<String>,
    pub head: Option<String>,
    /// Comma-separated control variants (substrings).
    pub control: Option<String>,
    pub threshold: Option<String>,
}

fn run(state: &AppState, q: &CompareQuery) -> Result<Option<Report>, AppError> {
    let (Some(base), Some(head)) = (
        q.base.as_deref().filter(|s| !s.is_empty()),
        q.head.as_deref().filter(|s| !s.is_empty()),
    ) else {
        return Ok(None);
    };
    let mut opt = Options::default();
    if let Some(t) = q.threshold.as_deref().filter(|s| !s.is_empty()) {
        opt.threshold = t
            .parse::<f64>()
            .ok()
            .filter(|t| (0.0..1.0).contains(t))
            .ok_or_else(|| {
                AppError::bad_request(format!(
                    "threshold '{t}' must be a fraction in [0, 1), e.g. 0.05"
                ))
            })?;
    }
    opt.control = q
        .control
        .as_deref()
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(String::from)
        .collect();
    let db = state.db()?;
    Ok(Some(compare(&db, base, head, &opt)?))
}

pub async fn api(
    State(s): State<AppState>,
    Query(q): Query<CompareQuery>,
) -> Result<Json<Report>, AppError> {
    let r = blocking(move || run(&s, &q))
        .await
        .map_err(AppError::json)?;
    r.map(Json).ok_or_else(|| {
        AppError::bad_request("give base= and head= (a label, commit prefix or run id)").json()
    })
}

pub async fn page(
    State(s): State<AppState>,
    Query(q): Query<CompareQuery>,
) -> Result<Html<String>, AppError> {
    let root = s.root.clone();
    let s2 = s.clone();
    let labels: Vec<String> = blocking(move || {
        let db = s2.db()?;
        let mut stmt = db
            .conn
            .prepare("SELECT DISTINCT label FROM runs ORDER BY label")
            .map_err(|e| AppError::internal(e.to_string()))?;
        let v = stmt
            .query_map([], |r| r.get(0))
            .and_then(|it| it.collect::<Result<Vec<String>, _>>())
            .map_err(|e| AppError::internal(e.to_string()))?;
        Ok(v)
    })
    .await?;
    if labels.is_empty() {
        return Ok(Html(layout("Compare", &empty_warehouse(&root))));
    }
    let qq = q.clone();
    let report = blocking(move || run(&s, &qq)).await?;
    let form = format!(
        "<form method=\"get\"><label>base <input name=\"base\" value=\"{}\" size=\"10\"></label>\
         <label>head <input name=\"head\" value=\"{}\" size=\"10\"></label>\
         <label>control <input name=\"control\" value=\"{}\" size=\"10\"></label>\
         <label>threshold <input name=\"threshold\" value=\"{}\" size=\"5\"></label><button>Compare</button></form>\
         <p class=\"muted\">labels: {}</p>",
        esc(q.base.as_deref().unwrap_or("")),
        esc(q.head.as_deref().unwrap_or("")),
        esc(q.control.as_deref().unwrap_or("")),
        esc(q.threshold.as_deref().unwrap_or("0.05")),
        esc(&labels.join(", "))
    );
    let Some(r) = report else {
        return Ok(Html(layout(
            "Compare",
            &format!("{form}<p>Choose a base and a head (a label, commit prefix or run id).</p>"),
        )));
    };
    let class = match r.verdict {
        Overall::Ok => "improvement",
        Overall::Regression => "regression",
        _ => "muted",
    };
    let mut body = format!(
        "{form}<p class=\"verdict {class}\" id=\"verdict\">{:?}: {}</p>",
        r.verdict,
        esc(&r.reason)
    );
    match &r.control {
        None => body.push_str(
            "<p>control: none given — drift between the sides cannot be told from a change.</p>",
        ),
        Some(c) => {
            body.push_str("<ul id=\"control\">");
            for m in &c.metrics {
                body.push_str(&format!(
                    "<li>control {} on {}: {:+.1}% over {} row(s) — {}</li>",
                    esc(&c.matched_variants.join(",")),
                    esc(&m.metric),
                    (m.ratio - 1.0) * 100.0,
                    m.rows,
                    if m.passed {
                        "passed"
                    } else {
                        "<b class=\"regression\">FAILED</b>"
                    }
                ));
            }
            body.push_str("</ul>");
        }
    }
    for w in &r.warnings {
        body.push_str(&format!("<p class=\"muted\">warning: {}</p>", esc(w)));
    }
    body.push_str(&format!(
        "<figure id=\"chart\">{}</figure>",
        perfdb_reports::chart::ratio_svg(&r)
    ));
    body.push_str("<table id=\"rows\"><tr><th>verdict</th><th>table</th><th>variant</th><th>key</th><th>metric</th><th>base</th><th>head</th><th>change</th><th>q</th><th>reason</th></tr>");
    for row in &r.rows {
        let (b, h) = match r.options.reduce {
            perfdb_reports::compare::Reduce::Best => (row.base.best, row.head.best),
            perfdb_reports::compare::Reduce::Median => (row.base.median, row.head.median),
        };
        let cls = if row.verdict == perfdb_reports::compare::Verdict::Regression && !row.control {
            "regression"
        } else {
            ""
        };
        body.push_str(&format!(
            "<tr class=\"{cls}\"><td>{}{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} ({})</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            esc(row.verdict.as_str()), if row.control { " (control)" } else { "" },
            esc(&row.table), esc(&row.variant), esc(&row.key_display()), esc(&row.metric), esc(&row.unit),
            b.map(num).unwrap_or_default(), h.map(num).unwrap_or_default(),
            row.change.map(|c| format!("{:+.1}%", c * 100.0)).unwrap_or_default(),
            row.q.map(|q| format!("{q:.2e}")).unwrap_or_default(), esc(&row.reason)
        ));
    }
    body.push_str("</table>");
    Ok(Html(layout(
        &format!("Compare {} → {}", r.base.selector, r.head.selector),
        &body,
    )))
}
