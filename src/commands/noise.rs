//! `perfdb noise LABEL`: each series' noise and the trials a side a change needs.

use crate::cli::{NoiseArgs, OutputFormat};
use crate::Exit;
use anyhow::Context;
use perfdb_reports::config::Config;
use perfdb_reports::db::Db;
use perfdb_reports::noise::{noise, render_markdown, render_text};
use std::path::Path;

pub fn run(root: &Path, a: NoiseArgs) -> anyhow::Result<Exit> {
    let cfg = Config::load_or_default(a.config.as_deref())?;
    let d = perfdb_reports::compare::Options::default();
    let alpha = a.alpha.or(cfg.compare.alpha).unwrap_or(d.alpha);
    let threshold = a.threshold.or(cfg.compare.threshold).unwrap_or(d.threshold);
    if !(alpha > 0.0 && alpha < 1.0) {
        anyhow::bail!("--alpha {alpha}: give a level between 0 and 1, e.g. 0.05");
    }
    if !(threshold > 0.0 && threshold.is_finite()) {
        anyhow::bail!("--threshold {threshold}: give a relative change above 0, e.g. 0.05");
    }
    let filters = super::parse_pairs(&a.filters, "--where")?;
    let db = Db::open(root, &cfg.device_table())
        .with_context(|| format!("cannot open the warehouse at {}", root.display()))?;
    let r = noise(&db, &a.label, &filters, alpha, threshold)?;
    let text = match a.format {
        OutputFormat::Table => render_text(&r),
        OutputFormat::Markdown => render_markdown(&r),
        OutputFormat::Json => perfdb_reports::json::pretty(&r),
    };
    super::print_out(&text)?;
    Ok(Exit::Ok)
}
