//! The Parquet warehouse: six Delta tables under one root.
//!
//! ```text
//! <root>/runs/label=<label>/part-<batch>-r<n>.parquet    + runs/_delta_log/
//! <root>/measurements/label=<label>/part-<batch>.parquet + measurements/_delta_log/
//! <root>/summaries/label=<label>/part-<batch>.parquet    per-run summaries of that batch
//! <root>/alert_records/, alert_status/, alert_delivery/  the alerts (flat)
//! <root>/_tmp/                                           files being written
//! ```
//! Hive-style partitions and Delta logs (`delta.rs`, `tables.rs`), readable as they are
//! by delta-rs, Spark, Trino and polars. One ingest command writes one file per table
//! and label, whatever the number of runs.
//!
//! **The log is the commit point**, and no lock is taken: a commit is the conditional
//! create of a table's next log version, so writers on one machine or many race, and a
//! loser re-reads and retries. Delta has no transaction across tables, so one ingest's
//! tables are ordered and gated:
//! 1. its data files are written (into `_tmp/`, fsynced, renamed into their partition);
//! 2. `measurements` and `summaries` get their `add`s, each tagged with the batch id
//!    (`perfdb.batch`): appends that commute with any other writer's;
//! 3. `runs` gets its `add`s, tagged with the batches they admit (`perfdb.batches`).
//!    This is the gate: perfdb's readers take the runs snapshot first and use only the
//!    measurement and summary files whose batch it admits, so a reader never sees a run
//!    without its values, nor the values of a batch that lost or died. Losing the race
//!    on `runs`, a writer re-reads it: run ids another writer committed meanwhile leave
//!    this batch (its values are written again without them, under a new batch id), and
//!    trial numbers are assigned again; then it retries.
//!
//! Files of a batch never gated (a killed writer) stay in their logs but out of every
//! perfdb read; `compact` removes them from the logs once older than its grace period.
//! Nothing deletes a file but `vacuum` (`compact.rs`). A warehouse written before the
//! log was the commit point (`_manifest.json`) is moved over by `migrate.rs`.

use crate::delta::{Action, Add, Backoff, Snapshot};
use crate::model::{Keys, Measurement, Parsed, Run, RunMeta, Warning};
use crate::schema::{self, measurements_batch, runs_batch};
use crate::summary;
use crate::tables::{block_on, rel_of, Logs, Table};
use arrow::array::{Array, Int32Array, RecordBatch, StringArray};
use object_store::path::Path as StorePath;
use object_store::{ObjectStore, ObjectStoreExt};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::{ArrowWriter, ProjectionMask};
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::sync::Arc;
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
/// The commit point of warehouses written before the Delta log was (`migrate.rs`).
pub const MANIFEST: &str = "_manifest.json";
pub(crate) const TMP_DIR: &str = "_tmp";
/// Tag of a measurements or summaries file: the batch (one ingest) that wrote it.
pub const BATCH_TAG: &str = "perfdb.batch";
/// Tag of a runs file: the batches whose values it admits, comma-separated.
pub const GATE_TAG: &str = "perfdb.batches";

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
    #[error(transparent)]
    Log(#[from] crate::delta::DeltaError),
    #[error("{0}: this warehouse keeps its commits in _manifest.json (perfdb before the Delta log); run `perfdb --warehouse {0} migrate` once to move it to the log")]
    NeedsMigration(PathBuf),
    #[error("{0}")]
    Conflict(String),
}

pub(crate) type Result<T> = std::result::Result<T, WarehouseError>;

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
}

/// The summary file that summarises measurements file `rel`.
pub fn summary_of(rel: &str) -> String {
    match rel.strip_prefix(MEASUREMENTS_DIR) {
        Some(rest) => format!("{SUMMARIES_DIR}{rest}"),
        None => rel.to_string(),
    }
}

/// How old a file of a batch that was never gated must be before `compact` takes it
/// out of its log: far longer than any writer takes from its first `add` to its gate.
pub const DEFAULT_GRACE: std::time::Duration = std::time::Duration::from_secs(600);

/// A parsed file, ready to commit.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub run: Run,
    pub measurements: Vec<Measurement>,
    /// The keys of `measurements`, shared with `repetitions`.
    pub keys: Arc<Keys>,
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
    /// The warehouse directory; for a remote warehouse, its local cache.
    root: PathBuf,
    remote: Option<Remote>,
}

