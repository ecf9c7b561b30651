//! Stale data: series, and whole machine classes, that stopped reporting
//! (docs/alerts.md, "Stale data").
//!
//! A change point needs data; data that stops arriving needs its own alert. Over a
//! label's commits in history order, a machine class with at least `reported` reports
//! is **stale** when it has missed `missing` of its usual gaps (the median of the
//! label commits between its newest `reported` reports: 1 for a class that runs at
//! every commit, about ten for a nightly one among ten commits a day), or when its
//! newest run is more than `days` older than the label's newest run (the other
//! machines kept reporting). Within a class that still reports, a series (table,
//! variant, shape) is stale when it was measured at `reported` of the class's commits
//! in a row and at none of the `missing` or more since, however long the gap.
//!
//! Each finding is an alert of kind `stale`, stored with the regressions (the same
//! triage and delivery): active at once (the data has been missing for `missing`
//! commits already), its last good commit the last that had the data and its first bad
//! the first that did not. It resolves when the series (or the class) is measured again
//! at the newest commit. Its id hashes the label, the series and the last good commit,
//! so data that goes missing again later is a new alert.

use super::lifecycle::WHO;
use super::DetectError;
use crate::alerts::{self, AlertKind, AlertView};
use crate::config::StaleConfig;
use crate::db::{sql_str, Db, MACHINE_CLASS_SQL};
use perfdb_ingest::model::{
    in_source_order, key_display, key_from_json, AlertRecord, AlertStatus, SeriesKey, StatusChange,
};
use perfdb_ingest::warehouse::Warehouse;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// What is missing: a whole machine class (empty table), or one series of a class.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Missing {
    pub machine: String,
    pub table: String,
    pub variant: String,
    /// Canonical key JSON (`{}` for a machine class).
    pub key: String,
    /// The key as printed (cells in the source's order).
    pub key_text: String,
    /// The metrics the series had.
    pub metrics: Vec<String>,
    pub last_good_commit: String,
    pub first_bad_commit: String,
    /// Commits of the label (for a class) or of the class (for a series) since the
    /// last good one.
    pub missing_commits: usize,
}

/// What the stale check did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct StaleOutcome {
    pub missing: Vec<Missing>,
    /// Alerts raised by this run (they page, like a new regression).
    pub raised: Vec<String>,
    /// Stale alerts whose data came back.
    pub resolved: Vec<String>,
}

/// Per machine class, per commit index, the series measured with their metrics.
type Seen = BTreeMap<String, BTreeMap<usize, BTreeMap<SeriesKey, BTreeSet<String>>>>;

/// The label's commits in history order, each with the machine classes that ran at it
/// and, per class, the series it measured.
struct Commits {
    order: Vec<String>,
    /// class -> commit index -> row ([`SeriesKey::row`]) -> metrics.
    seen: Seen,
    /// class -> newest ingest (µs).
    newest_run: BTreeMap<String, i64>,
    /// row -> the key's cells in source order.
    key_order: HashMap<SeriesKey, String>,
}

