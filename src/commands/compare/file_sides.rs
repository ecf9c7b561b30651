//! `perfdb compare`'s sides given as files: which argument is a path and which a
//! warehouse selector, the files of a folder or a glob, read and parsed on every core as
//! `ingest` reads them, and kept in the warehouse after the verdict when asked
//! (`--keep`).
//!
//! The rule (docs/compare.md): an argument holding `/`, `*`, `?` or `[` is a path (no
//! label, commit or run id can hold one); one that names an existing file or folder is a
//! path too, unless it also selects runs of the warehouse. Then both could be meant:
//! when the runs were read from exactly those files (the same contents, as `perfdb
//! ingest base --label base` leaves them), the two are one side and the warehouse's runs
//! are taken; when they differ, the command refuses, asking for `./NAME` (the files) or
//! `NAME@latest`, `run:ID` (the runs).

use crate::cli::{CompareArgs, IngestOptions, InputFormat};
use anyhow::Context;
use perfdb_ingest::devices::Table;
use perfdb_reports::compare::FileRuns;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Whether `spec` can only be a path.
fn looks_like_path(spec: &str) -> bool {
    spec.contains(['/', '*', '?', '['])
}

/// What a side argument names.
pub enum SideArg {
    /// Files to read: the argument as given and the files it names.
    Files(String, Vec<PathBuf>),
    /// A warehouse selector.
    Selector(String),
}

/// Tell `spec` a path or a selector; `selects` gives the SHA-256 of the files the
/// runs a selector matches were read from (`None`: it matches none), asked only when
/// `spec` also names an existing file or folder.
pub fn side_arg(
    spec: &str,
    selects: impl Fn(&str) -> Option<Vec<String>>,
) -> anyhow::Result<SideArg> {
    if looks_like_path(spec) {
        return Ok(SideArg::Files(spec.to_string(), expand(spec)?));
    }
    if !Path::new(spec).exists() {
        return Ok(SideArg::Selector(spec.to_string()));
    }
    let files = expand(spec)?;
    let Some(mut stored) = selects(spec) else {
        return Ok(SideArg::Files(spec.to_string(), files));
    };
    let mut here = Vec::with_capacity(files.len());
    for f in &files {
        let bytes = std::fs::read(f).with_context(|| format!("cannot read {}", f.display()))?;
        here.push(perfdb_ingest::hash::sha256_hex(&bytes));
    }
    for hashes in [&mut stored, &mut here] {
        hashes.sort();
        hashes.dedup();
    }
    if stored == here {
        // The warehouse holds exactly these files under that name: one side either way.
        return Ok(SideArg::Selector(spec.to_string()));
    }
    anyhow::bail!(
        "'{spec}' is both a file or folder here and a side of the warehouse, and they hold \
         different runs: write ./{spec} for the files, or {spec}@latest (or run:ID) for the \
         warehouse's runs"
    )
}

/// The files `spec` names: a file, the files of a folder (as `ingest` takes a folder),
/// or those a glob's last part matches (`*` any text, `?` one character).
fn expand(spec: &str) -> anyhow::Result<Vec<PathBuf>> {
    let path = Path::new(spec);
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if !spec.contains(['*', '?', '[']) {
        if !path.exists() {
            anyhow::bail!("{spec}: no such file or folder");
        }
        let files = perfdb_ingest::expand_inputs(&[path.to_path_buf()])?;
        if files.is_empty() {
            anyhow::bail!("{spec}: no files found");
        }
        return Ok(files);
    }
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    let dir_text = dir
        .map(|d| d.to_string_lossy().into_owned())
        .unwrap_or_default();
    if dir_text.contains(['*', '?', '[']) || name.contains('[') {
        anyhow::bail!(
            "{spec}: only the file name may hold `*` or `?` (the folder is named whole; \
             `[` is not read): let the shell expand other patterns into a folder's files"
        );
    }
    let dir = dir.unwrap_or(Path::new("."));
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("{spec}: cannot read the folder {}", dir.display()))?
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter(|e| e.file_name().to_str().is_some_and(|n| wildcard(name, n)))
        .map(|e| e.path())
        .collect();
    files.sort();
    if files.is_empty() {
        anyhow::bail!("{spec}: no file matches");
    }
    Ok(files)
}

/// Whether `text` matches `pattern` (`*` any run of characters, `?` one).
fn wildcard(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut i, mut j, mut star, mut mark) = (0, 0, None, 0);
    while j < t.len() {
        if i < p.len() && (p[i] == '?' || p[i] == t[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some(i);
            mark = j;
            i += 1;
        } else if let Some(s) = star {
            i = s + 1;
            mark += 1;
            j = mark;
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

/// Read and parse a file side's files (every core), as `ingest` would under `label`,
/// against `devices` (the comparison's table): the first file that cannot be read
/// refuses the comparison with its line, nothing compared or written. Each file's
/// warnings are said.
pub fn read_side(
    a: &CompareArgs,
    spec: &str,
    files: &[PathBuf],
    label: &str,
    commit: Option<String>,
    devices: &Arc<Table>,
) -> anyhow::Result<FileRuns> {
    let crate::commands::ingest::Options {
        format,
        meta,
        devices,
        ..
    } = crate::commands::ingest::options_on(
        IngestOptions {
            label: Some(label.to_string()),
            commit,
            commit_time: None,
            git_dir: None,
            arch: None,
            tags: a.tags.clone(),
            machine: a.machine.clone(),
            device: a.device.clone(),
            format: InputFormat(a.input_format.0),
            unit: a.unit.clone(),
            method: None,
            variant_axis: None,
        },
        devices.clone(),
    )?;
    let results = perfdb_ingest::prepare_files(files, format, &meta, &devices, &|_| {});
    let mut prepared = Vec::with_capacity(results.len());
    for r in results {
        let p = r.map_err(|e| anyhow::anyhow!("{e}"))?;
        for w in &p.warnings {
            say!("warning: {}:{}: {}", p.run.source_path, w.line, w.reason);
        }
        prepared.push(p);
    }
    Ok(FileRuns::new(spec, prepared))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_match_as_a_shell_does() {
        assert!(wildcard("*.log", "trial1.log"));
        assert!(wildcard("trial?.log", "trial1.log"));
        assert!(!wildcard("trial?.log", "trial10.log"));
        assert!(wildcard("*", "x"));
        assert!(!wildcard("*.log", "trial1.csv"));
        assert!(wildcard("a*b*c", "a-x-b-y-c"));
    }

    #[test]
    fn a_path_is_told_from_a_selector() {
        assert!(looks_like_path("base/"));
        assert!(looks_like_path("'base/*.log'"));
        assert!(!looks_like_path("main@latest"));
        assert!(!looks_like_path("run:abc"));
        assert!(matches!(
            side_arg("main@latest", |_| Some(vec![])).unwrap(),
            SideArg::Selector(_)
        ));
        assert!(side_arg("no/such/folder", |_| None).is_err());
    }
}
