//! The stored alerts held to what the history says now (docs/alerts.md, "Lifecycle").
//!
//! Every run derives each step's status from the data alone — pending, active,
//! resolved, silenced — and moves the stored alerts there; a stored alert whose step is
//! gone is withdrawn. An alert is one step of one series: a detection of the same
//! series, the same direction and a range that overlaps the stored last good .. first
//! bad commits, or lies within [`super::NEAR`] commits of them, is that alert (its
//! range and size are revised), never a new one. So the alerts after any order of
//! arrival are those of one run over the same data; what people set (acknowledged,
//! dismissed) stays, and a reopened alert is resolved only by a return to level whose
//! data arrived after the reopen.
//!
//! A run that stops between the two alert commits leaves records without a status:
//! they read as pending (never delivered) and the next run gives them theirs.

use super::{DetectError, Detection, Event, NEAR};
use crate::alerts::{self, AlertView};
use crate::db::{Db, DbError};
use perfdb_ingest::model::{AlertRecord, AlertStatus, StatusChange};
use perfdb_ingest::warehouse::Warehouse;
use serde::Serialize;
use std::collections::HashMap;

/// Who `detect`'s status changes are recorded as.
pub const WHO: &str = "perfdb detect";

/// What storing a detection's events did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Raised {
    /// Alerts that became active for the first time in this run: what pages.
    pub new_alerts: Vec<String>,
    /// Steps at the tip whose new level is not yet confirmed.
    pub pending: Vec<String>,
    /// Alerts this run found back within the threshold of their level.
    pub resolved: Vec<String>,
    /// Alerts whose change point no longer holds.
    pub withdrawn: Vec<String>,
    /// Alerts a newer standing step on the same series supersedes.
    pub silenced: Vec<String>,
    /// Alerts whose range or size this run revised (a late commit, a partial fix).
    pub updated: Vec<String>,
    /// Event index -> (alert id, its status after this run).
    #[serde(skip)]
    events: HashMap<usize, (String, AlertStatus)>,
}

impl Raised {
    /// The alert an event of the detection is, if it is one.
    pub fn alert_of(&self, event: usize) -> Option<&str> {
        self.events.get(&event).map(|(id, _)| id.as_str())
    }

    pub fn status_of(&self, event: usize) -> Option<AlertStatus> {
        self.events.get(&event).map(|(_, s)| *s)
    }

    /// `; 2 alert(s) resolved` and the like, for a summary sentence.
    pub fn summary_tail(&self) -> String {
        let mut s = String::new();
        for (what, ids) in [
            ("pending", &self.pending),
            ("resolved", &self.resolved),
            ("withdrawn", &self.withdrawn),
        ] {
            if !ids.is_empty() {
                s.push_str(&format!("; {} alert(s) {what}", ids.len()));
            }
        }
        s
    }
}

/// The first alert id of a step: label, series and the first bad commit it was first
/// stored with.
pub fn alert_id(label: &str, e: &Event, salt: usize) -> String {
    let mut parts = [
        label,
        &e.table,
        &e.variant,
        &e.key_json,
        &e.machine,
        &e.first_bad_commit,
    ]
    .join("\u{1f}");
    if salt > 0 {
        parts.push_str(&format!("\u{1f}{salt}"));
    }
    perfdb_ingest::hash::sha256_hex(parts.as_bytes())[..16].to_string()
}

/// A revision's fingerprint: the alert and what it now says.
fn revision(id: &str, e: &Event) -> String {
    format!(
        "{id}\u{1f}{}\u{1f}{}\u{1f}{:.3}",
        e.last_good_commit,
        e.first_bad_commit,
        e.primary().now_ratio
    )
}

/// The status the data gives an event, before what people set.
fn derived(d: &Detection, steps: &[&Event], e: &Event, reopened_at: Option<i64>) -> AlertStatus {
    if !e.confirmed {
        return AlertStatus::Pending;
    }
    if e.returned
        .as_ref()
        .is_some_and(|r| reopened_at.is_none_or(|t| r.ingested_at_us > t))
    {
        return AlertStatus::Resolved;
    }
    let at = d.commit_position(&e.first_bad_commit);
    let superseded = steps.iter().any(|o| {
        o.same_series(e)
            && o.confirmed
            && o.returned.is_none()
            && d.commit_position(&o.first_bad_commit) > at
    });
    if superseded {
        AlertStatus::Silenced
    } else {
        AlertStatus::Active
    }
}

