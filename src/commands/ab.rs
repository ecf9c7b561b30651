//! `perfdb ab`: run base and head interleaved, one process a trial, compare at the
//! planned looks and stop once every row is decided (docs/STATS.md, "Sequential A/B");
//! the trials are [`super::trials`]'s, this command prints their report.

use crate::cli::{AbArgs, CompareFormat};
use crate::trials::{experiment, Ran};
use crate::Exit;
use perfdb_reports::ab as experiment_report;
use perfdb_reports::render::report as render_report;
use std::path::Path;

fn report_text(report: &perfdb_reports::compare::Report, format: CompareFormat) -> String {
    render_report(report, format, super::use_color())
}

pub fn run(root: &Path, a: AbArgs) -> anyhow::Result<Exit> {
    let (report, seq, exit) = match experiment(
        root,
        &a,
        false,
        &super::device_table(a.judge.config.as_deref())?,
    )? {
        Ran::Compared { report, seq, exit } => (report, seq, exit),
        Ran::NotCompared(exit, _) => return Ok(exit),
        Ran::Unchanged(what) => {
            let text = match a.format {
                CompareFormat::Json => {
                    serde_json::json!({"verdict": "not_timed", "reason": what}).to_string() + "\n"
                }
                _ => format!("{what}\n"),
            };
            super::print_out(&text)?;
            return Ok(Exit::Ok);
        }
    };
    let text = match a.format {
        CompareFormat::Json => experiment_report::render::json(&seq, &report),
        CompareFormat::Markdown => {
            report_text(&report, a.format) + &experiment_report::render::markdown(&seq, &report)
        }
        f => report_text(&report, f) + &experiment_report::render::text(&seq, &report),
    };
    super::print_out(&text)?;
    Ok(exit)
}
