//! `perfdb compare` and `perfdb demo`.

mod file_sides;

use crate::cli::CompareArgs;
use crate::commands::judge_options as options;
use crate::Exit;
use anyhow::Context;
use file_sides::SideArg;
use perfdb_ingest::warehouse::Warehouse;
use perfdb_reports::compare::{compare_sides, Side};
use perfdb_reports::config::Config;
use perfdb_reports::db::Db;
use std::path::Path;

pub fn run(root: &Path, a: CompareArgs) -> anyhow::Result<Exit> {
    let mut t = std::time::Instant::now();
    let cfg = Config::load_or_default(a.judge.config.as_deref())?;
    let opt = options(&cfg, &a.judge, a.baseline_window)?;
    let devices = cfg.device_table();
    if let Some(l) = &a.keep {
        perfdb_ingest::warehouse::Label::new(l).map_err(|e| anyhow::anyhow!("--keep {l}: {e}"))?;
    }
    // The warehouse is opened once, when a side names its runs (or to tell whether an
    // argument that names a file here names runs too): files alone need none.
    let opened: std::cell::OnceCell<Result<Db, String>> = std::cell::OnceCell::new();
    let db = || {
        opened
            .get_or_init(|| {
                Db::open(root, &devices)
                    .map_err(|e| format!("cannot open the warehouse at {}: {e}", root.display()))
            })
            .as_ref()
            .map_err(|e| anyhow::anyhow!("{e}"))
    };
    // The files a selector's runs were read from, by content (when it matches runs).
    let selects = |spec: &str| -> Option<Vec<String>> {
        let d = db().ok()?;
        let side = perfdb_reports::compare::select_runs(d, spec).ok()?;
        perfdb_reports::db::source_hashes(d, &side.runs).ok()
    };
    let base_arg = file_sides::side_arg(&a.base, selects)?;
    let head_arg = file_sides::side_arg(&a.head, selects)?;
    if a.baseline_window.is_some() && matches!(base_arg, SideArg::Files(..)) {
        anyhow::bail!(
            "--baseline-window pools a label's last commits of the warehouse: the base side is files"
        );
    }
    if a.keep.is_some() && !matches!(head_arg, SideArg::Files(..)) {
        anyhow::bail!("--keep stores the head side's files: the head side names warehouse runs");
    }
    let selector = |arg: &SideArg| -> anyhow::Result<Option<String>> {
        let SideArg::Selector(spec) = arg else {
            return Ok(None);
        };
        crate::merge_base::resolve(db()?, spec, a.git_dir.as_deref(), a.nearest_measured).map(Some)
    };
    let (base_sel, head_sel) = (selector(&base_arg)?, selector(&head_arg)?);
    perfdb_ingest::timing::trace("open the warehouse", &mut t);
    let file_side = |arg: &SideArg, label: &str, commit: Option<String>| match arg {
        SideArg::Files(spec, files) => {
            file_sides::read_side(&a, spec, files, label, commit, &devices).map(Some)
        }
        SideArg::Selector(_) => Ok(None),
    };
    let base_files = file_side(&base_arg, "base", None)?;
    let head_files = file_side(
        &head_arg,
        a.keep.as_deref().unwrap_or("head"),
        a.commit.clone(),
    )?;
    perfdb_ingest::timing::trace("read and parse the file sides", &mut t);
    let (base, head) = (side(&base_sel, &base_files), side(&head_sel, &head_files));
    // The warehouse a side's runs were selected in (none for files alone, even when an
    // argument was looked up in it).
    let wh_db = (base_sel.is_some() || head_sel.is_some())
        .then(|| opened.get().and_then(|d| d.as_ref().ok()))
        .flatten();
    let report = compare_sides(wh_db, &devices, base, head, &opt)?;
    t = std::time::Instant::now();
    super::print_out(&perfdb_reports::render::report(
        &report,
        a.format,
        super::use_color(),
    ))?;
    perfdb_ingest::timing::trace("render", &mut t);
    if a.save {
        let path = perfdb_reports::saved::save(root, &report)?;
        say!("saved the comparison to {}", path.display());
    }
    if let (Some(label), Some(files)) = (&a.keep, head_files) {
        // After the verdict is printed: the head side's runs as `ingest` commits them.
        let n = files.runs.len();
        Warehouse::new(root)
            .commit(files.runs)
            .with_context(|| format!("cannot write the warehouse at {}", root.display()))?;
        say!(
            "kept the head side's {n} run(s) under label '{label}' in {}",
            root.display()
        );
    }
    Ok(Exit::of(&report))
}

/// A side as the comparison takes it: its files, else its (resolved) selector.
fn side<'a>(
    sel: &'a Option<String>,
    files: &'a Option<perfdb_reports::compare::FileRuns>,
) -> Side<'a> {
    match files {
        Some(f) => Side::Files(f),
        None => Side::Warehouse(sel.as_deref().expect("a side is files or a selector")),
    }
}
