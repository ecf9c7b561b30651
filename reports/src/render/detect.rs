//! The text of a detection: the terminal's, and a pull-request comment's, from one
//! list of columns; and the stale check's lines after either.

use super::{markdown_table, terminal_lines, Column};
use crate::detect::stale::StaleOutcome;
use crate::detect::{Detection, Event, Raised};

/// One event as both outputs show it: the alert it is (if any) and the event.
pub struct EventRow {
    pub alert: String,
    pub event: Event,
}

/// The columns of a detection's events, terminal and comment alike.
pub const EVENT_COLUMNS: &[Column<EventRow>] = &[
    Column::left("alert", |r: &EventRow| r.alert.clone()),
    Column::left("kind", |r: &EventRow| r.event.kind.to_string()),
    Column::left("underneath", |r: &EventRow| r.event.underneath.text()),
    Column::left("kernel", |r: &EventRow| {
        format!("{} {}", r.event.table, r.event.variant)
    }),
    Column::left("shape", |r: &EventRow| r.event.key.clone()),
    Column::left("machine", |r: &EventRow| r.event.machine.clone()),
    Column::left("first bad", |r: &EventRow| r.event.first_bad_commit.clone()),
    Column::left("last good", |r: &EventRow| r.event.last_good_commit.clone()),
    Column::left("moved", |r: &EventRow| moved(&r.event)),
    Column::left("standing", |r: &EventRow| standing(&r.event)),
];

/// Each metric's move: `latency 10.1 -> 12.3 us (+21.8%, p 1.0e-4)`.
fn moved(e: &Event) -> String {
    e.metrics
        .iter()
        .map(|m| {
            crate::render::move_text(
                &m.metric,
                &m.unit,
                Some(m.before_median),
                Some(m.after_median),
                m.ratio,
                m.p,
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Whether the new level has held: empty when confirmed.
fn standing(e: &Event) -> String {
    if e.confirmed {
        String::new()
    } else if e.at_tip {
        format!("held {} commit(s): not yet confirmed", e.held)
    } else {
        format!("a blip: held {} commit(s)", e.held)
    }
}

/// The events with the alert each is: `new`, or its id and status.
fn rows(d: &Detection, raised: &Raised) -> Vec<EventRow> {
    d.events
        .iter()
        .enumerate()
        .map(|(i, event)| EventRow {
            alert: match raised.alert_of(i) {
                Some(id) if raised.new_alerts.iter().any(|n| n == id) => format!("{id} new"),
                Some(id) => format!(
                    "{id} {}",
                    raised.status_of(i).map(|s| s.as_str()).unwrap_or("")
                ),
                None => String::new(),
            },
            event: event.clone(),
        })
        .collect()
}

/// A pull-request comment body: what this run raised, then every change it found.
pub fn render_markdown(d: &Detection, raised: &Raised) -> String {
    let mut s = format!(
        "## perfdb detect: {} new alert(s) on `{}`\n\n{} series over {} commit(s); {} regression(s), {} other change(s){}.\n\n",
        raised.new_alerts.len(),
        d.label,
        d.series,
        d.commits,
        d.regressions(),
        d.events.len() - d.regressions(),
        raised.summary_tail()
    );
    if d.events.is_empty() {
        s.push_str("No change point.\n");
        return s;
    }
    s.push_str(&markdown_table(EVENT_COLUMNS, &rows(d, raised)));
    s
}

/// The terminal text of a detection, with what storing it did.
pub fn render_text(d: &Detection, raised: &Raised) -> String {
    let mut s = format!(
        "{} series over {} commit(s) of label '{}'{}: {} regression(s), {} other change(s)\n",
        d.series,
        d.commits,
        d.label,
        d.since
            .as_deref()
            .map(|c| format!(" (changes from {c} on)"))
            .unwrap_or_default(),
        d.regressions(),
        d.events.len() - d.regressions()
    );
    if !d.events.is_empty() {
        s.push_str(&(terminal_lines(EVENT_COLUMNS, &rows(d, raised)).join("\n") + "\n"));
    }
    s.push_str(&render_raised(raised));
    s
}

/// The terminal line of what storing a detection did.
fn render_raised(r: &Raised) -> String {
    let list = |ids: &[String]| {
        if ids.is_empty() {
            String::new()
        } else {
            format!(" ({})", ids.join(", "))
        }
    };
    let mut s = format!(
        "{} new alert(s){}; {} pending{}; {} resolved{}",
        r.new_alerts.len(),
        list(&r.new_alerts),
        r.pending.len(),
        list(&r.pending),
        r.resolved.len(),
        list(&r.resolved)
    );
    for (what, ids) in [
        ("withdrawn", &r.withdrawn),
        ("silenced", &r.silenced),
        ("updated", &r.updated),
    ] {
        if !ids.is_empty() {
            s.push_str(&format!("; {} {what}{}", ids.len(), list(ids)));
        }
    }
    s.push('\n');
    s
}

/// What the stale check found, a line each (nothing when nothing is missing).
pub fn stale_lines(s: &StaleOutcome) -> String {
    let mut out = String::new();
    for m in &s.missing {
        let what = if m.table.is_empty() {
            format!("machine class {}: no runs", m.machine)
        } else {
            format!(
                "{} {} {} on {}: not measured",
                m.table, m.variant, m.key_text, m.machine
            )
        };
        out.push_str(&format!(
            "stale: {what} since {} ({} commit(s) without it, from {})\n",
            m.last_good_commit, m.missing_commits, m.first_bad_commit
        ));
    }
    if !s.raised.is_empty() || !s.resolved.is_empty() {
        out.push_str(&format!(
            "stale data: {} alert(s) raised, {} resolved (data back)\n",
            s.raised.len(),
            s.resolved.len()
        ));
    }
    out
}

/// `perfdb detect --format json`: what was found, the alerts it raised or moved, the
/// stale-data check, and the delivery (none when no target was given).
#[derive(serde::Serialize)]
pub struct DetectJson<'a> {
    pub detection: &'a Detection,
    pub raised: &'a Raised,
    pub stale: &'a StaleOutcome,
    pub delivered: Option<&'a crate::alerts::notify::Delivered>,
}

/// A detection as JSON ([`DetectJson`]).
pub fn json(j: &DetectJson) -> String {
    crate::json::pretty(j)
}
