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

use arrow::datatypes::{DataType, Schema, TimeUnit};
use object_store::path::Path as StorePath;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

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

type Result<T> = std::result::Result<T, DeltaError>;

/// `add`: a data file joins the table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Add {
    /// Relative to the table root, URL-encoded as the protocol asks (`label=a%20b/...`).
    pub path: String,
    pub partition_values: BTreeMap<String, Option<String>>,
    pub size: u64,
    pub modification_time: i64,
    pub data_change: bool,
    /// `{"numRecords": n}`: readers plan with it; perfdb checks row counts with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stats: Option<String>,
    /// The protocol's free-form file tags: perfdb's batch gate (`crate::warehouse`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<BTreeMap<String, String>>,
}

/// `remove`: a data file leaves the table (its bytes stay until a vacuum).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Remove {
    pub path: String,
    pub deletion_timestamp: i64,
    pub data_change: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition_values: Option<BTreeMap<String, Option<String>>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Protocol {
    pub min_reader_version: u32,
    pub min_writer_version: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Format {
    pub provider: String,
    pub options: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub format: Format,
    pub schema_string: String,
    pub partition_columns: Vec<String>,
    pub configuration: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_time: Option<i64>,
}

/// `txn`: the last version of an application's own sequence this table has seen
/// (perfdb: a writer's batch id), so a retried write can tell it already landed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Txn {
    pub app_id: String,
    pub version: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_updated: Option<i64>,
}

/// One line of a log file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Action {
    #[serde(rename = "protocol")]
    Protocol(Protocol),
    #[serde(rename = "metaData")]
    Metadata(Metadata),
    #[serde(rename = "add")]
    Add(Add),
    #[serde(rename = "remove")]
    Remove(Remove),
    #[serde(rename = "txn")]
    Txn(Txn),
    #[serde(rename = "commitInfo")]
    CommitInfo(Value),
}

/// The table as of one version: its live files and what the log says about it.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// The last committed version; `None` for a table with no log yet.
    pub version: Option<u64>,
    pub metadata: Option<Metadata>,
    /// Live files by path.
    pub files: BTreeMap<String, Add>,
    /// Each application's last `txn` version.
    pub txns: HashMap<String, i64>,
    pub protocol: Option<Protocol>,
}

impl Snapshot {
    /// The version the next commit must create.
    pub fn next_version(&self) -> u64 {
        self.version.map_or(0, |v| v + 1)
    }
}

/// One Delta table under `root` in `store`.
#[derive(Clone)]
pub struct DeltaTable {
    store: Arc<dyn ObjectStore>,
    root: StorePath,
}

/// A checkpoint after every this many versions (Delta's default interval), so a
/// snapshot reads one Parquet file and at most this many JSON files.
pub const CHECKPOINT_INTERVAL: u64 = 10;

/// How often and how long a commit that keeps losing the race retries.
const MAX_ATTEMPTS: u32 = 64;
const FIRST_BACKOFF: Duration = Duration::from_millis(2);
const MAX_BACKOFF: Duration = Duration::from_millis(500);

impl DeltaTable {
    pub fn new(store: Arc<dyn ObjectStore>, root: StorePath) -> DeltaTable {
        DeltaTable { store, root }
    }

    /// The table's prefix in its store.
    pub fn root(&self) -> &StorePath {
        &self.root
    }

    fn log_file(&self, version: u64) -> StorePath {
        self.root
            .clone()
            .join("_delta_log")
            .join(format!("{version:020}.json"))
    }

    /// The table as of its latest version: the last checkpoint (if any), then every
    /// JSON version after it, in order. A table without a log is empty.
    pub async fn snapshot(&self) -> Result<Snapshot> {
        let mut snap = Snapshot::default();
        if let Some(v) = self.last_checkpoint().await? {
            self.read_checkpoint(v, &mut snap).await?;
            snap.version = Some(v);
        }
        // The versions after it, by direct reads (a listing would grow with the log).
        self.update(&mut snap).await?;
        if snap.version.is_none() && self.first_version().await? == Some(0) {
            // Version 0 was created since we looked: read again.
            self.update(&mut snap).await?;
        }
        Ok(snap)
    }

