//! The Parquet warehouse on disk.
//!
//! ```text
//! <root>/_manifest.json                          the committed file list (commit point)
//! <root>/runs/label=<label>/part-<batch>.parquet
//! <root>/measurements/label=<label>/part-<batch>.parquet
//! <root>/summaries/label=<label>/part-<batch>.parquet   per-run summaries of that batch
//! <root>/_tmp/                                   files being written
//! <root>/.lock                                   writers hold an exclusive lock on it
//! ```
//! Hive-style partitions are readable as-is by DuckDB, pandas, polars and Spark. One
//! ingest command writes one file per table and label, whatever the number of runs.
//!
//! Crash safety: data files are written into `_tmp/`, fsynced and renamed into their
//! partition; then a new manifest is written aside and renamed over the old one. That
//! rename is the commit: readers that go through perfdb see exactly the files the
//! manifest lists, so a crash at any moment leaves either the old or the new state.
//! Files of an interrupted command are orphans (unlisted) and `perfdb compact` deletes
//! them. Writers serialise on `.lock`, so concurrent ingests lose nothing and never
//! assign the same trial number twice.

use crate::model::{Measurement, Parsed, Run, RunMeta, Warning};
use crate::schema::{self, measurements_batch, runs_batch};
use crate::summary;
use arrow::array::{Array, Int32Array, RecordBatch, StringArray};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::{ArrowWriter, ProjectionMask};
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

pub const RUNS_DIR: &str = "runs";
pub const MEASUREMENTS_DIR: &str = "measurements";
/// Per-run summaries (`crate::summary`): `summaries/label=L/part-B.parquet` summarises
/// exactly `measurements/label=L/part-B.parquet`.
pub const SUMMARIES_DIR: &str = "summaries";
/// The alerts `perfdb detect` raised, and their status changes (append-only, small,
/// not partitioned). `alerts/` itself holds comparisons saved with `compare --save`.
pub const ALERT_RECORDS_DIR: &str = "alert_records";
pub const ALERT_STATUS_DIR: &str = "alert_status";
pub const ALERT_DELIVERY_DIR: &str = "alert_delivery";
pub const MANIFEST: &str = "_manifest.json";
const TMP_DIR: &str = "_tmp";
const LOCK: &str = ".lock";

#[derive(Debug, thiserror::Error)]
pub enum WarehouseError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Parquet {
        path: PathBuf,
        source: parquet::errors::ParquetError,
    },
    #[error("{path}: manifest is not valid JSON ({source}); restore it or re-ingest")]
    Manifest {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("invalid label '{0}': use letters, digits, '.', '_' and '-' (at most 100)")]
    Label(String),
    #[error("committed, but the tables' Delta logs (for other engines) lag behind: {0}; the next commit brings them level")]
    DeltaSync(#[from] crate::delta::DeltaError),
}

type Result<T> = std::result::Result<T, WarehouseError>;

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> WarehouseError + '_ {
    move |source| WarehouseError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn pq(path: &Path) -> impl FnOnce(parquet::errors::ParquetError) -> WarehouseError + '_ {
    move |source| WarehouseError::Parquet {
        path: path.to_path_buf(),
        source,
    }
}

/// A validated label: the Hive partition value, so it must be safe in a path.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Label(String);