/// A remote warehouse: its URL and its store (or why it cannot be reached).
struct Remote {
    url: String,
    store: std::result::Result<Arc<dyn ObjectStore>, String>,
}

/// The values an ingest committed: for which runs, as which batch, and their `add`s.
struct Written {
    runs: Vec<usize>,
    batch: String,
    adds: [(Table, Vec<Add>); 2],
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
    let name = source_name_key(source_name);
    for part in [
        source_sha256,
        &*name,
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

/// The part of a source path that identifies the file: its canonical absolute path when
/// it names a file here (so `logs/t1.log`, `./logs/t1.log` and `/ci/logs/t1.log` are one
/// file), else the path as given without a leading `./` (standard input, a command's
/// output; a repetition `path#2` keeps its suffix on the canonical path).
fn source_name_key(path: &str) -> std::borrow::Cow<'_, str> {
    let (file, suffix) = match path.rsplit_once('#') {
        Some((f, n)) if n.chars().all(|c| c.is_ascii_digit()) && !n.is_empty() => (f, Some(n)),
        _ => (path, None),
    };
    if let Ok(abs) = std::fs::canonicalize(file) {
        if let Some(abs) = abs.to_str() {
            return match suffix {
                Some(n) => format!("{abs}#{n}").into(),
                None => abs.to_string().into(),
            };
        }
    }
    let mut p = path;
    while let Some(rest) = p.strip_prefix("./") {
        p = rest;
    }
    p.into()
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
    let keys = Arc::new(parsed.keys);
    let repetitions: Vec<Prepared> = parsed
        .repetitions
        .into_iter()
        .enumerate()
        .map(|(i, measurements)| {
            let rep = Parsed {
                measurements,
                keys: Keys::default(),
                provenance: parsed.provenance.clone(),
                warnings: Vec::new(),
                repetitions: Vec::new(),
            };
            Prepared {
                keys: keys.clone(),
                ..prepare(
                    &format!("{source_path}#{}", i + 2),
                    bytes,
                    format,
                    rep,
                    meta,
                )
            }
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
        keys,
        tables,
        warnings: parsed.warnings,
        repetitions,
    }
}

impl Warehouse {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        let root: PathBuf = root.into();
        let location = root.to_str().unwrap_or_default();
        if let Some(path) = crate::tables::file_url_path(location) {
            return Warehouse {
                root: path,
                remote: None,
            };
        }
        if crate::tables::is_remote(location) {
            let url = location.trim_end_matches('/').to_string();
            return Warehouse {
                root: crate::tables::cache_dir(&url),
                remote: Some(Remote {
                    store: crate::tables::shared_store(&url),
                    url,
                }),
            };
        }
        Warehouse { root, remote: None }
    }

    /// The warehouse directory; for a remote warehouse (`s3://...`), the local
    /// directory its files are cached in (and saved comparisons kept in).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where the warehouse is, as the user named it.
    pub fn location(&self) -> String {
        match &self.remote {
            Some(r) => r.url.clone(),
            None => self.root.display().to_string(),
        }
    }

    pub fn is_remote(&self) -> bool {
        self.remote.is_some()
    }

    fn store(&self) -> Result<Option<Arc<dyn ObjectStore>>> {
        match &self.remote {
            None => Ok(None),
            Some(Remote { store: Ok(s), .. }) => Ok(Some(s.clone())),
            Some(Remote { store: Err(e), .. }) => Err(WarehouseError::Conflict(e.clone())),
        }
    }

    /// The tables' logs; `None` for a local warehouse that does not exist yet.
    pub(crate) fn logs(&self) -> Result<Option<Logs>> {
        if let Some(store) = self.store()? {
            return Ok(Some(Logs::remote(store, &self.location())));
        }
        if !self.root.is_dir() {
            return Ok(None);
        }
        if self.root.join(MANIFEST).exists() {
            return Err(WarehouseError::NeedsMigration(self.root.clone()));
        }
        Ok(Some(Logs::local(&self.root)?))
    }

    /// The tables' logs, creating a local warehouse's directory for a first commit.
    pub(crate) fn logs_creating(&self) -> Result<Logs> {
        if self.remote.is_none() {
            fs::create_dir_all(&self.root).map_err(io(&self.root))?;
        }
        Ok(self.logs()?.expect("the directory was just created"))
    }

    /// A local path holding the committed file `rel`: the file itself, or for a remote
    /// warehouse its copy in the cache, fetched on first use (files never change once
    /// written, so a cached copy is never stale).
    pub fn local(&self, rel: &str) -> Result<PathBuf> {
        let path = self.root.join(rel);
        let Some(store) = self.store()? else {
            return Ok(path);
        };
        if path.is_file() {
            return Ok(path);
        }
        let at = StorePath::from(rel);
        let bytes = block_on(async { store.get(&at).await?.bytes().await }).map_err(|source| {
            crate::delta::DeltaError::Store {
                path: format!("{}/{rel}", self.location()),
                source,
            }
        })?;
        self.save_local(rel, &bytes)?;
        Ok(path)
    }

    /// [`Warehouse::local`] of each of `rels`; a remote warehouse's files not cached
    /// yet are fetched 16 at a time (a first read of a warehouse is many small GETs).
    pub fn local_all(&self, rels: &[String]) -> Result<Vec<PathBuf>> {
        if let Some(store) = self.store()? {
            use futures::StreamExt;
            let missing: Vec<String> = rels
                .iter()
                .filter(|r| !self.root.join(r.as_str()).is_file())
                .cloned()
                .collect();
            let fetches = missing.into_iter().map(|rel| {
                let store = store.clone();
                async move {
                    let at = StorePath::from(rel.as_str());
                    let got = match store.get(&at).await {
                        Ok(r) => r.bytes().await,
                        Err(e) => Err(e),
                    };
                    (rel, got)
                }
            });
            let fetched: Vec<_> = block_on(
                futures::stream::iter(fetches)
                    .buffer_unordered(16)
                    .collect::<Vec<_>>(),
            );
            for (rel, got) in fetched {
                let bytes = got.map_err(|source| crate::delta::DeltaError::Store {
                    path: format!("{}/{rel}", self.location()),
                    source,
                })?;
                self.save_local(&rel, &bytes)?;
            }
        }
        rels.iter().map(|r| self.local(r)).collect()
    }

    /// A file aside (in `_tmp/`) to write `rel` into before [`Warehouse::place`].
    fn aside(&self, rel: &str) -> Result<(PathBuf, File)> {
        let tmp_dir = self.root.join(TMP_DIR);
        fs::create_dir_all(&tmp_dir).map_err(io(&tmp_dir))?;
        let tmp = tmp_dir.join(format!(
            "{}-{:x}.tmp",
            rel.replace('/', "__"),
            std::process::id()
        ));
        let f = File::create(&tmp).map_err(io(&tmp))?;
        Ok((tmp, f))
    }

    /// Rename the file written aside at `tmp` to `rel` under the local root; with
    /// `sync` (the warehouse's own files, not a cache's copies), flushed to disk first.
    fn place(&self, tmp: &Path, f: File, rel: &str, sync: bool) -> Result<()> {
        if sync {
            f.sync_all().map_err(io(tmp))?;
        }
        drop(f);
        let dst = self.root.join(rel);
        let dir = dst.parent().expect("partition dir");
        fs::create_dir_all(dir).map_err(io(dir))?;
        fs::rename(tmp, &dst).map_err(io(&dst))?;
        if sync {
            sync_dir(dir);
        }
        Ok(())
    }

    /// Keep `bytes` at `rel` under the local root (a remote file's cached copy).
    fn save_local(&self, rel: &str, bytes: &[u8]) -> Result<()> {
        let (tmp, mut f) = self.aside(rel)?;
        std::io::Write::write_all(&mut f, bytes).map_err(io(&tmp))?;
        self.place(&tmp, f, rel, false)
    }

    /// Write `batches` as one Parquet file at `rel` of table `t` (row groups of at most
    /// `row_group` rows when given): locally written aside, flushed and renamed in;
    /// remotely one put (and a copy kept in the cache). Returns its `add`.
    pub(crate) fn write_file(
        &self,
        rel: &str,
        t: Table,
        batches: &[RecordBatch],
        row_group: Option<usize>,
        tags: Option<BTreeMap<String, String>>,
    ) -> Result<Add> {
        fn encode<W: std::io::Write + Send>(
            out: W,
            batches: &[RecordBatch],
            row_group: Option<usize>,
        ) -> std::result::Result<W, parquet::errors::ParquetError> {
            let props = writer_properties(row_group);
            let mut w = ArrowWriter::try_new(out, batches[0].schema(), Some(props))?;
            for b in batches {
                w.write(b)?;
            }
            w.into_inner()
        }
        let rows = batches.iter().map(|b| b.num_rows() as u64).sum();
        let size = match self.store()? {
            None => {
                let (tmp, f) = self.aside(rel)?;
                let f = encode(f, batches, row_group).map_err(pq(&tmp))?;
                let size = f.metadata().map_err(io(&tmp))?.len();
                self.place(&tmp, f, rel, true)?;
                size
            }
            Some(store) => {
                let body =
                    encode(Vec::new(), batches, row_group).map_err(pq(&self.root.join(rel)))?;
                let payload = object_store::PutPayload::from(body.clone());
                block_on(store.put(&StorePath::from(rel), payload)).map_err(|source| {
                    crate::delta::DeltaError::Store {
                        path: format!("{}/{rel}", self.location()),
                        source,
                    }
                })?;
                // The cache is a convenience: a failure to keep a copy is no failure.
                let _ = self.save_local(rel, &body);
                body.len() as u64
            }
        };
        Ok(crate::tables::add_from(rel, t, size, rows, tags))
    }

    /// [`Warehouse::write_file`] of one batch of an alert table (flat, untagged).
    fn write_flat(&self, rel: &str, t: Table, batch: RecordBatch) -> Result<Add> {
        self.write_file(rel, t, &[batch], None, None)
    }

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

    /// Commit one delivery record (right after the receiver acknowledged it, so a
    /// process killed later never sends it again).
    pub fn commit_delivery(&self, d: &crate::model::Delivery) -> Result<()> {
        let logs = self.logs_creating()?;
        let rel = format!("{ALERT_DELIVERY_DIR}/part-{}.parquet", new_batch_id(""));
        let batch = schema::alert_delivery_batch(std::slice::from_ref(d));
        let add = self.write_flat(&rel, Table::AlertDelivery, batch)?;
        Ok(block_on(append(&logs, Table::AlertDelivery, vec![add]))?)
    }

    /// Claim (alert, target) pairs for delivery, in one conditional commit of a claim row
    /// (`http_status` 0) per pair that is free: not delivered (no 2xx row) and not
    /// claimed by another run less than `lease_us` ago without an answer recorded since.
    /// A run that loses the commit race reads the winner's claims and tries again with
    /// what is still free, so two runs never claim the same pair. One answer per pair,
    /// in order.
    pub fn claim_deliveries(
        &self,
        pairs: &[(String, String)],
        lease_us: i64,
        now_us: i64,
    ) -> Result<Vec<Claim>> {
        if pairs.is_empty() {
            return Ok(Vec::new());
        }
        let logs = self.logs_creating()?;
        let t = logs.table(Table::AlertDelivery);
        let mut snap = block_on(t.snapshot())?;
        let batch = new_batch_id("");
        let mut backoff = Backoff::default();
        for attempt in 0.. {
            let state = self.delivery_state(&snap)?;
            let answer: Vec<Claim> = pairs
                .iter()
                .map(|p| match state.get(p) {
                    Some((true, _, _)) => Claim::Delivered,
                    Some((false, 0, at)) if now_us - at < lease_us => Claim::Elsewhere,
                    _ => Claim::Ours,
                })
                .collect();
            let rows: Vec<crate::model::Delivery> = pairs
                .iter()
                .zip(&answer)
                .filter(|(_, a)| **a == Claim::Ours)
                .map(|((alert, target), _)| crate::model::Delivery {
                    alert_id: alert.clone(),
                    target: target.clone(),
                    delivered_at_us: now_us,
                    http_status: 0,
                    attempts: 0,
                })
                .collect();
            if rows.is_empty() {
                return Ok(answer);
            }
            let rel = format!("{ALERT_DELIVERY_DIR}/part-{batch}-claim{attempt}.parquet");
            let add = self.write_flat(
                &rel,
                Table::AlertDelivery,
                schema::alert_delivery_batch(&rows),
            )?;
            let won = block_on(t.commit_next(
                &mut snap,
                || logs.metadata(Table::AlertDelivery),
                vec![Action::Add(add), commit_info("WRITE")],
            ))?;
            if won {
                return Ok(answer);
            }
            block_on(async {
                backoff.wait().await?;
                t.update(&mut snap).await
            })?;
        }
        unreachable!("the claim loop returns")
    }

    /// (alert, target) -> (delivered, latest row's http_status, its time) over the
    /// delivery files live in `snap`.
    fn delivery_state(&self, snap: &Snapshot) -> Result<DeliveryState> {
        use arrow::array::TimestampMicrosecondArray;
        let rels: Vec<String> = snap
            .files
            .keys()
            .map(|p| rel_of(Table::AlertDelivery, p))
            .collect();
        self.local_all(&rels)?;
        let mut out = DeliveryState::new();
        for rel in &rels {
            let cols = [
                schema::alerts::ALERT_ID,
                schema::alerts::TARGET,
                schema::alerts::DELIVERED_AT,
                schema::alerts::HTTP_STATUS,
            ];
            for b in read_columns(&self.local(rel)?, &cols)? {
                let (Some(id), Some(target), Some(at), Some(status)) = (
                    b.column(0).as_any().downcast_ref::<StringArray>(),
                    b.column(1).as_any().downcast_ref::<StringArray>(),
                    b.column(2)
                        .as_any()
                        .downcast_ref::<TimestampMicrosecondArray>(),
                    b.column(3).as_any().downcast_ref::<Int32Array>(),
                ) else {
                    continue;
                };
                for i in 0..b.num_rows() {
                    let key = (id.value(i).to_string(), target.value(i).to_string());
                    let (st, t) = (status.value(i), at.value(i));
                    let e = out.entry(key).or_insert((false, st, t));
                    e.0 |= (200..300).contains(&st);
                    if t >= e.2 {
                        (e.1, e.2) = (st, t);
                    }
                }
            }
        }
        Ok(out)
    }

    /// Commit alert records and status changes. `new_alerts` is called with the alert
    /// ids already stored and returns the records and the status changes to add. A
    /// record is stored once per fingerprint (one revision of an alert): a writer that
    /// loses the race drops the revisions the winner stored, and the status changes of
    /// alerts that are then stored by nobody. The records are committed first, then the
    /// status changes, so no status change ever names an alert that is not stored; a
    /// record left without a status (a crash between the two) reads as pending and the
    /// next `detect` gives it one.
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
        let logs = self.logs_creating()?;
        let records_t = logs.table(Table::AlertRecords);
        let mut snap = block_on(records_t.snapshot())?;
        let (mut ids, mut fps) = (FileIndex::default(), FileIndex::default());
        let refresh = |ids: &mut FileIndex, fps: &mut FileIndex, snap: &Snapshot| {
            ids.refresh(self, Table::AlertRecords, snap, &[schema::alerts::ALERT_ID])?;
            fps.refresh(
                self,
                Table::AlertRecords,
                snap,
                &[schema::alerts::FINGERPRINT],
            )
        };
        refresh(&mut ids, &mut fps, &snap)?;
        let (mut records, mut changes) = new_alerts(&ids.ids());
        let batch = new_batch_id("");
        let mut backoff = Backoff::default();
        for attempt in 0.. {
            let stored = fps.ids();
            records.retain(|r| !stored.contains(&r.fingerprint));
            if records.is_empty() {
                break;
            }
            let rel = format!("{ALERT_RECORDS_DIR}/part-{batch}-{attempt}.parquet");
            let add = self.write_flat(&rel, Table::AlertRecords, schema::alerts_batch(&records))?;
            let actions = vec![Action::Add(add), commit_info("WRITE")];
            let won = block_on(records_t.commit_next(
                &mut snap,
                || logs.metadata(Table::AlertRecords),
                actions,
            ))?;
            if won {
                break;
            }
            block_on(async {
                backoff.wait().await?;
                records_t.update(&mut snap).await
            })?;
            refresh(&mut ids, &mut fps, &snap)?;
        }
        let stored = ids.ids();
        let ours: HashSet<&str> = records.iter().map(|r| r.alert_id.as_str()).collect();
        changes.retain(|c| stored.contains(&c.alert_id) || ours.contains(c.alert_id.as_str()));
        crash_point("alert-records-committed");
        if !changes.is_empty() {
            let rel = format!("{ALERT_STATUS_DIR}/part-{batch}.parquet");
            let add = self.write_flat(
                &rel,
                Table::AlertStatus,
                schema::alert_status_batch(&changes),
            )?;
            block_on(append(&logs, Table::AlertStatus, vec![add]))?;
        }
        Ok((records, changes))
    }

