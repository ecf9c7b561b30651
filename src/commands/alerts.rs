//! `perfdb alerts`: list, show and triage the alerts `perfdb detect` stored.

use crate::cli::{AlertsAction, AlertsArgs};
use crate::Exit;
use anyhow::Context;
use perfdb_reports::alerts::{self, Action};
use perfdb_reports::db::Db;
use perfdb_reports::render::alerts::{show, Shown};
use std::path::Path;
use std::sync::Arc;

pub fn run(root: &Path, a: AlertsArgs) -> anyhow::Result<Exit> {
    let who = a
        .who
        .or_else(|| std::env::var("USER").ok())
        .unwrap_or_else(|| "unknown".into());
    let devices = super::device_table(None)?;
    let open = || {
        Db::open(root, &devices)
            .with_context(|| format!("cannot open the warehouse at {}", root.display()))
    };
    let list = AlertsAction::List {
        status: None,
        grouped: false,
    };
    let (alerts, one) = match a.action.unwrap_or(list) {
        AlertsAction::List {
            status,
            grouped: true,
        } => {
            let db = open()?;
            let groups = alerts::group(&db, alerts::list(&db, status)?)?;
            let text = perfdb_reports::render::alerts::groups(&groups, a.format);
            super::print_out(&text)?;
            return Ok(Exit::Ok);
        }
        AlertsAction::List { status, .. } => (alerts::list(&open()?, status)?, false),
        AlertsAction::Show { id, git_dir } => {
            let db = open()?;
            let alert = alerts::find(&db, &id)?;
            // An alert stored before commit names were checked: shown, without commands.
            use perfdb_reports::alerts::confirm::{confirmation, ConfirmError};
            let c = match confirmation(&db, &alert, git_dir.as_deref()) {
                Ok(c) => Some(c),
                Err(e @ ConfirmError::Commit { .. }) => {
                    say!("alerts show: {e}");
                    None
                }
                Err(e) => return Err(e.into()),
            };
            // What `perfdb bisect` found, when it ran here.
            let bisect = perfdb_reports::bisect::store::load(root, &alert.id)
                .map_err(|e| anyhow::anyhow!("alerts show: {e}"))?;
            let underneath = perfdb_reports::alerts::beside::underneath(&db, &alert)?;
            let counters = perfdb_reports::alerts::beside::counters(&db, &alert)?;
            let beside = perfdb_reports::alerts::beside::beside(&db, &alert)?;
            let shown = Shown {
                confirm: c.as_ref(),
                bisect: bisect.as_ref(),
                underneath: Some(&underneath),
                counters: &counters,
                beside: &beside,
            };
            let text = show(std::slice::from_ref(&alert), a.format, true, shown);
            super::print_out(&text)?;
            return Ok(Exit::Ok);
        }
        AlertsAction::Ack { id, note, group } => {
            triage(root, devices, &id, Action::Acknowledge, &who, &note, group)?
        }
        AlertsAction::Dismiss { id, note, group } => {
            triage(root, devices, &id, Action::Dismiss, &who, &note, group)?
        }
        AlertsAction::Reopen { id, note, group } => {
            triage(root, devices, &id, Action::Reopen, &who, &note, group)?
        }
    };
    super::print_out(&show(&alerts, a.format, one, Shown::default()))?;
    Ok(Exit::Ok)
}

/// One alert's status change, or (`group`) each of its group's alerts the action applies
/// to, in one commit.
fn triage(
    root: &Path,
    devices: Arc<perfdb_ingest::devices::Table>,
    id: &str,
    action: Action,
    who: &str,
    note: &str,
    group: bool,
) -> anyhow::Result<(Vec<alerts::AlertView>, bool)> {
    if group {
        let changed = alerts::act_on_group(root, &devices, id, action, who, note)?;
        let one = changed.len() == 1;
        Ok((changed, one))
    } else {
        Ok((
            vec![alerts::act(root, &devices, id, action, who, note)?],
            true,
        ))
    }
}
