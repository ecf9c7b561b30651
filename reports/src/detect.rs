//! `perfdb detect`: change points over the history of every series of a label.
//!
//! A series is (table, variant, key, metric) on one machine class (the arch and the
//! `machine` tag of its runs): history never mixes machine classes. Its points are
//! commits ordered by commit time, then by ingest time, each carrying every trial. The
//! detector is the history chart's ([`crate::stats::changepoint`]). A change that makes
//! a series worse (direction-aware) is a regression; the metrics of one kernel and shape
//! that move at the same commit (`us` and `TFLOPS`) are one event.

use crate::db::{list_f64, sql_str, Db, DbError, MACHINE_CLASS_SQL};
use crate::stats::{self, changepoint};
use perfdb_ingest::model::{key_display, key_from_json, Direction};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

#[derive(Debug, thiserror::Error)]
pub enum DetectError {
    #[error(transparent)]
    Db(#[from] DbError),
    #[error("query failed: {0}")]
    Query(#[from] duckdb::Error),
    #[error("no runs with label '{0}'; `perfdb runs` lists the labels")]
    NoRuns(String),
    #[error("--since {since}: no commit of label '{label}' starts with it")]
    NoSuchCommit { label: String, since: String },
}

/// One metric of an event: its level before and after, and the test between them.
#[derive(Debug, Clone, Serialize)]
pub struct MetricMove {
    pub metric: String,
    pub unit: String,
    pub direction: Direction,
    pub before_median: f64,
    pub after_median: f64,
    /// Distribution-free 95% intervals of those medians (null ends: too few trials).
    pub before_ci: (Option<f64>, Option<f64>),
    pub after_ci: (Option<f64>, Option<f64>),
    /// after / before of the medians.
    pub ratio: f64,
    pub p: f64,
}

/// A change of one kernel and shape at one commit on one machine class.
#[derive(Debug, Clone, Serialize)]
pub struct Event {
    /// `regression` (worse in every moved metric's own direction), `improvement`, or
    /// `mixed`.
    pub kind: &'static str,
    pub table: String,
    pub variant: String,
    /// Identity cells, printed order.
    pub key: String,
    /// The canonical key (as stored in `measurements.key`).
    pub key_json: String,
    pub machine: String,
    pub last_good_commit: String,
    pub first_bad_commit: String,
    pub metrics: Vec<MetricMove>,
    /// The runs of the last good and the first bad commit.
    pub runs: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Detection {
    pub label: String,
    pub since: Option<String>,
    pub series: usize,
    pub commits: usize,
    pub events: Vec<Event>,
    /// The label's commits in history order.
    #[serde(skip)]
    pub order: Vec<String>,
}

impl Detection {
    pub fn regressions(&self) -> usize {
        self.events
            .iter()
            .filter(|e| e.kind == "regression")
            .count()
    }
}

/// A run's place in history.
struct RunPoint {
    commit: String,
    commit_time: i64,
    ingested_at: i64,
    machine: String,
}

fn runs_of(db: &Db, label: &str) -> Result<HashMap<String, RunPoint>, DetectError> {
    let sql = format!(
        "SELECT run_id, coalesce(\"commit\", run_id), epoch_us(coalesce(commit_time, ingested_at)), \
                epoch_us(ingested_at), {MACHINE_CLASS_SQL} \
         FROM runs r WHERE label = {}",
        sql_str(label)
    );
    let mut stmt = db.conn.prepare(&sql)?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                RunPoint {
                    commit: r.get(1)?,
                    commit_time: r.get(2)?,
                    ingested_at: r.get(3)?,
                    machine: r.get(4)?,
                },
            ))
        })?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}

/// One commit of a series: when it was made and first ingested, and its trials.
struct Point {
    commit_time: i64,
    ingested_at: i64,
    trials: Vec<f64>,
    runs: Vec<String>,
}

/// (table, variant, key, metric, unit, machine): one series.
type SeriesId = (String, String, String, String, String, String);

