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
mod read;
pub mod stale;

pub use lifecycle::{raise, reported, Raised};
pub use read::Coding;

use crate::db::{Db, DbError, SeriesId};
use crate::stats::{self, changepoint};
use perfdb_ingest::model::{key_display, key_from_json, metric, Direction};
use read::{runs_of, RunPoint};
use serde::Serialize;
use std::collections::HashMap;

#[derive(Debug, thiserror::Error)]
pub enum DetectError {
    #[error(transparent)]
    Db(#[from] DbError),
    #[error("no runs with label '{0}'; `perfdb runs` lists the labels")]
    NoRuns(String),
    #[error("--since {since}: no commit of label '{label}' starts with it")]
    NoSuchCommit { label: String, since: String },
    #[error(transparent)]
    Triage(#[from] crate::alerts::TriageError),
    #[error("reading the history: {0}")]
    Spill(String),
}

// A query or the warehouse failing is a reading error: one route for each, through
// [`DbError`].
impl From<duckdb::Error> for DetectError {
    fn from(e: duckdb::Error) -> Self {
        DetectError::Db(DbError::Query(e))
    }
}

/// Commits within which two detections of a series' step are the same step (a late
/// commit moves a change point by about the commits it fills in), and within which a
/// tail metric's step joins the median's.
pub const NEAR: usize = 3;

/// Measurement rows detect holds at once (about; whole series to a group): its memory
/// stays bounded whatever the history's size (16 bytes a row: about 32 MB, and as much
/// again to sort a group).
pub const ROWS_PER_PASS: usize = 2_000_000;

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

/// Which way an event moved, from its metrics' own directions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EventKind {
    /// Worse in every moved metric's own direction (tail metrics aside): an alert.
    Regression,
    /// Better in every moved metric.
    Improvement,
    /// Worse in some, better in others.
    Mixed,
    /// Only tail metrics moved: never an alert.
    Tail,
}

impl EventKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Regression => "regression",
            EventKind::Improvement => "improvement",
            EventKind::Mixed => "mixed",
            EventKind::Tail => "tail",
        }
    }
}

impl std::fmt::Display for EventKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A change of one kernel and shape at one commit on one machine class.
#[derive(Debug, Clone, Serialize)]
pub struct Event {
    pub kind: EventKind,
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
    /// Where `since` stands in `order`.
    #[serde(skip)]
    pub since_at: Option<usize>,
    /// The steps this run holds alerts to: those whose first bad commit is at this
    /// position of `order` or later (0 without `since`: every step).
    #[serde(skip)]
    pub scope_from: usize,
}

