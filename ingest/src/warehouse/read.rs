//! Gated reads: the runs snapshot first, then only the measurement and summary files
//! whose batch it admits, so a reader never sees a run without its values.

use super::tables::{block_on, rel_of, Logs, Table};
use super::tables::{BATCH_TAG, GATE_TAG, MANIFEST, MEASUREMENTS_DIR, SUMMARIES_DIR};
use super::{Result, Warehouse};
use crate::delta::Snapshot;
use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The committed state as perfdb reads it: the live files of each table that the
/// gate admits, relative to the warehouse root.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Committed {
    /// Grows with every commit to any table (the tables' version counts summed).
    pub version: u64,
    pub runs: Vec<String>,
    pub measurements: Vec<String>,
    pub summaries: Vec<String>,
    pub alerts: Vec<String>,
    pub alert_status: Vec<String>,
    pub alert_delivery: Vec<String>,
    /// The range of runs' ingest times (microseconds) of each measurements and
    /// summaries file that names one (compacted files: [`super::INGESTED_TAG`]).
    pub ingested: HashMap<String, (i64, i64)>,
}

/// The summary file that summarises measurements file `rel`.
pub fn summary_of(rel: &str) -> String {
    match rel.strip_prefix(MEASUREMENTS_DIR) {
        Some(rest) => format!("{SUMMARIES_DIR}{rest}"),
        None => rel.to_string(),
    }
}

impl Warehouse {
    /// The committed state. A warehouse that does not exist yet is empty.
    pub fn committed(&self) -> Result<Committed> {
        match self.logs()? {
            None => Ok(Committed::default()),
            Some(logs) => Ok(block_on(read_committed(&logs))?),
        }
    }

    /// Identifies the committed state cheaply (each log's latest version, found by
    /// existence checks, not reads), so a long-running reader knows when to look again.
    /// `None` for an empty warehouse.
    pub fn state_signature(&self) -> Option<u64> {
        if self.remote.is_none() {
            let ours = self.root.is_dir() && !self.root.join(MANIFEST).exists();
            return ours.then(|| local_signature(&self.root)).flatten();
        }
        let logs = self.logs().ok()??;
        // The versions this process saw last, per table: from there it takes two
        // existence checks per table (the version seen, the next), not a walk from the
        // last checkpoint.
        static SEEN: std::sync::LazyLock<std::sync::Mutex<HashMap<String, Option<u64>>>> =
            std::sync::LazyLock::new(Default::default);
        let location = self.location();
        // The six tables at once: one round trip's wait for all, not six.
        let versions = block_on(futures::future::join_all(Table::ALL.map(|t| {
            let key = format!("{location}/{}", t.dir());
            let logs = &logs;
            async move {
                let known = SEEN
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .get(&key)
                    .copied()
                    .flatten();
                let v = logs.table(t).latest_version(known).await.ok()?;
                SEEN.lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(key, v);
                Some(v)
            }
        })))
        .into_iter()
        .collect::<Option<Vec<Option<u64>>>>()?;
        signature_of(&versions)
    }

    /// Local paths of the summary files of the committed state `c`, and of its
    /// measurements files that have none (written before summaries existed, until
    /// `compact`).
    pub fn summaries_of(&self, c: &Committed) -> Result<(Vec<PathBuf>, Vec<PathBuf>)> {
        let listed: HashSet<&String> = c.summaries.iter().collect();
        let bare: Vec<String> = c
            .measurements
            .iter()
            .filter(|rel| !listed.contains(&summary_of(rel)))
            .cloned()
            .collect();
        Ok((self.local_all(&c.summaries)?, self.local_all(&bare)?))
    }
}

