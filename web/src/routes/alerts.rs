//! `/alerts`: the changes the stored alerts group into (one label, machine class and
//! overlapping commit range: what a team triages), the alerts `perfdb detect` stored
//! (with their status, a filter by status and a link to each one's history chart), and
//! the comparisons saved with `perfdb compare --save`.

use crate::page::{esc, layout};
use crate::paging::{Page, PageQuery, Paged};
use crate::query::Query;
use crate::url::{replay_query, url_encode};
use crate::{blocking, AppError, AppState};
use axum::extract::State;
use axum::response::Html;
use axum::Json;
use perfdb_ingest::model::AlertStatus;
use perfdb_reports::alerts::{self, AlertGroup, AlertView};
use perfdb_reports::saved::SavedComparison;

/// A saved comparison as the API and the page show it: with its replay link.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Saved {
    #[serde(flatten)]
    pub comparison: SavedComparison,
    /// The `/compare` query that replays this comparison with exactly its options.
    pub replay: String,
}

/// The saved comparisons of the warehouse at `root`, newest first.
fn list(root: &std::path::Path) -> Vec<Saved> {
    perfdb_reports::saved::list(root)
        .into_iter()
        .map(|c| Saved {
            replay: replay_query(&c.base, &c.head, &c.options),
            comparison: c,
        })
        .collect()
}

/// `/api/alerts`: the saved comparisons, newest first, a page at a time.
pub async fn api(
    State(s): State<AppState>,
    Query(q): Query<PageQuery>,
) -> Result<Json<Paged<Saved>>, AppError> {
    let page = q.page().map_err(AppError::json)?;
    blocking(s.clone(), move || Ok(list(&s.root)))
        .await
        .map(|all| Json(page.of(all, "/api/alerts", "")))
        .map_err(AppError::json)
}

#[derive(Debug, serde::Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct AlertsQuery {
    /// Only detected alerts in this status.
    pub status: Option<String>,
    pub limit: Option<String>,
    pub offset: Option<String>,
}

fn status_of(q: &AlertsQuery) -> Result<Option<AlertStatus>, AppError> {
    match q.status.as_deref().filter(|s| !s.is_empty()) {
        None => Ok(None),
        Some(s) => AlertStatus::parse(s)
            .map(Some)
            .map_err(|e| AppError::bad_request(format!("status {e}"))),
    }
}

fn detected(s: &AppState, status: Option<AlertStatus>) -> Result<Vec<AlertView>, AppError> {
    let db = s.db()?;
    alerts::list(&db, status).map_err(|e| AppError::internal(e.to_string()))
}

/// `/api/alerts/detected?status=`: the stored alerts as `perfdb alerts list --format
/// json`, a page at a time.
pub async fn detected_api(
    State(s): State<AppState>,
    Query(q): Query<AlertsQuery>,
) -> Result<Json<Paged<AlertView>>, AppError> {
    let status = status_of(&q).map_err(AppError::json)?;
    let page = Page::parse(q.limit.as_deref(), q.offset.as_deref()).map_err(AppError::json)?;
    let filter = status.map(|s| format!("status={s}")).unwrap_or_default();
    blocking(s.clone(), move || detected(&s, status))
        .await
        .map(|all| Json(page.of(all, "/api/alerts/detected", &filter)))
        .map_err(AppError::json)
}

/// The triage form of one alert (with `serve --allow-triage`): the actions its status
/// allows, a note, and the server's token.
fn triage_form(a: &AlertView, token: &str) -> String {
    form(&a.id, a.status, token, false)
}

/// A triage form for the alert `id` in `status`, or (`group`) for its whole group.
fn form(id: &str, status: AlertStatus, token: &str, group: bool) -> String {
    let all = [
        (alerts::Action::Acknowledge, "ack", "acknowledge"),
        (alerts::Action::Dismiss, "dismiss", "dismiss"),
        (alerts::Action::Reopen, "reopen", "reopen"),
    ];
    let actions: Vec<(&str, &str)> = all
        .iter()
        .filter(|(act, _, _)| act.allowed_from(status))
        .map(|(_, v, label)| (*v, *label))
        .collect();
    let buttons: String = actions
        .iter()
        .map(|(v, label)| {
            format!(
                "<button name=\"action\" value=\"{v}\" id=\"{v}-{}{}\">{label}{}</button>",
                if group { "group-" } else { "" },
                esc(id),
                if group { " all" } else { "" }
            )
        })
        .collect();
    format!(
        "<form method=\"post\" action=\"/alerts/{}/triage\"><input type=\"hidden\" name=\"token\" value=\"{}\">{}\
         <input name=\"note\" placeholder=\"note\" size=\"16\">{buttons}</form>",
        esc(id),
        esc(token),
        if group { "<input type=\"hidden\" name=\"group\" value=\"1\">" } else { "" }
    )
}

