//! The warehouse's tables as Delta tables, for other engines (delta-rs, Spark, Trino,
//! polars): after every commit of the manifest, each table's `_delta_log` is brought
//! to the manifest's file list (an `add` per new file with its partition value, size
//! and row count, a `remove` per file compaction replaced). Measurements and summaries
//! are synced before runs, so a reader joining them never sees a run without its values.
//!
//! The manifest stays perfdb's own commit point for now (issue 13, first step); a
//! writer killed between its manifest commit and this sync leaves the logs one commit
//! behind, and the next commit of any writer brings them level (the sync is a diff, not
//! a replay of what one command did). `docs/delta.md` has the plan that makes the log
//! the commit point.

use crate::delta::{self, Action, Add, DeltaTable, Format, Metadata, Remove};
use crate::warehouse::{Manifest, ALERT_DELIVERY_DIR, ALERT_RECORDS_DIR, ALERT_STATUS_DIR};
use crate::warehouse::{MEASUREMENTS_DIR, RUNS_DIR, SUMMARIES_DIR};
use arrow::datatypes::Schema;
use object_store::local::LocalFileSystem;
use object_store::path::Path as StorePath;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

/// One table: its directory, schema, whether it is partitioned by label, and its files
/// in the manifest.
struct Table<'a> {
    dir: &'static str,
    schema: &'a Schema,
    by_label: bool,
    files: &'a [String],
}

/// Bring every table's log to `m` (the manifest just committed at `root`).
pub fn sync(root: &Path, m: &Manifest) -> Result<(), delta::DeltaError> {
    let tables = [
        Table {
            dir: MEASUREMENTS_DIR,
            schema: &crate::schema::MEASUREMENTS_SCHEMA,
            by_label: true,
            files: &m.measurements,
        },
        Table {
            dir: SUMMARIES_DIR,
            schema: &crate::summary::SUMMARIES_SCHEMA,
            by_label: true,
            files: &m.summaries,
        },
        Table {
            dir: RUNS_DIR,
            schema: &crate::schema::RUNS_SCHEMA,
            by_label: true,
            files: &m.runs,
        },
        Table {
            dir: ALERT_RECORDS_DIR,
            schema: &crate::schema::ALERTS_SCHEMA,
            by_label: false,
            files: &m.alerts,
        },
        Table {
            dir: ALERT_STATUS_DIR,
            schema: &crate::schema::ALERT_STATUS_SCHEMA,
            by_label: false,
            files: &m.alert_status,
        },
        Table {
            dir: ALERT_DELIVERY_DIR,
            schema: &crate::schema::ALERT_DELIVERY_SCHEMA,
            by_label: false,
            files: &m.alert_delivery,
        },
    ];
    let store = Arc::new(LocalFileSystem::new_with_prefix(root).map_err(|source| {
        delta::DeltaError::Store {
            path: root.display().to_string(),
            source,
        }
    })?);
    let run = || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a current-thread runtime");
        for t in &tables {
            if t.files.is_empty() && !root.join(t.dir).join("_delta_log").exists() {
                continue;
            }
            rt.block_on(sync_table(store.clone(), root, t))?;
        }
        Ok(())
    };
    // Called from async code (the web app's triage, tests), a runtime cannot block its
    // own thread: the sync then runs on a thread of its own.
    if tokio::runtime::Handle::try_current().is_ok() {
        std::thread::scope(|s| s.spawn(run).join().expect("the Delta sync thread"))
    } else {
        run()
    }
}

async fn sync_table(
    store: Arc<LocalFileSystem>,
    root: &Path,
    t: &Table<'_>,
) -> Result<(), delta::DeltaError> {
    let table = DeltaTable::new(store, StorePath::from(t.dir));
    let prefix = format!("{}/", t.dir);
    // Manifest paths relative to the table root, as the log writes them.
    let wanted: BTreeSet<String> = t
        .files
        .iter()
        .filter_map(|f| f.strip_prefix(&prefix))
        .map(delta::encode_path)
        .collect();
    let partition_columns: Vec<String> = if t.by_label {
        vec![crate::schema::LABEL.to_string()]
    } else {
        Vec::new()
    };
    let create = || Metadata {
        id: table_id(root, t.dir),
        name: Some(t.dir.to_string()),
        format: Format {
            provider: "parquet".into(),
            options: BTreeMap::new(),
        },
        schema_string: delta::schema_string(
            t.schema,
            &partition_columns
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
        ),
        partition_columns: partition_columns.clone(),
        configuration: BTreeMap::new(),
        created_time: Some(delta::now_ms()),
    };
    table
        .commit(create, |snap| {
            let mut actions = Vec::new();
            for path in snap.files.keys().filter(|p| !wanted.contains(*p)) {
                actions.push(Action::Remove(Remove {
                    path: path.clone(),
                    deletion_timestamp: delta::now_ms(),
                    data_change: true,
                    partition_values: snap.files[path].partition_values.clone().into(),
                    size: Some(snap.files[path].size),
                }));
            }
            for (rel, path) in t
                .files
                .iter()
                .filter_map(|f| f.strip_prefix(&prefix).map(|r| (f, delta::encode_path(r))))
            {
                if snap.files.contains_key(&path) {
                    continue;
                }
                actions.push(Action::Add(add_of(root, rel, path, t.by_label)?));
            }
            if actions.is_empty() && snap.version.is_some() {
                return Ok(None);
            }
            actions.push(Action::CommitInfo(serde_json::json!({
                "timestamp": delta::now_ms(),
                "operation": "WRITE",
                "operationParameters": {"mode": "Append"},
                "engineInfo": concat!("perfdb/", env!("CARGO_PKG_VERSION")),
                "isBlindAppend": false,
            })));
            Ok(Some(actions))
        })
        .await?;
    Ok(())
}

/// The `add` of the committed file `rel` (relative to the warehouse root).
fn add_of(root: &Path, rel: &str, path: String, by_label: bool) -> Result<Add, delta::DeltaError> {
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
    if by_label {
        partition_values.insert(
            crate::schema::LABEL.to_string(),
            crate::warehouse::label_of(rel),
        );
    }
    Ok(Add {
        path,
        partition_values,
        size: meta.len(),
        modification_time: modified,
        data_change: true,
        stats: Some(format!("{{\"numRecords\":{rows}}}")),
    })
}

/// A stable table id in UUID form, from the warehouse root and the table's name.
fn table_id(root: &Path, dir: &str) -> String {
    let h = crate::warehouse::sha256_hex(format!("{}/{dir}", root.display()).as_bytes());
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}
