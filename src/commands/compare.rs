//! `perfdb compare` and `perfdb demo`.

use super::judge_options as options;
use crate::cli::CompareArgs;
use crate::Exit;
use anyhow::Context;
use perfdb_ingest::model::RunMeta;
use perfdb_ingest::warehouse::Warehouse;
use perfdb_reports::compare::{compare, Options};
use perfdb_reports::db::Db;
use perfdb_reports::render::{Exporter, Terminal};
use std::io::Write;
use std::path::{Path, PathBuf};

pub fn run(root: &Path, a: CompareArgs) -> anyhow::Result<Exit> {
    let mut t = std::time::Instant::now();
    let opt = options(&a.judge, a.baseline_window)?;
    let db = Db::open(root)
        .with_context(|| format!("cannot open the warehouse at {}", root.display()))?;
    perfdb_ingest::trace("open the warehouse", &mut t);
    let side = |spec: &str| {
        super::merge_base::resolve(&db, spec, a.git_dir.as_deref(), a.nearest_measured)
    };
    let (base, head) = (side(&a.base)?, side(&a.head)?);
    let report = compare(&db, &base, &head, &opt)?;
    t = std::time::Instant::now();
    std::io::stdout().lock().write_all(
        perfdb_reports::render::report(&report, a.format, super::use_color()).as_bytes(),
    )?;
    perfdb_ingest::trace("render", &mut t);
    if a.save {
        let path = perfdb_reports::saved::save(root, &report)?;
        eprintln!("saved the comparison to {}", path.display());
    }
    Ok(Exit::of(&report))
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
    Ok(Exit::of(&report))
}
