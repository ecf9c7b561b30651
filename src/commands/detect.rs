//! `perfdb detect`: change points over a label's history, stored as alerts and
//! delivered.

use crate::Exit;
use anyhow::Context;
use perfdb_ingest::warehouse::Warehouse;
use perfdb_reports::config::Config;
use perfdb_reports::db::Db;
use perfdb_reports::render::detect::{render_markdown, render_text, stale_lines};
use std::path::Path;

/// `perfdb detect`: change points over a label's history, held against the stored
/// alerts; exit 1 when an alert became active (pages) for the first time.
pub fn detect(root: &Path, a: crate::cli::DetectArgs) -> anyhow::Result<Exit> {
    let cfg = Config::load_or_default(a.config.as_deref())?;
    let urls: Vec<String> = a
        .notify
        .iter()
        .chain(&cfg.compare.notify)
        .cloned()
        .collect();
    // Every target is checked before anything is stored: a typo must not cost the page.
    let targets = perfdb_reports::alerts::notify::parse_targets(&urls)?;
    let devices = cfg.device_table();
    let db = Db::open(root, &devices)
        .with_context(|| format!("cannot open the warehouse at {}", root.display()))?;
    let d = perfdb_reports::detect::detect(&db, &a.label, a.since.as_deref(), &cfg.detect)?;
    let raised = perfdb_reports::detect::raise(&db, &Warehouse::new(root), &d)?;
    let (d, raised) = perfdb_reports::detect::reported(d, raised);
    // Data that stopped arriving: alerts of their own, delivered with the regressions.
    let stale = if cfg.detect.stale.missing() > 0 {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|t| t.as_micros() as i64)
            .unwrap_or(0);
        perfdb_reports::detect::stale::check(
            &db,
            &Warehouse::new(root),
            &a.label,
            &cfg.detect.stale,
            // A quarter of the context: five days of ten commits a day by default.
            cfg.detect.context().div_ceil(4),
            now,
        )?
    } else {
        Default::default()
    };
    let delivered = if targets.is_empty() {
        None
    } else {
        let timeout = std::time::Duration::from_secs_f64(a.notify_timeout);
        Some(perfdb_reports::alerts::notify::deliver(
            root, &devices, &a.label, &targets, timeout,
        )?)
    };
    if let Some(dl) = &delivered {
        for (id, target, why) in &dl.failed {
            say!("error: alert {id} not delivered to {target}: {why} (tried again next run)");
        }
        for (id, target) in &dl.claimed_elsewhere {
            say!(
                "note: alert {id} to {target}: another detect is delivering it (its claim lapses after {} s; a later run takes it over)",
                perfdb_reports::alerts::notify::lease(std::time::Duration::from_secs_f64(a.notify_timeout)).as_secs()
            );
        }
    }
    let text = match a.format {
        crate::cli::OutputFormat::Table => render_text(&d, &raised) + &stale_lines(&stale),
        crate::cli::OutputFormat::Markdown => render_markdown(&d, &raised) + &stale_lines(&stale),
        crate::cli::OutputFormat::Json => {
            perfdb_reports::render::detect::json(&perfdb_reports::render::detect::DetectJson {
                detection: &d,
                raised: &raised,
                stale: &stale,
                delivered: delivered.as_ref(),
            })
        }
    };
    super::print_out(&text)?;
    if delivered.as_ref().is_some_and(|dl| !dl.failed.is_empty()) {
        return Ok(Exit::Error);
    }
    // A newly active alert is what a nightly job acts on; one already active was acted
    // on before, and a pending one is not confirmed yet.
    Ok(if raised.new_alerts.is_empty() && stale.raised.is_empty() {
        Exit::Ok
    } else {
        Exit::Regression
    })
}