    /// The lowest JSON version in the log. A log whose version 0 is missing while later
    /// ones exist is broken, not empty.
    async fn first_version(&self) -> Result<Option<u64>> {
        use futures::TryStreamExt;
        let dir = self.root.clone().join("_delta_log");
        let listed: Vec<_> = self
            .store
            .list(Some(&dir))
            .try_collect()
            .await
            .map_err(|source| DeltaError::Store {
                path: dir.to_string(),
                source,
            })?;
        let first = listed
            .iter()
            .filter_map(|m| {
                let v = m.location.filename()?.strip_suffix(".json")?;
                (v.len() == 20).then(|| v.parse::<u64>().ok()).flatten()
            })
            .min();
        match first {
            Some(v) if v > 0 => Err(DeltaError::Corrupt {
                path: dir.to_string(),
                line: 0,
                reason: format!("version 0 is missing (the log starts at {v})"),
            }),
            other => Ok(other),
        }
    }

    /// `_delta_log/_last_checkpoint`'s version, when there is one.
    async fn last_checkpoint(&self) -> Result<Option<u64>> {
        let path = self
            .root
            .clone()
            .join("_delta_log")
            .join("_last_checkpoint");
        let bytes = match self.store.get(&path).await {
            Ok(r) => r.bytes().await,
            Err(e) => Err(e),
        };
        match bytes {
            Ok(b) => {
                let v: Value = serde_json::from_slice(&b).map_err(|e| DeltaError::Corrupt {
                    path: path.to_string(),
                    line: 1,
                    reason: e.to_string(),
                })?;
                Ok(v["version"].as_u64())
            }
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(source) => Err(DeltaError::Store {
                path: path.to_string(),
                source,
            }),
        }
    }

    /// Bring `snap` up to the latest version by reading the versions after it, one GET
    /// each until the next does not exist: after a lost race that is one or two reads,
    /// not a listing and a replay of the whole log.
    pub async fn update(&self, snap: &mut Snapshot) -> Result<()> {
        loop {
            let v = snap.next_version();
            let path = self.log_file(v);
            let got = match self.store.get(&path).await {
                Ok(r) => r.bytes().await,
                Err(e) => Err(e),
            };
            match got {
                Ok(bytes) => {
                    apply(snap, path.as_ref(), &bytes)?;
                    snap.version = Some(v);
                }
                Err(object_store::Error::NotFound { .. }) => {
                    // The end of the log, unless a version is missing in the middle
                    // (a deleted file): a commit there would fork the history. A
                    // writer creates v + 1 only after v exists, so when v + 1 is there,
                    // a second look at v is conclusive (v may have appeared meanwhile).
                    let after = self.log_file(v + 1);
                    if self.store.head(&after).await.is_err() {
                        return Ok(());
                    }
                    if self.store.head(&path).await.is_ok() {
                        continue;
                    }
                    return Err(DeltaError::Corrupt {
                        path: path.to_string(),
                        line: 0,
                        reason: format!("version {v} is missing (the log continues at {})", v + 1),
                    });
                }
                Err(source) => {
                    return Err(DeltaError::Store {
                        path: path.to_string(),
                        source,
                    })
                }
            }
        }
    }

    /// Create version `version` holding `actions`; `Ok(false)` when another writer
    /// created it first.
    pub async fn try_commit(&self, version: u64, actions: &[Action]) -> Result<bool> {
        let mut body = Vec::new();
        for a in actions {
            serde_json::to_writer(&mut body, a).expect("actions serialise");
            body.push(b'\n');
        }
        let path = self.log_file(version);
        let opts = PutOptions {
            mode: PutMode::Create,
            ..Default::default()
        };
        match self
            .store
            .put_opts(&path, PutPayload::from(body), opts)
            .await
        {
            Ok(_) => Ok(true),
            Err(object_store::Error::AlreadyExists { .. }) => Ok(false),
            Err(source) => Err(DeltaError::Store {
                path: path.to_string(),
                source,
            }),
        }
    }

