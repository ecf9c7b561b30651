//! `perfdb compare` and `perfdb demo`.

use crate::cli::{CompareArgs, CompareFormat};
use crate::Exit;
use anyhow::Context;
use perfdb_ingest::model::RunMeta;
use perfdb_ingest::warehouse::Warehouse;
use perfdb_reports::compare::{compare, JudgeArgs, Options, Report};
use perfdb_reports::config::Config;
use perfdb_reports::db::Db;
use perfdb_reports::render::{Exporter, Json, Markdown, Terminal};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The comparison's options: the flags, then `perfdb.toml`, then the defaults — the
/// same resolution the web app uses (`Config::resolve`).
pub fn options(a: &JudgeArgs, baseline_window: Option<usize>) -> anyhow::Result<Options> {
    let cfg = Config::load_or_default(a.config.as_deref())?;
    // The error names the option as its flag (`--control-tol`), not as the config does.
    cfg.resolve(a, baseline_window)
        .map_err(|e| anyhow::anyhow!(e.worded(&format!("--{}", e.option().replace('_', "-")))))
}

pub fn render(report: &Report, format: CompareFormat) -> String {
    match format {
        CompareFormat::Table => Terminal {
            color: super::use_color(),
        }
        .render(report),
        CompareFormat::Markdown => Markdown.render(report),
        CompareFormat::Json => Json.render(report),
        CompareFormat::Vkpr => perfdb_reports::vkpr::render(report),
    }
}

pub fn exit_of(report: &Report) -> Exit {
    match report.verdict.exit_code() {
        0 => Exit::Ok,
        1 => Exit::Regression,
        _ => Exit::Inconclusive,
    }
}

pub fn run(root: &Path, a: CompareArgs) -> anyhow::Result<Exit> {
    let mut t = std::time::Instant::now();
    let opt = options(&a.judge, a.baseline_window)?;
    let db = Db::open(root)
        .with_context(|| format!("cannot open the warehouse at {}", root.display()))?;
    perfdb_ingest::trace("open the warehouse", &mut t);
    let report = compare(&db, &a.base, &a.head, &opt)?;
    t = std::time::Instant::now();
    std::io::stdout()
        .lock()
        .write_all(render(&report, a.format).as_bytes())?;
    perfdb_ingest::trace("render", &mut t);
    if a.save {
        let path = perfdb_reports::saved::save(root, &report)?;
        eprintln!("saved the comparison to {}", path.display());
    }
    Ok(exit_of(&report))
}

/// The bundled sample data: real H200 logs (see sample-data/README.md).
fn sample_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-data/h200-gemm/ab/aiter")
}

pub fn demo(root: &Path) -> anyhow::Result<Exit> {
    let wh = Warehouse::new(root);
    let dir = sample_dir();
    for label in ["base", "head"] {
        let files = perfdb_ingest::expand_inputs(&[dir.join(label)])?;
        let meta = RunMeta {
            label: label.to_string(),
            ..Default::default()
        };
        let reports = perfdb_ingest::ingest_files(&wh, &files, None, &meta, &|_| {})?;
        let added = reports
            .iter()
            .filter(|r| matches!(&r.result, Ok(i) if i.trial.is_some()))
            .count();
        if let Some(bad) = reports.iter().find_map(|r| r.result.as_ref().err()) {
            anyhow::bail!("sample data failed to ingest: {bad}");
        }
        eprintln!(
            "demo: {label}: {} file(s) from {}, {added} new run(s) in {}",
            files.len(),
            dir.join(label).display(),
            root.display()
        );
    }
    eprintln!("demo: perfdb compare base head --control torch\n");
    let opt = Options {
        control: vec!["torch".into()],
        ..Options::default()
    };
    let db = Db::open(root)?;
    let report = compare(&db, "base", "head", &opt)?;
    std::io::stdout().lock().write_all(
        Terminal {
            color: super::use_color(),
        }
        .render(&report)
        .as_bytes(),
    )?;
    Ok(exit_of(&report))
}
