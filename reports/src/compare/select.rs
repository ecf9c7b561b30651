//! Step 1: which runs make up each side.

use super::{CompareError, SideInfo};
use crate::db::{sql_str, Db};

/// Resolve a selector: label, else commit prefix, else run id prefix.
pub fn select_runs(db: &Db, spec: &str) -> Result<SideInfo, CompareError> {
    let s = sql_str(spec);
    for (by, cond) in [
        ("label", format!("label = {s}")),
        ("commit", format!("starts_with(\"commit\", {s})")),
        ("run_id", format!("starts_with(run_id, {s})")),
    ] {
        let sql = format!(
            "SELECT run_id, label, coalesce(\"commit\", '') FROM runs WHERE {cond} ORDER BY label, trial"
        );
        let mut stmt = db.conn.prepare(&sql)?;
        let rows: Vec<(String, String, String)> = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<Result<_, _>>()?;
        if !rows.is_empty() {
            let mut labels: Vec<String> = rows.iter().map(|r| r.1.clone()).collect();
            labels.dedup();
            let mut commits: Vec<String> = rows
                .iter()
                .map(|r| r.2.clone())
                .filter(|c| !c.is_empty())
                .collect();
            commits.sort();
            commits.dedup();
            return Ok(SideInfo {
                selector: spec.to_string(),
                matched_by: by.to_string(),
                runs: rows.into_iter().map(|r| r.0).collect(),
                labels,
                commits,
            });
        }
    }
    Err(CompareError::NoRuns(spec.to_string()))
}
