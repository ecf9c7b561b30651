//! The status changes people make to an alert (acknowledge, dismiss with a note,
//! reopen), appended under the warehouse's commit protocol.

use super::group::find_group;
use super::store::{find, AlertView, TriageError};
use crate::db::Db;
use perfdb_ingest::model::StatusChange;
use perfdb_ingest::warehouse::Warehouse;
use std::sync::Arc;

pub use perfdb_ingest::model::AlertAction as Action;

/// Apply `action` to the alert `prefix` names, as `who`, with `note`; returns the alert
/// as it now stands.
pub fn act(
    root: &std::path::Path,
    devices: &Arc<perfdb_ingest::devices::Table>,
    prefix: &str,
    action: Action,
    who: &str,
    note: &str,
) -> Result<AlertView, TriageError> {
    if action == Action::Dismiss && note.trim().is_empty() {
        return Err(TriageError::NoteNeeded);
    }
    let db = Db::open(root, devices)?;
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
        status: action.target(),
        at_us,
        who: who.to_string(),
        note: note.to_string(),
    };
    Warehouse::new(root).commit_alerts(|_| (Vec::new(), vec![change]))?;
    find(&Db::open(root, devices)?, &alert.id)
}

/// Apply `action` to every alert of the group that holds the alert `prefix` names, those
/// it applies to (an acknowledged alert is not acknowledged again), in one commit;
/// returns them as they now stand. None applying is the one alert's transition error.
pub fn act_on_group(
    root: &std::path::Path,
    devices: &Arc<perfdb_ingest::devices::Table>,
    prefix: &str,
    action: Action,
    who: &str,
    note: &str,
) -> Result<Vec<AlertView>, TriageError> {
    if action == Action::Dismiss && note.trim().is_empty() {
        return Err(TriageError::NoteNeeded);
    }
    let db = Db::open(root, devices)?;
    let (_, group) = find_group(&db, prefix)?;
    let at_us = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|t| t.as_micros() as i64)
        .unwrap_or(0);
    let changes: Vec<StatusChange> = group
        .alerts
        .iter()
        .filter(|a| action.allowed_from(a.status))
        .map(|a| StatusChange {
            alert_id: a.id.clone(),
            status: action.target(),
            at_us,
            who: who.to_string(),
            note: note.to_string(),
        })
        .collect();
    if changes.is_empty() {
        let a = group.worst();
        return Err(TriageError::Transition {
            id: a.id.clone(),
            from: a.status,
            action: action.target().as_str(),
        });
    }
    let ids: Vec<String> = changes.iter().map(|c| c.alert_id.clone()).collect();
    Warehouse::new(root).commit_alerts(|_| (Vec::new(), changes))?;
    let db = Db::open(root, devices)?;
    ids.iter().map(|id| find(&db, id)).collect()
}