impl Label {
    pub fn new(s: &str) -> Result<Label> {
        let ok = !s.is_empty()
            && s.len() <= 100
            && s != "."
            && s != ".."
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
        if ok {
            Ok(Label(s.to_string()))
        } else {
            Err(WarehouseError::Label(s.to_string()))
        }
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Label of runs ingested without `--label`.
pub const DEFAULT_LABEL: &str = "unlabeled";

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    pub format_version: u32,
    /// Counts the commits of this warehouse: every write of the manifest adds one, so
    /// caches key on it (the web app's ETags).
    #[serde(default)]
    pub version: u64,
    /// Relative paths of the committed runs files.
    pub runs: Vec<String>,
    /// Relative paths of the committed measurements files.
    pub measurements: Vec<String>,
    /// Files a compaction replaced: no longer part of the warehouse, kept on disk because
    /// a reader that read an earlier manifest may still be reading them. A later
    /// compaction deletes them once they have been retired longer than its grace period.
    #[serde(default)]
    pub retired: Vec<Retired>,
    /// Relative paths of the committed alert record files.
    #[serde(default)]
    pub alerts: Vec<String>,
    /// Relative paths of the committed alert status change files.
    #[serde(default)]
    pub alert_status: Vec<String>,
    /// Relative paths of the committed alert delivery files.
    #[serde(default)]
    pub alert_delivery: Vec<String>,
    /// Relative paths of the committed summary files, one per measurements file (none
    /// for files written before summaries existed; `perfdb compact` adds them).
    #[serde(default)]
    pub summaries: Vec<String>,
}

/// The summary file that summarises measurements file `rel`.
pub fn summary_of(rel: &str) -> String {
    match rel.strip_prefix(MEASUREMENTS_DIR) {
        Some(rest) => format!("{SUMMARIES_DIR}{rest}"),
        None => rel.to_string(),
    }
}

/// A replaced file and when it was replaced (microseconds since the Unix epoch).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Retired {
    pub path: String,
    pub at_us: i64,
}

/// How long `compact` keeps a replaced file by default: far longer than any compare or
/// web request holds a manifest it read.
pub const DEFAULT_GRACE: std::time::Duration = std::time::Duration::from_secs(600);

/// A parsed file, ready to commit.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub run: Run,
    pub measurements: Vec<Measurement>,
    pub tables: Vec<(String, usize)>,
    /// What the parser skipped or could not classify (the rest is ingested).
    pub warnings: Vec<Warning>,
    /// The runs of the output's further trials ([`Parsed::repetitions`]), committed
    /// with this one.
    pub repetitions: Vec<Prepared>,
}

/// What happened to one prepared file at commit.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Added {
        run_id: String,
        trial: i32,
    },
    /// The same file with the same metadata is already in the warehouse.
    AlreadyPresent {
        run_id: String,
    },
}

impl Outcome {
    /// The run id, and its trial when it was added.
    pub fn run_and_trial(self) -> (String, Option<i32>) {
        match self {
            Outcome::Added { run_id, trial } => (run_id, Some(trial)),
            Outcome::AlreadyPresent { run_id } => (run_id, None),
        }
    }
}

pub struct Warehouse {
    root: PathBuf,
}

fn now_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// The run id: a hash of one ingested file — its content, its name and its metadata —
/// so re-ingesting the same file with the same metadata is recognised, the same file
/// under another label is not, and two trial files that happen to hold the same text
/// (a stable GPU printing `10.00 us` four times) are two trials.
pub fn run_id(source_sha256: &str, source_name: &str, format: &str, meta: &RunMeta) -> String {
    let mut h = Sha256::new();
    for part in [
        source_sha256,
        source_name_key(source_name),
        format,
        &meta.label,
        meta.commit.as_deref().unwrap_or(""),
        meta.arch.as_deref().unwrap_or(""),
        &schema::tags_json(&meta.tags),
    ] {
        h.update(part.as_bytes());
        h.update([0u8]);
    }
    hex(&h.finalize()[..10])
}

/// The part of a source path that identifies the file: the path as given, without a
/// leading `./` (so `./logs/t1.log` and `logs/t1.log` are one file).
fn source_name_key(path: &str) -> &str {
    let mut p = path;
    while let Some(rest) = p.strip_prefix("./") {
        p = rest;
    }
    p
}

