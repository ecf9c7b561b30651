//! What a group of alerts is sent as: the JSON of its worst alert as `perfdb alerts show`
//! prints it, with `group` (its id, range and every series) and a one-line `text`; or a
//! preset's own body (Slack blocks, a GitHub issue comment) listing the series.

use crate::alerts::notify::target::Preset;
use crate::alerts::{AlertGroup, AlertView};
use serde::Serialize;

/// Series listed in a Slack or GitHub message before "and N more".
const LISTED: usize = 20;

/// The body of one group for a target's preset; what changed underneath its step, when
/// known, leads its text.
pub fn body_for(
    preset: Preset,
    g: &AlertGroup,
    underneath: Option<&crate::environment::Underneath>,
) -> serde_json::Value {
    let plain = payload(g, underneath);
    let text = plain.text.clone();
    let a = g.worst();
    match preset {
        Preset::Json => serde_json::to_value(&plain).expect("a payload serialises"),
        Preset::Slack => serde_json::json!({
            "text": text,
            "blocks": [
                {"type": "section", "text": {"type": "mrkdwn", "text": format!(
                    "*perfdb alert `{}`* ({}): {} {} `{}` on {}\n{}",
                    g.id, g.status, a.table, a.variant, a.key_text, g.machine, text
                )}},
                {"type": "section", "text": {"type": "mrkdwn", "text": listed(g, "• ")}},
                {"type": "context", "elements": [{"type": "mrkdwn", "text": format!(
                    "label {} · first bad {} · last good {} · `perfdb alerts show {}`",
                    g.label, g.first_bad_commit, g.last_good_commit, a.id
                )}]}
            ]
        }),
        Preset::GitHub => serde_json::json!({
            "body": format!(
                "### perfdb alert `{}` ({})\n\n{}\n\n| | |\n|---|---|\n| kernel | {} {} |\n| shape | {} |\n| machine | {} |\n| first bad | {} (last good {}) |\n| change | {} |\n\n{}\n\n`perfdb alerts show {}` says how to confirm it.",
                g.id, g.status, text, a.table, a.variant, a.key_text, g.machine,
                g.first_bad_commit, g.last_good_commit, a.change_text(),
                listed(g, "- "), a.id
            )
        }),
    }
}

/// The group's series, one a line, at most [`LISTED`].
fn listed(g: &AlertGroup, bullet: &str) -> String {
    let series = g.series();
    let mut lines: Vec<String> = series
        .iter()
        .take(LISTED)
        .map(|s| format!("{bullet}{s}"))
        .collect();
    if series.len() > LISTED {
        lines.push(format!("and {} more", series.len() - LISTED));
    }
    format!("{} series:\n{}", series.len(), lines.join("\n"))
}

/// The JSON body of one group: its worst alert as `perfdb alerts show` prints it, a
/// line saying it, the group, and what changed underneath or what a bisect found.
#[derive(Debug, Serialize)]
pub struct Payload<'a> {
    #[serde(flatten)]
    pub alert: &'a AlertView,
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub underneath: Option<&'a crate::environment::Underneath>,
    pub group: GroupLine<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bisect: Option<&'a crate::bisect::Bisected>,
}

/// The group a payload speaks for: its id, range, series and alerts.
#[derive(Debug, Serialize)]
pub struct GroupLine<'a> {
    pub id: &'a str,
    pub alerts: usize,
    pub last_good_commit: &'a str,
    pub first_bad_commit: &'a str,
    pub series: Vec<String>,
    pub alert_ids: Vec<&'a str>,
}

/// The [`Payload`] of one group: `underneath` (what changed under its step) beside the
/// worst alert, and said first in `text` when something did.
pub fn payload<'a>(
    g: &'a AlertGroup,
    underneath: Option<&'a crate::environment::Underneath>,
) -> Payload<'a> {
    let a = g.worst();
    let more = match g.alerts.len() {
        1 => String::new(),
        n => format!(" and {} more series", n - 1),
    };
    let line = one_line(a, &more, g);
    let text = match underneath.filter(|u| !u.changed.is_empty()) {
        Some(u) => format!(
            "{} · {line}",
            u.between(&g.last_good_commit, &g.first_bad_commit)
        ),
        None => line,
    };
    Payload {
        alert: a,
        text,
        underneath,
        group: GroupLine {
            id: &g.id,
            alerts: g.alerts.len(),
            last_good_commit: &g.last_good_commit,
            first_bad_commit: &g.first_bad_commit,
            series: g.series(),
            alert_ids: g.alerts.iter().map(|a| a.id.as_str()).collect(),
        },
        bisect: None,
    }
}

/// The worst alert's line, with the group's range and id.
fn one_line(a: &AlertView, more: &str, g: &AlertGroup) -> String {
    let id = &g.id;
    match a.kind {
        crate::alerts::AlertKind::Regression => format!(
            "perfdb: {} {} {}{more} on {} regressed at {} (last good {}): {} {} [{}]",
            a.table,
            a.variant,
            a.key_text,
            g.machine,
            g.first_bad_commit,
            g.last_good_commit,
            a.metrics.join("/"),
            a.change_text(),
            id
        ),
        crate::alerts::AlertKind::Stale => format!(
            "perfdb: {} {} {}{more} on {} stopped reporting after {} ({}) [{}]",
            a.table,
            a.variant,
            a.key_text,
            g.machine,
            g.last_good_commit,
            a.change_text(),
            id
        ),
    }
}

/// The body telling a target what `perfdb bisect` found for group `g`.
pub fn bisect_body(
    preset: Preset,
    g: &AlertGroup,
    result: &crate::bisect::Bisected,
) -> serde_json::Value {
    let summary = crate::bisect::summary(result);
    let w = g.worst();
    let text = format!(
        "perfdb: {} {} ({} series on {}, after {} up to {}) {summary} [{}]",
        w.table,
        w.variant,
        g.alerts.len(),
        g.machine,
        g.last_good_commit,
        g.first_bad_commit,
        g.id
    );
    match preset {
        Preset::Json => serde_json::to_value(Payload {
            text,
            bisect: Some(result),
            ..payload(g, None)
        })
        .expect("a payload serialises"),
        Preset::Slack => serde_json::json!({
            "text": text,
            "blocks": [
                {"type": "section", "text": {"type": "mrkdwn", "text": format!(
                    "*perfdb bisect of alert `{}`*: {summary}", g.id
                )}},
                {"type": "context", "elements": [{"type": "mrkdwn", "text": format!(
                    "label {} · {} series · `perfdb alerts show {}`",
                    g.label, g.alerts.len(), g.id
                )}]}
            ]
        }),
        Preset::GitHub => serde_json::json!({
            "body": format!(
                "### perfdb bisect of alert `{}`\n\n{summary}\n\n{}\n\n`perfdb alerts show {}` has the steps.",
                g.id, listed(g, "- "), g.id
            )
        }),
    }
}
