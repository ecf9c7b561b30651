//! `/compare`: choose base and head; verdict, control status, rows worst first, ratios.

use crate::page::{empty_warehouse, esc, layout};
use crate::query::Query2;
use crate::url::replay_query;
use crate::{blocking, AppError, AppState};
use axum::extract::State;
use axum::response::Html;
use axum::Json;
use perfdb_reports::compare::{compare, JudgeArgs, Options, Overall, Report};
use perfdb_reports::render::RowView;
use serde::Deserialize;

/// The page's own parameters; the comparison's options are [`JudgeArgs`], read from the
/// same query ([`crate::query::Query2`]) and resolved through the same `perfdb.toml`
/// (`Config::resolve`) as the command line's, so the page and CI decide alike.
#[derive(Debug, Deserialize, Default, Clone)]
pub struct CompareQuery {
    /// A comparison saved with `perfdb compare --save` (its file name under `alerts/`):
    /// shown as it was decided, from its stored result.
    pub saved: Option<String>,
    pub base: Option<String>,
    pub head: Option<String>,
    /// Pool the base label's last N commits as the base (`--baseline-window`).
    pub baseline_window: Option<String>,
    /// The page's rows (worst first): `limit` (default 100) from `offset`. The JSON
    /// report always holds every row.
    pub limit: Option<String>,
    pub offset: Option<String>,
}