    /// Commit what `build` makes of the current snapshot; on losing the race, read the
    /// log again and ask `build` again (it re-checks idempotency against what the other
    /// writer committed, and may answer `None`: nothing left to do). Version 0 gets the
    /// table's `protocol` and `metaData` from `create`. Returns the committed version,
    /// or `None` when `build` found nothing to commit.
    pub async fn commit(
        &self,
        create: impl Fn() -> Metadata,
        mut build: impl FnMut(&Snapshot) -> Result<Option<Vec<Action>>>,
    ) -> Result<Option<u64>> {
        let mut backoff = Backoff::default();
        let mut snap = self.snapshot().await?;
        loop {
            let Some(actions) = build(&snap)? else {
                return Ok(None);
            };
            if self.commit_next(&mut snap, &create, actions).await? {
                return Ok(snap.version);
            }
            backoff.wait().await?;
            // What the winner (and anyone since) committed.
            self.update(&mut snap).await?;
        }
    }

    /// Try to commit `actions` as the version after `snap`; on success `snap` becomes
    /// that version (and a checkpoint is written at each interval). `Ok(false)`: another
    /// writer committed that version first; `snap` is unchanged.
    pub async fn commit_next(
        &self,
        snap: &mut Snapshot,
        create: impl Fn() -> Metadata,
        mut actions: Vec<Action>,
    ) -> Result<bool> {
        let version = snap.next_version();
        if version == 0 {
            let mut first = vec![
                Action::Protocol(Protocol {
                    min_reader_version: 1,
                    min_writer_version: 2,
                }),
                Action::Metadata(create()),
            ];
            first.append(&mut actions);
            actions = first;
        }
        if !self.try_commit(version, &actions).await? {
            return Ok(false);
        }
        apply_all(snap, &actions);
        snap.version = Some(version);
        if (version + 1).is_multiple_of(CHECKPOINT_INTERVAL) {
            // The commit stands whatever happens here: a checkpoint only saves readers
            // work, and `_last_checkpoint` is written after it, so a failed one leaves
            // readers on the JSON versions and the next interval writes another.
            let _ = self.write_checkpoint(snap).await;
        }
        Ok(true)
    }

    /// The latest version, found without reading the log: from `known` (or the last
    /// checkpoint) one existence check per version after it. `None`: no log.
    pub async fn latest_version(&self, known: Option<u64>) -> Result<Option<u64>> {
        // A known version that is gone (the table was made again) is no start.
        let known = match known {
            Some(v) if self.store.head(&self.log_file(v)).await.is_ok() => Some(v),
            _ => None,
        };
        let mut v = match known {
            Some(v) => Some(v),
            None => self.last_checkpoint().await?,
        };
        loop {
            let next = v.map_or(0, |v| v + 1);
            match self.store.head(&self.log_file(next)).await {
                Ok(_) => v = Some(next),
                Err(object_store::Error::NotFound { .. }) => return Ok(v),
                Err(source) => {
                    return Err(DeltaError::Store {
                        path: self.log_file(next).to_string(),
                        source,
                    })
                }
            }
        }
    }
}

/// Bounded, jittered exponential backoff between attempts of a commit that keeps
/// losing the race.
pub struct Backoff {
    next: Duration,
    attempts: u32,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            next: FIRST_BACKOFF,
            attempts: 0,
        }
    }
}

impl Backoff {
    /// Sleep before the next attempt; an error once the attempts are used up.
    pub async fn wait(&mut self) -> Result<()> {
        self.attempts += 1;
        if self.attempts >= MAX_ATTEMPTS {
            return Err(DeltaError::Contended {
                attempts: MAX_ATTEMPTS,
            });
        }
        // Jitter from the clock: writers that collided do not retry in step.
        let jitter = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos() as u64 % 1000);
        tokio::time::sleep(
            self.next + Duration::from_micros(jitter * self.next.as_millis() as u64),
        )
        .await;
        self.next = (self.next * 2).min(MAX_BACKOFF);
        Ok(())
    }
}