/// The changes: one row a group of alerts (its earliest alert's id, the narrowest common
/// range, the worst series), with a triage form for the whole group.
fn changes_section(groups: &[AlertGroup], token: Option<&str>) -> String {
    if groups.is_empty() {
        return String::new();
    }
    let mut body = format!(
        "<h2>Changes</h2><p class=\"muted\">Alerts of one label and machine class whose commit ranges overlap (a class that names no GPU joins the one naming it under the same machine tag): one change to triage (<code>perfdb alerts list --grouped</code>).</p>\
         <table id=\"changes\"><tr><th>group</th><th>status</th><th>alerts</th><th>machine</th><th>first bad</th><th>worst</th><th>change</th>{}</tr>",
        if token.is_some() { "<th>triage</th>" } else { "" }
    );
    for g in groups {
        let w = g.worst();
        body.push_str(&format!(
            "<tr class=\"{}\"><td><a href=\"/alerts/{id}\"><code>{id}</code></a></td><td>{}</td><td class=\"num\">{}</td><td>{}</td><td>{} (last good {})</td><td>{} {} {}</td><td class=\"num\">{}</td>",
            if g.status == AlertStatus::Active { "regression" } else { "" },
            esc(g.status.as_str()),
            g.alerts.len(),
            esc(&g.machine),
            esc(&g.first_bad_commit),
            esc(&g.last_good_commit),
            esc(&w.table),
            esc(&w.variant),
            esc(&w.key_text),
            esc(&w.change_text()),
            id = esc(&g.id)
        ));
        if let Some(t) = token {
            body.push_str(&format!("<td>{}</td>", form(&g.id, g.status, t, true)));
        }
        body.push_str("</tr>");
    }
    body.push_str("</table>");
    body
}

/// `/api/alerts/groups`: the stored alerts grouped, as `perfdb alerts list --grouped
/// --format json`.
pub async fn groups_api(State(s): State<AppState>) -> Result<Json<Vec<AlertGroup>>, AppError> {
    blocking(s.clone(), move || grouped(&s))
        .await
        .map(Json)
        .map_err(AppError::json)
}

fn grouped(s: &AppState) -> Result<Vec<AlertGroup>, AppError> {
    let db = s.db()?;
    let all = alerts::list(&db, None).map_err(|e| AppError::internal(e.to_string()))?;
    alerts::group(&db, all).map_err(|e| AppError::internal(e.to_string()))
}

/// The detected alerts as a table, each linked to its series' history chart.
fn detected_section(
    alerts: &[AlertView],
    status: Option<AlertStatus>,
    token: Option<&str>,
) -> String {
    let filters: Vec<String> = std::iter::once(("all", status.is_none()))
        .chain(
            AlertStatus::ALL
                .iter()
                .map(|s| (s.as_str(), status == Some(*s))),
        )
        .map(|(s, on)| {
            let href = if s == "all" {
                "/alerts".to_string()
            } else {
                format!("/alerts?status={s}")
            };
            if on {
                format!("<b>{s}</b>")
            } else {
                format!("<a href=\"{href}\">{s}</a>")
            }
        })
        .collect();
    let mut body = format!(
        "<h2>Detected</h2><p id=\"filters\">status: {}</p>",
        filters.join(" · ")
    );
    if alerts.is_empty() {
        body.push_str(
            "<p>No alerts. <code>perfdb detect --label main</code> stores the regressions it finds over a label's history.</p>",
        );
        return body;
    }
    body.push_str(&format!(
        "<table id=\"detected\"><tr><th>id</th><th>status</th><th>kernel</th><th>shape</th><th>machine</th><th>first bad</th><th>change</th><th>metrics</th>{}</tr>",
        if token.is_some() { "<th>triage</th>" } else { "" }
    ));
    for a in alerts {
        let metric = a.metrics.first().map(String::as_str).unwrap_or("latency");
        let key_json = perfdb_ingest::model::key_of(&a.key).0;
        let history = format!(
            "/history?table={}&variant={}&metric={}&label={}&machine={}&key={}",
            url_encode(&a.table),
            url_encode(&a.variant),
            url_encode(metric),
            url_encode(&a.label),
            url_encode(&a.machine),
            url_encode(&key_json)
        );
        body.push_str(&format!(
            "<tr class=\"{}\"><td><a href=\"/alerts/{id}\"><code>{id}</code></a></td><td>{}</td><td>{} {}</td><td><a href=\"{}\">{}</a></td><td>{}</td><td>{} (last good {})</td><td class=\"num\">{}</td><td>{}</td></tr>",
            if a.status == AlertStatus::Active { "regression" } else { "" },
            esc(a.status.as_str()), esc(&a.table), esc(&a.variant),
            esc(&history), esc(&a.key_text), esc(&a.machine),
            esc(&a.first_bad_commit), esc(&a.last_good_commit),
            esc(&a.change_text()), esc(&a.metrics.join(", ")),
            id = esc(&a.id)
        ));
        if let Some(t) = token {
            // Replace the row's closing tag with the form cell.
            body.truncate(body.len() - "</tr>".len());
            body.push_str(&format!("<td>{}</td></tr>", triage_form(a, t)));
        }
    }
    body.push_str("</table>");
    if token.is_none() {
        body.push_str("<p class=\"muted\">Read-only: triage with <code>perfdb alerts ack|dismiss|reopen</code>, or start <code>perfdb serve --allow-triage</code>.</p>");
    }
    body
}

