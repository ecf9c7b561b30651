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
    /// Every table, in the order a compaction commits them (`compact.rs`): runs, whose
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

/// Is `location` a URL perfdb reaches through an object store (`s3://`, `gs://`,
/// `az://`...; any scheme but `file://`, so an unknown one is an error, not a local
/// directory named `http:`), rather than a local directory?
pub fn is_remote(location: &str) -> bool {
    match location.split_once("://") {
        Some((scheme, _)) => {
            scheme != "file"
                && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        }
        None => false,
    }
}

/// Whether `location` can name a warehouse: a plain path, `file:///abs/path`, or
/// `SCHEME://...` of a store. Something that looks like a URL and is not one (`s3:/x`,
/// `file://rel`, `s3//x`) is an error, not a local directory of that name.
pub fn check_location(location: &str) -> Result<(), String> {
    let scheme_like = |s: &str| {
        s.len() > 1
            && s.starts_with(|c: char| c.is_ascii_alphabetic())
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    };
    if let Some((scheme, rest)) = location.split_once("://") {
        if scheme == "file" {
            return match file_url_path(location) {
                Some(_) => Ok(()),
                None => Err(format!(
                    "{location}: a file URL needs an absolute path (file:///path/to/warehouse), \
                     or give the directory as a plain path"
                )),
            };
        }
        if scheme_like(scheme) {
            return if rest.is_empty() || rest.starts_with('/') {
                Err(format!(
                    "{location}: no bucket or container after {scheme}://"
                ))
            } else {
                Ok(())
            };
        }
    } else if let Some((scheme, _)) = location.split_once(':') {
        // `s3:/bucket`, `s3:bucket` (a Windows drive letter `C:` is one letter).
        if scheme_like(scheme) {
            return Err(format!(
                "{location}: looks like a URL but is not one (expected {scheme}://...); a local \
                 directory with a ':' in its name can be given as ./{location}"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod location_tests {
    #[test]
    fn url_lookalikes_are_errors_and_paths_pass() {
        for ok in [
            "perfdb-warehouse",
            "/abs/wh",
            "./a:b",
            "s3://bucket/p",
            "file:///tmp/wh",
            "C:\\wh",
            "az://c/p",
        ] {
            assert!(super::check_location(ok).is_ok(), "{ok}");
        }
        for bad in ["s3:/bucket", "s3:bucket", "file://rel", "s3://", "gs:///x"] {
            assert!(super::check_location(bad).is_err(), "{bad}");
        }
    }
}

/// A local directory given as `file:///path`, as its path.
pub fn file_url_path(location: &str) -> Option<std::path::PathBuf> {
    let url = url::Url::parse(location).ok()?;
    (url.scheme() == "file").then(|| url.to_file_path().ok())?
}

/// The store of a remote warehouse, rooted at its prefix: credentials, region and
/// endpoint from the usual environment variables (`AWS_ACCESS_KEY_ID`,
/// `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`, `AWS_ENDPOINT_URL` or `AWS_ENDPOINT`;
/// `GOOGLE_SERVICE_ACCOUNT`...; `AZURE_STORAGE_ACCOUNT_NAME`...).
pub fn remote_store(location: &str) -> Result<Arc<dyn ObjectStore>, String> {
    use object_store::aws::AmazonS3Builder;
    use object_store::azure::MicrosoftAzureBuilder;
    use object_store::gcp::GoogleCloudStorageBuilder;
    let url = url::Url::parse(location).map_err(|e| format!("{location}: not a URL ({e})"))?;
    let bad = |e: object_store::Error| format!("{location}: {e}");
    let store: Arc<dyn ObjectStore> = match url.scheme() {
        "s3" | "s3a" => {
            let mut b = AmazonS3Builder::from_env().with_url(location);
            // `AWS_ENDPOINT_URL` is the AWS tools' name; object_store reads
            // `AWS_ENDPOINT`.
            let endpoint = std::env::var("AWS_ENDPOINT")
                .or_else(|_| std::env::var("AWS_ENDPOINT_URL"))
                .ok();
            if let Some(e) = &endpoint {
                b = b.with_endpoint(e).with_allow_http(e.starts_with("http://"));
            }
            if std::env::var("AWS_REGION").is_err() && std::env::var("AWS_DEFAULT_REGION").is_err()
            {
                b = b.with_region("us-east-1");
            }
            Arc::new(b.build().map_err(bad)?)
        }
        "gs" => Arc::new(
            GoogleCloudStorageBuilder::from_env()
                .with_url(location)
                .build()
                .map_err(bad)?,
        ),
        "az" | "abfs" | "abfss" | "azure" => Arc::new(
            MicrosoftAzureBuilder::from_env()
                .with_url(location)
                .build()
                .map_err(bad)?,
        ),
        other => {
            return Err(format!(
                "{location}: `{other}://` is no object store perfdb knows (s3, gs, az, file)"
            ))
        }
    };
    let prefix = url.path().trim_matches('/');
    Ok(if prefix.is_empty() {
        store
    } else {
        Arc::new(object_store::prefix::PrefixStore::new(
            store,
            StorePath::from(prefix),
        ))
    })
}

/// [`remote_store`], one client per location for the life of the process: a client
/// keeps its HTTP connections, so a server's requests (or a command's many reads) do not
/// each open new ones. The environment it was built from is read once.
pub fn shared_store(location: &str) -> Result<Arc<dyn ObjectStore>, String> {
    type Clients = std::collections::HashMap<String, Result<Arc<dyn ObjectStore>, String>>;
    static CLIENTS: std::sync::LazyLock<std::sync::Mutex<Clients>> =
        std::sync::LazyLock::new(Default::default);
    let mut clients = CLIENTS.lock().unwrap_or_else(|p| p.into_inner());
    clients
        .entry(location.to_string())
        .or_insert_with(|| remote_store(location))
        .clone()
}

/// Where a remote warehouse's files are kept on this machine once read (they never
/// change: every commit writes new names): `$PERFDB_CACHE_DIR`, else the user's cache
/// directory, then one directory per location.
pub fn cache_dir(location: &str) -> std::path::PathBuf {
    let base = std::env::var_os("PERFDB_CACHE_DIR")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("XDG_CACHE_HOME").map(|d| Path::new(&d).join("perfdb")))
        .or_else(|| std::env::var_os("HOME").map(|d| Path::new(&d).join(".cache/perfdb")))
        .unwrap_or_else(|| std::env::temp_dir().join("perfdb-cache"));
    let id = &crate::warehouse::sha256_hex(location.as_bytes())[..16];
    base.join("warehouses").join(id)
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
        partition_values.insert(
            crate::schema::LABEL.to_string(),
            crate::warehouse::label_of(rel),
        );
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
        assert!(is_remote("s3://b/p") && is_remote("http://x") && !is_remote("file:///x"));
        assert!(!is_remote("./wh") && !is_remote("dir with :// inside"));
        for p in ["label=a b/x.parquet", "label=feature/x%y/z", "label=ü/1"] {
            assert_eq!(decode_path(&delta::encode_path(p)), p);
        }
        assert_eq!(
            rel_of(Table::Runs, "label=a%20b/p.parquet"),
            "runs/label=a b/p.parquet"
        );
    }
}
