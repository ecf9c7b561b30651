//! `perfdb alerts`: list, show and triage the alerts `perfdb detect` stored.

use crate::cli::{AlertsAction, AlertsArgs, AlertsFormat};
use crate::Exit;
use anyhow::Context;
use perfdb_reports::db::Db;
use perfdb_reports::triage::{self, Action, AlertView};
use std::io::Write;
use std::path::Path;

fn render(
    alerts: &[AlertView],
    format: AlertsFormat,
    one: bool,
    confirm: Option<&perfdb_reports::confirm::Confirmation>,
) -> String {
    match format {
        AlertsFormat::Table if one => {
            let a = &alerts[0];
            let mut s = perfdb_reports::render::alerts::table(alerts);
            for m in a.metric_detail.as_array().into_iter().flatten() {
                if m["kind"] == "stale" {
                    s.push_str(&format!(
                        "  {}: not measured for {} commit(s) after {}\n",
                        m["metric"].as_str().unwrap_or(""),
                        m["missing_commits"],
                        a.last_good_commit
                    ));
                    continue;
                }
                s.push_str(&format!(
                    "  {} ({}): {} -> {}, ratio {:.3}, p {:.1e}\n",
                    m["metric"].as_str().unwrap_or(""),
                    m["unit"].as_str().unwrap_or(""),
                    m["before_median"],
                    m["after_median"],
                    m["ratio"].as_f64().unwrap_or(f64::NAN),
                    m["p"].as_f64().unwrap_or(f64::NAN)
                ));
            }
            for h in &a.history {
                s.push_str(&format!("  status {} by {}: {}\n", h.status, h.who, h.note));
            }
            if let Some(c) = confirm {
                s.push_str(&perfdb_reports::confirm::render_text(c));
            }
            s
        }
        AlertsFormat::Table => perfdb_reports::render::alerts::table(alerts),
        AlertsFormat::Markdown => perfdb_reports::render::alerts::markdown(alerts),
        AlertsFormat::Json if one => {
            let mut v = serde_json::to_value(&alerts[0]).expect("alert serialises");
            if let Some(c) = confirm {
                v["confirm"] = serde_json::to_value(c).expect("confirmation serialises");
            }
            serde_json::to_string_pretty(&v).expect("alert serialises") + "\n"
        }
        AlertsFormat::Json => {
            serde_json::to_string_pretty(alerts).expect("alerts serialise") + "\n"
        }
    }
}

pub fn run(root: &Path, a: AlertsArgs) -> anyhow::Result<Exit> {
    let who = a
        .who
        .or_else(|| std::env::var("USER").ok())
        .unwrap_or_else(|| "unknown".into());
    let open = || {
        Db::open(root).with_context(|| format!("cannot open the warehouse at {}", root.display()))
    };
    let (alerts, one) = match a.action.unwrap_or(AlertsAction::List { status: None }) {
        AlertsAction::List { status } => (triage::list(&open()?, status)?, false),
        AlertsAction::Show { id, git_dir } => {
            let db = open()?;
            let alert = triage::find(&db, &id)?;
            let c = perfdb_reports::confirm::confirmation(&db, &alert, git_dir.as_deref())?;
            let text = render(std::slice::from_ref(&alert), a.format, true, Some(&c));
            std::io::stdout().lock().write_all(text.as_bytes())?;
            return Ok(Exit::Ok);
        }
        AlertsAction::Ack { id, note } => (
            vec![triage::act(root, &id, Action::Acknowledge, &who, &note)?],
            true,
        ),
        AlertsAction::Dismiss { id, note } => (
            vec![triage::act(root, &id, Action::Dismiss, &who, &note)?],
            true,
        ),
        AlertsAction::Reopen { id, note } => (
            vec![triage::act(root, &id, Action::Reopen, &who, &note)?],
            true,
        ),
    };
    std::io::stdout()
        .lock()
        .write_all(render(&alerts, a.format, one, None).as_bytes())?;
    Ok(Exit::Ok)
}