/// The commits between two ranges of history positions (0 when they overlap).
fn gap(a: (usize, usize), b: (usize, usize)) -> usize {
    if a.0 <= b.1 && b.0 <= a.1 {
        0
    } else if a.1 < b.0 {
        b.0 - a.1
    } else {
        a.0 - b.1
    }
}

fn now_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|t| t.as_micros() as i64)
        .unwrap_or(0)
}

/// Stored alerts matched to steps: same series, ranges overlapping or within [`NEAR`];
/// nearest first, an alert that is not withdrawn before one that is. Returns each
/// step's alert and each alert's step, by index.
fn match_alerts(
    d: &Detection,
    in_scope: &[&AlertView],
    steps: &[(usize, &Event)],
) -> (HashMap<usize, usize>, HashMap<usize, usize>) {
    let range_of = |lg: &str, fb: &str| -> Option<(usize, usize)> {
        let (a, b) = (d.commit_position(lg), d.commit_position(fb));
        (a != usize::MAX && b != usize::MAX).then_some((a.min(b), a.max(b)))
    };
    let mut pairs: Vec<(bool, usize, usize, usize, usize)> = Vec::new();
    for (ai, a) in in_scope.iter().enumerate() {
        let Some(ar) = range_of(&a.last_good_commit, &a.first_bad_commit) else {
            continue;
        };
        for (si, (_, e)) in steps.iter().enumerate() {
            let same = a.table == e.table
                && a.variant == e.variant
                && a.key_json == e.key_json
                && a.machine == e.machine;
            let Some(er) = range_of(&e.last_good_commit, &e.first_bad_commit) else {
                continue;
            };
            let g = gap(ar, er);
            if same && g <= NEAR {
                let shift = ar.1.abs_diff(er.1);
                pairs.push((a.status == AlertStatus::Withdrawn, g, shift, ai, si));
            }
        }
    }
    pairs.sort();
    let mut alert_of_step: HashMap<usize, usize> = HashMap::new();
    let mut step_of_alert: HashMap<usize, usize> = HashMap::new();
    for (_, _, _, ai, si) in pairs {
        if alert_of_step.contains_key(&si) || step_of_alert.contains_key(&ai) {
            continue;
        }
        alert_of_step.insert(si, ai);
        step_of_alert.insert(ai, si);
    }
    (alert_of_step, step_of_alert)
}

/// Why an alert's status changed, for its history.
fn status_note(next: AlertStatus, e: &Event) -> String {
    match next {
        AlertStatus::Pending => format!(
            "a step at {}: the new level has held {} commit(s) so far",
            e.first_bad_commit, e.held
        ),
        AlertStatus::Active => format!(
            "raised at {} (last good {}): the new level held {} commit(s)",
            e.first_bad_commit, e.last_good_commit, e.held
        ),
        AlertStatus::Resolved => format!(
            "back to its level at {}",
            e.returned.as_ref().map_or("", |r| r.commit.as_str())
        ),
        AlertStatus::Silenced => "superseded by a newer step on the series".into(),
        _ => String::new(),
    }
}

/// Why a stored alert no step holds any more is withdrawn: a blip, or a change point
/// the stored history no longer shows.
fn withdrawal_note(d: &Detection, a: &AlertView) -> String {
    let blip = d.events.iter().find(|e| {
        e.kind == super::EventKind::Regression
            && !e.confirmed
            && !e.at_tip
            && a.table == e.table
            && a.variant == e.variant
            && a.key_json == e.key_json
            && a.machine == e.machine
            && e.first_bad_commit == a.first_bad_commit
    });
    match blip {
        Some(e) => format!(
            "a blip: the level held {} commit(s), then the series moved again",
            e.held
        ),
        None => format!(
            "the change point no longer holds over the {} commit(s) now stored",
            d.commits
        ),
    }
}

