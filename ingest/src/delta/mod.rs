//! The Delta Lake transaction log (the append-only subset of the open protocol,
//! <https://github.com/delta-io/delta/blob/master/PROTOCOL.md>) over any
//! [`object_store`]: a local directory, `s3://`, `gs://`, `az://`.
//!
//! A table is a prefix holding Parquet files and `_delta_log/NNNNNNNNNNNNNNNNNNNN.json`,
//! one JSON action per line: `protocol` and `metaData` (schema, partition columns) in
//! version 0, then `add`/`remove` of files with their partition values and row counts,
//! `txn` (an application's idempotency mark) and `commitInfo`. The live files are the
//! replay of every version in order.
//!
//! A commit is the conditional create of the next version's file (`PutMode::Create`: on
//! S3 an `If-None-Match: *` put, locally a create-new): two writers that read the same
//! version race for the same name and exactly one wins. The loser reads the log again,
//! lets its caller rebuild its actions against what is now committed (which is where
//! idempotency is re-checked), and retries with bounded backoff. No lock is needed, on
//! one machine or many.
//!
//! The warehouse commits through it (`crate::warehouse`: the log is the commit point); it
//! is tested here, on SeaweedFS and Azurite (`tests/it/delta_object_store.rs`), and read back by delta-rs and
//! Spark (`tests/it/delta_readers.rs`).

mod actions;
mod checkpoint;
mod commit;
mod replay;

pub use actions::*;
pub use commit::*;
pub use replay::*;

/// Errors of the log, with the object they concern.
#[derive(Debug, thiserror::Error)]
pub enum DeltaError {
    #[error("{path}: {source}")]
    Store {
        path: String,
        source: object_store::Error,
    },
    #[error("{path}:{line}: not a Delta log action: {reason}")]
    Corrupt {
        path: String,
        line: usize,
        reason: String,
    },
    #[error("gave up committing after {attempts} attempts: other writers kept committing first")]
    Contended { attempts: u32 },
    #[error("{0}")]
    Rejected(String),
}