/// Turn one parsed file into a run ready to commit (trial is assigned at commit).
pub fn prepare(
    source_path: &str,
    bytes: &[u8],
    format: &str,
    parsed: Parsed,
    meta: &RunMeta,
) -> Prepared {
    let sha = sha256_hex(bytes);
    // Values per table, tables in order of appearance (a log may print thousands of
    // tables: find each by its interned name, not by scanning the list).
    let mut tables: Vec<(String, usize)> = Vec::new();
    let mut at: HashMap<crate::model::Name, usize> = HashMap::new();
    for m in &parsed.measurements {
        match at.get(&m.table) {
            Some(&i) => tables[i].1 += 1,
            None => {
                at.insert(m.table, tables.len());
                tables.push((m.table.to_string(), 1));
            }
        }
    }
    let repetitions: Vec<Prepared> = parsed
        .repetitions
        .into_iter()
        .enumerate()
        .map(|(i, measurements)| {
            let rep = Parsed {
                measurements,
                provenance: parsed.provenance.clone(),
                warnings: Vec::new(),
                repetitions: Vec::new(),
            };
            prepare(
                &format!("{source_path}#{}", i + 2),
                bytes,
                format,
                rep,
                meta,
            )
        })
        .collect();
    let p = parsed.provenance;
    // Tags: the command line's, then what the output says that the command line did not.
    let mut tags = meta.tags.clone();
    let mut from_output = p.tags;
    if let Some(m) = p.machine {
        from_output.push(("machine".to_string(), m));
    }
    for (k, v) in from_output {
        if !tags.iter().any(|(t, _)| *t == k) {
            tags.push((k, v));
        }
    }
    let (verdict, verdict_detail) = match &meta.failed {
        Some(why) => (
            Some("fail".to_string()),
            Some(match p.verdict_detail {
                Some(d) => format!("{why}; {d}"),
                None => why.clone(),
            }),
        ),
        None => (p.verdict, p.verdict_detail),
    };
    let run = Run {
        run_id: run_id(&sha, source_path, format, meta),
        ingested_at_us: 0,
        source_path: source_path.to_string(),
        source_sha256: sha,
        format: format.to_string(),
        label: meta.label.clone(),
        commit: meta.commit.clone().or(p.commit),
        commit_time_us: meta.commit_time_us.unwrap_or(0),
        arch: meta.arch.clone().or(p.arch),
        tags,
        trial: 0,
        verdict,
        verdict_detail,
        image_digest: p.image_digest,
        token: p.token,
        n_measurements: parsed.measurements.len() as i64,
        n_tables: tables.len() as i32,
    };
    Prepared {
        run,
        measurements: parsed.measurements,
        tables,
        warnings: parsed.warnings,
        repetitions,
    }
}

struct LockGuard(File);
impl Drop for LockGuard {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

impl Warehouse {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Warehouse { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Run `f` holding the writer lock every commit takes (`perfdb sql --write`: a
    /// statement that writes files never interleaves with a commit).
    pub fn with_writer_lock<T>(&self, f: impl FnOnce() -> T) -> Result<T> {
        let _guard = self.lock()?;
        Ok(f())
    }

    fn lock(&self) -> Result<LockGuard> {
        fs::create_dir_all(&self.root).map_err(io(&self.root))?;
        let path = self.root.join(LOCK);
        let f = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io(&path))?;
        f.lock().map_err(io(&path))?;
        Ok(LockGuard(f))
    }

    /// The committed state. A warehouse that does not exist yet is empty.
    pub fn manifest(&self) -> Result<Manifest> {
        let path = self.root.join(MANIFEST);
        match fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map_err(|source| WarehouseError::Manifest { path, source }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Manifest {
                format_version: 1,
                ..Default::default()
            }),
            Err(e) => Err(io(&path)(e)),
        }
    }

    /// Identifies the committed state cheaply (manifest size and modification time), so
    /// a long-running reader knows when to look again. `None` for an empty warehouse.
    /// With the file's inode: every commit renames a new file into place, so two
    /// commits within one clock tick and of equal size still differ.
    pub fn state_signature(&self) -> Option<(u64, SystemTime, u64)> {
        let m = fs::metadata(self.root.join(MANIFEST)).ok()?;
        #[cfg(unix)]
        let ino = std::os::unix::fs::MetadataExt::ino(&m);
        #[cfg(not(unix))]
        let ino = 0;
        Some((m.len(), m.modified().ok()?, ino))
    }

