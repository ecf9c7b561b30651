//! `perfdb alerts`: list, show and triage the alerts `perfdb detect` stored.

use crate::cli::{AlertsAction, AlertsArgs};
use crate::Exit;
use anyhow::Context;
use perfdb_reports::alerts::{self, Action};
use perfdb_reports::db::Db;
use perfdb_reports::render::alerts::show;
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
            let d = alerts::detail(&db, root, alerts::find(&db, &id)?, git_dir.as_deref())?;
            if let Some(e) = &d.unreadable_bisect {
                anyhow::bail!("alerts show: {e}");
            }
            // An alert stored before commit names were checked: shown, without commands.
            if let Some(e) = &d.unconfirmable {
                say!("alerts show: {e}");
            }
            super::print_out(&perfdb_reports::render::alerts::detail(&d, a.format))?;
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
    super::print_out(&show(&alerts, a.format, one))?;
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
