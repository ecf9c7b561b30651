//! The Parquet warehouse: six Delta tables under one root.
//!
//! ```text
//! <root>/runs/label=<label>/part-<batch>-r<n>.parquet    + runs/_delta_log/
//! <root>/measurements/label=<label>/part-<batch>.parquet + measurements/_delta_log/
//! <root>/summaries/label=<label>/part-<batch>.parquet    per-run summaries of that batch
//! <root>/alert_records/, alert_status/, alert_delivery/  the alerts (flat)
//! <root>/_tmp/                                           files being written
//! ```
//! Hive-style partitions and Delta logs ([`crate::delta`], [`tables`]), readable as they are
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
//! perfdb read; `compact` removes them from the logs once older than its grace period,
//! and merges small files into files of a bounded size, each tagged with the range of
//! its runs' ingest times (`perfdb.ingested`) so a reader of a few runs opens few files.
//! Nothing deletes a file but `vacuum` ([`compact`]). A warehouse written before the
//! log was the commit point (`_manifest.json`) is moved over by [`migrate`]. The
//! code: [`commit`] writes, [`read`] reads gated, [`files`] places the data files.

pub mod alerts;
mod commit;
pub mod compact;
mod documents;
mod files;
pub mod location;
pub mod migrate;
mod read;
pub mod schema;
pub mod summary;
pub mod tables;

pub use alerts::Claim;
pub(crate) use commit::{commit_info, new_batch_id};
pub use commit::{Outcome, Prepared};
pub use files::{crash_point, read_columns, writer_properties};
pub use read::{summary_of, Committed};
pub(crate) use tables::TMP_DIR;
pub use tables::{
    label_of, ALERT_DELIVERY_DIR, ALERT_RECORDS_DIR, ALERT_STATUS_DIR, BATCH_TAG, GATE_TAG,
    INGESTED_TAG, MANIFEST, MEASUREMENTS_DIR, RUNS_DIR, SUMMARIES_DIR,
};

use object_store::ObjectStore;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tables::Logs;

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
    #[error("{0}: the warehouse must be a directory, and this is a file; give another path with --warehouse (or move the file)")]
    NotADirectory(PathBuf),
}

pub(crate) type Result<T> = std::result::Result<T, WarehouseError>;

pub(crate) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> WarehouseError + '_ {
    move |source| WarehouseError::Io {
        path: path.to_path_buf(),
        source,
    }
}

pub(crate) fn pq(path: &Path) -> impl FnOnce(parquet::errors::ParquetError) -> WarehouseError + '_ {
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

/// How old a file of a batch that was never gated must be before `compact` takes it
/// out of its log: far longer than any writer takes from its first `add` to its gate.
pub const DEFAULT_GRACE: std::time::Duration = std::time::Duration::from_secs(600);

pub struct Warehouse {
    /// The warehouse directory; for a remote warehouse, its local cache.
    root: PathBuf,
    remote: Option<Remote>,
}

/// A remote warehouse: its URL and its store (or why it cannot be reached).
pub(crate) struct Remote {
    url: String,
    store: std::result::Result<Arc<dyn ObjectStore>, String>,
}

impl Warehouse {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        let root: PathBuf = root.into();
        let location = root.to_str().unwrap_or_default();
        if let Some(path) = crate::warehouse::location::file_url_path(location) {
            return Warehouse {
                root: path,
                remote: None,
            };
        }
        if crate::warehouse::location::is_remote(location) {
            let url = location.trim_end_matches('/').to_string();
            return Warehouse {
                root: crate::warehouse::location::cache_dir(&url),
                remote: Some(Remote {
                    store: crate::warehouse::location::shared_store(&url),
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

    pub(crate) fn store(&self) -> Result<Option<Arc<dyn ObjectStore>>> {
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
            if self.root.exists() {
                return Err(WarehouseError::NotADirectory(self.root.clone()));
            }
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
            if self.root.exists() && !self.root.is_dir() {
                return Err(WarehouseError::NotADirectory(self.root.clone()));
            }
            fs::create_dir_all(&self.root).map_err(io(&self.root))?;
        }
        Ok(self.logs()?.expect("the directory was just created"))
    }
}