    /// Absolute paths of the committed summary files, and of the committed measurements
    /// files that have none (written before summaries existed, until `compact`).
    pub fn committed_summaries(&self) -> Result<(Vec<PathBuf>, Vec<PathBuf>)> {
        let m = self.manifest()?;
        let listed: HashSet<&String> = m.summaries.iter().collect();
        let bare = m
            .measurements
            .iter()
            .filter(|rel| !listed.contains(&summary_of(rel)))
            .map(|p| self.root.join(p))
            .collect();
        Ok((
            m.summaries.iter().map(|p| self.root.join(p)).collect(),
            bare,
        ))
    }

    /// Absolute paths of the committed files of `runs` and `measurements`.
    pub fn committed_files(&self) -> Result<(Vec<PathBuf>, Vec<PathBuf>)> {
        let m = self.manifest()?;
        let abs = |v: &[String]| v.iter().map(|p| self.root.join(p)).collect();
        Ok((abs(&m.runs), abs(&m.measurements)))
    }

    /// Absolute paths of the committed alert record, status and delivery files.
    pub fn committed_alert_files(&self) -> Result<(Vec<PathBuf>, Vec<PathBuf>, Vec<PathBuf>)> {
        let m = self.manifest()?;
        let abs = |v: &[String]| v.iter().map(|p| self.root.join(p)).collect();
        Ok((abs(&m.alerts), abs(&m.alert_status), abs(&m.alert_delivery)))
    }

    /// Commit one delivery record (right after the receiver acknowledged it, so a
    /// process killed later never sends it again).
    pub fn commit_delivery(&self, d: &crate::model::Delivery) -> Result<()> {
        let _guard = self.lock()?;
        let mut manifest = self.manifest()?;
        let rel = format!(
            "{ALERT_DELIVERY_DIR}/part-{:x}-{:x}.parquet",
            now_us(),
            std::process::id()
        );
        self.write_parquet(
            &rel,
            &[schema::alert_delivery_batch(std::slice::from_ref(d))],
        )?;
        manifest.alert_delivery.push(rel);
        self.write_manifest(&manifest)
    }

    /// Commit new alerts and status changes in one transaction (same protocol as runs:
    /// files aside, renamed in, then the manifest). `new_alerts` is called under the
    /// writer lock with the ids already stored, so concurrent detects never store one
    /// alert twice; it returns the records and the status changes to add.
    pub fn commit_alerts(
        &self,
        new_alerts: impl FnOnce(
            &HashSet<String>,
        ) -> (
            Vec<crate::model::AlertRecord>,
            Vec<crate::model::StatusChange>,
        ),
    ) -> Result<(
        Vec<crate::model::AlertRecord>,
        Vec<crate::model::StatusChange>,
    )> {
        let _guard = self.lock()?;
        let mut manifest = self.manifest()?;
        let mut known = HashSet::new();
        for rel in &manifest.alerts {
            for b in read_columns(&self.root.join(rel), &[schema::alerts::ALERT_ID])? {
                if let Some(ids) = b.column(0).as_any().downcast_ref::<StringArray>() {
                    known.extend(ids.iter().flatten().map(String::from));
                }
            }
        }
        let (mut records, changes) = new_alerts(&known);
        records.retain(|r| !known.contains(&r.alert_id));
        if records.is_empty() && changes.is_empty() {
            return Ok((records, changes));
        }
        let batch_id = format!("{:x}-{:x}", now_us(), std::process::id());
        if !records.is_empty() {
            let rel = format!("{ALERT_RECORDS_DIR}/part-{batch_id}.parquet");
            self.write_parquet(&rel, &[schema::alerts_batch(&records)])?;
            manifest.alerts.push(rel);
        }
        if !changes.is_empty() {
            let rel = format!("{ALERT_STATUS_DIR}/part-{batch_id}.parquet");
            self.write_parquet(&rel, &[schema::alert_status_batch(&changes)])?;
            manifest.alert_status.push(rel);
        }
        self.write_manifest(&manifest)?;
        Ok((records, changes))
    }