/// Detect change points over every series of `label`; with `since`, report only those
/// whose first bad commit is that commit (a prefix) or later.
pub fn detect(
    db: &Db,
    label: &str,
    since: Option<&str>,
    params: &crate::config::DetectConfig,
) -> Result<Detection, DetectError> {
    let runs = runs_of(db, label)?;
    if runs.is_empty() {
        return Err(DetectError::NoRuns(label.to_string()));
    }
    let sql = format!(
        "SELECT table_name, variant, key, metric, unit, any_value(direction), any_value(key_order), run_id, list(value) \
         FROM measurements WHERE label = {} AND value IS NOT NULL AND direction <> 'none' \
         GROUP BY table_name, variant, key, metric, unit, run_id",
        sql_str(label)
    );
    let mut stmt = db.conn.prepare(&sql)?;
    type Row = (
        String,
        String,
        String,
        String,
        String,
        String,
        Option<String>,
        String,
        duckdb::types::Value,
    );
    let rows: Vec<Row> = stmt
        .query_map([], |r| r.try_into())?
        .collect::<Result<_, _>>()?;
    // series -> commit -> (commit time, first ingest, trials)
    type Points = BTreeMap<String, Point>;
    let mut series: BTreeMap<SeriesId, (Direction, Option<String>, Points)> = BTreeMap::new();
    for (table, variant, key, metric, unit, dir, order, run_id, values) in rows {
        let Some(run) = runs.get(&run_id) else {
            continue;
        };
        // A run's repeats of a row are one trial: their median.
        let mut vals = list_f64(values);
        if vals.is_empty() {
            continue;
        }
        let trial = stats::median_in_place(&mut vals);
        let id = (table, variant, key, metric, unit, run.machine.clone());
        let entry = series
            .entry(id)
            .or_insert_with(|| (Direction::parse(&dir), order, BTreeMap::new()));
        let point = entry.2.entry(run.commit.clone()).or_insert(Point {
            commit_time: run.commit_time,
            ingested_at: run.ingested_at,
            trials: Vec::new(),
            runs: Vec::new(),
        });
        point.runs.push(run_id.clone());
        point.commit_time = point.commit_time.min(run.commit_time);
        point.ingested_at = point.ingested_at.min(run.ingested_at);
        point.trials.push(trial);
    }
    let order_of_commits = commit_order(&runs);
    let since_at = match since {
        None => None,
        Some(s) => Some(
            order_of_commits
                .iter()
                .position(|c| c.starts_with(s))
                .ok_or_else(|| DetectError::NoSuchCommit {
                    label: label.to_string(),
                    since: s.to_string(),
                })?,
        ),
    };
    let mut events: Vec<Event> = Vec::new();
    for ((table, variant, key, metric, unit, machine), (dir, order, points)) in &series {
        let mut ordered: Vec<(&String, &Point)> = points.iter().collect();
        ordered.sort_by_key(|(c, p)| (p.commit_time, p.ingested_at, (*c).clone()));
        let trials: Vec<Vec<f64>> = ordered.iter().map(|(_, p)| p.trials.clone()).collect();
        let cps = changepoint::detect_with(&trials, &params.for_series(table, variant));
        for (n, cp) in cps.iter().enumerate() {
            let first_bad = ordered[cp.index].0.clone();
            if let Some(at) = since_at {
                let pos = order_of_commits.iter().position(|c| *c == first_bad);
                if pos.is_none_or(|p| p < at) {
                    continue;
                }
            }
            // The segments either side: from the previous change point to the next one.
            let lo = if n == 0 { 0 } else { cps[n - 1].index };
            let hi = cps.get(n + 1).map_or(trials.len(), |c| c.index);
            let before: Vec<f64> = trials[lo..cp.index].iter().flatten().copied().collect();
            let after: Vec<f64> = trials[cp.index..hi].iter().flatten().copied().collect();
            let ci = |v: &[f64]| {
                let (a, b) = stats::median_ci(v);
                (a.is_finite().then_some(a), b.is_finite().then_some(b))
            };
            let mv = MetricMove {
                metric: metric.clone(),
                unit: unit.clone(),
                direction: *dir,
                before_median: stats::median(&before),
                after_median: stats::median(&after),
                before_ci: ci(&before),
                after_ci: ci(&after),
                ratio: cp.ratio,
                p: cp.p,
            };
            let shown = key_display(&perfdb_ingest::model::in_source_order(
                key_from_json(key),
                order.as_deref().unwrap_or("[]"),
            ));
            let last_good = ordered[cp.index - 1].0.clone();
            match events.iter_mut().find(|e| {
                e.table == *table
                    && e.variant == *variant
                    && e.key == shown
                    && e.machine == *machine
                    && e.first_bad_commit == first_bad
            }) {
                Some(e) => e.metrics.push(mv),
                None => events.push(Event {
                    kind: "",
                    table: table.clone(),
                    variant: variant.clone(),
                    key: shown,
                    key_json: key.clone(),
                    runs: ordered[cp.index - 1]
                        .1
                        .runs
                        .iter()
                        .chain(&ordered[cp.index].1.runs)
                        .cloned()
                        .collect(),
                    machine: machine.clone(),
                    last_good_commit: last_good,
                    first_bad_commit: first_bad,
                    metrics: vec![mv],
                }),
            }
        }
    }
    for e in &mut events {
        let worse = |m: &MetricMove| match m.direction {
            Direction::Higher => m.ratio < 1.0,
            _ => m.ratio > 1.0,
        };
        e.kind = if e.metrics.iter().all(worse) {
            "regression"
        } else if e.metrics.iter().any(worse) {
            "mixed"
        } else {
            "improvement"
        };
    }
    events.sort_by(|a, b| {
        (
            a.kind != "regression",
            &a.first_bad_commit,
            &a.table,
            &a.variant,
            &a.key,
        )
            .cmp(&(
                b.kind != "regression",
                &b.first_bad_commit,
                &b.table,
                &b.variant,
                &b.key,
            ))
    });
    Ok(Detection {
        label: label.to_string(),
        since: since.map(String::from),
        series: series.len(),
        commits: order_of_commits.len(),
        events,
        order: order_of_commits,
    })
}

