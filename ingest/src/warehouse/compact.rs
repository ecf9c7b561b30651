//! Upkeep of the warehouse's tables: `compact` merges each partition's small files into
//! files of a bounded size (ordinary commits: `remove`s and `add`s), and takes the files
//! of batches never gated (killed writers) out of the logs; `vacuum` is the only thing
//! that deletes a file, and only one no log lists any more, older than its retention.
//!
//! A compaction commits in the gate's order ([`super`]'s documentation): first `runs` (the merged
//! runs files, admitting the merged batch and, until the values are replaced, the
//! batches they merge), then `measurements` and `summaries` (the merged values replace
//! the old files). A reader sees the old files or the new, never a run without values.

use crate::delta::{Action, Add, Remove, Snapshot};
use crate::warehouse::summary;
use crate::warehouse::tables::{block_on, rel_of, Logs, Table};
use crate::warehouse::{
    commit_info, new_batch_id, read_columns, Result, Warehouse, WarehouseError, BATCH_TAG,
    GATE_TAG, INGESTED_TAG, TMP_DIR,
};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CompactReport {
    pub files_before: usize,
    pub files_after: usize,
    /// Summary files written for measurements that had none (merged, or older).
    pub summaries_written: usize,
    /// Files of batches never gated (interrupted commands), taken out of the logs.
    pub ungated_removed: usize,
    /// Files this compaction replaced: out of the logs, on disk until `vacuum`.
    pub files_replaced: usize,
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct VacuumReport {
    /// Files no log lists, older than the retention: deleted.
    pub deleted: usize,
    pub bytes: u64,
    /// Files no log lists, not old enough yet: kept (a reader may still read them, a
    /// writer may be about to commit them).
    pub kept: usize,
}

/// Every table's snapshot, in `Table::ALL`'s order.
fn snapshots(logs: &Logs) -> Result<Vec<Snapshot>> {
    Ok(block_on(async {
        let mut out = Vec::new();
        for t in Table::ALL {
            out.push(logs.table(t).snapshot().await?);
        }
        Ok::<_, crate::delta::DeltaError>(out)
    })?)
}

/// A table's snapshot among the compaction's.
fn snap_of(snaps: &[Snapshot], t: Table) -> &Snapshot {
    &snaps[Table::ALL
        .iter()
        .position(|x| *x == t)
        .expect("a snapshot a table")]
}

/// The values files by label (measurements, summaries) and the runs files by label;
/// ungated values files old enough to be a stopped ingest's are removed.
#[allow(clippy::type_complexity)]
fn by_label(
    snaps: &[Snapshot],
    gate: &HashSet<&str>,
    cutoff: i64,
    changes: &mut BTreeMap<&'static str, Change>,
    report: &mut CompactReport,
) -> (
    BTreeMap<String, (Vec<Add>, Vec<Add>)>,
    BTreeMap<String, Vec<Add>>,
) {
    let mut values: BTreeMap<String, (Vec<Add>, Vec<Add>)> = BTreeMap::new();
    for t in [Table::Measurements, Table::Summaries] {
        for a in snap_of(snaps, t).files.values() {
            let gated = batch_of(a).is_none_or(|b| gate.contains(b));
            if !gated {
                if a.modification_time <= cutoff {
                    changes.entry(t.dir()).or_default().removes.push(a.clone());
                    report.ungated_removed += 1;
                }
                continue;
            }
            let entry = values.entry(label_of_add(a)).or_default();
            if t == Table::Measurements {
                entry.0.push(a.clone());
            } else {
                entry.1.push(a.clone());
            }
        }
    }
    let mut runs_by_label: BTreeMap<String, Vec<Add>> = BTreeMap::new();
    for a in snap_of(snaps, Table::Runs).files.values() {
        runs_by_label
            .entry(label_of_add(a))
            .or_default()
            .push(a.clone());
    }
    (values, runs_by_label)
}

/// What a compaction does to one table: files out, files in.
#[derive(Default)]
struct Change {
    removes: Vec<Add>,
    adds: Vec<Add>,
}

impl Change {
    fn actions(&self) -> Vec<Action> {
        let now = crate::delta::now_ms();
        let mut out: Vec<Action> = self
            .removes
            .iter()
            .map(|a| {
                Action::Remove(Remove {
                    path: a.path.clone(),
                    deletion_timestamp: now,
                    data_change: false,
                    partition_values: Some(a.partition_values.clone()),
                    size: Some(a.size),
                })
            })
            .collect();
        out.extend(self.adds.iter().cloned().map(Action::Add));
        out.push(commit_info("OPTIMIZE"));
        out
    }
}

/// Rows a compacted measurements file holds at most: a compaction holds one such file
/// in memory (1.1-1.3 GB max RSS at 2M rows of the year benchmark's GEMM tables), and a
/// year of a team's CI (100M rows) is 50 files a label.
pub const FILE_ROWS: u64 = 2_000_000;

/// What a compaction does to one label's values.
struct Plan {
    /// Runs of small files (in the order they were written) to merge, one file each.
    chunks: Vec<Vec<Add>>,
    /// The summary file of each measurements file that has one, by `add.path`.
    summary: HashMap<String, Add>,
    /// Summary files whose measurements file is no longer live.
    orphans: Vec<Add>,
}

/// The rows of the file `a` adds, from its statistics.
fn rows_of(a: &Add) -> Option<u64> {
    let stats: serde_json::Value = serde_json::from_str(a.stats.as_deref()?).ok()?;
    stats.get("numRecords")?.as_u64()
}

/// The range of ingest times (microseconds) of the runs a values file holds, from its
/// [`INGESTED_TAG`].
pub fn ingested_range(a: &Add) -> Option<(i64, i64)> {
    let (lo, hi) = a.tags.as_ref()?.get(INGESTED_TAG)?.split_once(',')?;
    Some((lo.parse().ok()?, hi.parse().ok()?))
}

/// Which of a label's measurements files (`ms`) to merge: those under half of
/// `file_rows`, and any without its summary file (it gets one), packed in the order
/// they were written into files of at most `file_rows`. A file alone in its chunk that
/// has its summary stays as it is.
fn plan_label(ms: &[Add], sums: &[Add], file_rows: u64) -> Plan {
    let by_rel: HashMap<String, &Add> = sums
        .iter()
        .map(|a| (rel_of(Table::Summaries, &a.path), a))
        .collect();
    let mut summary = HashMap::new();
    let mut used = HashSet::new();
    for m in ms {
        let rel = crate::warehouse::summary_of(&rel_of(Table::Measurements, &m.path));
        if let Some(s) = by_rel.get(&rel) {
            summary.insert(m.path.clone(), (*s).clone());
            used.insert(s.path.clone());
        }
    }
    let orphans = sums
        .iter()
        .filter(|s| !used.contains(&s.path))
        .cloned()
        .collect();
    let rows = |a: &Add| rows_of(a).unwrap_or(0);
    let mut small: Vec<&Add> = ms
        .iter()
        .filter(|m| !summary.contains_key(&m.path) || rows(m) < file_rows / 2)
        .collect();
    small.sort_by_key(|a| {
        let written = ingested_range(a).map_or(a.modification_time * 1000, |r| r.0);
        (written, a.path.clone())
    });
    let mut chunks: Vec<Vec<Add>> = Vec::new();
    let mut current: Vec<Add> = Vec::new();
    let mut current_rows = 0;
    for a in small {
        if !current.is_empty() && current_rows + rows(a) > file_rows {
            chunks.push(std::mem::take(&mut current));
            current_rows = 0;
        }
        current_rows += rows(a);
        current.push(a.clone());
    }
    if !current.is_empty() {
        chunks.push(current);
    }
    chunks.retain(|c| c.len() > 1 || !summary.contains_key(&c[0].path));
    Plan {
        chunks,
        summary,
        orphans,
    }
}

/// The batches of `files` of table `t`, read in order.
fn merge(wh: &Warehouse, t: Table, files: &[Add]) -> Result<Vec<arrow::array::RecordBatch>> {
    let mut out = Vec::new();
    for a in files {
        out.extend(read_columns(&wh.local(&rel_of(t, &a.path))?, &[])?);
    }
    Ok(out)
}

/// Add each run of a runs batch to `out` with its ingest time (microseconds).
fn ingest_times(b: &arrow::array::RecordBatch, out: &mut HashMap<String, i64>) {
    use crate::warehouse::schema::runs::{INGESTED_AT, RUN_ID};
    use arrow::array::{Array, StringArray, TimestampMicrosecondArray};
    let ids = b
        .column_by_name(RUN_ID)
        .and_then(|c| c.as_any().downcast_ref::<StringArray>());
    let times = b
        .column_by_name(INGESTED_AT)
        .and_then(|c| c.as_any().downcast_ref::<TimestampMicrosecondArray>());
    if let (Some(ids), Some(times)) = (ids, times) {
        for i in 0..b.num_rows() {
            if ids.is_valid(i) && times.is_valid(i) {
                out.insert(ids.value(i).to_string(), times.value(i));
            }
        }
    }
}

/// The range of ingest times of the runs whose values `batches` hold; `None` when one
/// of them has no run (the file then carries no range, and every reader reads it).
fn ingest_range(
    batches: &[arrow::array::RecordBatch],
    ingested: &HashMap<String, i64>,
) -> Option<(i64, i64)> {
    use arrow::array::{Array, StringArray};
    let mut range: Option<(i64, i64)> = None;
    let mut seen: HashSet<&str> = HashSet::new();
    for b in batches {
        let ids = b
            .column_by_name(crate::warehouse::schema::measurements::RUN_ID)?
            .as_any()
            .downcast_ref::<StringArray>()?;
        for i in 0..b.num_rows() {
            if ids.is_null(i) {
                return None;
            }
            let id = ids.value(i);
            if !seen.insert(id) {
                continue;
            }
            let t = *ingested.get(id)?;
            range = Some(range.map_or((t, t), |(lo, hi)| (lo.min(t), hi.max(t))));
        }
    }
    range
}

fn label_of_add(a: &Add) -> String {
    a.partition_values
        .get(crate::warehouse::schema::LABEL)
        .cloned()
        .flatten()
        .unwrap_or_default()
}

fn batch_of(a: &Add) -> Option<&str> {
    a.tags.as_ref()?.get(BATCH_TAG).map(String::as_str)
}

impl Warehouse {
    /// [`Warehouse::compact_to`] files of at most [`FILE_ROWS`] rows.
    pub fn compact(&self, grace: std::time::Duration) -> Result<CompactReport> {
        self.compact_to(grace, FILE_ROWS)
    }

    /// Merge each partition's small values files into files of at most `file_rows`
    /// rows (in the order they were written, so a file holds the runs of a stretch of
    /// time, named by its [`INGESTED_TAG`]), each partition's runs files into one, and
    /// take the files of batches never gated (left by interrupted commands) older than
    /// `grace` out of the logs. A file of half `file_rows` or more is left as it is: a
    /// compaction after a day of ingests reads that day's files, not the year's.
    /// Replaced files stay on disk for readers that still hold an older snapshot:
    /// `vacuum` deletes them.
    pub fn compact_to(&self, grace: std::time::Duration, file_rows: u64) -> Result<CompactReport> {
        let Some(logs) = self.logs()? else {
            return Ok(CompactReport::default());
        };
        let snaps = snapshots(&logs)?;
        let mut report = CompactReport::default();
        let gate: HashSet<&str> = snap_of(&snaps, Table::Runs)
            .files
            .values()
            .filter_map(|a| a.tags.as_ref()?.get(GATE_TAG))
            .flat_map(|b| b.split(','))
            .collect();
        let cutoff = crate::delta::now_ms() - grace.as_millis() as i64;
        let batch = new_batch_id("c");
        let mut changes: BTreeMap<&str, Change> = BTreeMap::new();

        let (values, runs_by_label) = by_label(&snaps, &gate, cutoff, &mut changes, &mut report);
        let labels: BTreeSet<&String> = runs_by_label.keys().chain(values.keys()).collect();
        for label in labels {
            let runs = runs_by_label.get(label).cloned().unwrap_or_default();
            let (ms, sums) = values.get(label).cloned().unwrap_or_default();
            let plan = plan_label(&ms, &sums, file_rows);
            report.files_before += runs.len() + ms.len();
            if runs.len() <= 1 && plan.chunks.is_empty() && plan.orphans.is_empty() {
                report.files_after += runs.len() + ms.len();
                continue;
            }
            let part =
                |t: Table, i: usize| format!("{}/label={label}/part-{batch}-{i}.parquet", t.dir());
            // Gated by the merged runs file; values with no runs file in their label
            // (none are written so) stay ungated, as they were read.
            let batch_tag = (!runs.is_empty())
                .then(|| BTreeMap::from([(BATCH_TAG.to_string(), batch.clone())]));
            // Each run's ingest time, for the merged values' range tags.
            let mut ingested: HashMap<String, i64> = HashMap::new();
            if !runs.is_empty() {
                let merged = merge(self, Table::Runs, &runs)?;
                for b in &merged {
                    ingest_times(b, &mut ingested);
                }
                // The merged batch, and the batches of every values file of the label
                // (those this compaction replaces until they are replaced, and those
                // it leaves as they are).
                let mut admits: BTreeSet<&str> =
                    ms.iter().chain(&sums).filter_map(batch_of).collect();
                admits.insert(&batch);
                let tags = BTreeMap::from([(
                    GATE_TAG.to_string(),
                    admits.into_iter().collect::<Vec<_>>().join(","),
                )]);
                let c = changes.entry(Table::Runs.dir()).or_default();
                c.adds.push(self.write_file(
                    &part(Table::Runs, 0),
                    Table::Runs,
                    &merged,
                    None,
                    Some(tags),
                )?);
                c.removes.extend(runs.iter().cloned());
                report.files_after += 1;
                report.files_replaced += runs.len();
            }
            report.files_after += ms.len();
            // One chunk at a time: a compaction holds at most one file's worth of rows.
            for (i, chunk) in plan.chunks.iter().enumerate() {
                let names = [part(Table::Measurements, i), part(Table::Summaries, i)];
                let (m_add, s_add) =
                    self.merge_chunk(chunk, names, batch_tag.clone(), &ingested)?;
                report.summaries_written += 1;
                let replaced: Vec<Add> = chunk
                    .iter()
                    .filter_map(|m| plan.summary.get(&m.path).cloned())
                    .collect();
                let c = changes.entry(Table::Measurements.dir()).or_default();
                c.adds.push(m_add);
                c.removes.extend(chunk.iter().cloned());
                report.files_replaced += chunk.len() + replaced.len();
                let c = changes.entry(Table::Summaries.dir()).or_default();
                c.adds.push(s_add);
                c.removes.extend(replaced);
                report.files_after = report.files_after + 1 - chunk.len();
            }
            if !plan.orphans.is_empty() {
                report.files_replaced += plan.orphans.len();
                let c = changes.entry(Table::Summaries.dir()).or_default();
                c.removes.extend(plan.orphans);
            }
        }
        self.compact_alert_tables(&snaps, &batch, &mut changes, &mut report)?;
        // In the gate's order (`Table::ALL` lists it): runs, then the values; the alerts'
        // records, then status.
        for t in Table::ALL {
            if let Some(c) = changes.get(t.dir()) {
                commit_replacing(&logs, t, c)?;
            }
        }
        Ok(report)
    }

    /// One chunk of a label's values files merged into one measurements file at
    /// `names[0]` and its summaries at `names[1]`, tagged with `tags` and the range of
    /// its runs' ingest times; their `add`s.
    fn merge_chunk(
        &self,
        chunk: &[Add],
        names: [String; 2],
        mut tags: Option<BTreeMap<String, String>>,
        ingested: &HashMap<String, i64>,
    ) -> Result<(Add, Add)> {
        let batches = merge(self, Table::Measurements, chunk)?;
        if let (Some(tags), Some((lo, hi))) = (tags.as_mut(), ingest_range(&batches, ingested)) {
            tags.insert(INGESTED_TAG.to_string(), format!("{lo},{hi}"));
        }
        let m_add =
            self.write_file(&names[0], Table::Measurements, &batches, None, tags.clone())?;
        let s_add = self.write_file(
            &names[1],
            Table::Summaries,
            &[summary::from_batches(&batches)],
            Some(summary::ROW_GROUP),
            tags,
        )?;
        Ok((m_add, s_add))
    }

    /// The alert tables are small and flat: one file each.
    fn compact_alert_tables(
        &self,
        snaps: &[Snapshot],
        batch: &str,
        changes: &mut BTreeMap<&'static str, Change>,
        report: &mut CompactReport,
    ) -> Result<()> {
        for t in [
            Table::AlertRecords,
            Table::AlertStatus,
            Table::AlertDelivery,
        ] {
            let files: Vec<Add> = snap_of(snaps, t).files.values().cloned().collect();
            report.files_before += files.len();
            if files.len() <= 1 {
                report.files_after += files.len();
                continue;
            }
            let mut batches = Vec::new();
            for a in &files {
                batches.extend(read_columns(&self.local(&rel_of(t, &a.path))?, &[])?);
            }
            let rel = format!("{}/part-{batch}.parquet", t.dir());
            let add = self.write_file(&rel, t, &batches, None, None)?;
            let c = changes.entry(t.dir()).or_default();
            c.adds.push(add);
            c.removes.extend(files);
            report.files_after += 1;
            report.files_replaced += c.removes.len();
        }
        Ok(())
    }

    /// Delete the files under the tables (and `_tmp/`) that no log lists any more and
    /// that are older than `retain`: files compactions replaced, files of batches never
    /// gated, leftovers of interrupted writes. The only way perfdb deletes data.
    pub fn vacuum(&self, retain: std::time::Duration) -> Result<VacuumReport> {
        let Some(logs) = self.logs()? else {
            return Ok(VacuumReport::default());
        };
        let cutoff = cutoff_ms(retain);
        let report = block_on(async {
            use futures::TryStreamExt;
            use object_store::ObjectStoreExt;
            let store = logs.store();
            let mut report = VacuumReport::default();
            for t in Table::ALL {
                let snap = logs.table(t).snapshot().await?;
                let listed: HashSet<String> = snap.files.keys().map(|p| rel_of(t, p)).collect();
                let dir = object_store::path::Path::from(t.dir());
                let objects: Vec<object_store::ObjectMeta> = store
                    .list(Some(&dir))
                    .try_collect()
                    .await
                    .map_err(|source| crate::delta::DeltaError::Store {
                        path: format!("{}/{}", self.location(), t.dir()),
                        source,
                    })?;
                for o in objects {
                    let rel = o.location.to_string();
                    if rel.contains("/_delta_log/") || listed.contains(&rel) {
                        continue;
                    }
                    if o.last_modified.timestamp_millis() > cutoff {
                        report.kept += 1;
                        continue;
                    }
                    match store.delete(&o.location).await {
                        Ok(()) | Err(object_store::Error::NotFound { .. }) => {
                            report.deleted += 1;
                            report.bytes += o.size;
                        }
                        Err(source) => {
                            return Err(crate::delta::DeltaError::Store {
                                path: format!("{}/{rel}", self.location()),
                                source,
                            })
                        }
                    }
                }
            }
            Ok(report)
        })?;
        // Leftovers of interrupted local writes.
        let since = std::time::SystemTime::now()
            .checked_sub(retain)
            .unwrap_or(std::time::UNIX_EPOCH);
        for f in data_files(&self.root().join(TMP_DIR)) {
            let meta = std::fs::metadata(&f).map_err(|e| io_error(&f, e))?;
            if meta.modified().map_or(true, |m| m > since) {
                continue;
            }
            std::fs::remove_file(&f).map_err(|e| io_error(&f, e))?;
        }
        Ok(report)
    }
}

/// `retain` before now, in milliseconds since the Unix epoch.
fn cutoff_ms(retain: std::time::Duration) -> i64 {
    crate::delta::now_ms() - retain.as_millis() as i64
}

fn io_error(path: &Path, source: std::io::Error) -> WarehouseError {
    WarehouseError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Commit `c` to `t`, as long as every file it removes is still live (another
/// compaction may have replaced them first: then this one stops, and its files are
/// never listed).
fn commit_replacing(logs: &Logs, t: Table, c: &Change) -> Result<()> {
    let actions = c.actions();
    block_on(logs.table(t).commit(
        || logs.metadata(t),
        |snap| {
            if let Some(gone) = c.removes.iter().find(|a| !snap.files.contains_key(&a.path)) {
                return Err(crate::delta::DeltaError::Rejected(format!(
                    "{}/{}: replaced by another compaction meanwhile; run compact again",
                    t.dir(),
                    gone.path
                )));
            }
            Ok(Some(actions.clone()))
        },
    ))?;
    Ok(())
}

/// Every file under `dir` but the logs (a table's `_delta_log/` holds its
/// checkpoints, which are Parquet too).
fn data_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n == "_delta_log") {
                continue;
            }
            out.extend(data_files(&p));
        } else {
            out.push(p);
        }
    }
    out
}