    fn write_manifest(&self, m: &Manifest) -> Result<()> {
        let mut m = m.clone();
        m.version += 1;
        let tmp_dir = self.root.join(TMP_DIR);
        fs::create_dir_all(&tmp_dir).map_err(io(&tmp_dir))?;
        let tmp = tmp_dir.join(format!("manifest-{}-{}.json", std::process::id(), now_us()));
        let body = serde_json::to_vec_pretty(&m).expect("manifest serialises");
        let mut f = File::create(&tmp).map_err(io(&tmp))?;
        f.write_all(&body).map_err(io(&tmp))?;
        f.sync_all().map_err(io(&tmp))?;
        let dst = self.root.join(MANIFEST);
        fs::rename(&tmp, &dst).map_err(io(&dst))?;
        sync_dir(&self.root);
        // Committed. Then the Delta logs other engines read follow the manifest.
        let mut t = std::time::Instant::now();
        crate::delta_tables::sync(&self.root, &m)?;
        crate::trace("Delta logs synced", &mut t);
        Ok(())
    }

    /// Write `batches` into one Parquet file at `rel` (relative to root), atomically.
    fn write_parquet(&self, rel: &str, batches: &[RecordBatch]) -> Result<()> {
        self.write_parquet_grouped(rel, batches, None)
    }

    /// `write_parquet` with row groups of at most `row_group` rows.
    fn write_parquet_grouped(
        &self,
        rel: &str,
        batches: &[RecordBatch],
        row_group: Option<usize>,
    ) -> Result<()> {
        let tmp_dir = self.root.join(TMP_DIR);
        fs::create_dir_all(&tmp_dir).map_err(io(&tmp_dir))?;
        let tmp = tmp_dir.join(rel.replace('/', "__") + ".tmp");
        let f = File::create(&tmp).map_err(io(&tmp))?;
        let props = writer_properties(row_group);
        let schema = batches[0].schema();
        let mut w = ArrowWriter::try_new(f, schema, Some(props)).map_err(pq(&tmp))?;
        for b in batches {
            w.write(b).map_err(pq(&tmp))?;
        }
        let f = w.into_inner().map_err(pq(&tmp))?;
        f.sync_all().map_err(io(&tmp))?;
        let dst = self.root.join(rel);
        let dir = dst.parent().expect("partition dir");
        fs::create_dir_all(dir).map_err(io(dir))?;
        fs::rename(&tmp, &dst).map_err(io(&dst))?;
        sync_dir(dir);
        Ok(())
    }

    /// Existing run ids and the highest trial number per label.
    fn existing(&self, m: &Manifest) -> Result<(HashSet<String>, HashMap<String, i32>)> {
        let mut ids = HashSet::new();
        let mut trials: HashMap<String, i32> = HashMap::new();
        for rel in &m.runs {
            let label = label_of(rel).unwrap_or_default();
            for b in read_columns(
                &self.root.join(rel),
                &[schema::runs::RUN_ID, schema::runs::TRIAL],
            )? {
                let idc = b.column(0).as_any().downcast_ref::<StringArray>();
                let tc = b.column(1).as_any().downcast_ref::<Int32Array>();
                if let (Some(idc), Some(tc)) = (idc, tc) {
                    for i in 0..b.num_rows() {
                        ids.insert(idc.value(i).to_string());
                        let t = trials.entry(label.clone()).or_insert(0);
                        *t = (*t).max(tc.value(i));
                    }
                }
            }
        }
        Ok((ids, trials))
    }