impl Detection {
    pub fn regressions(&self) -> usize {
        self.events
            .iter()
            .filter(|e| e.kind == EventKind::Regression)
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

/// One commit of a series: when it was made and first ingested, and its trials (one
/// per run: the median of the run's repeats) with their runs (indices into the runs).
struct Point {
    commit: String,
    commit_time: i64,
    ingested_at: i64,
    trials: Vec<f64>,
    runs: Vec<usize>,
}

/// Detect change points over every series of `label`; with `since`, report only those
/// whose first bad commit is that commit (a prefix) or later.
///
/// Memory: one scan spreads the rows over groups of about [`ROWS_PER_PASS`] rows, and
/// the groups are read back one at a time, each series examined as a whole
/// ([`read`]): a group's rows are held at once, not the label's; a group's series are
/// examined on every core.
pub fn detect(
    db: &Db,
    label: &str,
    since: Option<&str>,
    params: &crate::config::DetectConfig,
) -> Result<Detection, DetectError> {
    detect_in_passes(db, label, since, params, ROWS_PER_PASS, Coding::Hashed)
}

/// [`detect`], holding about `rows_per_pass` rows at once, the rows coded as `coding`
/// asks (hashed falls back to joined when hashes collide).
pub fn detect_in_passes(
    db: &Db,
    label: &str,
    since: Option<&str>,
    params: &crate::config::DetectConfig,
    rows_per_pass: usize,
    coding: Coding,
) -> Result<Detection, DetectError> {
    let mut t = std::time::Instant::now();
    let runs = runs_of(db, label)?;
    perfdb_ingest::trace("detect: runs", &mut t);
    if runs.is_empty() {
        return Err(DetectError::NoRuns(label.to_string()));
    }
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
    // With --since, a window of the history: what a new commit changed is read against
    // the recent past, not the whole history again ([`window`]).
    let (start, scope_from) = match since_at {
        None => (0, 0),
        Some(at) => window(db, label, &order_of_commits, at, params.context())?,
    };
    let (runs, scope) = if start > 0 {
        let runs: Vec<RunPoint> = runs
            .into_iter()
            .filter(|r| position.get(r.commit.as_str()).is_some_and(|p| *p >= start))
            .collect();
        let ids: Vec<String> = runs.iter().map(|r| r.run_id.clone()).collect();
        let scope = read::Scope::new(db, label, Some(&ids))?;
        (runs, scope)
    } else {
        (runs, read::Scope::new(db, label, None)?)
    };
    let mut n_series = 0;
    let mut events: Vec<Event> = Vec::new();
    // Each run's machine class and commit as codes (machine codes in name order).
    let mut machines: Vec<&str> = runs.iter().map(|r| r.machine.as_str()).collect();
    machines.sort_unstable();
    machines.dedup();
    let mut commit_code: HashMap<&str, u32> = HashMap::new();
    let run_codes: Vec<(u32, u32)> = runs
        .iter()
        .map(|r| {
            let m = machines.binary_search(&r.machine.as_str()).expect("listed") as u32;
            let next = commit_code.len() as u32;
            (m, *commit_code.entry(r.commit.as_str()).or_insert(next))
        })
        .collect();
    // One series' events on each machine class (pure: series run on every core).
    let examine = |series: &read::Series, rows: &[read::Row]| -> Vec<Vec<(Event, MetricMove)>> {
        let [table, variant, key, metric, unit] = &series.names;
        // (machine, commit, run, trial) of the series.
        let mut trials: Vec<(u32, u32, u32, f64)> = Vec::new();
        let mut vals: Vec<f64> = Vec::new();
        for run_rows in rows.chunk_by(|a, b| a.run == b.run) {
            // A run's repeats of a row are one trial: their median.
            vals.clear();
            vals.extend(run_rows.iter().map(|r| r.value));
            let ri = run_rows[0].run;
            let (m, c) = run_codes[ri as usize];
            trials.push((m, c, ri, stats::median_in_place(&mut vals)));
        }
        // By machine, then commit, then run: a commit's trials in run order (codes
        // follow run ids), the same sums and p however the rows arrived.
        trials.sort_unstable_by_key(|t| (t.0, t.1, t.2));
        let mut found = Vec::new();
        for of_machine in trials.chunk_by(|a, b| a.0 == b.0) {
            let points: Vec<Point> = of_machine
                .chunk_by(|a, b| a.1 == b.1)
                .map(|of_commit| {
                    let first = &runs[of_commit[0].2 as usize];
                    Point {
                        commit: first.commit.clone(),
                        commit_time: of_commit
                            .iter()
                            .map(|t| runs[t.2 as usize].commit_time)
                            .min()
                            .expect("one trial"),
                        ingested_at: of_commit
                            .iter()
                            .map(|t| runs[t.2 as usize].ingested_at)
                            .min()
                            .expect("one trial"),
                        trials: of_commit.iter().map(|t| t.3).collect(),
                        runs: of_commit.iter().map(|t| t.2 as usize).collect(),
                    }
                })
                .collect();
            let id = SeriesId {
                table: table.clone(),
                variant: variant.clone(),
                key: key.clone(),
                metric: metric.clone(),
                unit: unit.clone(),
                machine: machines[of_machine[0].0 as usize].to_string(),
            };
            found.push(series_events(
                &id,
                series.direction,
                series.key_order.as_deref(),
                points,
                &runs,
                &params.for_series(table, variant),
                params.confirm(),
            ));
        }
        found
    };
    // Events of one series and machine class, merged in series order: a series' metrics
    // moving at one commit are one event.
    type Shape = (String, String, String, String, String);
    let mut index: HashMap<Shape, usize> = HashMap::new();
    let mut flush = |found: Vec<(Event, MetricMove)>| {
        n_series += 1;
        for (ev, mv) in found {
            let pos = |c: &str| position.get(c).copied().unwrap_or(usize::MAX);
            if pos(&ev.first_bad_commit) < scope_from {
                continue;
            }
            let at = (
                ev.table.clone(),
                ev.variant.clone(),
                ev.key_json.clone(),
                ev.machine.clone(),
                ev.first_bad_commit.clone(),
            );
            match index.get(&at) {
                Some(&i) => events[i].metrics.push(mv),
                None => {
                    index.insert(at, events.len());
                    events.push(Event {
                        metrics: vec![mv],
                        ..ev
                    });
                }
            }
        }
    };
    read::for_each_group(db, &scope, &runs, rows_per_pass, coding, |group| {
        for found in crate::par::parallel_map(group, |(series, rows)| examine(series, rows)) {
            for per_machine in found {
                flush(per_machine);
            }
        }
    })?;
    let events = join_tails(events, &position);
    let mut events: Vec<Event> = events.into_iter().map(with_kind).collect();
    events.sort_by(|a, b| {
        (
            a.kind != EventKind::Regression,
            &a.first_bad_commit,
            &a.table,
            &a.variant,
            &a.key,
        )
            .cmp(&(
                b.kind != EventKind::Regression,
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
        commits: order_of_commits.len() - start,
        events,
        order: order_of_commits,
        since_at,
        scope_from,
    })
}

/// The change points of one series, each as an event of one metric (its `metrics`
/// empty) and that metric's move.
fn series_events(
    id: &SeriesId,
    dir: Direction,
    key_order: Option<&str>,
    mut ordered: Vec<Point>,
    runs: &[RunPoint],
    params: &changepoint::Params,
    confirm: usize,
) -> Vec<(Event, MetricMove)> {
    let SeriesId {
        table,
        variant,
        key,
        metric: metric_name,
        unit,
        machine,
    } = id;
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
            // Decided by `with_kind` once every metric of the event is in.
            kind: EventKind::Tail,
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
        EventKind::Tail
    } else if speaking.iter().all(|m| worse(m)) {
        EventKind::Regression
    } else if speaking.iter().any(|m| worse(m)) {
        EventKind::Mixed
    } else {
        EventKind::Improvement
    };
    // The event's confirmation and return are its primary metric's.
    let level = e.primary().level.clone();
    e.held = level.held;
    e.confirmed = level.confirmed;
    e.at_tip = level.at_tip;
    e.returned = level.returned;
    e
}

/// The window `detect --since` reads, as positions in the label's history: (the first
/// commit read, the first commit whose steps it holds alerts to).
///
/// A step whose first bad commit is before `since` may still change: it is confirmed,
/// or first significant, a few commits later, when `since` has moved past it (CI runs
/// detect after every commit). So the steps from half the context before `since` are
/// held, each against at least half the context of history before it, and so is every
/// step with an alert still open whose last good commit is up to twice the context
/// back (read from half the context before it): its return to level, or a newer step
/// that silences it, arrives in the window. Older open alerts are left to
/// a run without `--since` (the nightly one): reaching back to each would read most of
/// a year for a team with old alerts open. With a history shorter than the window this
/// is one detect over everything.
fn window(
    db: &Db,
    label: &str,
    order: &[String],
    since_at: usize,
    context: usize,
) -> Result<(usize, usize), DetectError> {
    let half = context.div_ceil(2);
    let mut start = since_at.saturating_sub(context);
    let mut from = since_at.saturating_sub(half);
    // The furthest back the window reaches for an open alert.
    let floor = since_at.saturating_sub(2 * context);
    let pos = |c: &str| order.iter().position(|o| o == c);
    for a in crate::alerts::list(db, None)? {
        let open = matches!(
            a.status,
            perfdb_ingest::model::AlertStatus::Pending
                | perfdb_ingest::model::AlertStatus::Active
                | perfdb_ingest::model::AlertStatus::Acknowledged
                | perfdb_ingest::model::AlertStatus::Silenced
        );
        if a.label != label || a.kind != crate::alerts::AlertKind::Regression || !open {
            continue;
        }
        if let (Some(lg), Some(fb)) = (pos(&a.last_good_commit), pos(&a.first_bad_commit)) {
            if lg < floor {
                continue;
            }
            from = from.min(fb.min(lg));
            start = start.min(lg.saturating_sub(half));
        }
    }
    Ok(if start == 0 { (0, 0) } else { (start, from) })
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