/// [`Warehouse::state_signature`] of a local warehouse, by plain file-system calls (it
/// runs on every web request: no runtime, no thread): each log's latest version, from
/// the one this process saw last (or the last checkpoint), one `stat` per version.
pub(crate) fn local_signature(root: &Path) -> Option<u64> {
    static SEEN: std::sync::LazyLock<std::sync::Mutex<HashMap<PathBuf, u64>>> =
        std::sync::LazyLock::new(Default::default);
    let mut versions = Vec::with_capacity(Table::ALL.len());
    for t in Table::ALL {
        let log = root.join(t.dir()).join("_delta_log");
        let file = |v: u64| log.join(format!("{v:020}.json"));
        let known = SEEN
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&log)
            .copied()
            .filter(|v| file(*v).exists());
        let mut v = known.or_else(|| {
            let last = fs::read(log.join("_last_checkpoint")).ok()?;
            serde_json::from_slice::<serde_json::Value>(&last).ok()?["version"].as_u64()
        });
        while file(v.map_or(0, |v| v + 1)).exists() {
            v = Some(v.map_or(0, |v| v + 1));
        }
        if let Some(v) = v {
            SEEN.lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(log, v);
        }
        versions.push(v);
    }
    signature_of(&versions)
}

/// The signature of the tables' latest log versions; `None` when no table has a log.
pub(crate) fn signature_of(versions: &[Option<u64>]) -> Option<u64> {
    (!versions.iter().all(Option::is_none)).then(|| crate::hash::fnv64(&format!("{versions:?}")))
}

/// The committed state: the runs snapshot (the gate) first, then the others; again
/// if `runs` moved meanwhile (a compaction commits its merged runs before it replaces
/// their values, so a gate read before that commit does not admit values read after).
pub(crate) async fn read_committed(
    logs: &Logs,
) -> std::result::Result<Committed, crate::delta::DeltaError> {
    for _ in 0..16 {
        let runs_t = logs.table(Table::Runs);
        let runs = runs_t.snapshot().await?;
        let measurements = logs.table(Table::Measurements).snapshot().await?;
        let summaries = logs.table(Table::Summaries).snapshot().await?;
        // Status changes before the records they name (written in the other order).
        let status = logs.table(Table::AlertStatus).snapshot().await?;
        let records = logs.table(Table::AlertRecords).snapshot().await?;
        let delivery = logs.table(Table::AlertDelivery).snapshot().await?;
        if runs_t.latest_version(runs.version).await? != runs.version {
            continue;
        }
        let gate: HashSet<&str> = runs
            .files
            .values()
            .filter_map(|a| a.tags.as_ref()?.get(GATE_TAG))
            .flat_map(|b| b.split(','))
            .collect();
        let admitted = |t: Table, snap: &Snapshot| -> Vec<String> {
            snap.files
                .values()
                .filter(|a| {
                    a.tags
                        .as_ref()
                        .and_then(|t| t.get(BATCH_TAG))
                        .is_none_or(|b| gate.contains(b.as_str()))
                })
                .map(|a| rel_of(t, &a.path))
                .collect()
        };
        let all = |t: Table, snap: &Snapshot| -> Vec<String> {
            snap.files.keys().map(|p| rel_of(t, p)).collect()
        };
        let mut ingested = HashMap::new();
        for (t, snap) in [
            (Table::Measurements, &measurements),
            (Table::Summaries, &summaries),
        ] {
            for a in snap.files.values() {
                if let Some(r) = super::compact::ingested_range(a) {
                    ingested.insert(rel_of(t, &a.path), r);
                }
            }
        }
        let version = [
            &runs,
            &measurements,
            &summaries,
            &status,
            &records,
            &delivery,
        ]
        .iter()
        .map(|s| s.version.map_or(0, |v| v + 1))
        .sum();
        return Ok(Committed {
            version,
            runs: all(Table::Runs, &runs),
            measurements: admitted(Table::Measurements, &measurements),
            summaries: admitted(Table::Summaries, &summaries),
            alerts: all(Table::AlertRecords, &records),
            alert_status: all(Table::AlertStatus, &status),
            alert_delivery: all(Table::AlertDelivery, &delivery),
            ingested,
        });
    }
    Err(crate::delta::DeltaError::Contended { attempts: 16 })
}
