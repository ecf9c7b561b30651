//! `perfdb ingest` and `perfdb compact`.

use crate::cli::IngestArgs;
use crate::Exit;
use anyhow::Context;
use perfdb_ingest::formats::Format;
use perfdb_ingest::model::RunMeta;
use perfdb_ingest::warehouse::{Label, Warehouse, DEFAULT_LABEL};
use std::io::{IsTerminal, Write};
use std::path::Path;

/// Inputs at least this long get a progress bar (on a terminal).
const PROGRESS_MIN_FILES: usize = 50;

pub fn run(root: &Path, a: IngestArgs) -> anyhow::Result<Exit> {
    let format: Option<Format> = match a.format.as_str() {
        "auto" => None,
        f => Some(f.parse().map_err(anyhow::Error::msg)?),
    };
    let label = Label::new(a.label.as_deref().unwrap_or(DEFAULT_LABEL))?;
    let meta = RunMeta {
        label: label.as_str().to_string(),
        commit: a.commit,
        arch: a.arch,
        tags: super::parse_pairs(&a.tags, "--tag")?,
    };
    let files = perfdb_ingest::expand_inputs(&a.paths)?;
    if files.is_empty() {
        anyhow::bail!(
            "no files found under {}",
            a.paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let wh = Warehouse::new(root);
    let total = files.len();
    let show = total >= PROGRESS_MIN_FILES && std::io::stderr().is_terminal();
    let progress = move |done: usize| {
        if show && (done.is_multiple_of(10) || done == total) {
            let width = 30;
            let filled = done * width / total;
            eprint!(
                "\r[{}{}] {done}/{total} files",
                "=".repeat(filled),
                " ".repeat(width - filled)
            );
            if done == total {
                eprintln!();
            }
        }
    };
    let reports = perfdb_ingest::ingest_files(&wh, &files, format, &meta, &progress)
        .with_context(|| format!("cannot write the warehouse at {}", root.display()))?;
    let mut out = std::io::stdout().lock();
    let (mut added, mut present, mut failed) = (0, 0, 0);
    for r in &reports {
        match &r.result {
            Ok(i) => {
                let tables: Vec<String> =
                    i.tables.iter().map(|(t, n)| format!("{t} ({n})")).collect();
                match i.trial {
                    Some(trial) => {
                        added += 1;
                        writeln!(
                            out,
                            "ingested {}: {} run {} trial {trial}, {} value(s) in {}",
                            r.path,
                            i.format,
                            i.run_id,
                            i.rows,
                            tables.join(", ")
                        )?;
                    }
                    None => {
                        present += 1;
                        writeln!(out, "skipped {}: already in the warehouse as run {} (same file, same metadata)", r.path, i.run_id)?;
                    }
                }
            }
            Err(e) => {
                failed += 1;
                eprintln!("error: {e}");
            }
        }
    }
    writeln!(out, "{added} run(s) added with label '{label}', {present} already present, {failed} failed; warehouse {}", root.display())?;
    if failed > 0 {
        let names: Vec<&str> = reports
            .iter()
            .filter(|r| r.result.is_err())
            .map(|r| r.path.as_str())
            .collect();
        eprintln!(
            "error: {failed} file(s) not ingested (nothing of them was written): {}",
            names.join(", ")
        );
        return Ok(Exit::Error);
    }
    Ok(Exit::Ok)
}

pub fn compact(root: &Path) -> anyhow::Result<Exit> {
    let wh = Warehouse::new(root);
    let r = wh
        .compact()
        .with_context(|| format!("cannot compact {}", root.display()))?;
    println!(
        "compacted {}: {} file(s) -> {}, {} orphan file(s) of interrupted commands deleted",
        root.display(),
        r.files_before,
        r.files_after,
        r.files_deleted
    );
    Ok(Exit::Ok)
}