    /// Commit prepared runs together: one file per table and label. Returns one outcome
    /// per input, in order.
    pub fn commit(&self, mut prepared: Vec<Prepared>) -> Result<Vec<Outcome>> {
        if prepared.is_empty() {
            // Nothing parsed: do not create a warehouse just to say so.
            return Ok(Vec::new());
        }
        let logs = self.logs_creating()?;
        let runs_t = logs.table(Table::Runs);
        let mut snap = block_on(runs_t.snapshot())?;
        let mut known = FileIndex::default();
        let mut backoff = Backoff::default();
        let mut written: Option<Written> = None;
        for attempt in 0.. {
            known.refresh(
                self,
                Table::Runs,
                &snap,
                &[schema::runs::RUN_ID, schema::runs::TRIAL],
            )?;
            let (outcomes, fresh) = assign(&mut prepared, &known);
            if fresh.is_empty() {
                return Ok(outcomes);
            }
            let mut by_label: BTreeMap<String, Vec<usize>> = BTreeMap::new();
            for &i in &fresh {
                by_label
                    .entry(prepared[i].run.label.clone())
                    .or_default()
                    .push(i);
            }
            let batch = match &written {
                Some(w) if w.runs == fresh => w.batch.clone(),
                _ => {
                    // The first attempt, or another writer committed some of these runs
                    // meanwhile: the values of exactly the runs still to add, as a new
                    // batch. An earlier attempt's files are never gated.
                    let batch = new_batch_id(&attempt.to_string());
                    let (m_adds, s_adds) = self.write_values(&prepared, &by_label, &batch)?;
                    let mut t = std::time::Instant::now();
                    block_on(async {
                        append(&logs, Table::Measurements, m_adds.clone()).await?;
                        append(&logs, Table::Summaries, s_adds.clone()).await
                    })?;
                    crate::trace("measurements and summaries committed", &mut t);
                    let adds = [(Table::Measurements, m_adds), (Table::Summaries, s_adds)];
                    written = Some(Written {
                        runs: fresh.clone(),
                        batch: batch.clone(),
                        adds,
                    });
                    batch
                }
            };
            let mut actions = Vec::new();
            for (label, idx) in &by_label {
                let runs: Vec<&Run> = idx.iter().map(|i| &prepared[*i].run).collect();
                let rel = format!("{RUNS_DIR}/label={label}/part-{batch}-r{attempt}.parquet");
                let tags = BTreeMap::from([(GATE_TAG.to_string(), batch.clone())]);
                let add =
                    self.write_file(&rel, Table::Runs, &[runs_batch(&runs)], None, Some(tags))?;
                actions.push(Action::Add(add));
            }
            actions.push(commit_info("WRITE"));
            let mut t = std::time::Instant::now();
            let won =
                block_on(runs_t.commit_next(&mut snap, || logs.metadata(Table::Runs), actions))?;
            crate::trace("runs committed", &mut t);
            if won {
                if let Some(w) = &written {
                    keep_gated(&logs, &w.adds)?;
                }
                crate::trace("values checked live", &mut t);
                return Ok(outcomes);
            }
            block_on(async {
                backoff.wait().await?;
                runs_t.update(&mut snap).await
            })?;
        }
        unreachable!("the backoff gives up first")
    }