/// Apply one log file's actions (JSON lines) to `snap`.
fn apply(snap: &mut Snapshot, path: &str, bytes: &[u8]) -> Result<()> {
    for (i, line) in bytes.split(|b| *b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let action: Action = match serde_json::from_slice(line) {
            Ok(a) => a,
            Err(e) => {
                // Actions this reader does not use (cdc, domainMetadata...) are skipped;
                // a known action of the wrong shape, or a line that is not a JSON
                // object, is corruption.
                let known = ["protocol", "metaData", "add", "remove", "txn", "commitInfo"];
                match serde_json::from_slice::<serde_json::Map<String, Value>>(line) {
                    Ok(m) if !m.keys().any(|k| known.contains(&k.as_str())) => continue,
                    _ => {
                        return Err(DeltaError::Corrupt {
                            path: path.to_string(),
                            line: i + 1,
                            reason: e.to_string(),
                        })
                    }
                }
            }
        };
        apply_action(snap, action)
            .map_err(|reason| DeltaError::Rejected(format!("{path}: {reason}")))?;
    }
    Ok(())
}

/// Apply actions this writer just committed.
fn apply_all(snap: &mut Snapshot, actions: &[Action]) {
    for a in actions {
        // Our own actions: protocol version 1, so this cannot fail.
        let _ = apply_action(snap, a.clone());
    }
}

fn apply_action(snap: &mut Snapshot, action: Action) -> std::result::Result<(), String> {
    match action {
        Action::Add(a) => {
            snap.files.insert(a.path.clone(), a);
        }
        Action::Remove(r) => {
            snap.files.remove(&r.path);
        }
        Action::Metadata(m) => snap.metadata = Some(m),
        Action::Txn(t) => {
            snap.txns.insert(t.app_id, t.version);
        }
        Action::Protocol(p) => {
            if p.min_reader_version > 1 {
                return Err(format!(
                    "the table needs Delta reader version {}; perfdb reads version 1",
                    p.min_reader_version
                ));
            }
            snap.protocol = Some(p);
        }
        Action::CommitInfo(_) => {}
    }
    Ok(())
}

/// The checkpoint's Parquet schema: one nullable struct column per action kind, as the
/// protocol lays it out (a row holds exactly one action).
fn checkpoint_schema() -> Arc<Schema> {
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
    fn checkpoint_file(&self, version: u64) -> StorePath {
        self.root
            .clone()
            .join("_delta_log")
            .join(format!("{version:020}.checkpoint.parquet"))
    }

    /// Write the checkpoint of `snap` (protocol, metadata, app transactions, live files)
    /// and point `_last_checkpoint` at it. Another writer writing the same version's
    /// checkpoint writes the same state: plain puts.
    async fn write_checkpoint(&self, snap: &Snapshot) -> Result<()> {
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
    async fn read_checkpoint(&self, version: u64, snap: &mut Snapshot) -> Result<()> {
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

/// The Delta (Spark) schema string of `schema`, with the partition columns (strings,
/// held in the paths, not the files) appended.
pub fn schema_string(schema: &Schema, partition_columns: &[&str]) -> String {
    let mut fields: Vec<Value> = schema
        .fields()
        .iter()
        .map(|f| {
            serde_json::json!({
                "name": f.name(),
                "type": spark_type(f.data_type()),
                "nullable": f.is_nullable(),
                "metadata": {},
            })
        })
        .collect();
    for p in partition_columns {
        fields.push(serde_json::json!({
            "name": p, "type": "string", "nullable": true, "metadata": {},
        }));
    }
    serde_json::json!({"type": "struct", "fields": fields}).to_string()
}

fn spark_type(t: &DataType) -> &'static str {
    match t {
        DataType::Utf8 | DataType::LargeUtf8 => "string",
        DataType::Int32 => "integer",
        DataType::Int64 => "long",
        DataType::Float64 => "double",
        DataType::Float32 => "float",
        DataType::Boolean => "boolean",
        DataType::Timestamp(TimeUnit::Microsecond, Some(_)) => "timestamp",
        DataType::Timestamp(TimeUnit::Microsecond, None) => "timestamp_ntz",
        other => panic!("no Delta type for {other}: perfdb's schemas do not use it"),
    }
}

/// Milliseconds since the Unix epoch, as the log's times are.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// A path segment as the protocol writes it in `add.path` (percent-encoded beyond
/// unreserved characters), for partition directories like `label=feature/x`.
pub fn encode_path(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for b in segment.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~' | b'=' | b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::local::LocalFileSystem;

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
