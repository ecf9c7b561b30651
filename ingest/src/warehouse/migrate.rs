//! `perfdb migrate`: a warehouse written before the Delta log was the commit point kept
//! its committed file list in `_manifest.json` (with a `flock` on `.lock`), and a copy
//! of that list in each table's log for other engines. Migrating brings each log to
//! the manifest's list once more (one commit per table: an `add` per file the log
//! lacks, a `remove` per file the manifest no longer lists), then sets the manifest
//! aside. The migrated files carry no batch tag, so every perfdb reader admits them.

use crate::delta::{Action, Remove};
use crate::warehouse::tables::{add_of, block_on, rel_of, Table};
use crate::warehouse::{commit_info, Result, Warehouse, WarehouseError, MANIFEST};
use serde::Deserialize;
use std::collections::BTreeSet;

/// The old commit point's file lists (other fields are not needed to migrate).
#[derive(Debug, Default, Deserialize)]
struct Manifest {
    #[serde(default)]
    runs: Vec<String>,
    #[serde(default)]
    measurements: Vec<String>,
    #[serde(default)]
    summaries: Vec<String>,
    #[serde(default)]
    alerts: Vec<String>,
    #[serde(default)]
    alert_status: Vec<String>,
    #[serde(default)]
    alert_delivery: Vec<String>,
}

impl Manifest {
    fn files(&self, t: Table) -> &[String] {
        match t {
            Table::Runs => &self.runs,
            Table::Measurements => &self.measurements,
            Table::Summaries => &self.summaries,
            Table::AlertRecords => &self.alerts,
            Table::AlertStatus => &self.alert_status,
            Table::AlertDelivery => &self.alert_delivery,
        }
    }
}

/// What a migration did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct MigrateReport {
    /// Files the manifest listed, in all tables.
    pub files: usize,
    /// Commits made to bring the logs level with it.
    pub commits: usize,
    /// Where the manifest was set aside.
    pub set_aside: Option<std::path::PathBuf>,
}

impl Warehouse {
    /// Move a `_manifest.json` warehouse to the log (see the module). `Ok` with nothing
    /// done when there is no manifest: migrating twice is harmless.
    pub fn migrate(&self) -> Result<MigrateReport> {
        let path = self.root().join(MANIFEST);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(MigrateReport::default())
            }
            Err(source) => return Err(WarehouseError::Io { path, source }),
        };
        let m: Manifest = serde_json::from_slice(&bytes).map_err(|e| {
            WarehouseError::Conflict(format!(
                "{}: not a perfdb manifest ({e}); nothing was changed",
                path.display()
            ))
        })?;
        let logs = crate::warehouse::tables::Logs::local(self.root())?;
        let mut report = MigrateReport::default();
        for t in Table::ALL {
            let files = m.files(t);
            report.files += files.len();
            let prefix = format!("{}/", t.dir());
            let wanted: BTreeSet<String> = files.iter().cloned().collect();
            let table = logs.table(t);
            let snap = block_on(table.snapshot())?;
            if files.is_empty() && snap.version.is_none() {
                continue;
            }
            let mut actions = Vec::new();
            for (p, a) in &snap.files {
                if !wanted.contains(&rel_of(t, p)) {
                    actions.push(Action::Remove(Remove {
                        path: p.clone(),
                        deletion_timestamp: crate::delta::now_ms(),
                        data_change: true,
                        partition_values: Some(a.partition_values.clone()),
                        size: Some(a.size),
                    }));
                }
            }
            let live: BTreeSet<String> = snap.files.keys().map(|p| rel_of(t, p)).collect();
            for rel in files.iter().filter(|f| f.starts_with(&prefix)) {
                if !live.contains(rel) {
                    actions.push(Action::Add(add_of(self.root(), rel, t, None)?));
                }
            }
            if actions.is_empty() && snap.version.is_some() {
                continue;
            }
            actions.push(commit_info("MIGRATE"));
            let actions_once = actions.clone();
            block_on(table.commit(|| logs.metadata(t), |_| Ok(Some(actions_once.clone()))))?;
            report.commits += 1;
        }
        let aside = self.root().join(format!("{MANIFEST}.migrated"));
        std::fs::rename(&path, &aside).map_err(|source| WarehouseError::Io {
            path: path.clone(),
            source,
        })?;
        let _ = std::fs::remove_file(self.root().join(".lock"));
        report.set_aside = Some(aside);
        Ok(report)
    }
}