    /// Write the measurements and summaries of the runs `by_label` names, one file of
    /// each per label, as `batch`; their `add`s.
    fn write_values(
        &self,
        prepared: &[Prepared],
        by_label: &BTreeMap<String, Vec<usize>>,
        batch: &str,
    ) -> Result<(Vec<Add>, Vec<Add>)> {
        let tags = Some(BTreeMap::from([(BATCH_TAG.to_string(), batch.to_string())]));
        let (mut m_adds, mut s_adds) = (Vec::new(), Vec::new());
        for (label, idx) in by_label {
            let ms: Vec<(&str, &[Measurement], &Keys)> = idx
                .iter()
                .map(|i| {
                    let p = &prepared[*i];
                    (
                        p.run.run_id.as_str(),
                        p.measurements.as_slice(),
                        p.keys.as_ref(),
                    )
                })
                .collect();
            let m_rel = format!("{MEASUREMENTS_DIR}/label={label}/part-{batch}.parquet");
            let s_rel = summary_of(&m_rel);
            // The measurements and their summaries are written side by side (two cores).
            let mut t = std::time::Instant::now();
            let values = measurements_batch(&ms);
            crate::trace("measurements batch", &mut t);
            let (written, summarised) = std::thread::scope(|s| {
                let summaries = s.spawn(|| {
                    let mut t = std::time::Instant::now();
                    let sums = summary::from_batch(&values);
                    crate::trace("summaries batch", &mut t);
                    let r = self.write_file(
                        &s_rel,
                        Table::Summaries,
                        &[sums],
                        Some(summary::ROW_GROUP),
                        tags.clone(),
                    );
                    crate::trace("summaries file", &mut t);
                    r
                });
                let written = self.write_file(
                    &m_rel,
                    Table::Measurements,
                    std::slice::from_ref(&values),
                    None,
                    tags.clone(),
                );
                (written, summaries.join().expect("summary thread panicked"))
            });
            m_adds.push(written?);
            s_adds.push(summarised?);
            crate::trace("measurements and summaries", &mut t);
        }
        Ok((m_adds, s_adds))
    }
}