    /// Commit prepared runs together: one file per table and label. Returns one outcome
    /// per input, in order.
    pub fn commit(&self, mut prepared: Vec<Prepared>) -> Result<Vec<Outcome>> {
        if prepared.is_empty() {
            // Nothing parsed: do not create a warehouse just to say so.
            return Ok(Vec::new());
        }
        let _guard = self.lock()?;
        let mut manifest = self.manifest()?;
        manifest.format_version = 1;
        let (mut ids, mut trials) = self.existing(&manifest)?;
        let now = now_us();
        let mut outcomes = Vec::with_capacity(prepared.len());
        let mut fresh: Vec<usize> = Vec::new();
        for (i, p) in prepared.iter_mut().enumerate() {
            if !ids.insert(p.run.run_id.clone()) {
                outcomes.push(Outcome::AlreadyPresent {
                    run_id: p.run.run_id.clone(),
                });
                continue;
            }
            let t = trials.entry(p.run.label.clone()).or_insert(0);
            *t += 1;
            p.run.trial = *t;
            p.run.ingested_at_us = now;
            if p.run.commit_time_us == 0 {
                // No --commit-time: the commit is taken to be as new as the ingest.
                p.run.commit_time_us = now;
            }
            outcomes.push(Outcome::Added {
                run_id: p.run.run_id.clone(),
                trial: *t,
            });
            fresh.push(i);
        }
        if fresh.is_empty() {
            return Ok(outcomes);
        }
        let mut by_label: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for i in fresh {
            by_label
                .entry(prepared[i].run.label.clone())
                .or_default()
                .push(i);
        }
        let batch_id = format!("{now:x}-{:x}", std::process::id());
        for (label, idx) in &by_label {
            let runs: Vec<&Run> = idx.iter().map(|i| &prepared[*i].run).collect();
            let ms: Vec<(&str, &[Measurement])> = idx
                .iter()
                .map(|i| {
                    (
                        prepared[*i].run.run_id.as_str(),
                        prepared[*i].measurements.as_slice(),
                    )
                })
                .collect();
            let m_rel = format!("{MEASUREMENTS_DIR}/label={label}/part-{batch_id}.parquet");
            let r_rel = format!("{RUNS_DIR}/label={label}/part-{batch_id}.parquet");
            let s_rel = summary_of(&m_rel);
            // The measurements and their summaries are written side by side (two cores).
            let mut t = std::time::Instant::now();
            let batch = measurements_batch(&ms);
            crate::trace("measurements batch", &mut t);
            let (written, summarised) = std::thread::scope(|s| {
                let summaries = s.spawn(|| {
                    let mut t = std::time::Instant::now();
                    let sums = summary::from_batch(&batch);
                    crate::trace("summaries batch", &mut t);
                    let r = self.write_parquet_grouped(&s_rel, &[sums], Some(summary::ROW_GROUP));
                    crate::trace("summaries file", &mut t);
                    r
                });
                let written = self.write_parquet(&m_rel, std::slice::from_ref(&batch));
                (written, summaries.join().expect("summary thread panicked"))
            });
            written?;
            summarised?;
            crate::trace("measurements and summaries", &mut t);
            self.write_parquet(&r_rel, &[runs_batch(&runs)])?;
            crate::trace("runs file", &mut t);
            manifest.measurements.push(m_rel);
            manifest.summaries.push(s_rel);
            manifest.runs.push(r_rel);
        }
        self.write_manifest(&manifest)?;
        Ok(outcomes)
    }

