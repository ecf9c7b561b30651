//! `perfdb alerts`: list, show and triage the alerts `perfdb detect` stored.

use crate::cli::{AlertsAction, AlertsArgs};
use crate::Exit;
use anyhow::Context;
use perfdb_reports::alerts::{self, Action};
use perfdb_reports::db::Db;
use perfdb_reports::render::alerts::show;
use std::io::Write;
use std::path::Path;

pub fn run(root: &Path, a: AlertsArgs) -> anyhow::Result<Exit> {
    let who = a
        .who
        .or_else(|| std::env::var("USER").ok())
        .unwrap_or_else(|| "unknown".into());
    let open = || {
        Db::open(root).with_context(|| format!("cannot open the warehouse at {}", root.display()))
    };
    let (alerts, one) = match a.action.unwrap_or(AlertsAction::List { status: None }) {
        AlertsAction::List { status } => (alerts::list(&open()?, status)?, false),
        AlertsAction::Show { id, git_dir } => {
            let db = open()?;
            let alert = alerts::find(&db, &id)?;
            let c = perfdb_reports::alerts::confirm::confirmation(&db, &alert, git_dir.as_deref())?;
            let text = show(std::slice::from_ref(&alert), a.format, true, Some(&c));
            std::io::stdout().lock().write_all(text.as_bytes())?;
            return Ok(Exit::Ok);
        }
        AlertsAction::Ack { id, note } => (
            vec![alerts::act(root, &id, Action::Acknowledge, &who, &note)?],
            true,
        ),
        AlertsAction::Dismiss { id, note } => (
            vec![alerts::act(root, &id, Action::Dismiss, &who, &note)?],
            true,
        ),
        AlertsAction::Reopen { id, note } => (
            vec![alerts::act(root, &id, Action::Reopen, &who, &note)?],
            true,
        ),
    };
    std::io::stdout()
        .lock()
        .write_all(show(&alerts, a.format, one, None).as_bytes())?;
    Ok(Exit::Ok)
}