/// After the gate: the values of the batch (`adds`) are still in their logs. A
/// compaction given a grace shorter than this commit took may have taken them out as
/// never gated; they are still there (only `vacuum` deletes, after hours), so they go
/// back in.
fn keep_gated(logs: &Logs, adds: &[(Table, Vec<Add>); 2]) -> Result<()> {
    block_on(async {
        for (t, adds) in adds {
            let snap = logs.table(*t).snapshot().await?;
            let missing: Vec<Add> = adds
                .iter()
                .filter(|a| !snap.files.contains_key(&a.path))
                .cloned()
                .collect();
            append(logs, *t, missing).await?;
        }
        Ok::<_, crate::delta::DeltaError>(())
    })?;
    Ok(())
}

/// [`Warehouse::state_signature`] of a local warehouse, by plain file-system calls (it
/// runs on every web request: no runtime, no thread): each log's latest version, from
/// the one this process saw last (or the last checkpoint), one `stat` per version.
fn local_signature(root: &Path) -> Option<u64> {
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
fn signature_of(versions: &[Option<u64>]) -> Option<u64> {
    (!versions.iter().all(Option::is_none)).then(|| crate::text::fnv64(&format!("{versions:?}")))
}

/// Give each prepared run its outcome against the runs `known` holds (and the ones
/// before it in `prepared`): already present, or added with the next trial number of
/// its label. Returns the outcomes and the places of the runs to add.
fn assign(prepared: &mut [Prepared], known: &FileIndex) -> (Vec<Outcome>, Vec<usize>) {
    let mut ids = known.ids();
    let mut trials = known.trials_by_label();
    let now = now_us();
    let mut outcomes = Vec::with_capacity(prepared.len());
    let mut fresh = Vec::new();
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
        // No --commit-time (or the time an earlier attempt gave it): the commit is
        // taken to be as new as the ingest.
        let no_commit_time =
            p.run.commit_time_us == 0 || p.run.commit_time_us == p.run.ingested_at_us;
        p.run.ingested_at_us = now;
        if no_commit_time {
            p.run.commit_time_us = now;
        }
        outcomes.push(Outcome::Added {
            run_id: p.run.run_id.clone(),
            trial: *t,
        });
        fresh.push(i);
    }
    (outcomes, fresh)
}

