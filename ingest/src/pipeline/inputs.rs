//! Which files an ingest reads: directories walked (sorted, hidden entries skipped,
//! each directory once however many links reach it).

use super::FileError;
use std::path::{Path, PathBuf};

/// Expand directories (recursively, sorted) into files; files stay as given. Symbolic
/// links are followed, but a directory is walked once however many links reach it, so
/// a link loop (`logs/again -> ..`) ends instead of repeating its files.
pub fn expand_inputs(paths: &[PathBuf]) -> Result<Vec<PathBuf>, FileError> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for p in paths {
        if p.is_dir() {
            let mut files = Vec::new();
            walk(p, &mut files, &mut seen).map_err(|source| FileError::Read {
                path: p.display().to_string(),
                source,
            })?;
            files.sort();
            out.extend(files);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

fn walk(
    dir: &Path,
    out: &mut Vec<PathBuf>,
    seen: &mut std::collections::HashSet<PathBuf>,
) -> std::io::Result<()> {
    if !seen.insert(std::fs::canonicalize(dir)?) {
        return Ok(());
    }
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.starts_with('.') {
            continue;
        }
        if p.is_dir() {
            walk(&p, out, seen)?;
        } else {
            out.push(p);
        }
    }
    Ok(())
}
