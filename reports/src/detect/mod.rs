//! `perfdb detect`: change points over the history of every series of a label, and the
//! alerts they keep (docs/alerts.md).
//!
//! Three steps, a file each:
//! - this one reads the history and finds the changes: a series is (table, variant,
//!   key, metric) on one machine class (the arch and the `machine` tag of its runs);
//!   history never mixes machine classes. Its points are commits ordered by commit
//!   time, then by first ingest, each carrying every trial. The detector is the history
//!   chart's ([`crate::stats::changepoint`]). The metrics of one kernel and shape that
//!   move at the same commit (`us` and `TFLOPS`) are one [`Event`]; a tail metric
//!   (`latency_p99`) that moves within a few commits of the median joins its event.
//! - [`lifecycle`] holds the stored alerts to what the history says now, whatever
//!   order it arrived in: one alert per step, pending until confirmed, resolved only
//!   on a return to level, withdrawn when the step goes away.
//! - [`render`] prints both.

pub mod lifecycle;
pub mod render;

pub use lifecycle::{raise, Raised};
pub use render::{render_markdown, render_text};

use crate::db::{list_f64, sql_str, Db, DbError, MACHINE_CLASS_SQL};
use crate::stats::{self, changepoint};
use perfdb_ingest::model::{key_display, key_from_json, metric, Direction};
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
    #[error(transparent)]
    Triage(#[from] crate::triage::TriageError),
}

/// Commits within which two detections of a series' step are the same step (a late
/// commit moves a change point by about the commits it fills in), and within which a
/// tail metric's step joins the median's.
pub const NEAR: usize = 3;

/// Measurement rows one pass over the label reads at most (about): the passes split the
/// series by hash, so detect's memory stays bounded whatever the history's size.
pub const ROWS_PER_PASS: usize = 250_000;

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
    /// The level now: the median of the latest confirmed segment after the step (the
    /// step's own segment when none later is), and it over the level before.
    pub now_median: f64,
    pub now_ratio: f64,
    /// A tail metric (p90 and up, max): reported with the event, never alerted alone.
    pub tail: bool,
    /// This metric's [`Event::held`], [`Event::confirmed`], [`Event::at_tip`] and
    /// [`Event::returned`]; the event's are its primary metric's.
    #[serde(skip)]
    pub level: Level,
}

/// How a step's new level stands in one metric's series.
#[derive(Debug, Clone, Default)]
pub struct Level {
    pub held: usize,
    pub confirmed: bool,
    pub at_tip: bool,
    pub returned: Option<Return>,
}

/// Where a series came back to within the threshold of its level before a step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Return {
    /// The first commit of the segment at the old level.
    pub commit: String,
    /// When that commit's data first reached the warehouse (µs since the epoch).
    pub ingested_at_us: i64,
}

/// A change of one kernel and shape at one commit on one machine class.
#[derive(Debug, Clone, Serialize)]
pub struct Event {
    /// `regression` (worse in every moved metric's own direction, tail metrics aside),
    /// `improvement`, `mixed`, or `tail` (only tail metrics moved: never an alert).
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
    /// Commits at the new level: to the next change point, or to the newest commit.
    pub held: usize,
    /// Whether the new level is confirmed: it held `confirm` commits (every one of them
    /// on the new side when it reaches the newest commit). Unconfirmed at the tip is a
    /// pending alert; unconfirmed and ended by a later change is a blip, never alerted.
    pub confirmed: bool,
    /// Whether the new level reaches the newest commit of the series.
    pub at_tip: bool,
    /// Where the primary metric came back to its level before the step, if it did.
    pub returned: Option<Return>,
}

impl Event {
    /// The metric that speaks for the event: latency where it moved, else the first
    /// that is not a tail metric, else the first.
    pub fn primary(&self) -> &MetricMove {
        self.metrics
            .iter()
            .find(|m| m.metric == metric::LATENCY)
            .or_else(|| self.metrics.iter().find(|m| !m.tail))
            .unwrap_or(&self.metrics[0])
    }