/// A new batch id: the time, the process, and `suffix`.
pub(crate) fn new_batch_id(suffix: &str) -> String {
    let id = format!("{:x}-{:x}", now_us(), std::process::id());
    if suffix.is_empty() {
        id
    } else {
        format!("{id}-{suffix}")
    }
}

/// The `commitInfo` of a perfdb commit.
pub(crate) fn commit_info(operation: &str) -> Action {
    Action::CommitInfo(serde_json::json!({
        "timestamp": crate::delta::now_ms(),
        "operation": operation,
        "engineInfo": concat!("perfdb/", env!("CARGO_PKG_VERSION")),
    }))
}

/// Append `adds` to `t`: commits that commute with any other writer's, retried until
/// they land.
pub(crate) async fn append(
    logs: &Logs,
    t: Table,
    adds: Vec<Add>,
) -> std::result::Result<(), crate::delta::DeltaError> {
    if adds.is_empty() {
        return Ok(());
    }
    let mut actions: Vec<Action> = adds.into_iter().map(Action::Add).collect();
    actions.push(commit_info("WRITE"));
    logs.table(t)
        .commit(|| logs.metadata(t), |_| Ok(Some(actions.clone())))
        .await?;
    Ok(())
}

/// The committed state: the runs snapshot (the gate) first, then the others; again
/// if `runs` moved meanwhile (a compaction commits its merged runs before it replaces
/// their values, so a gate read before that commit does not admit values read after).
async fn read_committed(logs: &Logs) -> std::result::Result<Committed, crate::delta::DeltaError> {
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
        });
    }
    Err(crate::delta::DeltaError::Contended { attempts: 16 })
}

