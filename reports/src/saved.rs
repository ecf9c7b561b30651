//! Saved comparisons (`perfdb compare --save`): each is the JSON report, written
//! atomically under `<warehouse>/alerts/` (the folder's name predates the alerts
//! `perfdb detect` raises, which live in the warehouse's alert tables); the web app's
//! alerts page lists them.

use crate::compare::Report;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The folder of the saved comparisons, under the warehouse root.
pub const SAVED_DIR: &str = "alerts";

#[derive(Debug, thiserror::Error)]
#[error("{path}: {source}")]
pub struct SaveError {
    path: PathBuf,
    source: std::io::Error,
}

/// The folder of the saved comparisons of the warehouse at `root` (a path or a URL: a
/// remote warehouse's are kept on this machine, beside its cached files).
pub fn dir_of(root: &Path) -> PathBuf {
    perfdb_ingest::warehouse::Warehouse::new(root)
        .root()
        .join(SAVED_DIR)
}

/// Save `report`; returns the file written.
pub fn save(root: &Path, report: &Report) -> Result<PathBuf, SaveError> {
    let dir = dir_of(root);
    let err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| SaveError { path, source }
    };
    std::fs::create_dir_all(&dir).map_err(err(&dir))?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros())
        .unwrap_or(0);
    let clean = |s: &str| {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .collect::<String>()
    };
    let name = format!(
        "{now:020}-{}-vs-{}.json",
        clean(&report.base.selector),
        clean(&report.head.selector)
    );
    let tmp = dir.join(format!(".{name}.tmp"));
    let body = serde_json::to_vec_pretty(report).expect("report serialises");
    std::fs::write(&tmp, body).map_err(err(&tmp))?;
    let dst = dir.join(&name);
    std::fs::rename(&tmp, &dst).map_err(err(&dst))?;
    Ok(dst)
}

/// One saved comparison, summarised.
#[derive(Debug, Clone, Serialize)]
pub struct SavedComparison {
    pub file: String,
    pub saved_at_us: u128,
    pub base: String,
    pub head: String,
    pub verdict: String,
    pub reason: String,
    /// The regressed rows: `table variant key metric change`.
    pub regressions: Vec<serde_json::Value>,
    /// The options it was decided with: a replay runs with exactly these.
    #[serde(skip)]
    pub options: crate::compare::Options,
}

/// Saved comparisons, newest first.
pub fn list(root: &Path) -> Vec<SavedComparison> {
    let dir = dir_of(root);
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out: Vec<SavedComparison> = rd
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            if !name.ends_with(".json") || name.starts_with('.') {
                return None;
            }
            let v: serde_json::Value =
                serde_json::from_slice(&std::fs::read(e.path()).ok()?).ok()?;
            let regressions = v["rows"]
                .as_array()
                .map(|rows| {
                    rows.iter()
                        .filter(|r| {
                            (r["verdict"] == "regression" && r["control"] == false)
                                || r["numerics"] == "new_failure"
                        })
                        .map(|r| {
                            serde_json::json!({
                                "table": r["table"], "variant": r["variant"], "key": r["key"], "key_text": r["key_text"],
                                "metric": r["metric"], "unit": r["unit"], "change": r["change"],
                                "change_text": crate::render::change_words(
                                    r["ratio"].as_f64(),
                                    perfdb_ingest::model::Direction::parse(r["direction"].as_str().unwrap_or("")),
                                ),
                                "q": r["q"], "head_numerics": r["head_numerics"],
                            })
                        })
                        .collect()
                })
                .unwrap_or_default();
            Some(SavedComparison {
                saved_at_us: name
                    .split('-')
                    .next()
                    .and_then(|t| t.parse().ok())
                    .unwrap_or(0),
                file: name,
                options: serde_json::from_value(v["options"].clone()).unwrap_or_default(),
                base: v["base"]["selector"].as_str().unwrap_or("").to_string(),
                head: v["head"]["selector"].as_str().unwrap_or("").to_string(),
                verdict: v["verdict"].as_str().unwrap_or("").to_string(),
                reason: v["reason"].as_str().unwrap_or("").to_string(),
                regressions,
            })
        })
        .collect();
    out.sort_by_key(|a| std::cmp::Reverse(a.saved_at_us));
    out
}
