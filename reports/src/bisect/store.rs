//! What `perfdb bisect` found for an alert, kept in the warehouse itself as the document
//! `bisect/<alert id>.json` (a local warehouse's folder, a remote one's store), so
//! everyone who reads the warehouse reads it with the alert (`perfdb alerts show`, its
//! JSON, the alert's page and the webhook). A record an older perfdb kept beside a
//! remote warehouse (in this machine's cache of it) is still read when the warehouse
//! holds none.

use super::record::Bisected;
use perfdb_ingest::warehouse::Warehouse;
use std::path::Path;

/// The document name of an alert's bisect.
fn name_of(alert_id: &str) -> String {
    format!("bisect/{alert_id}.json")
}

/// The folder a local warehouse keeps its bisects in (none for a remote one): its time
/// changes with each bisect stored, which a long-running reader (the web app's response
/// cache) mixes into the warehouse's version.
pub fn local_dir(root: &Path) -> Option<std::path::PathBuf> {
    let wh = Warehouse::new(root);
    (!wh.is_remote()).then(|| wh.root().join("bisect"))
}

/// Keep `result` as the alert's bisect in the warehouse at `root` (replacing an earlier
/// one), written whole; where it now is.
pub fn store(root: &Path, alert_id: &str, result: &Bisected) -> Result<String, String> {
    Warehouse::new(root)
        .put_document(&name_of(alert_id), crate::json::pretty(result).as_bytes())
        .map_err(|e| format!("cannot keep the bisect of {alert_id}: {e}"))
}

/// The alert's bisect, when one was run. A document that is not a bisect record (cut
/// short, or written by another version) is an error naming it, never read as "no
/// bisect".
pub fn load(root: &Path, alert_id: &str) -> Result<Option<Bisected>, String> {
    if alert_id.is_empty() || !alert_id.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Ok(None);
    }
    let wh = Warehouse::new(root);
    let name = name_of(alert_id);
    let found = match wh.get_document(&name).map_err(|e| e.to_string())? {
        Some(found) => Some(found),
        None => beside(&wh, &name)?,
    };
    let Some((bytes, at)) = found else {
        return Ok(None);
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| format!("{at} is not a bisect result: {e}"))
}

/// A remote warehouse's record as an older perfdb kept it: in this machine's cache.
fn beside(wh: &Warehouse, name: &str) -> Result<Option<(Vec<u8>, String)>, String> {
    if !wh.is_remote() {
        return Ok(None);
    }
    let path = wh.root().join(name);
    match std::fs::read(&path) {
        Ok(b) => Ok(Some((b, path.display().to_string()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}
