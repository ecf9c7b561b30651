//! `perfdb alerts`: the alerts `perfdb detect` stored, with their status, and the status
//! changes people make (acknowledge, dismiss with a note, reopen). Status changes are
//! appended under the warehouse's commit protocol; the current status is the latest,
//! and an alert with none yet (its run stopped between the two commits) is pending.

use crate::db::{Db, DbError};
use perfdb_ingest::model::{key_from_json, AlertStatus, StatusChange};
use perfdb_ingest::warehouse::Warehouse;
use serde::Serialize;

#[derive(Debug, thiserror::Error)]
pub enum TriageError {
    #[error(transparent)]
    Db(#[from] DbError),
    #[error("query failed: {0}")]
    Query(#[from] duckdb::Error),
    #[error("no alert id starts with '{0}'; `perfdb alerts list` shows them")]
    NotFound(String),
    #[error("'{prefix}' names {n} alerts; give more of the id")]
    Ambiguous { prefix: String, n: usize },
    #[error("alert {id} is {from}: it cannot be {action}")]
    Transition {
        id: String,
        from: AlertStatus,
        action: &'static str,
    },
    #[error("dismissing needs a reason: --note \"...\"")]
    NoteNeeded,
    #[error(transparent)]
    Warehouse(#[from] perfdb_ingest::warehouse::WarehouseError),
}

/// An alert as people read it.
#[derive(Debug, Clone, Serialize)]
pub struct AlertView {
    pub id: String,
    pub status: AlertStatus,
    pub label: String,
    pub table: String,
    pub variant: String,
    /// Identity name -> value.
    #[serde(serialize_with = "ser_pairs")]
    pub key: Vec<(String, String)>,
    /// The canonical key, as `measurements.key` holds it.
    #[serde(skip)]
    pub key_json: String,
    /// The fingerprint of the alert's newest revision.
    #[serde(skip)]
    pub fingerprint: String,
    pub key_text: String,
    /// Names of the metrics that moved.
    pub metrics: Vec<String>,
    /// Every moved metric with its medians, ratio and p.
    pub metric_detail: serde_json::Value,
    pub machine: String,
    pub last_good_commit: String,
    pub first_bad_commit: String,
    pub ratio: f64,
    pub p: f64,
    pub runs: serde_json::Value,
    pub created_at_us: i64,
    /// Every status change, oldest first.
    pub history: Vec<StatusChange>,
}

fn ser_pairs<S: serde::Serializer>(kv: &[(String, String)], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut m = s.serialize_map(Some(kv.len()))?;
    for (k, v) in kv {
        m.serialize_entry(k, v)?;
    }
    m.end()
}

/// Every alert, newest first; with `status`, only those whose current status it is.
pub fn list(db: &Db, status: Option<AlertStatus>) -> Result<Vec<AlertView>, TriageError> {
    let sql = "SELECT alert_id, label, table_name, variant, key, key_text, metrics, machine, \
                      last_good_commit, first_bad_commit, ratio, p, runs, epoch_us(created_at), fingerprint \
               FROM alerts ORDER BY created_at DESC, alert_id";
    let mut stmt = db.conn.prepare(sql)?;
    type Row = (
        String,
        String,
        String,
        String,
        String,
        String,
        String,
        String,
        String,
        String,
        f64,
        f64,
        String,
        i64,
        String,
    );
    let rows: Vec<Row> = stmt
        .query_map([], |r| r.try_into())?
        .collect::<Result<_, _>>()?;
    let mut hist = db.conn.prepare(
        "SELECT alert_id, status, epoch_us(changed_at), who, note FROM alert_status ORDER BY changed_at, status",
    )?;
    let changes: Vec<StatusChange> = hist
        .query_map([], |r| {
            Ok(StatusChange {
                alert_id: r.get(0)?,
                status: r.get(1)?,
                at_us: r.get(2)?,
                who: r.get(3)?,
                note: r.get(4)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    let mut out = Vec::new();
    for (
        id,
        label,
        table,
        variant,
        key,
        key_text,
        metrics,
        machine,
        good,
        bad,
        ratio,
        p,
        runs,
        at,
        fingerprint,
    ) in rows
    {
        let history: Vec<StatusChange> = changes
            .iter()
            .filter(|c| c.alert_id == id)
            .cloned()
            .collect();
        let current = history
            .last()
            .and_then(|c| AlertStatus::parse(&c.status).ok())
            .unwrap_or(AlertStatus::Pending);
        if status.is_some_and(|s| s != current) {
            continue;
        }
        let detail: serde_json::Value = serde_json::from_str(&metrics).unwrap_or_default();
        let names = detail
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|m| m["metric"].as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        out.push(AlertView {
            id,
            status: current,
            label,
            table,
            variant,
            key: key_from_json(&key),
            key_json: key,
            fingerprint,
            key_text,
            metrics: names,
            metric_detail: detail,
            machine,
            last_good_commit: good,
            first_bad_commit: bad,
            ratio,
            p,
            runs: serde_json::from_str(&runs).unwrap_or_default(),
            created_at_us: at,
            history,
        });
    }
    Ok(out)
}

/// The one alert whose id starts with `prefix`.
pub fn find(db: &Db, prefix: &str) -> Result<AlertView, TriageError> {
    let all = list(db, None)?;
    let mut hits: Vec<AlertView> = all
        .into_iter()
        .filter(|a| !prefix.is_empty() && a.id.starts_with(prefix))
        .collect();
    match hits.len() {
        0 => Err(TriageError::NotFound(prefix.to_string())),
        1 => Ok(hits.remove(0)),
        n => Err(TriageError::Ambiguous {
            prefix: prefix.to_string(),
            n,
        }),
    }
}

/// A person's action on an alert.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Acknowledge,
    Dismiss,
    Reopen,
}

impl Action {
    fn target(self) -> AlertStatus {
        match self {
            Action::Acknowledge => AlertStatus::Acknowledged,
            Action::Dismiss => AlertStatus::Dismissed,
            Action::Reopen => AlertStatus::Active,
        }
    }

    /// The statuses a person may take this action from.
    pub fn allowed_from(self, status: AlertStatus) -> bool {
        use AlertStatus::*;
        match self {
            Action::Acknowledge => matches!(status, Active | Pending),
            Action::Dismiss => matches!(status, Active | Pending | Acknowledged),
            Action::Reopen => matches!(
                status,
                Acknowledged | Dismissed | Resolved | Withdrawn | Silenced
            ),
        }
    }
}

/// Apply `action` to the alert `prefix` names, as `who`, with `note`; returns the alert
/// as it now stands.
pub fn act(
    root: &std::path::Path,
    prefix: &str,
    action: Action,
    who: &str,
    note: &str,
) -> Result<AlertView, TriageError> {
    if action == Action::Dismiss && note.trim().is_empty() {
        return Err(TriageError::NoteNeeded);
    }
    let db = Db::open(root)?;
    let alert = find(&db, prefix)?;
    if !action.allowed_from(alert.status) {
        return Err(TriageError::Transition {
            id: alert.id,
            from: alert.status,
            action: action.target().as_str(),
        });
    }
    let at_us = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|t| t.as_micros() as i64)
        .unwrap_or(0);
    let change = StatusChange {
        alert_id: alert.id.clone(),
        status: action.target().as_str().to_string(),
        at_us,
        who: who.to_string(),
        note: note.to_string(),
    };
    Warehouse::new(root).commit_alerts(|_| (Vec::new(), vec![change]))?;
    find(&Db::open(root)?, &alert.id)
}

/// The alerts as a terminal table.
pub fn render_table(alerts: &[AlertView]) -> String {
    if alerts.is_empty() {
        return "no alerts\n".to_string();
    }
    let mut s = String::new();
    for a in alerts {
        s.push_str(&format!(
            "{}  {:<12}  {} {} {} on {}: {} -> {} ({:+.1}%, {})\n",
            a.id,
            a.status.as_str(),
            a.table,
            a.variant,
            a.key_text,
            a.machine,
            a.last_good_commit,
            a.first_bad_commit,
            (a.ratio - 1.0) * 100.0,
            a.metrics.join(", ")
        ));
    }
    s
}

/// The alerts as a markdown list (a comment body).
pub fn render_markdown(alerts: &[AlertView]) -> String {
    let mut s = format!("### perfdb: {} alert(s)\n\n", alerts.len());
    s.push_str("| id | status | kernel | shape | machine | first bad | change | metrics |\n");
    s.push_str("|---|---|---|---|---|---|---:|---|\n");
    for a in alerts {
        s.push_str(&format!(
            "| `{}` | {} | {} {} | {} | {} | {} (last good {}) | {:+.1}% | {} |\n",
            a.id,
            a.status,
            a.table,
            a.variant,
            a.key_text,
            a.machine,
            a.first_bad_commit,
            a.last_good_commit,
            (a.ratio - 1.0) * 100.0,
            a.metrics.join(", ")
        ));
    }
    s
}
