//! What `perfdb bisect` found for an alert, kept beside the warehouse (as the saved
//! comparisons are: a remote warehouse's on this machine, beside its cached files) and
//! read back with the alert (`perfdb alerts show`, its JSON and the alert's page).

use super::record::Bisected;
use std::path::{Path, PathBuf};

/// The folder of bisect results of the warehouse at `root`.
pub fn dir_of(root: &Path) -> PathBuf {
    perfdb_ingest::warehouse::Warehouse::new(root)
        .root()
        .join("bisect")
}

/// Keep `result` as the alert's bisect (replacing an earlier one): written whole, then
/// renamed into place.
pub fn store(root: &Path, alert_id: &str, result: &Bisected) -> std::io::Result<PathBuf> {
    let dir = dir_of(root);
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(format!("{alert_id}.json"));
    let tmp = dir.join(format!(".{alert_id}.json.{}", std::process::id()));
    std::fs::write(&tmp, crate::json::pretty(result))?;
    std::fs::rename(&tmp, &path)?;
    Ok(path)
}

/// The alert's bisect, when one was run here. A file that is not a bisect record (cut
/// short, or written by another version) is an error naming it, never read as "no
/// bisect".
pub fn load(root: &Path, alert_id: &str) -> Result<Option<Bisected>, String> {
    if alert_id.is_empty() || !alert_id.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Ok(None);
    }
    let path = dir_of(root).join(format!("{alert_id}.json"));
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| format!("{} is not a bisect result: {e}", path.display()))
}