    fn same_series(&self, o: &Event) -> bool {
        self.table == o.table
            && self.variant == o.variant
            && self.key_json == o.key_json
            && self.machine == o.machine
    }
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

    /// Where a commit stands in the label's history (unknown commits last).
    pub fn commit_position(&self, commit: &str) -> usize {
        self.order
            .iter()
            .position(|c| c == commit)
            .unwrap_or(usize::MAX)
    }
}

/// A run's place in history.
struct RunPoint {
    run_id: String,
    commit: String,
    commit_time: i64,
    ingested_at: i64,
    machine: String,
}

fn runs_of(db: &Db, label: &str) -> Result<Vec<RunPoint>, DetectError> {
    let sql = format!(
        "SELECT run_id, coalesce(\"commit\", run_id), epoch_us(coalesce(commit_time, ingested_at)), \
                epoch_us(ingested_at), {MACHINE_CLASS_SQL} \
         FROM runs r WHERE label = {}",
        sql_str(label)
    );
    let mut stmt = db.conn.prepare(&sql)?;
    let rows = stmt
        .query_map([], |r| {
            Ok(RunPoint {
                run_id: r.get(0)?,
                commit: r.get(1)?,
                commit_time: r.get(2)?,
                ingested_at: r.get(3)?,
                machine: r.get(4)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}

/// One commit of a series: when it was made and first ingested, and its trials (one
/// per run: the median of the run's repeats) with their runs (indices into the runs).
struct Point {
    commit: String,
    commit_time: i64,
    ingested_at: i64,
    trials: Vec<f64>,
    runs: Vec<usize>,
}

/// (table, variant, key, metric, unit, machine): one series.
type SeriesId = (String, String, String, String, String, String);

/// Detect change points over every series of `label`; with `since`, report only those
/// whose first bad commit is that commit (a prefix) or later.
///
/// Memory: the values arrive ordered by series and each series is examined as soon as
/// its last row is read, so one series' points are held at a time, not the label's.
pub fn detect(
    db: &Db,
    label: &str,
    since: Option<&str>,
    params: &crate::config::DetectConfig,
) -> Result<Detection, DetectError> {
    detect_in_passes(db, label, since, params, ROWS_PER_PASS)
}

/// [`detect`], reading at most about `rows_per_pass` rows a pass.
pub fn detect_in_passes(
    db: &Db,
    label: &str,
    since: Option<&str>,
    params: &crate::config::DetectConfig,
    rows_per_pass: usize,
) -> Result<Detection, DetectError> {
    let runs = runs_of(db, label)?;
    if runs.is_empty() {
        return Err(DetectError::NoRuns(label.to_string()));
    }
    let run_index: HashMap<&str, usize> = runs
        .iter()
        .enumerate()
        .map(|(i, r)| (r.run_id.as_str(), i))
        .collect();
    let order_of_commits = commit_order(&runs);
    let position: HashMap<&str, usize> = order_of_commits
        .iter()
        .enumerate()
        .map(|(i, c)| (c.as_str(), i))
        .collect();
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
    // The series being read (its five names), per machine class: its commits.
    type Current = ([String; 5], Direction, Option<String>);
    let mut current: Option<Current> = None;
    let mut by_machine: BTreeMap<String, BTreeMap<String, Point>> = BTreeMap::new();
    let mut n_series = 0;
    let mut events: Vec<Event> = Vec::new();
    let mut flush = |cur: &Current, by_machine: &mut BTreeMap<String, BTreeMap<String, Point>>| {
        let ([table, variant, key, metric, unit], dir, order) = cur;
        let p = params.for_series(table, variant);
        for (machine, points) in std::mem::take(by_machine) {
            n_series += 1;
            let id: SeriesId = (
                table.clone(),
                variant.clone(),
                key.clone(),
                metric.clone(),
                unit.clone(),
                machine,
            );
            let found = series_events(
                &id,
                *dir,
                order.as_deref(),
                points,
                &runs,
                &p,
                params.confirm(),
            );
            for (ev, mv) in found {
                let pos = |c: &str| position.get(c).copied().unwrap_or(usize::MAX);
                if since_at.is_some_and(|at| pos(&ev.first_bad_commit) < at) {
                    continue;
                }
                match events
                    .iter_mut()
                    .find(|e| e.same_series(&ev) && e.first_bad_commit == ev.first_bad_commit)
                {
                    Some(e) => e.metrics.push(mv),
                    None => events.push(Event {
                        metrics: vec![mv],
                        ..ev
                    }),
                }
            }
        }
    };
    // DuckDB holds a pass's groups at once: a pass takes the series whose hash falls in
    // one of `passes` buckets, so at most about ROWS_PER_PASS rows are held.
    let n_rows: i64 = db.conn.query_row(
        &format!(
            "SELECT count(*) FROM measurements WHERE label = {}",
            sql_str(label)
        ),
        [],
        |r| r.get(0),
    )?;
    let passes = (n_rows.max(0) as usize)
        .div_ceil(rows_per_pass.max(1))
        .max(1);
    for pass in 0..passes {
        let sql = format!(
            "SELECT table_name, variant, key, metric, unit, any_value(direction), any_value(key_order), run_id, list(value) \
             FROM measurements WHERE label = {} AND value IS NOT NULL AND direction <> 'none' \
             {} \
             GROUP BY table_name, variant, key, metric, unit, run_id \
             ORDER BY table_name, variant, key, metric, unit",
            sql_str(label),
            if passes > 1 {
                format!("AND hash(table_name, variant, key, metric, unit) % {passes} = {pass}")
            } else {
                String::new()
            }
        );
        let mut stmt = db.conn.prepare(&sql)?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            // Borrowed, not copied: ten million rows are ten million of each.
            let text = |i: usize| -> Result<&str, duckdb::Error> {
                r.get_ref(i)?.as_str().map_err(|e| {
                    duckdb::Error::FromSqlConversionFailure(
                        i,
                        duckdb::types::Type::Text,
                        Box::new(e),
                    )
                })
            };
            let Some(&ri) = run_index.get(text(7)?) else {
                continue;
            };
            // A run's repeats of a row are one trial: their median.
            let mut vals = list_f64(r.get(8)?);
            if vals.is_empty() {
                continue;
            }
            let same = match &current {
                Some(c) => (0..5).try_fold(true, |eq, i| {
                    Ok::<_, duckdb::Error>(eq && c.0[i] == text(i)?)
                })?,
                None => false,
            };
            if !same {
                if let Some(c) = &current {
                    flush(c, &mut by_machine);
                }
                let names: [String; 5] = [r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?];
                let dir: String = r.get(5)?;
                current = Some((names, Direction::parse(&dir), r.get(6)?));
            }
            let trial = stats::median_in_place(&mut vals);
            let run = &runs[ri];
            if !by_machine.contains_key(&run.machine) {
                by_machine.insert(run.machine.clone(), BTreeMap::new());
            }
            let commits = by_machine.get_mut(&run.machine).expect("just inserted");
            if !commits.contains_key(&run.commit) {
                commits.insert(
                    run.commit.clone(),
                    Point {
                        commit: run.commit.clone(),
                        commit_time: run.commit_time,
                        ingested_at: run.ingested_at,
                        trials: Vec::new(),
                        runs: Vec::new(),
                    },
                );
            }
            let point = commits.get_mut(&run.commit).expect("just inserted");
            point.runs.push(ri);
            point.commit_time = point.commit_time.min(run.commit_time);
            point.ingested_at = point.ingested_at.min(run.ingested_at);
            point.trials.push(trial);
        }
        if let Some(c) = current.take() {
            flush(&c, &mut by_machine);
        }
    }
    let events = join_tails(events, &position);
    let mut events: Vec<Event> = events.into_iter().map(with_kind).collect();
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
        series: n_series,
        commits: order_of_commits.len(),
        events,
        order: order_of_commits,
    })
}

/// The change points of one series, each as an event of one metric (its `metrics`
/// empty) and that metric's move.
fn series_events(
    id: &SeriesId,
    dir: Direction,
    key_order: Option<&str>,
    points: BTreeMap<String, Point>,
    runs: &[RunPoint],
    params: &changepoint::Params,
    confirm: usize,
) -> Vec<(Event, MetricMove)> {
    let (table, variant, key, metric_name, unit, machine) = id;
    let mut ordered: Vec<Point> = points.into_values().collect();
    // Trials in run order, not in the order the rows arrived: the same sums, the same
    // p, however the query grouped them.
    for p in &mut ordered {
        let mut pairs: Vec<(usize, f64)> = p
            .runs
            .iter()
            .copied()
            .zip(p.trials.iter().copied())
            .collect();
        pairs.sort_by(|a, b| runs[a.0].run_id.cmp(&runs[b.0].run_id));
        (p.runs, p.trials) = pairs.into_iter().unzip();
    }
    ordered.sort_by(|a, b| {
        (a.commit_time, a.ingested_at, &a.commit).cmp(&(b.commit_time, b.ingested_at, &b.commit))
    });
    let trials: Vec<Vec<f64>> = ordered
        .iter_mut()
        .map(|p| std::mem::take(&mut p.trials))
        .collect();
    let cps = changepoint::detect_with(&trials, params);
    let n = trials.len();
    // Segment k runs from bounds[k] to bounds[k + 1].
    let mut bounds: Vec<usize> = vec![0];
    bounds.extend(cps.iter().map(|c| c.index));
    bounds.push(n);
    let level = |k: usize| -> f64 {
        let v: Vec<f64> = trials[bounds[k]..bounds[k + 1]]
            .iter()
            .flatten()
            .copied()
            .collect();
        stats::median(&v)
    };
    let commit_median = |i: usize| stats::median(&trials[i]);
    // How much worse `x` is than `base` in this metric's direction (> 1: worse).
    let worse_by = |x: f64, base: f64| match dir {
        Direction::Higher => base / x,
        _ => x / base,
    };
    // A segment is confirmed when it held `confirm` commits, and, reaching the tip,
    // every one of its commits sits nearer its level than the level it left.
    let confirmed = |k: usize, from_level: f64| -> bool {
        let (lo, hi) = (bounds[k], bounds[k + 1]);
        if hi - lo < confirm {
            return false;
        }
        if hi < n {
            return true;
        }
        let to = level(k);
        let mid = (to.ln() + from_level.ln()) / 2.0;
        (lo..hi).all(|i| {
            let m = commit_median(i).ln();
            if to > from_level {
                m > mid
            } else {
                m < mid
            }
        })
    };
    let shown = key_display(&perfdb_ingest::model::in_source_order(
        key_from_json(key),
        key_order.unwrap_or("[]"),
    ));
    let tail = metric::is_tail(metric_name);
    let mut out = Vec::new();
    for (c, cp) in cps.iter().enumerate() {
        let seg = c + 1; // the new level's segment
        let before_level = level(c);
        let before: Vec<f64> = trials[bounds[c]..cp.index]
            .iter()
            .flatten()
            .copied()
            .collect();
        let after: Vec<f64> = trials[cp.index..bounds[seg + 1]]
            .iter()
            .flatten()
            .copied()
            .collect();
        let is_confirmed = confirmed(seg, before_level);
        // Where the series stands now: the latest confirmed segment after the step,
        // and the first of them back within the threshold of the level before it.
        let mut now = level(seg);
        let mut returned = None;
        for k in seg + 1..bounds.len() - 1 {
            if !confirmed(k, level(k - 1)) {
                continue;
            }
            now = level(k);
            if returned.is_none() && worse_by(now, before_level) <= 1.0 + params.min_step {
                let first = &ordered[bounds[k]];
                returned = Some(Return {
                    commit: first.commit.clone(),
                    ingested_at_us: first.ingested_at,
                });
            }
        }
        let ci = |v: &[f64]| {
            let (a, b) = stats::median_ci(v);
            (a.is_finite().then_some(a), b.is_finite().then_some(b))
        };
        let mv = MetricMove {
            metric: metric_name.clone(),
            unit: unit.clone(),
            direction: dir,
            before_median: stats::median(&before),
            after_median: stats::median(&after),
            before_ci: ci(&before),
            after_ci: ci(&after),
            ratio: cp.ratio,
            p: cp.p,
            now_median: now,
            now_ratio: now / before_level,
            tail,
            level: Level {
                held: bounds[seg + 1] - cp.index,
                confirmed: is_confirmed,
                at_tip: bounds[seg + 1] == n,
                returned,
            },
        };
        let ev = Event {
            kind: "",
            table: table.clone(),
            variant: variant.clone(),
            key: shown.clone(),
            key_json: key.clone(),
            machine: machine.clone(),
            last_good_commit: ordered[cp.index - 1].commit.clone(),
            first_bad_commit: ordered[cp.index].commit.clone(),
            metrics: Vec::new(),
            runs: ordered[cp.index - 1]
                .runs
                .iter()
                .chain(&ordered[cp.index].runs)
                .map(|&i| runs[i].run_id.clone())
                .collect(),
            held: 0,
            confirmed: false,
            at_tip: false,
            returned: None,
        };
        out.push((ev, mv));
    }
    out
}

/// Events of only tail metrics join the nearest event of the same series (kernel,
/// shape, machine) that has a median-like metric within [`NEAR`] commits.
fn join_tails(events: Vec<Event>, position: &HashMap<&str, usize>) -> Vec<Event> {
    let pos = |c: &str| position.get(c).copied().unwrap_or(usize::MAX);
    let (tails, mut rest): (Vec<Event>, Vec<Event>) = events
        .into_iter()
        .partition(|e| e.metrics.iter().all(|m| m.tail));
    let mut alone = Vec::new();
    for t in tails {
        let at = pos(&t.first_bad_commit);
        let host = rest
            .iter_mut()
            .filter(|e| e.same_series(&t))
            .map(|e| (pos(&e.first_bad_commit).abs_diff(at), e))
            .filter(|(d, _)| *d <= NEAR)
            .min_by_key(|(d, _)| *d);
        match host {
            Some((_, e)) => e.metrics.extend(t.metrics),
            None => alone.push(t),
        }
    }
    rest.extend(alone);
    rest
}

/// The event's kind from its metrics' directions; tail metrics speak only when no other
/// metric moved.
fn with_kind(mut e: Event) -> Event {
    // One order whatever order the series were read in.
    e.metrics
        .sort_by(|a, b| (a.tail, &a.metric, &a.unit).cmp(&(b.tail, &b.metric, &b.unit)));
    let worse = |m: &MetricMove| match m.direction {
        Direction::Higher => m.ratio < 1.0,
        _ => m.ratio > 1.0,
    };
    let speaking: Vec<&MetricMove> = e.metrics.iter().filter(|m| !m.tail).collect();
    e.kind = if speaking.is_empty() {
        "tail"
    } else if speaking.iter().all(|m| worse(m)) {
        "regression"
    } else if speaking.iter().any(|m| worse(m)) {
        "mixed"
    } else {
        "improvement"
    };
    // The event's confirmation and return are its primary metric's.
    let level = e.primary().level.clone();
    e.held = level.held;
    e.confirmed = level.confirmed;
    e.at_tip = level.at_tip;
    e.returned = level.returned;
    e
}

/// The label's commits in history order (commit time, then first ingest).
fn commit_order(runs: &[RunPoint]) -> Vec<String> {
    let mut first: HashMap<&str, (i64, i64)> = HashMap::new();
    for r in runs {
        let e = first
            .entry(r.commit.as_str())
            .or_insert((r.commit_time, r.ingested_at));
        *e = ((e.0).min(r.commit_time), (e.1).min(r.ingested_at));
    }
    let mut v: Vec<(&str, (i64, i64))> = first.into_iter().collect();
    v.sort_by_key(|(c, t)| (*t, c.to_string()));
    v.into_iter().map(|(c, _)| c.to_string()).collect()
}