/// The runs of the label (their class and commit), and the series of the commits the
/// rule looks at: each class's newest `window` commits (a year of history is not read).
fn read(db: &Db, label: &str, window: usize) -> Result<Commits, DetectError> {
    let order = crate::db::history_points(db, &format!("r.label = {}", sql_str(label)))?;
    let at: HashMap<&str, usize> = order
        .iter()
        .enumerate()
        .map(|(i, c)| (c.as_str(), i))
        .collect();
    let mut seen: Seen = BTreeMap::new();
    let mut newest_run: BTreeMap<String, i64> = BTreeMap::new();
    let mut stmt = db.conn.prepare(&format!(
        "SELECT {MACHINE_CLASS_SQL} AS class, coalesce(r.\"commit\", r.label) AS point, \
                max(epoch_us(r.ingested_at)) FROM runs r WHERE r.label = {} GROUP BY ALL",
        sql_str(label)
    ))?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, i64>(2)?,
        ))
    })?;
    for row in rows {
        let (class, point, ingested) = row?;
        let Some(&i) = at.get(point.as_str()) else {
            continue;
        };
        seen.entry(class.clone()).or_default().entry(i).or_default();
        let n = newest_run.entry(class).or_insert(ingested);
        *n = (*n).max(ingested);
    }
    // The runs of each class's newest `window` commits, and the files holding them.
    let wanted: HashSet<(&str, usize)> = seen
        .iter()
        .flat_map(|(class, by_commit)| {
            by_commit
                .keys()
                .rev()
                .take(window)
                .map(move |i| (class.as_str(), *i))
        })
        .collect();
    let mut stmt = db.conn.prepare(&format!(
        "SELECT r.run_id, {MACHINE_CLASS_SQL} AS class, coalesce(r.\"commit\", r.label) AS point \
         FROM runs r WHERE r.label = {}",
        sql_str(label)
    ))?;
    let mut runs: Vec<String> = Vec::new();
    for row in stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
        ))
    })? {
        let (run, class, point) = row?;
        if at
            .get(point.as_str())
            .is_some_and(|i| wanted.contains(&(class.as_str(), *i)))
        {
            runs.push(run);
        }
    }
    let source = db.summaries_of_runs(&runs)?;
    db.selection_table("stale_sel", &runs)?;
    let mut stmt = db.conn.prepare(&format!(
        "SELECT DISTINCT {MACHINE_CLASS_SQL} AS class, coalesce(r.\"commit\", r.label) AS point, \
                s.table_name, s.variant, s.key, s.metric, s.key_order \
         FROM {source} s JOIN runs r ON s.run_id = r.run_id \
         WHERE s.label = {} AND s.direction IN ('lower', 'higher') \
           AND s.run_id IN (SELECT run_id FROM stale_sel)",
        sql_str(label)
    ))?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, String>(3)?,
            r.get::<_, String>(4)?,
            r.get::<_, String>(5)?,
            r.get::<_, Option<String>>(6)?,
        ))
    })?;
    let mut key_order = HashMap::new();
    for row in rows {
        let (class, point, table, variant, key, metric, order) = row?;
        let row = SeriesKey::row(table, variant, key);
        if let Some(o) = order {
            key_order.insert(row.clone(), o);
        }
        let Some(&i) = at.get(point.as_str()) else {
            continue;
        };
        seen.entry(class)
            .or_default()
            .entry(i)
            .or_default()
            .entry(row)
            .or_default()
            .insert(metric);
    }
    Ok(Commits {
        order,
        seen,
        newest_run,
        key_order,
    })
}

/// A class's usual gap: the median of the label commits between its newest `reported`
/// reports (1 for a class that reports at every commit).
fn usual_gap(own: &[usize], reported: usize) -> usize {
    let recent = &own[own.len().saturating_sub(reported)..];
    let mut gaps: Vec<usize> = recent.windows(2).map(|w| w[1] - w[0]).collect();
    if gaps.is_empty() {
        return 1;
    }
    gaps.sort_unstable();
    gaps[gaps.len() / 2].max(1)
}