/// The label's commits in history order (commit time, then first ingest).
fn commit_order(runs: &HashMap<String, RunPoint>) -> Vec<String> {
    let mut first: HashMap<&str, (i64, i64)> = HashMap::new();
    for r in runs.values() {
        let e = first
            .entry(r.commit.as_str())
            .or_insert((r.commit_time, r.ingested_at));
        *e = ((e.0).min(r.commit_time), (e.1).min(r.ingested_at));
    }
    let mut v: Vec<(&str, (i64, i64))> = first.into_iter().collect();
    v.sort_by_key(|(c, t)| (*t, c.to_string()));
    v.into_iter().map(|(c, _)| c.to_string()).collect()
}

/// A pull-request comment body: what this run raised, then every change it found.
pub fn render_markdown(d: &Detection, raised: &Raised) -> String {
    let mut s = format!(
        "## perfdb detect: {} new alert(s) on `{}`\n\n{} series over {} commit(s); {} regression(s), {} other change(s){}.\n\n",
        raised.new_alerts.len(),
        d.label,
        d.series,
        d.commits,
        d.regressions(),
        d.events.len() - d.regressions(),
        if raised.resolved.is_empty() {
            String::new()
        } else {
            format!("; {} alert(s) resolved", raised.resolved.len())
        }
    );
    if d.events.is_empty() {
        s.push_str("No change point.\n");
        return s;
    }
    s.push_str("| | kind | kernel | shape | machine | first bad | last good | moved |\n|---|---|---|---|---|---|---|---|\n");
    for e in &d.events {
        let id = alert_id(&fingerprint(&d.label, e));
        let new = if raised.new_alerts.contains(&id) {
            "**new**"
        } else {
            ""
        };
        let moved: Vec<String> = e
            .metrics
            .iter()
            .map(|m| format!("{} {:+.1}%", m.metric, (m.ratio - 1.0) * 100.0))
            .collect();
        s.push_str(&format!(
            "| {new} | {} | {} {} | {} | {} | {} | {} | {} |\n",
            e.kind,
            e.table,
            e.variant,
            e.key,
            e.machine,
            e.first_bad_commit,
            e.last_good_commit,
            moved.join(", ")
        ));
    }
    s
}

/// The terminal text of a detection.
pub fn render_text(d: &Detection) -> String {
    let mut s = format!(
        "{} series over {} commit(s) of label '{}'{}: {} regression(s), {} other change(s)\n",
        d.series,
        d.commits,
        d.label,
        d.since
            .as_deref()
            .map(|c| format!(" (changes from {c} on)"))
            .unwrap_or_default(),
        d.regressions(),
        d.events.len() - d.regressions()
    );
    for e in &d.events {
        let moved: Vec<String> = e
            .metrics
            .iter()
            .map(|m| {
                format!(
                    "{} {} -> {} {} ({:+.1}%, p {:.1e})",
                    m.metric,
                    crate::render::num(m.before_median),
                    crate::render::num(m.after_median),
                    m.unit,
                    (m.ratio - 1.0) * 100.0,
                    m.p
                )
            })
            .collect();
        s.push_str(&format!(
            "{}: {} {} {} on {}: first bad {}, last good {}: {}\n",
            e.kind,
            e.table,
            e.variant,
            e.key,
            e.machine,
            e.first_bad_commit,
            e.last_good_commit,
            moved.join("; ")
        ));
    }
    s
}

/// What storing a detection's events did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Raised {
    /// Alerts stored by this run (regressions not seen before).
    pub new_alerts: Vec<String>,
    /// Alerts this run found resolved: a later change returned the series to its level.
    pub resolved: Vec<String>,
}

/// The fingerprint of an event: re-detecting the same change gives the same one.
pub fn fingerprint(label: &str, e: &Event) -> String {
    [
        label,
        &e.table,
        &e.variant,
        &e.key_json,
        &e.machine,
        &e.first_bad_commit,
    ]
    .join("\u{1f}")
}

/// The alert id of a fingerprint.
pub fn alert_id(fingerprint: &str) -> String {
    perfdb_ingest::warehouse::sha256_hex(fingerprint.as_bytes())[..16].to_string()
}