#[derive(Debug, serde::Deserialize)]
pub struct TriageForm {
    pub action: String,
    #[serde(default)]
    pub note: String,
    #[serde(default)]
    pub token: String,
    /// "1": act on every alert of the group that holds the alert.
    #[serde(default)]
    pub group: String,
}

/// `POST /alerts/{id}/triage` (only with `serve --allow-triage`): the form's token must be
/// the server's, and a browser must say the request came from this site.
pub async fn triage(
    State(s): State<AppState>,
    axum::extract::Path(id): axum::extract::Path<String>,
    headers: axum::http::HeaderMap,
    axum::Form(f): axum::Form<TriageForm>,
) -> Result<axum::response::Redirect, AppError> {
    if s.triage_token.is_none() {
        return Err(AppError::forbidden(
            "this server is read-only: start it with `perfdb serve --allow-triage`",
        ));
    }
    let site = headers
        .get("sec-fetch-site")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("same-origin");
    let host = headers
        .get(axum::http::header::HOST)
        .and_then(|v| v.to_str().ok())
        .and_then(crate::guard::host_name)
        .unwrap_or_default();
    if !matches!(site, "same-origin" | "none")
        || s.triage_token_for(&host).is_none_or(|t| f.token != t)
    {
        return Err(AppError::forbidden(
            "triage forms are accepted from this site's alerts page only",
        ));
    }
    let action = match f.action.as_str() {
        "ack" => alerts::Action::Acknowledge,
        "dismiss" => alerts::Action::Dismiss,
        "reopen" => alerts::Action::Reopen,
        other => {
            return Err(AppError::bad_request(format!(
                "action '{other}': ack, dismiss or reopen"
            )))
        }
    };
    let (root, devices) = (s.root.clone(), s.devices.clone());
    blocking(s.clone(), move || {
        let done = if f.group == "1" {
            alerts::act_on_group(&root, &devices, &id, action, "web", &f.note).map(|_| ())
        } else {
            alerts::act(&root, &devices, &id, action, "web", &f.note).map(|_| ())
        };
        done.map_err(|e| AppError::bad_request(e.to_string()))
    })
    .await?;
    Ok(axum::response::Redirect::to("/alerts"))
}

