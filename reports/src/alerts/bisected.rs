//! What `perfdb bisect` found for an alert, kept beside the warehouse (as the saved
//! comparisons are: a remote warehouse's on this machine, beside its cached files) and
//! shown with the alert (`perfdb alerts show`, its JSON and the alert's page).

use std::path::{Path, PathBuf};

/// The folder of bisect results of the warehouse at `root`.
pub fn dir_of(root: &Path) -> PathBuf {
    perfdb_ingest::warehouse::Warehouse::new(root)
        .root()
        .join("bisect")
}

/// Keep `result` as the alert's bisect (replacing an earlier one): written whole, then
/// renamed into place.
pub fn store(root: &Path, alert_id: &str, result: &serde_json::Value) -> std::io::Result<PathBuf> {
    let dir = dir_of(root);
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(format!("{alert_id}.json"));
    let tmp = dir.join(format!(".{alert_id}.json.{}", std::process::id()));
    std::fs::write(&tmp, serde_json::to_string_pretty(result)? + "\n")?;
    std::fs::rename(&tmp, &path)?;
    Ok(path)
}

/// The alert's bisect, when one was run here (an unreadable file reads as none).
pub fn load(root: &Path, alert_id: &str) -> Option<serde_json::Value> {
    if alert_id.is_empty() || !alert_id.chars().all(|c| c.is_ascii_alphanumeric()) {
        return None;
    }
    let text = std::fs::read_to_string(dir_of(root).join(format!("{alert_id}.json"))).ok()?;
    serde_json::from_str(&text).ok()
}

/// One line: the culprit(s) and their shares, or the range proven.
pub fn summary(v: &serde_json::Value) -> String {
    let parts = v["parts"].as_array().cloned().unwrap_or_default();
    match v["ends"]["found"].as_str() {
        Some("good") => return "bisect: the step does not reproduce here (the bad end is not worse than the good): no culprit".to_string(),
        Some("skipped" | "undecided") => return "bisect: the ends could not be verified: no culprit".to_string(),
        _ => {}
    }
    if parts.is_empty() {
        return match v["range"].as_array() {
            Some(r) if r.len() == 2 => format!(
                "bisect: not narrowed to one commit: after {} up to {}",
                short(&r[0]),
                short(&r[1])
            ),
            _ => "bisect: no result".to_string(),
        };
    }
    let each: Vec<String> = parts
        .iter()
        .map(|p| {
            let c = &p["culprit"];
            let share = p["share"]
                .as_f64()
                .map(|s| format!(", {:.0}% of the step", s * 100.0))
                .unwrap_or_default();
            format!(
                "{} \"{}\" by {}{share}",
                short(&c["sha"]),
                c["subject"].as_str().unwrap_or(""),
                c["author"].as_str().unwrap_or("")
            )
        })
        .collect();
    format!("bisect: culprit {}", each.join("; then "))
}

fn short(v: &serde_json::Value) -> String {
    v.as_str().unwrap_or("").chars().take(12).collect()
}

#[cfg(test)]
mod tests {
    use super::summary;

    #[test]
    fn a_bisect_whose_ends_did_not_reproduce_names_no_culprit() {
        let v = serde_json::json!({"parts": [], "ends": {"found": "good"}});
        assert!(
            summary(&v).contains("does not reproduce here"),
            "{}",
            summary(&v)
        );
        let v = serde_json::json!({"parts": [], "ends": {"found": "skipped"}});
        assert!(
            summary(&v).contains("could not be verified"),
            "{}",
            summary(&v)
        );
        let v = serde_json::json!({"parts": [], "range": ["aa", "bb"], "ends": {"found": "bad"}});
        assert!(summary(&v).contains("not narrowed"), "{}", summary(&v));
    }
}
