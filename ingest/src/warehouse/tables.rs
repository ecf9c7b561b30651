//! The warehouse's six tables as Delta tables ([`crate::delta`]): where each lives, its
//! schema and partitioning, and the runtime their async calls run on. What a commit
//! writes into them is [`super::commit`]'s, how a reader gates them [`super::read`]'s.

use crate::delta::{self, Add, DeltaTable, Format, Metadata};
use arrow::datatypes::Schema;
use object_store::local::LocalFileSystem;
use object_store::path::Path as StorePath;
use object_store::ObjectStore;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

pub const RUNS_DIR: &str = "runs";

pub const MEASUREMENTS_DIR: &str = "measurements";

/// Per-run summaries (`crate::warehouse::summary`): `summaries/label=L/part-B.parquet` summarises
/// exactly `measurements/label=L/part-B.parquet`.
pub const SUMMARIES_DIR: &str = "summaries";

/// The alerts `perfdb detect` raised, and their status changes (append-only, small,
/// not partitioned). `alerts/` itself holds comparisons saved with `compare --save`.
pub const ALERT_RECORDS_DIR: &str = "alert_records";

pub const ALERT_STATUS_DIR: &str = "alert_status";

pub const ALERT_DELIVERY_DIR: &str = "alert_delivery";

/// The commit point of warehouses written before the Delta log was ([`super::migrate`]).
pub const MANIFEST: &str = "_manifest.json";

pub(crate) const TMP_DIR: &str = "_tmp";

/// Tag of a measurements or summaries file: the batch (one ingest) that wrote it.
pub const BATCH_TAG: &str = "perfdb.batch";

/// Tag of a runs file: the batches whose values it admits, comma-separated.
pub const GATE_TAG: &str = "perfdb.batches";

/// Tag of a compacted measurements or summaries file: the range of its runs' ingest
/// times, `first,last` in microseconds since the epoch. A reader after a few runs reads
/// the files whose range holds theirs, and every file without the tag.
pub const INGESTED_TAG: &str = "perfdb.ingested";

/// `runs/label=base/part-x.parquet` -> `base`.
pub fn label_of(rel: &str) -> Option<String> {
    rel.split('/')
        .find_map(|seg| seg.strip_prefix("label="))
        .map(str::to_string)
}

/// One of the warehouse's tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    Runs,
    Measurements,
    Summaries,
    AlertRecords,
    AlertStatus,
    AlertDelivery,
}

impl Table {
    /// Every table, in the order a compaction commits them ([`super::compact`]): runs, whose
    /// merged files admit the values they replace, before measurements and summaries;
    /// alert records before their status changes.
    pub const ALL: [Table; 6] = [
        Table::Runs,
        Table::Measurements,
        Table::Summaries,
        Table::AlertRecords,
        Table::AlertStatus,
        Table::AlertDelivery,
    ];

    /// The table's directory under the warehouse root.
    pub fn dir(self) -> &'static str {
        match self {
            Table::Runs => RUNS_DIR,
            Table::Measurements => MEASUREMENTS_DIR,
            Table::Summaries => SUMMARIES_DIR,
            Table::AlertRecords => ALERT_RECORDS_DIR,
            Table::AlertStatus => ALERT_STATUS_DIR,
            Table::AlertDelivery => ALERT_DELIVERY_DIR,
        }
    }

    pub fn schema(self) -> &'static Schema {
        match self {
            Table::Runs => &crate::warehouse::schema::RUNS_SCHEMA,
            Table::Measurements => &crate::warehouse::schema::MEASUREMENTS_SCHEMA,
            Table::Summaries => &crate::warehouse::summary::SUMMARIES_SCHEMA,
            Table::AlertRecords => &crate::warehouse::schema::ALERTS_SCHEMA,
            Table::AlertStatus => &crate::warehouse::schema::ALERT_STATUS_SCHEMA,
            Table::AlertDelivery => &crate::warehouse::schema::ALERT_DELIVERY_SCHEMA,
        }
    }

    /// Runs, measurements and summaries are partitioned by label (`label=<l>/`); the
    /// alert tables are small and flat.
    pub fn by_label(self) -> bool {
        matches!(self, Table::Runs | Table::Measurements | Table::Summaries)
    }

    /// The `metaData` of the table's version 0. Its id is derived from the warehouse's
    /// location, so two writers creating the table at once write the same one.
    pub fn metadata(self, location: &str) -> Metadata {
        let partition_columns: Vec<String> = if self.by_label() {
            vec![crate::warehouse::schema::LABEL.to_string()]
        } else {
            Vec::new()
        };
        Metadata {
            id: table_id(location, self.dir()),
            name: Some(self.dir().to_string()),
            format: Format {
                provider: "parquet".into(),
                options: BTreeMap::new(),
            },
            schema_string: delta::schema_string(
                self.schema(),
                &partition_columns
                    .iter()
                    .map(String::as_str)
                    .collect::<Vec<_>>(),
            ),
            partition_columns,
            configuration: BTreeMap::new(),
            created_time: Some(delta::now_ms()),
        }
    }
}