fn given(v: &Option<String>) -> Option<&str> {
    v.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

/// The comparison's options: the query, then the server's `perfdb.toml`, then defaults.
fn options(state: &AppState, q: &CompareQuery, judge: &JudgeArgs) -> Result<Options, AppError> {
    let baseline_window = given(&q.baseline_window)
        .map(|t| {
            t.parse::<usize>().ok().filter(|n| *n >= 1).ok_or_else(|| {
                AppError::bad_request(format!(
                    "baseline_window '{t}' is not a number of commits, 1 or more"
                ))
            })
        })
        .transpose()?;
    state
        .config
        .resolve(judge, baseline_window)
        .map_err(|e| AppError::bad_request(e.to_string()))
}

/// The stored result of a saved comparison: a file name `perfdb compare --save` wrote
/// (nothing with a path in it).
fn saved(state: &AppState, name: &str) -> Result<Report, AppError> {
    let listed = perfdb_reports::saved::list(&state.root)
        .into_iter()
        .any(|a| a.file == name);
    if !listed || name.contains(['/', '\\']) {
        return Err(AppError::bad_request(format!(
            "no saved comparison '{name}': see the alerts page for the saved ones"
        )));
    }
    let path = perfdb_reports::saved::dir_of(&state.root).join(name);
    let bytes =
        std::fs::read(&path).map_err(|e| AppError::internal(format!("{}: {e}", path.display())))?;
    serde_json::from_slice(&bytes).map_err(|e| {
        AppError::internal(format!(
            "{}: not a comparison perfdb can read ({e}); run it again from its link",
            path.display()
        ))
    })
}

pub(crate) fn run(
    state: &AppState,
    q: &CompareQuery,
    judge: &JudgeArgs,
) -> Result<Option<Report>, AppError> {
    if let Some(name) = given(&q.saved) {
        return saved(state, name).map(Some);
    }
    let (Some(base), Some(head)) = (
        q.base.as_deref().filter(|s| !s.is_empty()),
        q.head.as_deref().filter(|s| !s.is_empty()),
    ) else {
        return Ok(None);
    };
    let opt = options(state, q, judge)?;
    let db = state.db()?;
    Ok(Some(compare(&db, base, head, &opt)?))
}

pub async fn api(
    State(s): State<AppState>,
    Query2(q, judge): Query2<CompareQuery, JudgeArgs>,
) -> Result<Json<Report>, AppError> {
    let r = blocking(s.clone(), move || run(&s, &q, &judge))
        .await
        .map_err(AppError::json)?;
    r.map(Json).ok_or_else(|| {
        AppError::bad_request("give base= and head= (a label, commit prefix or run id)").json()
    })
}

pub async fn page(
    State(s): State<AppState>,
    uri: axum::http::Uri,
    Query2(q, judge): Query2<CompareQuery, JudgeArgs>,
) -> Result<Html<String>, AppError> {
    let paging = crate::paging::Page::parse(q.limit.as_deref(), q.offset.as_deref())?;
    // The comparison's own query, for the links to its other pages.
    let same: String = uri
        .query()
        .unwrap_or("")
        .split('&')
        .filter(|p| !p.is_empty() && !p.starts_with("limit=") && !p.starts_with("offset="))
        .collect::<Vec<_>>()
        .join("&");
    let root = s.root.clone();
    let s2 = s.clone();
    let labels: Vec<String> = blocking(s2.clone(), move || {
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
    let (qq, jj) = (q.clone(), judge.clone());
    let report = blocking(s.clone(), move || run(&s, &qq, &jj)).await?;
    let form = form_html(&q, &judge, report.as_ref(), &labels);
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
    let saved_note = match given(&q.saved) {
        Some(name) => format!(
            "<p id=\"saved\" class=\"muted\">Saved comparison <code>{}</code>, shown as it was decided. \
             <a href=\"/compare?{}\">Run it again on the warehouse as it is now</a>.</p>",
            esc(name),
            esc(&replay_query(&r.base.selector, &r.head.selector, &r.options))
        ),
        None => String::new(),
    };
    let mut body = format!(
        "{form}{saved_note}<p class=\"verdict {class}\" id=\"verdict\">{:?}: {}</p>",
        r.verdict,
        esc(&r.reason)
    );
    body.push_str(&control_html(&r.control));
    for w in &r.warnings {
        body.push_str(&format!("<p class=\"muted\">warning: {}</p>", esc(w)));
    }
    let total = r.rows.len();
    let shown: Vec<&perfdb_reports::compare::Row> = r
        .rows
        .iter()
        .skip(paging.offset)
        .take(paging.limit)
        .collect();
    // The chart draws this page's rows: a page stays small however many rows there are.
    let page_rows = perfdb_reports::compare::Report {
        rows: shown.iter().map(|r| (*r).clone()).collect(),
        ..r.clone()
    };
    body.push_str(&format!(
        "<figure id=\"chart\">{}</figure>",
        perfdb_reports::chart::ratio_svg(&page_rows)
    ));
    let nav = paging
        .wrap(shown.clone(), total, "/compare", &same)
        .nav("/compare", &same);
    body.push_str(&nav);
    body.push_str("<table id=\"rows\"><tr><th>verdict</th><th>table</th><th>variant</th><th>key</th><th>metric</th><th>base</th><th>head</th><th>trials (base ● above, head ● below)</th><th>change</th><th>q</th><th>reason</th></tr>");
    for row in shown {
        // The same texts as the terminal and markdown reports.
        let v = RowView::of(row, &r);
        body.push_str(&format!(
            "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            if v.bad { "regression" } else { "" },
            esc(&v.verdict), esc(&v.table), esc(&v.variant), esc(&v.key), esc(&v.metric),
            esc(&v.base), esc(&v.head), perfdb_reports::chart::trials_strip(row), esc(&v.change), esc(&v.q), esc(&v.reason)
        ));
    }
    body.push_str("</table>");
    body.push_str(&nav);
    body.push_str(&counters_html(&r));
    body.push_str(&format!(
        "<p><a id=\"to-roofline\" href=\"/roofline?{}\">these rows on the roofline</a></p>",
        esc(&same)
    ));
    Ok(Html(layout(
        &format!("Compare {} → {}", r.base.selector, r.head.selector),
        &body,
    )))
}

/// The comparison's form, filled with what was asked (or what a saved comparison
/// compared), and the labels to choose from.
fn form_html(
    q: &CompareQuery,
    judge: &JudgeArgs,
    report: Option<&Report>,
    labels: &[String],
) -> String {
    format!(
        "<form method=\"get\"><label>base <input name=\"base\" value=\"{}\" size=\"10\"></label>\
         <label>head <input name=\"head\" value=\"{}\" size=\"10\"></label>\
         <label>control <input name=\"control\" value=\"{}\" size=\"10\"></label>\
         <label>threshold <input name=\"threshold\" value=\"{}\" size=\"5\"></label><button>Compare</button></form>\
         <p class=\"muted\">labels: {}</p>",
        // A saved comparison fills the form with what it compared.
        esc(given(&q.base).or(report.map(|r| r.base.selector.as_str())).unwrap_or("")),
        esc(given(&q.head).or(report.map(|r| r.head.selector.as_str())).unwrap_or("")),
        esc(&Some(judge.control.join(",")).filter(|c| !c.is_empty()).or(report.map(|r| r.options.control.join(","))).unwrap_or_default()),
        esc(&judge.threshold.or(report.map(|r| r.options.threshold)).unwrap_or(0.05).to_string()),
        esc(&labels.join(", "))
    )
}

/// The hardware counters that moved with each changed row (the report's texts), and
/// what profiling cost; nothing when neither side was profiled.
fn counters_html(r: &perfdb_reports::compare::Report) -> String {
    let lines = perfdb_reports::compare::counters::lines(&r.counters, 12);
    if lines.is_empty() && r.profiling.is_empty() {
        return String::new();
    }
    let mut out = String::from("<h2>Counters that moved</h2><ul id=\"counters\">");
    for (row, moved) in lines {
        out.push_str(&format!("<li>{}<ul>", esc(&row)));
        for m in moved {
            out.push_str(&format!("<li>{}</li>", esc(&m)));
        }
        out.push_str("</ul></li>");
    }
    out.push_str("</ul>");
    for p in &r.profiling {
        out.push_str(&format!("<p class=\"muted\">profiled: {}</p>", esc(p)));
    }
    out
}

/// The control's line: none given, or each of its metrics and whether it held.
fn control_html(control: &Option<perfdb_reports::compare::ControlStatus>) -> String {
    let mut out = String::new();
    match control {
        None => out.push_str(
            "<p>control: none given — drift between the sides cannot be told from a change.</p>",
        ),
        Some(c) => {
            out.push_str("<ul id=\"control\">");
            for m in &c.metrics {
                out.push_str(&format!(
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
            out.push_str("</ul>");
        }
    }
    out
}
