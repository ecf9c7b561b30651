//! Helpers shared by the route tests: the sample data and ingesting it.
#![allow(dead_code)]

use perfdb_ingest::model::RunMeta;
use perfdb_ingest::warehouse::Warehouse;
use std::path::{Path, PathBuf};

pub fn sample(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../sample-data")
        .join(rel)
}

/// Ingest the sample folder `dir` under `label` (and `commit`), requiring every file in.
pub fn ingest(root: &Path, dir: &str, label: &str, commit: Option<&str>) {
    let files = perfdb_ingest::expand_inputs(&[sample(dir)]).unwrap();
    ingest_files(root, &files, label, commit);
}

/// Ingest `files` under `label` (and `commit`), requiring every file in.
pub fn ingest_files(root: &Path, files: &[PathBuf], label: &str, commit: Option<&str>) {
    let meta = RunMeta {
        label: label.into(),
        commit: commit.map(String::from),
        ..Default::default()
    };
    let r = perfdb_ingest::ingest_files(
        &Warehouse::new(root),
        files,
        None,
        &meta,
        &perfdb_ingest::devices::builtin(),
        &|_| {},
    )
    .unwrap();
    assert!(r.iter().all(|f| f.result.is_ok()));
}