/// The warehouse's tables in one store.
#[derive(Clone)]
pub struct Logs {
    store: Arc<dyn ObjectStore>,
    location: String,
}

impl Logs {
    /// The tables of the warehouse directory `root` (which must exist).
    pub fn local(root: &Path) -> Result<Logs, delta::DeltaError> {
        let store =
            LocalFileSystem::new_with_prefix(root).map_err(|source| delta::DeltaError::Store {
                path: root.display().to_string(),
                source,
            })?;
        Ok(Logs {
            store: Arc::new(store),
            location: root.display().to_string(),
        })
    }

    /// The tables under a remote location's prefix (`remote_store`).
    pub fn remote(store: Arc<dyn ObjectStore>, url: &str) -> Logs {
        Logs {
            store,
            location: url.to_string(),
        }
    }

    pub fn table(&self, t: Table) -> DeltaTable {
        DeltaTable::new(self.store.clone(), StorePath::from(t.dir()))
    }

    /// The store, rooted at the warehouse (paths are warehouse-relative).
    pub fn store(&self) -> &Arc<dyn ObjectStore> {
        &self.store
    }

    /// `t`'s version-0 `metaData`.
    pub fn metadata(&self, t: Table) -> Metadata {
        t.metadata(&self.location)
    }
}

/// The runtime the warehouse's store calls run on: one per process, so an object
/// store's HTTP connections are reused from call to call.
static RUNTIME: std::sync::LazyLock<tokio::runtime::Runtime> = std::sync::LazyLock::new(|| {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("perfdb-store")
        .enable_all()
        .build()
        .expect("the store's runtime")
});

/// Run `fut` to completion from synchronous code. Called from async code (the web
/// app's triage, tests), a runtime cannot block its own thread: the future then is
/// waited for on a thread of its own.
pub fn block_on<T: Send>(fut: impl std::future::Future<Output = T> + Send) -> T {
    if tokio::runtime::Handle::try_current().is_ok() {
        std::thread::scope(|s| {
            s.spawn(|| RUNTIME.block_on(fut))
                .join()
                .expect("the store's thread")
        })
    } else {
        RUNTIME.block_on(fut)
    }
}

/// The `add` of the local data file `rel` (relative to the warehouse root), with its
/// size, row count and label, and `tags`.
pub fn add_of(
    root: &Path,
    rel: &str,
    t: Table,
    tags: Option<BTreeMap<String, String>>,
) -> Result<Add, delta::DeltaError> {
    let file = root.join(rel);
    let broken =
        |reason: String| delta::DeltaError::Rejected(format!("{}: {reason}", file.display()));
    let meta = std::fs::metadata(&file).map_err(|e| broken(e.to_string()))?;
    let reader = std::fs::File::open(&file).map_err(|e| broken(e.to_string()))?;
    let rows = parquet::file::reader::SerializedFileReader::new(reader)
        .map(|r| {
            use parquet::file::reader::FileReader;
            r.metadata().file_metadata().num_rows()
        })
        .map_err(|e| broken(e.to_string()))?;
    Ok(add_from(rel, t, meta.len(), rows as u64, tags))
}

/// The `add` of data file `rel` of `t`, of `size` bytes and `rows` rows, written now.
pub fn add_from(
    rel: &str,
    t: Table,
    size: u64,
    rows: u64,
    tags: Option<BTreeMap<String, String>>,
) -> Add {
    let mut partition_values = BTreeMap::new();
    if t.by_label() {
        partition_values.insert(crate::warehouse::schema::LABEL.to_string(), label_of(rel));
    }
    let in_table = rel
        .strip_prefix(t.dir())
        .and_then(|r| r.strip_prefix('/'))
        .unwrap_or(rel);
    Add {
        path: delta::encode_path(in_table),
        partition_values,
        size,
        modification_time: delta::now_ms(),
        data_change: true,
        stats: Some(format!("{{\"numRecords\":{rows}}}")),
        tags,
    }
}

/// The warehouse-relative path of a live file of `t` (`add.path` is relative to the
/// table and percent-encoded).
pub fn rel_of(t: Table, path: &str) -> String {
    format!("{}/{}", t.dir(), decode_path(path))
}

/// Undo [`delta::encode_path`] (and any other writer's percent-encoding).
pub fn decode_path(path: &str) -> String {
    let b = path.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (
            b[i],
            b.get(i + 1).copied().and_then(hex),
            b.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A stable table id in UUID form, from the warehouse's location and the table's name.
fn table_id(location: &str, dir: &str) -> String {
    let h = crate::hash::sha256_hex(format!("{location}/{dir}").as_bytes());
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_round_trip_through_the_protocols_encoding() {
        for p in ["label=a b/x.parquet", "label=feature/x%y/z", "label=ü/1"] {
            assert_eq!(decode_path(&delta::encode_path(p)), p);
        }
        assert_eq!(
            rel_of(Table::Runs, "label=a%20b/p.parquet"),
            "runs/label=a b/p.parquet"
        );
    }
}