/// What is missing now, by the rule of the module docs.
fn find(c: &Commits, cfg: &StaleConfig) -> Vec<Missing> {
    let (reported, missing) = (cfg.reported(), cfg.missing());
    let n = c.order.len();
    let newest = c.newest_run.values().copied().max().unwrap_or(0);
    let mut out = Vec::new();
    for (class, by_commit) in &c.seen {
        let own: Vec<usize> = by_commit.keys().copied().collect();
        let last = *own.last().expect("a class has a commit");
        let commits_without = n - 1 - last;
        // Too few reports to know the class's cadence: nothing to hold it to.
        if own.len() < reported {
            continue;
        }
        let quiet_us = newest - c.newest_run.get(class).copied().unwrap_or(newest);
        let days_quiet = cfg.days().is_some_and(|d| quiet_us as f64 > d * 86_400e6);
        let gap = usual_gap(&own, reported);
        if commits_without > 0 && (commits_without >= missing * gap || days_quiet) {
            out.push(Missing {
                machine: class.clone(),
                table: String::new(),
                variant: String::new(),
                key: "{}".into(),
                key_text: "(every series of the machine class)".into(),
                metrics: Vec::new(),
                last_good_commit: c.order[last].clone(),
                first_bad_commit: c.order[last + 1].clone(),
                missing_commits: commits_without,
            });
            continue;
        }
        // Series within the class, over the class's own commits: measured at each of
        // `reported` in a row, then at none of the `missing` or more since, however
        // many (a nightly detect sees the gap a day makes). Only the commits read
        // (the newest `window`) are looked at.
        let empty = BTreeMap::new();
        let at = |i: usize| by_commit.get(&own[i]).unwrap_or(&empty);
        let mut newest_of: BTreeMap<&SeriesKey, (usize, &BTreeSet<String>)> = BTreeMap::new();
        for (i, _) in own.iter().enumerate() {
            for (series, metrics) in at(i) {
                newest_of.insert(series, (i, metrics));
            }
        }
        for (series, (i, metrics)) in newest_of {
            let after = own.len() - 1 - i;
            let steady =
                i + 1 >= reported && (i + 1 - reported..=i).all(|j| at(j).contains_key(series));
            if after >= missing && after > 0 && steady {
                out.push(Missing {
                    machine: class.clone(),
                    table: series.table.clone(),
                    variant: series.variant.clone(),
                    key: series.key.clone(),
                    key_text: key_display(&in_source_order(
                        key_from_json(&series.key),
                        c.key_order.get(series).map_or("[]", String::as_str),
                    )),
                    metrics: metrics.iter().cloned().collect(),
                    last_good_commit: c.order[own[i]].clone(),
                    first_bad_commit: c.order[own[i + 1]].clone(),
                    missing_commits: after,
                });
            }
        }
    }
    out
}

/// One metric of a stale alert as stored in its `metrics` list (the fields in the order
/// the list has always held them).
#[derive(Serialize)]
struct StaleMove {
    kind: &'static str,
    metric: String,
    missing_commits: usize,
}

fn stale_id(label: &str, m: &Missing) -> String {
    let parts = [
        label,
        "stale",
        &m.table,
        &m.variant,
        &m.key,
        &m.machine,
        &m.last_good_commit,
    ]
    .join("\u{1f}");
    perfdb_ingest::hash::sha256_hex(parts.as_bytes())[..16].to_string()
}