    /// Merge each partition's files into one, with the same crash safety as ingest, and
    /// delete files no manifest lists (left by interrupted commands). Replaced files are
    /// retired, not deleted: a reader may hold the manifest that lists them. Files retired
    /// by an earlier compaction more than `grace` ago are deleted.
    pub fn compact(&self, grace: std::time::Duration) -> Result<CompactReport> {
        let _guard = self.lock()?;
        let mut manifest = self.manifest()?;
        let mut report = CompactReport::default();
        // Files no manifest lists: left by commands interrupted before their commit.
        let listed: HashSet<String> = manifest
            .runs
            .iter()
            .chain(&manifest.measurements)
            .chain(manifest.retired.iter().map(|r| &r.path))
            .chain(&manifest.alerts)
            .chain(&manifest.alert_status)
            .chain(&manifest.alert_delivery)
            .chain(&manifest.summaries)
            .cloned()
            .collect();
        let orphans: Vec<PathBuf> = [
            RUNS_DIR,
            MEASUREMENTS_DIR,
            SUMMARIES_DIR,
            ALERT_RECORDS_DIR,
            ALERT_STATUS_DIR,
            ALERT_DELIVERY_DIR,
        ]
        .iter()
        .flat_map(|d| walk_files(&self.root.join(d)))
        .filter(|f| {
            let rel = f
                .strip_prefix(&self.root)
                .map(|p| p.to_string_lossy().replace('\\', "/"))
                .unwrap_or_default();
            // The Delta logs' checkpoints are Parquet too, and never orphans.
            rel.ends_with(".parquet") && !rel.contains("/_delta_log/") && !listed.contains(&rel)
        })
        .collect();
        let now = now_us();
        let batch_id = format!("{:x}-{:x}-c", now, std::process::id());
        // Retired long enough ago that no reader can still hold a manifest listing them.
        let cutoff = now - grace.as_micros() as i64;
        let (expired, kept): (Vec<Retired>, Vec<Retired>) = std::mem::take(&mut manifest.retired)
            .into_iter()
            .partition(|r| r.at_us <= cutoff);
        manifest.retired = kept;
        let mut replaced: Vec<String> = Vec::new();
        for (dir, list) in [
            (RUNS_DIR, &mut manifest.runs),
            (MEASUREMENTS_DIR, &mut manifest.measurements),
        ] {
            let mut by_label: BTreeMap<String, Vec<String>> = BTreeMap::new();
            for rel in list.iter() {
                by_label
                    .entry(label_of(rel).unwrap_or_default())
                    .or_default()
                    .push(rel.clone());
            }
            let mut new_list = Vec::new();
            for (label, files) in by_label {
                report.files_before += files.len();
                if files.len() == 1 {
                    new_list.extend(files);
                    continue;
                }
                let mut batches = Vec::new();
                for rel in &files {
                    batches.extend(read_columns(&self.root.join(rel), &[])?);
                }
                let rel = format!("{dir}/label={label}/part-{batch_id}.parquet");
                self.write_parquet(&rel, &batches)?;
                new_list.push(rel);
                replaced.extend(files);
            }
            report.files_after += new_list.len();
            *list = new_list;
        }
        // Summaries: one per measurements file, rebuilt from the measurements where these
        // were merged or have none (written before summaries existed).
        let summaries: HashSet<String> = manifest.summaries.iter().cloned().collect();
        let mut new_summaries = Vec::new();
        for rel in &manifest.measurements {
            let s_rel = summary_of(rel);
            if !summaries.contains(&s_rel) {
                let batches = read_columns(&self.root.join(rel), &[])?;
                self.write_parquet_grouped(
                    &s_rel,
                    &[summary::from_batches(&batches)],
                    Some(summary::ROW_GROUP),
                )?;
                report.summaries_written += 1;
            }
            new_summaries.push(s_rel);
        }
        let kept: HashSet<&String> = new_summaries.iter().collect();
        replaced.extend(
            manifest
                .summaries
                .iter()
                .filter(|s| !kept.contains(s))
                .cloned(),
        );
        manifest.summaries = new_summaries;
        // The alert tables are small and unpartitioned: one file each.
        for (dir, list) in [
            (ALERT_RECORDS_DIR, &mut manifest.alerts),
            (ALERT_STATUS_DIR, &mut manifest.alert_status),
            (ALERT_DELIVERY_DIR, &mut manifest.alert_delivery),
        ] {
            report.files_before += list.len();
            if list.len() > 1 {
                let mut batches = Vec::new();
                for rel in list.iter() {
                    batches.extend(read_columns(&self.root.join(rel), &[])?);
                }
                let rel = format!("{dir}/part-{batch_id}.parquet");
                self.write_parquet(&rel, &batches)?;
                replaced.append(list);
                list.push(rel);
            }
            report.files_after += list.len();
        }
        report.files_retired = replaced.len();
        manifest.retired.extend(
            replaced
                .into_iter()
                .map(|path| Retired { path, at_us: now }),
        );
        if report.files_retired > 0 || report.summaries_written > 0 || !expired.is_empty() {
            self.write_manifest(&manifest)?;
        }
        // The manifest no longer lists the expired files; delete them and the orphans.
        for r in &expired {
            let f = self.root.join(&r.path);
            match fs::remove_file(&f) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(&f)(e)),
                _ => {}
            }
        }
        // A file this compaction wrote again under an orphan's name (a summary rebuilt
        // over one a manifest no longer listed) is listed now: not an orphan.
        let now_listed: HashSet<PathBuf> = manifest
            .summaries
            .iter()
            .map(|rel| self.root.join(rel))
            .collect();
        let orphans: Vec<&PathBuf> = orphans
            .iter()
            .filter(|f| !now_listed.contains(*f))
            .collect();
        for f in &orphans {
            fs::remove_file(f).map_err(io(f))?;
        }
        report.files_deleted = orphans.len();
        report.retired_deleted = expired.len();
        report.files_still_retired = manifest.retired.len();
        let tmp = self.root.join(TMP_DIR);
        if tmp.exists() {
            for f in walk_files(&tmp) {
                let _ = fs::remove_file(f);
            }
        }
        Ok(report)
    }
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CompactReport {
    pub files_before: usize,
    /// Summary files written for measurements that had none (merged, or older).
    pub summaries_written: usize,
    pub files_after: usize,
    /// Orphans: files of interrupted commands that no manifest listed.
    pub files_deleted: usize,
    /// Files this compaction replaced (kept on disk for readers, see [`Manifest::retired`]).
    pub files_retired: usize,
    /// Files retired by earlier compactions, past the grace period, deleted now.
    pub retired_deleted: usize,
    /// Retired files still on disk after this compaction.
    pub files_still_retired: usize,
}

