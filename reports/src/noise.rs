//! `perfdb noise`: how noisy each series of a label is, and what that costs in trials
//! (docs/STATS.md, "Noise and power").
//!
//! A series is (table, variant, key, metric, unit) on one machine class; its trials
//! (one per run: the median of the run's repeats) are grouped by commit, so a history's
//! commit-to-commit changes are not counted as noise and A/A runs of one commit are one
//! group.

use crate::db::{series_key, series_key_sql, sql_str, Db, DbError, SeriesId, MACHINE_CLASS_SQL};
use crate::stats::power::{self, Noise};
use perfdb_ingest::model::{in_source_order, key_display, key_from_json, SeriesKey};
use serde::Serialize;

/// The changes every noise report prints the trials for, beside the threshold.
pub const CHANGES: [f64; 3] = [0.01, 0.02, 0.05];

/// One series' noise as the report prints it (its key as shown, not as stored).
#[derive(Debug, Clone, Serialize)]
pub struct SeriesNoise {
    pub table: String,
    pub variant: String,
    /// The key as shown (`M=512 N=4096`).
    pub key: String,
    pub metric: String,
    pub unit: String,
    pub machine: String,
    #[serde(flatten)]
    pub noise: Noise,
    /// Trials a side to see 1%, 2%, 5% and the threshold (null: beyond reach).
    pub trials_needed: Vec<(f64, Option<usize>)>,
    /// sigma and the robust sigma differ more than 2x: outliers (a robust sigma of 0,
    /// from values printed alike, is not).
    pub outliers: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct NoiseReport {
    pub label: String,
    pub alpha: f64,
    pub power: f64,
    pub threshold: f64,
    pub series: Vec<SeriesNoise>,
    /// Series with no group of two trials (nothing to say about their noise).
    pub without_repeats: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum NoiseError {
    #[error(transparent)]
    Db(#[from] DbError),
    #[error("query failed: {0}")]
    Query(#[from] duckdb::Error),
    #[error("no runs with label '{0}'; `perfdb runs` lists the labels")]
    NoRuns(String),
    #[error("--where {0}: noise filters on table=, variant=, metric= or unit=")]
    BadFilter(String),
}

/// The measurements' condition: the label and the `--where` filters noise reads.
fn filter_sql(label: &str, filters: &[(String, String)]) -> Result<String, NoiseError> {
    let mut cond = format!("m.label = {}", sql_str(label));
    for (k, v) in filters {
        let col = match k.as_str() {
            "table" => "m.table_name",
            "variant" => "m.variant",
            "metric" => "m.metric",
            "unit" => "m.unit",
            _ => return Err(NoiseError::BadFilter(format!("{k}={v}"))),
        };
        cond.push_str(&format!(" AND {col} = {}", sql_str(v)));
    }
    Ok(cond)
}

/// Each series of the rows `cond` selects: its printed key order and its values grouped
/// by commit (a run's repeats reduced to their median).
#[allow(clippy::type_complexity)]
fn series_of(
    db: &Db,
    cond: &str,
) -> Result<Vec<(SeriesId, Option<String>, Vec<Vec<f64>>)>, NoiseError> {
    let sql = format!(
        "SELECT {}, {MACHINE_CLASS_SQL} AS machine, any_value(m.key_order), \
                coalesce(r.\"commit\", '') AS c, median(m.value) \
         FROM measurements m JOIN runs r USING (run_id) \
         WHERE {cond} AND m.value > 0 AND isfinite(m.value) AND m.direction <> 'none' \
         GROUP BY m.table_name, m.variant, m.key, m.metric, m.unit, machine, c, m.run_id \
         ORDER BY m.table_name, m.variant, m.key, m.metric, m.unit, machine, c",
        series_key_sql("m")
    );
    let mut stmt = db.conn.prepare(&sql)?;
    let mut rows = stmt.query([])?;
    let mut series: Vec<(SeriesId, Option<String>, Vec<Vec<f64>>)> = Vec::new();
    let mut last_commit = String::new();
    while let Some(r) = rows.next()? {
        let id = SeriesId {
            series: series_key(r, 0)?,
            machine: r.get(5)?,
        };
        let commit: String = r.get(7)?;
        let v: f64 = r.get(8)?;
        match series.last_mut() {
            Some((last, _, groups)) if *last == id => {
                if commit == last_commit {
                    groups.last_mut().expect("one group").push(v);
                } else {
                    groups.push(vec![v]);
                }
            }
            _ => series.push((id, r.get(6)?, vec![vec![v]])),
        }
        last_commit = commit;
    }
    Ok(series)
}

pub fn noise(
    db: &Db,
    label: &str,
    filters: &[(String, String)],
    alpha: f64,
    threshold: f64,
) -> Result<NoiseReport, NoiseError> {
    let cond = filter_sql(label, filters)?;
    let runs: i64 = db.conn.query_row(
        &format!("SELECT count(*) FROM runs WHERE label = {}", sql_str(label)),
        [],
        |r| r.get(0),
    )?;
    if runs == 0 {
        return Err(NoiseError::NoRuns(label.to_string()));
    }
    let series = series_of(db, &cond)?;
    let mut out = Vec::new();
    let mut without_repeats = 0;
    for (id, order, groups) in series {
        let SeriesId {
            series:
                SeriesKey {
                    table,
                    variant,
                    key,
                    metric,
                    unit,
                },
            machine,
        } = id;
        let Some(n) = power::noise(&groups) else {
            without_repeats += 1;
            continue;
        };
        let mut changes: Vec<f64> = CHANGES.to_vec();
        if !changes.iter().any(|c| (c - threshold).abs() < 1e-12) {
            changes.push(threshold);
        }
        let shown = key_display(&in_source_order(
            key_from_json(&key),
            order.as_deref().unwrap_or("[]"),
        ));
        out.push(SeriesNoise {
            table,
            variant,
            key: shown,
            metric,
            unit,
            machine,
            trials_needed: changes
                .iter()
                .map(|&d| (d, power::trials_needed(n.sigma, d, alpha, power::POWER)))
                .collect(),
            // A zero robust sigma is repeated printed values, not outliers.
            outliers: n.sigma_robust > 0.0
                && (n.sigma > 2.0 * n.sigma_robust || n.sigma_robust > 2.0 * n.sigma),
            noise: n,
        });
    }
    Ok(NoiseReport {
        label: label.to_string(),
        alpha,
        power: power::POWER,
        threshold,
        series: out,
        without_repeats,
    })
}

fn cells(r: &NoiseReport) -> (Vec<String>, Vec<Vec<String>>) {
    let mut head: Vec<String> = ["series", "trials", "groups", "sigma", "robust sigma"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    if let Some(s) = r.series.first() {
        head.extend(
            s.trials_needed
                .iter()
                .map(|(d, _)| format!("n for {}%", d * 100.0)),
        );
    }
    let rows = r
        .series
        .iter()
        .map(|s| {
            let mut row = vec![
                format!("{} {} {} {}", s.table, s.variant, s.key, s.metric),
                s.noise.trials.to_string(),
                s.noise.groups.to_string(),
                format!("{:.2}%", s.noise.sigma * 100.0),
                format!(
                    "{:.2}%{}",
                    s.noise.sigma_robust * 100.0,
                    if s.outliers { " (outliers)" } else { "" }
                ),
            ];
            row.extend(s.trials_needed.iter().map(|(_, n)| match n {
                Some(n) => n.to_string(),
                None => "-".to_string(),
            }));
            row
        })
        .collect();
    (head, rows)
}

fn footer(r: &NoiseReport) -> String {
    let mut s = format!(
        "sigma: the standard deviation of ln values within a commit (~ relative noise of one trial); \
         n: trials a side for a two-sided Welch test at alpha {} with power {}\n",
        r.alpha, r.power
    );
    if r.without_repeats > 0 {
        s.push_str(&format!(
            "{} series with no commit of two trials or more: no noise to measure\n",
            r.without_repeats
        ));
    }
    s
}

pub fn render_text(r: &NoiseReport) -> String {
    let (head, rows) = cells(r);
    let mut out = format!("noise of label '{}': {} series\n", r.label, r.series.len());
    out.push_str(&crate::query::table::aligned(&head, &rows));
    out.push_str(&footer(r));
    out
}

pub fn render_markdown(r: &NoiseReport) -> String {
    let (head, rows) = cells(r);
    let mut out = format!("### Noise of `{}`\n\n| {} |\n|", r.label, head.join(" | "));
    out.push_str(&"---|".repeat(head.len()));
    out.push('\n');
    for row in rows {
        out.push_str(&format!("| {} |\n", row.join(" | ")));
    }
    out.push('\n');
    out.push_str(&footer(r));
    out
}