pub async fn page(
    State(s): State<AppState>,
    headers: axum::http::HeaderMap,
    Query(q): Query<AlertsQuery>,
) -> Result<Html<String>, AppError> {
    let status = status_of(&q)?;
    let paging = Page::parse(q.limit.as_deref(), q.offset.as_deref())?;
    let s2 = s.clone();
    let filter = status.map(|s| format!("status={s}")).unwrap_or_default();
    // The alerts read once: their groups, and those of the status asked for.
    let (groups, stored) = blocking(s2.clone(), move || {
        let db = s2.db()?;
        let all = alerts::list(&db, None).map_err(|e| AppError::internal(e.to_string()))?;
        let shown: Vec<AlertView> = all
            .iter()
            .filter(|a| status.is_none_or(|st| a.status == st))
            .cloned()
            .collect();
        let groups = alerts::group(&db, all).map_err(|e| AppError::internal(e.to_string()))?;
        Ok((groups, shown))
    })
    .await?;
    let stored = paging.of(stored, "/alerts", &filter);
    let host = headers
        .get(axum::http::header::HOST)
        .and_then(|v| v.to_str().ok())
        .and_then(crate::guard::host_name)
        .unwrap_or_default();
    let token = s.triage_token_for(&host);
    let alerts = blocking(s.clone(), move || Ok(list(&s.root)))
        .await
        .map(|all| paging.of(all, "/alerts", &filter))?;
    let mut page = changes_section(&groups, token.as_deref());
    page.push_str(&detected_section(&stored.items, status, token.as_deref()));
    page.push_str(&stored.nav("/alerts", &filter));
    page.push_str("<h2>Saved comparisons</h2>");
    let (saved_nav, alerts) = (alerts.nav("/alerts", &filter), alerts.items);
    if alerts.is_empty() {
        page.push_str(
            "<p>No saved comparisons yet. Save one with <code>perfdb compare BASE HEAD --control torch --save</code>; \
             its regressions are listed here.</p>",
        );
        return Ok(Html(layout("Alerts", &page)));
    }
    let mut body = String::from(
        "<table><tr><th>saved</th><th>base → head</th><th>verdict</th><th>regressions</th></tr>",
    );
    for saved in &alerts {
        let a = &saved.comparison;
        let regs: Vec<String> = a
            .regressions
            .iter()
            .map(|r| {
                let key = r["key_text"].as_str().unwrap_or("");
                format!(
                    "{} {} {} {}: {}",
                    r["table"].as_str().unwrap_or(""),
                    r["variant"].as_str().unwrap_or(""),
                    key,
                    r["metric"].as_str().unwrap_or(""),
                    match r["change_text"].as_str() {
                        Some(t) if t != "-" => t.to_string(),
                        _ => "numerics failure".into(),
                    }
                )
            })
            .collect();
        body.push_str(&format!(
            "<tr><td class=\"muted\">{}</td><td><a href=\"/compare?saved={file}\">{b} → {h}</a> <a class=\"muted\" href=\"/compare?{replay}\">(run again)</a></td><td class=\"{}\">{}: {}</td><td>{}</td></tr>",
            esc(&a.file), if a.verdict == "regression" { "regression" } else { "" }, esc(&a.verdict), esc(&a.reason),
            if regs.is_empty() { "—".into() } else { regs.iter().map(|r| esc(r)).collect::<Vec<_>>().join("<br>") },
            b = esc(&a.base), h = esc(&a.head), replay = esc(&saved.replay), file = esc(&url_encode(&a.file))
        ));
    }
    body.push_str("</table>");
    page.push_str(&body);
    page.push_str(&saved_nav);
    Ok(Html(layout("Alerts", &page)))
}

