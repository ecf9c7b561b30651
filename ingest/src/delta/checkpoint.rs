//! Parquet checkpoints every [`CHECKPOINT_INTERVAL`] versions, so a snapshot reads one
//! checkpoint and at most that many JSON versions.

use crate::delta::apply;
use crate::delta::Action;
use crate::delta::DeltaError;
use crate::delta::DeltaTable;
use crate::delta::Result;
use crate::delta::Snapshot;
use crate::delta::Txn;
use arrow::datatypes::{DataType, Schema};
use object_store::path::Path as StorePath;
use object_store::{ObjectStoreExt, PutPayload};
use std::sync::Arc;

/// The checkpoint's Parquet schema: one nullable struct column per action kind, as the
/// protocol lays it out (a row holds exactly one action).
pub(super) fn checkpoint_schema() -> Arc<Schema> {
    use arrow::datatypes::{Field, Fields};
    let s = |name: &str| Field::new(name, DataType::Utf8, true);
    let i64f = |name: &str| Field::new(name, DataType::Int64, true);
    let map = |name: &str| {
        Field::new_map(
            name,
            "key_value",
            Field::new("key", DataType::Utf8, false),
            Field::new("value", DataType::Utf8, true),
            false,
            true,
        )
    };
    let st = |name: &str, fields: Vec<Field>| {
        Field::new(name, DataType::Struct(Fields::from(fields)), true)
    };
    Arc::new(Schema::new(vec![
        st(
            "txn",
            vec![s("appId"), i64f("version"), i64f("lastUpdated")],
        ),
        st(
            "add",
            vec![
                s("path"),
                map("partitionValues"),
                i64f("size"),
                i64f("modificationTime"),
                Field::new("dataChange", DataType::Boolean, true),
                s("stats"),
                map("tags"),
            ],
        ),
        st(
            "remove",
            vec![
                s("path"),
                i64f("deletionTimestamp"),
                Field::new("dataChange", DataType::Boolean, true),
            ],
        ),
        st(
            "metaData",
            vec![
                s("id"),
                s("name"),
                s("description"),
                st("format", vec![s("provider"), map("options")]),
                s("schemaString"),
                Field::new(
                    "partitionColumns",
                    DataType::List(Arc::new(Field::new("element", DataType::Utf8, true))),
                    true,
                ),
                map("configuration"),
                i64f("createdTime"),
            ],
        ),
        st(
            "protocol",
            vec![
                Field::new("minReaderVersion", DataType::Int32, true),
                Field::new("minWriterVersion", DataType::Int32, true),
            ],
        ),
    ]))
}

impl DeltaTable {
    pub(super) fn checkpoint_file(&self, version: u64) -> StorePath {
        self.root
            .clone()
            .join("_delta_log")
            .join(format!("{version:020}.checkpoint.parquet"))
    }

    /// Write the checkpoint of `snap` (protocol, metadata, app transactions, live files)
    /// and point `_last_checkpoint` at it. Another writer writing the same version's
    /// checkpoint writes the same state: plain puts.
    pub(super) async fn write_checkpoint(&self, snap: &Snapshot) -> Result<()> {
        let version = snap.version.expect("a committed version");
        let mut lines = Vec::new();
        let mut push = |a: Action| {
            serde_json::to_writer(&mut lines, &a).expect("actions serialise");
            lines.push(b'\n');
        };
        if let Some(p) = &snap.protocol {
            push(Action::Protocol(p.clone()));
        }
        if let Some(m) = &snap.metadata {
            push(Action::Metadata(m.clone()));
        }
        for (app_id, v) in &snap.txns {
            push(Action::Txn(Txn {
                app_id: app_id.clone(),
                version: *v,
                last_updated: None,
            }));
        }
        for a in snap.files.values() {
            push(Action::Add(a.clone()));
        }
        let schema = checkpoint_schema();
        let path = self.checkpoint_file(version);
        let broken = |reason: String| DeltaError::Rejected(format!("{path}: {reason}"));
        let reader = arrow::json::ReaderBuilder::new(schema.clone())
            .build(std::io::Cursor::new(lines))
            .map_err(|e| broken(e.to_string()))?;
        let mut out = Vec::new();
        let mut w = parquet::arrow::ArrowWriter::try_new(&mut out, schema, None)
            .map_err(|e| broken(e.to_string()))?;
        let mut rows = 0;
        for b in reader {
            let b = b.map_err(|e| broken(e.to_string()))?;
            rows += b.num_rows();
            w.write(&b).map_err(|e| broken(e.to_string()))?;
        }
        w.close().map_err(|e| broken(e.to_string()))?;
        let put = |p: StorePath, body: Vec<u8>| async move {
            self.store
                .put(&p, PutPayload::from(body))
                .await
                .map_err(|source| DeltaError::Store {
                    path: p.to_string(),
                    source,
                })
        };
        put(path.clone(), out).await?;
        let last = serde_json::json!({"version": version, "size": rows}).to_string();
        put(
            self.root
                .clone()
                .join("_delta_log")
                .join("_last_checkpoint"),
            last.into_bytes(),
        )
        .await?;
        Ok(())
    }

    /// Apply the checkpoint of `version` to `snap`.
    pub(super) async fn read_checkpoint(&self, version: u64, snap: &mut Snapshot) -> Result<()> {
        let path = self.checkpoint_file(version);
        let store_err = |source| DeltaError::Store {
            path: path.to_string(),
            source,
        };
        let bytes = self
            .store
            .get(&path)
            .await
            .map_err(store_err)?
            .bytes()
            .await
            .map_err(store_err)?;
        let broken = |reason: String| DeltaError::Corrupt {
            path: path.to_string(),
            line: 0,
            reason,
        };
        let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(bytes)
            .and_then(|b| b.build())
            .map_err(|e| broken(e.to_string()))?;
        let mut lines = Vec::new();
        {
            let mut w = arrow::json::LineDelimitedWriter::new(&mut lines);
            for b in reader {
                let b = b.map_err(|e| broken(e.to_string()))?;
                w.write(&b).map_err(|e| broken(e.to_string()))?;
            }
            w.finish().map_err(|e| broken(e.to_string()))?;
        }
        apply(snap, path.as_ref(), &lines)
    }
}
