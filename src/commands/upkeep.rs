//! `compact`, `vacuum` and `migrate`: upkeep of the warehouse's tables.

use crate::Exit;
use anyhow::Context;
use perfdb_ingest::warehouse::Warehouse;
use std::path::Path;

pub fn compact(root: &Path, grace: std::time::Duration, file_rows: u64) -> anyhow::Result<Exit> {
    let r = Warehouse::new(root)
        .compact_to(grace, file_rows)
        .with_context(|| format!("cannot compact {}", root.display()))?;
    println!(
        "compacted {}: {} file(s) -> {}; {} file(s) of interrupted commands (older than {}s) \
         taken out of the tables; {} replaced file(s) stay on disk until `perfdb vacuum`{}",
        root.display(),
        r.files_before,
        r.files_after,
        r.ungated_removed,
        grace.as_secs(),
        r.files_replaced,
        match r.summaries_written {
            0 => String::new(),
            n => format!("; {n} summary file(s) written"),
        }
    );
    Ok(Exit::Ok)
}

/// The shortest `--retain` without `--force`: longer than any ingest or compaction
/// takes between writing its files and committing them (as Delta Lake's vacuum refuses
/// a retention under its check).
pub const MIN_RETAIN_HOURS: f64 = 1.0;

pub fn vacuum(root: &Path, retain_hours: f64, force: bool) -> anyhow::Result<Exit> {
    if !(retain_hours.is_finite() && retain_hours >= 0.0) {
        anyhow::bail!("--retain {retain_hours}: expected a number of hours, 0 or more");
    }
    if retain_hours < MIN_RETAIN_HOURS && !force {
        anyhow::bail!(
            "--retain {retain_hours}: under {MIN_RETAIN_HOURS} h, vacuum could delete the files of an ingest \
             that has written them but not yet committed, and break it; give --force when nothing \
             else uses the warehouse meanwhile"
        );
    }
    let retain = std::time::Duration::from_secs_f64(retain_hours * 3600.0);
    let r = Warehouse::new(root)
        .vacuum(retain)
        .with_context(|| format!("cannot vacuum {}", root.display()))?;
    println!(
        "vacuumed {}: {} file(s) no table lists deleted ({:.1} MB); {} younger than {retain_hours} h kept",
        root.display(),
        r.deleted,
        r.bytes as f64 / 1e6,
        r.kept,
    );
    Ok(Exit::Ok)
}

pub fn migrate(root: &Path) -> anyhow::Result<Exit> {
    let r = Warehouse::new(root)
        .migrate()
        .with_context(|| format!("cannot migrate {}", root.display()))?;
    match r.set_aside {
        None => println!(
            "{}: nothing to migrate (no _manifest.json; the Delta logs are the commit point)",
            root.display()
        ),
        Some(aside) => println!(
            "migrated {}: {} file(s) in {} log commit(s); the old manifest is kept as {}",
            root.display(),
            r.files,
            r.commits,
            aside.display()
        ),
    }
    Ok(Exit::Ok)
}