/// `/alerts/{id}` (any unique prefix): one alert, its metrics and status history, and
/// how to confirm it: the measured commits of its range and the `perfdb ab` command
/// (`perfdb alerts show --git-dir` lists the commits nobody measured too).
pub async fn one(
    State(s): State<AppState>,
    axum::extract::Path(id): axum::extract::Path<String>,
) -> Result<Html<String>, AppError> {
    let d = blocking(s.clone(), move || {
        let db = s.db()?;
        let a = alerts::find(&db, &id).map_err(|e| match e {
            alerts::TriageError::NotFound(_) | alerts::TriageError::Ambiguous { .. } => {
                AppError::unknown(e.to_string())
            }
            e => AppError::internal(e.to_string()),
        })?;
        alerts::detail(&db, &s.root, a, None).map_err(|e| AppError::internal(e.to_string()))
    })
    .await?;
    let a = &d.alert;
    let mut body =
        format!(
        "<p><b>{}</b> {} · {} {} · {} on {} · {} (last good {}) · <span class=\"{}\">{}</span></p>",
        esc(a.status.as_str()),
        esc(match a.kind {
            alerts::AlertKind::Regression => "regression",
            alerts::AlertKind::Stale => "stale data",
        }),
        esc(&a.table),
        esc(&a.variant),
        esc(&a.key_text),
        esc(&a.machine),
        esc(&a.first_bad_commit),
        esc(&a.last_good_commit),
        if a.status == AlertStatus::Active { "regression" } else { "" },
        esc(&a.change_text()),
    );
    // What changed underneath the step comes first: a new driver or toolchain is the
    // first thing to rule out.
    body.push_str(&format!(
        "<p id=\"underneath\">Underneath: {}</p>",
        esc(&d
            .underneath
            .between(&a.last_good_commit, &a.first_bad_commit))
    ));
    if !d.beside.is_empty() {
        body.push_str(&format!(
            "<p id=\"beside\">Beside it, the same shape across the same commits: {}</p>",
            esc(&perfdb_reports::alerts::beside::text(&d.beside))
        ));
    }
    let moved = perfdb_reports::compare::counters::lines(&d.counters, 12);
    if !moved.is_empty() {
        body.push_str("<h2>Counters that moved at the step</h2><ul id=\"counters\">");
        for (row, lines) in moved {
            body.push_str(&format!("<li>{}<ul>", esc(&row)));
            for l in lines {
                body.push_str(&format!("<li>{}</li>", esc(&l)));
            }
            body.push_str("</ul></li>");
        }
        body.push_str("</ul>");
    }
    body.push_str("<h2>Status</h2><table><tr><th>status</th><th>by</th><th>note</th></tr>");
    for h in &a.history {
        body.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(h.status.as_str()),
            esc(&h.who),
            esc(&h.note)
        ));
    }
    body.push_str("</table><h2>Confirm it</h2>");
    // An alert stored before commit names were checked: its page, without commands.
    match (&d.confirm, &d.unconfirmable) {
        (Some(c), _) => confirm_section(&mut body, c),
        (None, why) => body.push_str(&format!(
            "<p id=\"confirm\">{}</p>",
            esc(why.as_deref().unwrap_or_default())
        )),
    }
    match (&d.bisect, &d.unreadable_bisect) {
        (Some(b), _) => bisect_section(&mut body, b),
        // A record this page cannot read is said, never shown as "not bisected".
        (None, Some(why)) => body.push_str(&format!(
            "<h2>Bisected</h2><p id=\"bisect\">{}</p>",
            esc(why)
        )),
        (None, None) => {}
    }
    Ok(Html(layout(&format!("Alert {}", a.id), &body)))
}

/// The commits of an alert's range and the commands that confirm it.
fn confirm_section(body: &mut String, c: &perfdb_reports::alerts::confirm::Confirmation) {
    body.push_str("<p>The commits of its range with runs: ");
    let range: Vec<String> = c
        .range
        .iter()
        .map(|r| format!("<code>{}</code>", esc(&r.commit)))
        .collect();
    body.push_str(&range.join(" → "));
    body.push_str(
        "</p><p class=\"muted\">Between two measured commits there may be others nobody \
         measured: <code>perfdb alerts show ID --git-dir CHECKOUT</code> lists them, and \
         <code>perfdb bisect ID --repo CHECKOUT</code> finds the commit on this machine's \
         GPU.</p><pre id=\"confirm\">",
    );
    for w in &c.worktrees {
        body.push_str(&esc(w));
        body.push('\n');
    }
    body.push_str(&esc(&c.ab_command));
    body.push_str("</pre>");
}

/// What `perfdb bisect` found: its line, then each step (the ends first).
fn bisect_section(body: &mut String, b: &perfdb_reports::bisect::Bisected) {
    body.push_str(&format!(
        "<h2>Bisected</h2><p id=\"bisect\">{}</p>",
        esc(&perfdb_reports::bisect::summary(b))
    ));
    body.push_str(
        "<table id=\"bisect-steps\"><tr><th>commit</th><th>against</th><th>found</th>\
         <th>trials a side</th><th>seconds</th></tr>",
    );
    let short = |s: &str| s.chars().take(12).collect::<String>();
    for (st, ends) in b
        .ends
        .iter()
        .map(|e| (e, true))
        .chain(b.steps.iter().map(|s| (s, false)))
    {
        body.push_str(&format!(
            "<tr><td><code>{}</code>{}</td><td><code>{}</code></td><td>{}{}</td><td>{}</td><td>{:.0}</td></tr>",
            esc(&short(&st.commit)),
            if ends { " (the ends)" } else { "" },
            esc(&short(&st.against)),
            esc(&st.found.to_string()),
            st.why.as_deref().map(|w| format!(": {}", esc(w))).unwrap_or_default(),
            st.trials_a_side,
            st.seconds
        ));
    }
    body.push_str("</table>");
}