pub(crate) type Result<T> = std::result::Result<T, DeltaError>;

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::datatypes::{DataType, Schema, TimeUnit};
    use object_store::local::LocalFileSystem;
    use object_store::path::Path as StorePath;
    use serde_json::Value;
    use std::collections::BTreeMap;
    use std::sync::Arc;

    fn table(dir: &std::path::Path) -> DeltaTable {
        let store = LocalFileSystem::new_with_prefix(dir).unwrap();
        DeltaTable::new(Arc::new(store), StorePath::from("t"))
    }

    fn meta() -> Metadata {
        Metadata {
            id: "00000000-0000-0000-0000-000000000001".into(),
            name: None,
            format: Format {
                provider: "parquet".into(),
                options: BTreeMap::new(),
            },
            schema_string: schema_string(
                &Schema::new(vec![arrow::datatypes::Field::new(
                    "x",
                    DataType::Int64,
                    false,
                )]),
                &["label"],
            ),
            partition_columns: vec!["label".into()],
            configuration: BTreeMap::new(),
            created_time: Some(0),
        }
    }

    fn add(path: &str) -> Action {
        Action::Add(Add {
            path: path.into(),
            partition_values: BTreeMap::from([("label".into(), Some("a".into()))]),
            size: 1,
            modification_time: 0,
            data_change: true,
            stats: Some("{\"numRecords\":1}".into()),
            tags: None,
        })
    }

    #[tokio::test]
    async fn adds_and_removes_replay_to_the_live_files() {
        let dir = tempfile::tempdir().unwrap();
        let t = table(dir.path());
        assert_eq!(t.snapshot().await.unwrap().version, None);
        let v = t
            .commit(meta, |_| {
                Ok(Some(vec![
                    add("label=a/1.parquet"),
                    add("label=a/2.parquet"),
                ]))
            })
            .await
            .unwrap();
        assert_eq!(v, Some(0));
        let v = t
            .commit(meta, |_| {
                Ok(Some(vec![
                    Action::Remove(Remove {
                        path: "label=a/1.parquet".into(),
                        deletion_timestamp: 0,
                        data_change: true,
                        partition_values: None,
                        size: None,
                    }),
                    add("label=a/3.parquet"),
                ]))
            })
            .await
            .unwrap();
        assert_eq!(v, Some(1));
        let s = t.snapshot().await.unwrap();
        assert_eq!(s.version, Some(1));
        assert_eq!(
            s.files.keys().collect::<Vec<_>>(),
            ["label=a/2.parquet", "label=a/3.parquet"]
        );
        assert_eq!(s.metadata.unwrap().partition_columns, ["label"]);
        // Version 1 exists: a writer still at version 0 loses the race.
        assert!(!t.try_commit(1, &[add("label=a/4.parquet")]).await.unwrap());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn concurrent_writers_lose_nothing_and_retry_idempotently() {
        let dir = tempfile::tempdir().unwrap();
        let t = table(dir.path());
        let mut tasks = Vec::new();
        for w in 0..8 {
            let t = t.clone();
            tasks.push(tokio::spawn(async move {
                for i in 0..10 {
                    let app = format!("writer-{w}");
                    t.commit(meta, |snap| {
                        // Idempotency re-checked against what is committed: a batch
                        // whose txn is in is not added twice.
                        if snap.txns.get(&app).is_some_and(|v| *v >= i) {
                            return Ok(None);
                        }
                        Ok(Some(vec![
                            add(&format!("label=a/w{w}-{i}.parquet")),
                            Action::Txn(Txn {
                                app_id: app.clone(),
                                version: i,
                                last_updated: None,
                            }),
                        ]))
                    })
                    .await
                    .unwrap();
                }
            }));
        }
        for task in tasks {
            task.await.unwrap();
        }
        let s = t.snapshot().await.unwrap();
        assert_eq!(s.files.len(), 80);
        assert_eq!(s.version, Some(79));
        assert!((0..8).all(|w| s.txns[&format!("writer-{w}")] == 9));
    }

    #[tokio::test]
    async fn a_torn_or_foreign_log_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let t = table(dir.path());
        t.commit(meta, |_| Ok(Some(vec![add("label=a/1.parquet")])))
            .await
            .unwrap();
        let log = dir.path().join("t/_delta_log");
        std::fs::write(log.join(format!("{:020}.json", 2)), "{}\n").unwrap();
        let e = t.snapshot().await.unwrap_err().to_string();
        assert!(e.contains("version 1 is missing"), "{e}");
        std::fs::write(
            log.join(format!("{:020}.json", 1)),
            "{\"add\": 5}\nnot json\n",
        )
        .unwrap();
        std::fs::remove_file(log.join(format!("{:020}.json", 2))).unwrap();
        let e = t.snapshot().await.unwrap_err().to_string();
        assert!(
            e.contains("00000000000000000001.json:1: not a Delta log action"),
            "{e}"
        );
    }

    #[tokio::test]
    async fn a_checkpoint_every_ten_versions_gives_the_same_snapshot() {
        let dir = tempfile::tempdir().unwrap();
        let t = table(dir.path());
        for i in 0..25 {
            t.commit(meta, |_| {
                let mut a = vec![add(&format!("label=a/{i}.parquet"))];
                if i % 3 == 2 {
                    a.push(Action::Remove(Remove {
                        path: format!("label=a/{}.parquet", i - 1),
                        deletion_timestamp: 0,
                        data_change: true,
                        partition_values: None,
                        size: None,
                    }));
                }
                a.push(Action::Txn(Txn {
                    app_id: "w".into(),
                    version: i,
                    last_updated: None,
                }));
                Ok(Some(a))
            })
            .await
            .unwrap();
        }
        let log = dir.path().join("t/_delta_log");
        assert!(log.join(format!("{:020}.checkpoint.parquet", 19)).exists());
        let last = std::fs::read_to_string(log.join("_last_checkpoint")).unwrap();
        assert!(last.contains("\"version\":19"), "{last}");
        let with = t.snapshot().await.unwrap();
        // The same replay without checkpoints.
        for v in [9, 19] {
            std::fs::remove_file(log.join(format!("{v:020}.checkpoint.parquet"))).unwrap();
        }
        std::fs::remove_file(log.join("_last_checkpoint")).unwrap();
        let without = t.snapshot().await.unwrap();
        assert_eq!(with.version, Some(24));
        assert_eq!(with.files, without.files);
        assert_eq!(with.txns, without.txns);
        assert_eq!(with.metadata, without.metadata);
        assert_eq!(with.files.len(), 25 - 8);
    }

    #[test]
    fn schema_strings_are_spark_types_with_partition_columns() {
        use arrow::datatypes::Field;
        let runs = Schema::new(vec![
            Field::new("run_id", DataType::Utf8, false),
            Field::new(
                "ingested_at",
                DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                false,
            ),
            Field::new("label", DataType::Utf8, false),
        ]);
        let s = schema_string(&runs, &["label"]);
        let v: Value = serde_json::from_str(&s).unwrap();
        let fields = v["fields"].as_array().unwrap();
        assert_eq!(fields.last().unwrap()["name"], "label");
        assert!(fields.iter().any(|f| f["type"] == "timestamp"));
        assert_eq!(encode_path("label=a b/x"), "label=a%20b/x");
    }
}