/// Store every regression of `d` as an alert (once: the fingerprint decides), and mark
/// resolved the open alerts of a series that a later improvement brought back.
pub fn raise(
    db: &Db,
    wh: &perfdb_ingest::warehouse::Warehouse,
    d: &Detection,
) -> Result<Raised, DetectError> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|t| t.as_micros() as i64)
        .unwrap_or(0);
    let records: Vec<perfdb_ingest::model::AlertRecord> = d
        .events
        .iter()
        .filter(|e| e.kind == "regression")
        .map(|e| {
            let fp = fingerprint(&d.label, e);
            perfdb_ingest::model::AlertRecord {
                alert_id: alert_id(&fp),
                fingerprint: fp,
                label: d.label.clone(),
                table: e.table.clone(),
                variant: e.variant.clone(),
                key: e.key_json.clone(),
                key_text: e.key.clone(),
                machine: e.machine.clone(),
                last_good_commit: e.last_good_commit.clone(),
                first_bad_commit: e.first_bad_commit.clone(),
                metrics: serde_json::to_string(&e.metrics).expect("metrics serialise"),
                // The primary metric's after / before: latency where it moved, else the first.
                ratio: e
                    .metrics
                    .iter()
                    .find(|m| m.metric == "latency")
                    .unwrap_or(&e.metrics[0])
                    .ratio,
                p: e.metrics.iter().map(|m| m.p).fold(f64::INFINITY, f64::min),
                runs: serde_json::to_string(&e.runs).expect("runs serialise"),
                created_at_us: now,
            }
        })
        .collect();
    // Open alerts of this label, with their series and first bad commit.
    let open = open_alerts(db, &d.label)?;
    let mut resolved: Vec<String> = Vec::new();
    for e in d.events.iter().filter(|e| e.kind == "improvement") {
        for (id, series, first_bad) in &open {
            let same = *series
                == (
                    e.table.clone(),
                    e.variant.clone(),
                    e.key_json.clone(),
                    e.machine.clone(),
                );
            let later = d.commit_position(&e.first_bad_commit) > d.commit_position(first_bad);
            if same && later && !resolved.contains(id) {
                resolved.push(id.clone());
            }
        }
    }
    let change = |id: &str, status: &str, note: String| perfdb_ingest::model::StatusChange {
        alert_id: id.to_string(),
        status: status.to_string(),
        at_us: now,
        who: "perfdb detect".to_string(),
        note,
    };
    let (stored, _) = wh
        .commit_alerts(|known| {
            let fresh: Vec<_> = records
                .iter()
                .filter(|r| !known.contains(&r.alert_id))
                .cloned()
                .collect();
            let mut changes: Vec<_> = fresh
                .iter()
                .map(|r| {
                    change(
                        &r.alert_id,
                        "active",
                        format!("raised at {}", r.first_bad_commit),
                    )
                })
                .collect();
            // A new step on a series supersedes its older open alert.
            for r in &fresh {
                let series = (
                    r.table.clone(),
                    r.variant.clone(),
                    r.key.clone(),
                    r.machine.clone(),
                );
                for (id, s, first_bad) in &open {
                    if *s == series
                        && d.commit_position(first_bad) < d.commit_position(&r.first_bad_commit)
                        && !resolved.contains(id)
                    {
                        changes.push(change(
                            id,
                            "silenced",
                            format!("superseded by {}", r.alert_id),
                        ));
                    }
                }
            }
            changes.extend(resolved.iter().map(|id| {
                change(
                    id,
                    "resolved",
                    "a later change returned the series to its level".into(),
                )
            }));
            (fresh, changes)
        })
        .map_err(|e| DetectError::Db(DbError::Warehouse(e)))?;
    Ok(Raised {
        new_alerts: stored.into_iter().map(|r| r.alert_id).collect(),
        resolved,
    })
}

/// (alert id, (table, variant, key, machine), first bad commit) of the label's alerts
/// whose latest status is active or acknowledged.
type OpenAlert = (String, (String, String, String, String), String);

fn open_alerts(db: &Db, label: &str) -> Result<Vec<OpenAlert>, DetectError> {
    let sql = format!(
        "SELECT a.alert_id, a.table_name, a.variant, a.key, a.machine, a.first_bad_commit \
         FROM alerts a JOIN (SELECT alert_id, arg_max(status, changed_at) AS status FROM alert_status GROUP BY alert_id) s \
           ON a.alert_id = s.alert_id \
         WHERE a.label = {} AND s.status IN ('active', 'acknowledged')",
        sql_str(label)
    );
    let mut stmt = db.conn.prepare(&sql)?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                (r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?),
                r.get(5)?,
            ))
        })?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}

impl Detection {
    /// Where a commit stands in the label's history (unknown commits last).
    pub fn commit_position(&self, commit: &str) -> usize {
        self.order
            .iter()
            .position(|c| c == commit)
            .unwrap_or(usize::MAX)
    }
}