/// Columns of a table's live files, read once per file and kept across the attempts
/// of a commit: run ids and trials, or alert ids.
#[derive(Default)]
struct FileIndex {
    /// By live file: its label and rows (first column; second as a number, if asked).
    files: HashMap<String, (String, Vec<(String, i32)>)>,
}

impl FileIndex {
    /// Read the files live in `snap` not read yet; forget those no longer live.
    fn refresh(
        &mut self,
        wh: &Warehouse,
        t: Table,
        snap: &Snapshot,
        columns: &[&str],
    ) -> Result<()> {
        let live: HashSet<String> = snap.files.keys().map(|p| rel_of(t, p)).collect();
        self.files.retain(|rel, _| live.contains(rel));
        let unread: Vec<String> = live
            .iter()
            .filter(|r| !self.files.contains_key(*r))
            .cloned()
            .collect();
        wh.local_all(&unread)?;
        for rel in live {
            if self.files.contains_key(&rel) {
                continue;
            }
            let mut rows = Vec::new();
            for b in read_columns(&wh.local(&rel)?, columns)? {
                let ids = b.column(0).as_any().downcast_ref::<StringArray>();
                let nums = (b.num_columns() > 1)
                    .then(|| b.column(1).as_any().downcast_ref::<Int32Array>())
                    .flatten();
                if let Some(ids) = ids {
                    for i in 0..b.num_rows() {
                        rows.push((ids.value(i).to_string(), nums.map_or(0, |n| n.value(i))));
                    }
                }
            }
            self.files
                .insert(rel.clone(), (label_of(&rel).unwrap_or_default(), rows));
        }
        Ok(())
    }