/// How every warehouse file is written (the fuzz checks write their round trip the
/// same way): Snappy, and row groups of at most `row_group` rows when given.
pub(crate) fn writer_properties(row_group: Option<usize>) -> WriterProperties {
    let mut props = WriterProperties::builder().set_compression(Compression::SNAPPY);
    if let Some(n) = row_group {
        props = props.set_max_row_group_row_count(Some(n));
    }
    props.build()
}

/// `runs/label=base/part-x.parquet` -> `base`.
pub fn label_of(rel: &str) -> Option<String> {
    rel.split('/')
        .find_map(|seg| seg.strip_prefix("label="))
        .map(str::to_string)
}

/// Read a Parquet file, optionally projecting `columns` by name (empty = all).
pub fn read_columns(path: &Path, columns: &[&str]) -> Result<Vec<RecordBatch>> {
    let f = File::open(path).map_err(io(path))?;
    let mut b = ParquetRecordBatchReaderBuilder::try_new(f).map_err(pq(path))?;
    if !columns.is_empty() {
        let schema = b.parquet_schema();
        let idx: Vec<usize> = columns
            .iter()
            .filter_map(|c| schema.columns().iter().position(|col| col.name() == *c))
            .collect();
        let mask = ProjectionMask::leaves(schema, idx);
        b = b.with_projection(mask);
    }
    let reader = b.build().map_err(pq(path))?;
    reader
        .map(|r| {
            r.map_err(|e| WarehouseError::Parquet {
                path: path.to_path_buf(),
                source: e.into(),
            })
        })
        .collect()
}

fn walk_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk_files(&p));
        } else {
            out.push(p);
        }
    }
    out
}

fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}
