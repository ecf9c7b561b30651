//! The warehouse's files on this machine: placing a data file atomically (written
//! aside in `_tmp/`, fsynced, renamed into its partition), fetching a remote one into
//! the local cache, Parquet writer settings, and reading chosen columns back.

use super::tables::TMP_DIR;
use super::tables::{block_on, Table};
use super::{io, pq, Result, Warehouse, WarehouseError};
use crate::delta::Add;
use arrow::array::RecordBatch;
use object_store::path::Path as StorePath;
use object_store::ObjectStoreExt;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::{ArrowWriter, ProjectionMask};
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use std::collections::BTreeMap;
use std::fs::{self, File};
use std::path::{Path, PathBuf};

impl Warehouse {
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
    pub(crate) fn aside(&self, rel: &str) -> Result<(PathBuf, File)> {
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
    pub(crate) fn place(&self, tmp: &Path, f: File, rel: &str, sync: bool) -> Result<()> {
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
    pub(crate) fn save_local(&self, rel: &str, bytes: &[u8]) -> Result<()> {
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
        Ok(crate::warehouse::tables::add_from(rel, t, size, rows, tags))
    }

    /// [`Warehouse::write_file`] of one batch of an alert table (flat, untagged).
    pub(crate) fn write_flat(&self, rel: &str, t: Table, batch: RecordBatch) -> Result<Add> {
        self.write_file(rel, t, &[batch], None, None)
    }
}
/// How every warehouse file is written (the fuzz checks write their round trip the
/// same way): Snappy, and row groups of at most `row_group` rows when given.
pub fn writer_properties(row_group: Option<usize>) -> WriterProperties {
    let mut props = WriterProperties::builder().set_compression(Compression::SNAPPY);
    if let Some(n) = row_group {
        props = props.set_max_row_group_row_count(Some(n));
    }
    props.build()
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

pub(crate) fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
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
