//! The warehouse's six tables as Delta tables (`delta.rs`): where each lives, its
//! schema and partitioning, the store that reaches them and the runtime their async
//! calls run on. What a commit writes into them, and how a reader gates them, is
//! `warehouse.rs`'s.

use crate::delta::{self, Add, DeltaTable, Format, Metadata};
use arrow::datatypes::Schema;
use object_store::local::LocalFileSystem;
use object_store::path::Path as StorePath;
use object_store::ObjectStore;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

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
        use crate::warehouse::*;
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
            Table::Runs => &crate::schema::RUNS_SCHEMA,
            Table::Measurements => &crate::schema::MEASUREMENTS_SCHEMA,
            Table::Summaries => &crate::summary::SUMMARIES_SCHEMA,
            Table::AlertRecords => &crate::schema::ALERTS_SCHEMA,
            Table::AlertStatus => &crate::schema::ALERT_STATUS_SCHEMA,
            Table::AlertDelivery => &crate::schema::ALERT_DELIVERY_SCHEMA,
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
            vec![crate::schema::LABEL.to_string()]
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

    pub fn table(&self, t: Table) -> DeltaTable {
        DeltaTable::new(self.store.clone(), StorePath::from(t.dir()))
    }

    /// `t`'s version-0 `metaData`.
    pub fn metadata(&self, t: Table) -> Metadata {
        t.metadata(&self.location)
    }
}

/// Run `fut` to completion from synchronous code. Called from async code (the web
/// app's triage, tests), a runtime cannot block its own thread: the future then runs on
/// a thread of its own.
pub fn block_on<T: Send>(fut: impl std::future::Future<Output = T> + Send) -> T {
    let run = || {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a current-thread runtime")
            .block_on(fut)
    };
    if tokio::runtime::Handle::try_current().is_ok() {
        std::thread::scope(|s| s.spawn(run).join().expect("the log's thread"))
    } else {
        run()
    }
}

/// The `add` of the data file `rel` (relative to the warehouse root), with its size,
/// row count and label, and `tags`.
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
    let modified = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis() as i64);
    let mut partition_values = BTreeMap::new();
    if t.by_label() {
        partition_values.insert(
            crate::schema::LABEL.to_string(),
            crate::warehouse::label_of(rel),
        );
    }
    let in_table = rel
        .strip_prefix(t.dir())
        .and_then(|r| r.strip_prefix('/'))
        .unwrap_or(rel);
    Ok(Add {
        path: delta::encode_path(in_table),
        partition_values,
        size: meta.len(),
        modification_time: modified,
        data_change: true,
        stats: Some(format!("{{\"numRecords\":{rows}}}")),
        tags,
    })
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
    let h = crate::warehouse::sha256_hex(format!("{location}/{dir}").as_bytes());
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
