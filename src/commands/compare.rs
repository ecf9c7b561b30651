//! `perfdb compare` and `perfdb demo`.

use crate::cli::{CompareArgs, CompareFormat, JudgeOptions, ReduceArg, TestArg};
use crate::Exit;
use anyhow::Context;
use perfdb_ingest::model::RunMeta;
use perfdb_ingest::warehouse::Warehouse;
use perfdb_reports::compare::{compare, Options, Reduce, Report, Test};
use perfdb_reports::config::{Config, Requested};
use perfdb_reports::db::Db;
use perfdb_reports::render::{Exporter, Json, Markdown, Terminal};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The comparison's options: the flags, then `perfdb.toml`, then the defaults — the
/// same resolution the web app uses (`Config::resolve`).
pub fn options(a: &JudgeOptions, baseline_window: Option<usize>) -> anyhow::Result<Options> {
    let cfg = Config::load_or_default(a.config.as_deref())?;
    let requested = Requested {
        threshold: a.threshold,
        alpha: a.alpha,
        control_tol: a.control_tol,
        reduce: Some(match a.reduce {
            ReduceArg::Best => Reduce::Best,
            ReduceArg::Median => Reduce::Median,
        }),
        test: Some(match a.test {
            TestArg::Welch => Test::Welch,
            TestArg::MannWhitney => Test::MannWhitney,
        }),
        control: a.control.clone(),
        filters: super::parse_pairs(&a.filters, "--where")?,
        overrides: None,
        allow_missing: a.allow_missing,
        allow_mixed_hardware: a.allow_mixed_hardware,
        strict_numerics: a.strict_numerics,
        allow_unchecked: a.allow_unchecked,
        mann_whitney_p: a.mann_whitney_p,
        baseline_window,
    };
    // Errors name the option as the config does (`control_tol`); here it is a flag.
    cfg.resolve(&requested)
        .map_err(|e| anyhow::anyhow!("--{}", e.replacen("control_tol", "control-tol", 1)))
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
        let path = perfdb_reports::alerts::save(root, &report)?;
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
    let targets = perfdb_reports::notify::parse_targets(&urls)?;
    let db = Db::open(root)
        .with_context(|| format!("cannot open the warehouse at {}", root.display()))?;
    let d = perfdb_reports::detect::detect(&db, &a.label, a.since.as_deref(), &cfg.detect)?;
    let raised = perfdb_reports::detect::raise(&db, &Warehouse::new(root), &d)?;
    let delivered = if targets.is_empty() {
        None
    } else {
        let timeout = std::time::Duration::from_secs_f64(a.notify_timeout);
        Some(perfdb_reports::notify::deliver(
            root, &a.label, &targets, timeout,
        )?)
    };
    if let Some(dl) = &delivered {
        for (id, target, why) in &dl.failed {
            eprintln!("error: alert {id} not delivered to {target}: {why} (tried again next run)");
        }
        for (id, target) in &dl.claimed_elsewhere {
            eprintln!(
                "note: alert {id} to {target}: another detect is delivering it (its claim lapses after {} s; a later run takes it over)",
                perfdb_reports::notify::lease(std::time::Duration::from_secs_f64(a.notify_timeout)).as_secs()
            );
        }
    }
    let text = match a.format {
        crate::cli::DetectFormat::Table => {
            let mut t = perfdb_reports::detect::render_text(&d);
            t.push_str(&perfdb_reports::detect::render::render_raised(&raised));
            t
        }
        crate::cli::DetectFormat::Markdown => perfdb_reports::detect::render_markdown(&d, &raised),
        crate::cli::DetectFormat::Json => {
            let v = serde_json::json!({ "detection": d, "raised": raised, "delivered": delivered });
            serde_json::to_string_pretty(&v).expect("detection serialises") + "\n"
        }
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    if delivered.as_ref().is_some_and(|dl| !dl.failed.is_empty()) {
        return Ok(Exit::Error);
    }
    // A newly active alert is what a nightly job acts on; one already active was acted
    // on before, and a pending one is not confirmed yet.
    Ok(if raised.new_alerts.is_empty() {
        Exit::Ok
    } else {
        Exit::Regression
    })
}