/// Raise an alert for each new finding and resolve those whose data came back, in one
/// commit of records and one of status changes. Series are read over each class's
/// newest `reported + missing + lookback` commits: a series gone for longer than
/// `lookback` commits of its class before any detect ran is not found.
pub fn check(
    db: &Db,
    wh: &Warehouse,
    label: &str,
    cfg: &StaleConfig,
    lookback: usize,
    now_us: i64,
) -> Result<StaleOutcome, DetectError> {
    let commits = read(db, label, cfg.reported() + cfg.missing() + lookback)?;
    let found = find(&commits, cfg);
    let stored: Vec<AlertView> = alerts::list(db, None)?
        .into_iter()
        .filter(|a| a.label == label && a.kind == AlertKind::Stale)
        .collect();
    let mut out = StaleOutcome {
        missing: found.clone(),
        ..Default::default()
    };
    let mut records = Vec::new();
    let mut changes = Vec::new();
    let change = |id: &str, status, note: String| StatusChange {
        alert_id: id.to_string(),
        status,
        at_us: now_us,
        who: WHO.to_string(),
        note,
    };
    for m in &found {
        let id = stale_id(label, m);
        if stored.iter().any(|a| a.id == id) {
            continue;
        }
        let stale = |metric: &str| StaleMove {
            kind: "stale",
            metric: metric.to_string(),
            missing_commits: m.missing_commits,
        };
        let metrics: Vec<StaleMove> = if m.metrics.is_empty() {
            vec![stale("every series")]
        } else {
            m.metrics.iter().map(|x| stale(x)).collect()
        };
        records.push(AlertRecord {
            alert_id: id.clone(),
            fingerprint: format!("{id}\u{1f}stale"),
            label: label.to_string(),
            table: m.table.clone(),
            variant: m.variant.clone(),
            key: m.key.clone(),
            key_text: m.key_text.clone(),
            machine: m.machine.clone(),
            last_good_commit: m.last_good_commit.clone(),
            first_bad_commit: m.first_bad_commit.clone(),
            metrics: serde_json::to_string(&metrics).expect("stale metrics serialise"),
            ratio: 1.0,
            p: 1.0,
            runs: "[]".into(),
            created_at_us: now_us,
        });
        changes.push(change(
            &id,
            AlertStatus::Active,
            format!(
                "no data since {} ({} commit(s) without it)",
                m.last_good_commit, m.missing_commits
            ),
        ));
        out.raised.push(id);
    }
    // Stored stale alerts whose data is back at the newest commit.
    let newest = commits.order.len().saturating_sub(1);
    for a in &stored {
        if !matches!(
            a.status,
            AlertStatus::Active | AlertStatus::Pending | AlertStatus::Acknowledged
        ) {
            continue;
        }
        let Some(by_commit) = commits.seen.get(&a.machine) else {
            continue;
        };
        let back = match by_commit.get(&newest) {
            None => false,
            Some(_) if a.table.is_empty() => true,
            Some(series) => series.contains_key(&SeriesKey::row(
                a.table.clone(),
                a.variant.clone(),
                a.key_json.clone(),
            )),
        };
        if back {
            changes.push(change(
                &a.id,
                AlertStatus::Resolved,
                format!("data back at {}", commits.order[newest]),
            ));
            out.resolved.push(a.id.clone());
        }
    }
    if !records.is_empty() || !changes.is_empty() {
        wh.commit_alerts(|_| (records, changes))
            .map_err(|e| DetectError::Db(crate::db::DbError::Warehouse(e)))?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR_US: i64 = 3_600_000_000;

    /// `n` commits, a commit an hour; each class reports at the commits its `at` keeps,
    /// one series each time, its runs ingested at the commit's hour.
    fn commits(n: usize, classes: &[(&str, &dyn Fn(usize) -> bool)]) -> Commits {
        let mut seen: Seen = BTreeMap::new();
        let mut newest_run = BTreeMap::new();
        for (class, at) in classes {
            for i in (0..n).filter(|i| at(*i)) {
                let series = SeriesKey::row("t".into(), "v".into(), "{}".into());
                seen.entry(class.to_string())
                    .or_default()
                    .entry(i)
                    .or_default()
                    .insert(series, BTreeSet::from(["latency".to_string()]));
                newest_run.insert(class.to_string(), i as i64 * HOUR_US);
            }
        }
        Commits {
            order: (0..n).map(|i| format!("c{i:03}")).collect(),
            seen,
            newest_run,
            key_order: HashMap::new(),
        }
    }

    fn stale_classes(c: &Commits, cfg: &StaleConfig) -> Vec<String> {
        find(c, cfg)
            .into_iter()
            .filter(|m| m.table.is_empty())
            .map(|m| m.machine)
            .collect()
    }

    #[test]
    fn a_sparse_class_quiet_for_days_is_stale_though_under_two_of_its_gaps() {
        // `sparse` at every 40th commit (c4 .. c164), `ci` at every commit to c240:
        // `sparse` is 76 commits (76 hours) quiet, over `days` (3), under two of its
        // gaps (80).
        let sparse = |i: usize| i % 40 == 4 && i <= 164;
        let c = commits(241, &[("ci", &|_| true), ("sparse", &sparse)]);
        assert_eq!(stale_classes(&c, &StaleConfig::default()), ["sparse"]);
        // Without the days rule it waits for two of its gaps.
        let no_days = StaleConfig {
            days: Some(0.0),
            ..Default::default()
        };
        assert!(stale_classes(&c, &no_days).is_empty());
        let later = commits(245, &[("ci", &|_| true), ("sparse", &sparse)]);
        assert_eq!(stale_classes(&later, &no_days), ["sparse"]);
    }

    #[test]
    fn a_class_with_too_few_reports_to_know_its_pace_is_not_judged() {
        let c = commits(200, &[("ci", &|_| true), ("once", &|i| i == 3)]);
        assert!(stale_classes(&c, &StaleConfig::default()).is_empty());
    }

    #[test]
    fn the_usual_gap_is_the_median_of_the_newest_reports() {
        assert_eq!(usual_gap(&[1, 2, 3, 4, 5], 5), 1);
        assert_eq!(usual_gap(&[0, 10, 20, 21, 30, 40], 5), 10);
        assert_eq!(usual_gap(&[7], 5), 1);
    }
}
