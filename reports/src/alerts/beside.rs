//! What else moved across an alert's step, between the same two commits: the same
//! shape's other variants (the control among them: a step every variant took is the
//! machine's or the environment's, one only the alerted variant took is its code's),
//! the environment underneath (driver, toolchain, image), and the hardware counters of
//! its kernel when both commits were profiled.

use super::AlertView;
use crate::compare::counters::Explained;
use crate::compare::CompareError;
use crate::db::{sql_str, Db, DbError};
use crate::environment::Underneath;
use serde::Serialize;
use std::collections::BTreeMap;

/// Another variant of the alert's shape and metric across the same step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Beside {
    pub variant: String,
    /// Its median at the first bad commit over its median at the last good one.
    pub ratio: f64,
}

/// The other variants of `a`'s table, key and first metric measured at both of its
/// commits, by name.
pub fn beside(db: &Db, a: &AlertView) -> Result<Vec<Beside>, DbError> {
    let Some(metric) = a.metrics.first() else {
        return Ok(Vec::new());
    };
    let sql = format!(
        "SELECT m.variant, r.\"commit\", median(m.value) FROM measurements m \
         JOIN runs r ON m.run_id = r.run_id \
         WHERE m.label = {} AND m.table_name = {} AND m.key = {} AND m.metric = {} \
         AND m.variant <> {} AND r.\"commit\" IN ({}, {}) AND m.value IS NOT NULL \
         AND NOT starts_with(coalesce(m.note, ''), 'profiled: ') \
         GROUP BY 1, 2",
        sql_str(&a.label),
        sql_str(&a.table),
        sql_str(&a.key_json),
        sql_str(metric),
        sql_str(&a.variant),
        sql_str(&a.last_good_commit),
        sql_str(&a.first_bad_commit)
    );
    let mut stmt = db.conn.prepare(&sql).map_err(DbError::Query)?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, f64>(2)?,
            ))
        })
        .map_err(DbError::Query)?;
    let mut at: BTreeMap<String, (Option<f64>, Option<f64>)> = BTreeMap::new();
    for row in rows {
        let (variant, commit, median) = row.map_err(DbError::Query)?;
        let e = at.entry(variant).or_default();
        if commit == a.last_good_commit {
            e.0 = Some(median);
        } else {
            e.1 = Some(median);
        }
    }
    Ok(at
        .into_iter()
        .filter_map(|(variant, (b, h))| match (b, h) {
            (Some(b), Some(h)) if b != 0.0 => Some(Beside {
                variant,
                ratio: h / b,
            }),
            _ => None,
        })
        .collect())
}

/// What changed underneath a stored alert's step, from the runs it names.
pub fn underneath(db: &Db, a: &AlertView) -> Result<Underneath, DbError> {
    let runs: Vec<String> = a
        .runs
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r.as_str().map(String::from))
        .collect();
    let envs = crate::environment::RunEnvironments::read(db, runs.iter().map(String::as_str))?;
    Ok(envs.across(&runs, &a.last_good_commit, &a.first_bad_commit))
}

/// The counters that moved across a stored alert's step: the counters the label's runs
/// hold at its last good commit against those at its first bad one, joined to its
/// series. Empty when neither commit was profiled.
pub fn counters(db: &Db, a: &AlertView) -> Result<Vec<Explained>, CompareError> {
    let labels = [a.label.clone()];
    let at =
        |commit: &str| crate::compare::counters::counters_at(db, &labels, &[commit.to_string()]);
    let (base, head) = (at(&a.last_good_commit)?, at(&a.first_bad_commit)?);
    let metric = a.metrics.first().map(String::as_str).unwrap_or("");
    let row = crate::compare::counters::Changed {
        table: &a.table,
        variant: &a.variant,
        key_text: &a.key_text,
        metric,
        change: Some(a.ratio - 1.0),
    };
    Ok(crate::compare::counters::explain_changed(&[row], &base, &head, &[]).0)
}

/// `torch +0.3%, ck +20.1%`: each other variant's move, as the alert's own is printed.
pub fn text(beside: &[Beside]) -> String {
    beside
        .iter()
        .map(|b| format!("{} {}", b.variant, crate::fmt::ratio_pct(b.ratio)))
        .collect::<Vec<_>>()
        .join(", ")
}