    fn ids(&self) -> HashSet<String> {
        self.files
            .values()
            .flat_map(|(_, rows)| rows.iter().map(|(id, _)| id.clone()))
            .collect()
    }

    /// The highest trial number per label.
    fn trials_by_label(&self) -> HashMap<String, i32> {
        let mut out: HashMap<String, i32> = HashMap::new();
        for (label, rows) in self.files.values() {
            for (_, trial) in rows {
                let t = out.entry(label.clone()).or_insert(0);
                *t = (*t).max(*trial);
            }
        }
        out
    }
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

fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// (alert, target) -> (delivered, the latest row's http_status, its time).
type DeliveryState = HashMap<(String, String), (bool, i32, i64)>;

/// What [`Warehouse::claim_deliveries`] answered for one (alert, target).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// Claimed by this run: send it, then record the answer.
    Ours,
    /// Another run claimed it within the lease and has not recorded an answer.
    Elsewhere,
    /// A 2xx answer is recorded: never sent again.
    Delivered,
}

/// Where a crash drill stops the process: `PERFDB_CRASH_AT=<name>` aborts at the named
/// point (as `kill -9` would there), so tests can show what a crash between two
/// commits leaves. Unset, it does nothing.
pub fn crash_point(name: &str) {
    if std::env::var_os("PERFDB_CRASH_AT").is_some_and(|v| v == name) {
        eprintln!("PERFDB_CRASH_AT={name}: stopping here");
        std::process::abort();
    }
}