/// A new alert's id for step `e`: salted until no stored alert and no alert of this run
/// has it.
fn fresh_id(
    label: &str,
    e: &Event,
    taken: &std::collections::HashSet<&str>,
    fresh: &[String],
) -> String {
    let mut salt = 0;
    loop {
        let id = alert_id(label, e, salt);
        if !taken.contains(id.as_str()) && !fresh.contains(&id) {
            return id;
        }
        salt += 1;
    }
}

/// The status an alert moves to: what the data says (`want`), unless a person's word
/// stands: a dismissal always, an acknowledgement and a reopen until the data resolves it.
fn next_status(current: Option<AlertStatus>, want: AlertStatus, reopened: bool) -> AlertStatus {
    match current {
        Some(AlertStatus::Dismissed) => AlertStatus::Dismissed,
        Some(AlertStatus::Acknowledged) if want != AlertStatus::Resolved => {
            AlertStatus::Acknowledged
        }
        Some(AlertStatus::Active) if reopened && want != AlertStatus::Resolved => {
            AlertStatus::Active
        }
        _ => want,
    }
}

/// Hold the label's stored alerts to detection `d` (the module docs), in one commit of
/// records and then one of status changes.
pub fn raise(db: &Db, wh: &Warehouse, d: &Detection) -> Result<Raised, DetectError> {
    // Stale-data alerts have a lifecycle of their own ([`super::stale`]).
    let stored: Vec<AlertView> = alerts::list(db, None)?
        .into_iter()
        .filter(|a| a.label == d.label && a.kind == alerts::AlertKind::Regression)
        .collect();
    let pos = |c: &str| d.commit_position(c);
    // Only alerts in the scope of this run: with --since, those of its window's steps
    // (`super::window`).
    let in_scope: Vec<&AlertView> = stored
        .iter()
        // (An alert whose commits are gone has position usize::MAX: in scope.)
        .filter(|a| pos(&a.first_bad_commit) >= d.scope_from)
        .collect();
    // The steps that may be alerts: regressions, confirmed or still at the tip.
    let steps: Vec<(usize, &Event)> = d
        .events
        .iter()
        .enumerate()
        .filter(|(_, e)| e.kind == super::EventKind::Regression && (e.confirmed || e.at_tip))
        .collect();
    let step_events: Vec<&Event> = steps.iter().map(|(_, e)| *e).collect();

    let (alert_of_step, step_of_alert) = match_alerts(d, &in_scope, &steps);

    let now = now_us();
    let mut raised = Raised::default();
    let mut records: Vec<AlertRecord> = Vec::new();
    let mut changes: Vec<StatusChange> = Vec::new();
    let change = |id: &str, status: AlertStatus, note: String| StatusChange {
        alert_id: id.to_string(),
        status,
        at_us: now,
        who: WHO.to_string(),
        note,
    };
    let taken: std::collections::HashSet<&str> = stored.iter().map(|a| a.id.as_str()).collect();
    let mut fresh_ids: Vec<String> = Vec::new();
    for (si, (ei, e)) in steps.iter().enumerate() {
        let alert = alert_of_step.get(&si).map(|ai| in_scope[*ai]);
        let id = match alert {
            Some(a) => a.id.clone(),
            None => fresh_id(&d.label, e, &taken, &fresh_ids),
        };
        let fp = revision(&id, e);
        if alert.is_none_or(|a| a.fingerprint != fp) {
            records.push(record(d, e, &id, fp, now));
            if alert.is_some() {
                raised.updated.push(id.clone());
            } else {
                fresh_ids.push(id.clone());
            }
        }
        let current = alert.and_then(|a| a.history.last().map(|_| a.status));
        // A person's reopen: only data newer than it resolves the alert again.
        let reopened_at = alert.and_then(|a| {
            a.history
                .last()
                .filter(|h| h.status == AlertStatus::Active && h.who != WHO)
                .map(|h| h.at_us)
        });
        let want = derived(d, &step_events, e, reopened_at);
        let next = next_status(current, want, reopened_at.is_some());
        raised.events.insert(*ei, (id.clone(), next));
        if current != Some(next) {
            changes.push(change(&id, next, status_note(next, e)));
            match next {
                AlertStatus::Pending => raised.pending.push(id.clone()),
                AlertStatus::Resolved => raised.resolved.push(id.clone()),
                AlertStatus::Silenced => raised.silenced.push(id.clone()),
                AlertStatus::Active => {
                    let was_active = alert
                        .is_some_and(|a| a.history.iter().any(|h| h.status == AlertStatus::Active));
                    if !was_active {
                        raised.new_alerts.push(id.clone());
                    }
                }
                _ => {}
            }
        } else if next == AlertStatus::Pending {
            raised.pending.push(id.clone());
        }
    }
    // Stored alerts no step holds any more.
    for (ai, a) in in_scope.iter().enumerate() {
        if step_of_alert.contains_key(&ai)
            || matches!(a.status, AlertStatus::Dismissed | AlertStatus::Withdrawn)
        {
            continue;
        }
        changes.push(change(&a.id, AlertStatus::Withdrawn, withdrawal_note(d, a)));
        raised.withdrawn.push(a.id.clone());
    }
    wh.commit_alerts(|_| (records, changes))
        .map_err(|e| DetectError::Db(DbError::Warehouse(e)))?;
    Ok(raised)
}

/// What a run reports of detection `d` after [`raise`]: with `--since`, the changes
/// from that commit on, and every step whose alert this run raised, confirmed,
/// resolved or silenced, or that is still pending (an older step confirmed now is
/// news; one standing unchanged is not, nor is its size revised by one more commit:
/// `raised.updated` lists those). Without `--since`, everything.
pub fn reported(mut d: Detection, mut raised: Raised) -> (Detection, Raised) {
    let Some(at) = d.since_at else {
        return (d, raised);
    };
    let changed: std::collections::HashSet<&String> = raised
        .new_alerts
        .iter()
        .chain(&raised.pending)
        .chain(&raised.resolved)
        .chain(&raised.silenced)
        .collect();
    let keep: Vec<bool> = d
        .events
        .iter()
        .enumerate()
        .map(|(i, e)| {
            d.commit_position(&e.first_bad_commit) >= at
                || raised
                    .events
                    .get(&i)
                    .is_some_and(|(id, _)| changed.contains(id))
        })
        .collect();
    let mut events = HashMap::new();
    let mut next = 0;
    for (i, k) in keep.iter().enumerate() {
        if *k {
            if let Some(v) = raised.events.remove(&i) {
                events.insert(next, v);
            }
            next += 1;
        }
    }
    raised.events = events;
    let mut it = keep.iter();
    d.events.retain(|_| *it.next().expect("one flag an event"));
    (d, raised)
}

fn record(d: &Detection, e: &Event, id: &str, fingerprint: String, now: i64) -> AlertRecord {
    AlertRecord {
        alert_id: id.to_string(),
        fingerprint,
        label: d.label.clone(),
        table: e.table.clone(),
        variant: e.variant.clone(),
        key: e.key_json.clone(),
        key_text: e.key.clone(),
        machine: e.machine.clone(),
        last_good_commit: e.last_good_commit.clone(),
        first_bad_commit: e.first_bad_commit.clone(),
        metrics: serde_json::to_string(&e.metrics).expect("metrics serialise"),
        ratio: e.primary().now_ratio,
        p: e.metrics.iter().map(|m| m.p).fold(f64::INFINITY, f64::min),
        runs: serde_json::to_string(&e.runs).expect("runs serialise"),
        created_at_us: now,
    }
}

#[cfg(test)]
mod tests {
    use super::gap;

    #[test]
    fn ranges_that_overlap_have_no_gap() {
        assert_eq!(gap((3, 4), (4, 9)), 0);
        assert_eq!(gap((3, 4), (1, 3)), 0);
        assert_eq!(gap((3, 4), (6, 7)), 2);
        assert_eq!(gap((6, 7), (3, 4)), 2);
    }
}
