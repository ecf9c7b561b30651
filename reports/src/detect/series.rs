//! One series' events: its points (commits in order, every trial each), the change
//! points the history chart's detector finds, and the metrics of a kernel and shape that
//! move together (a tail metric joining its median's event).

use crate::db::SeriesId;
use crate::detect::read::RunPoint;
use crate::detect::types::Event;
use crate::detect::types::EventKind;
use crate::detect::types::Level;
use crate::detect::types::MetricMove;
use crate::detect::types::Return;
use crate::detect::NEAR;
use crate::stats::{self, changepoint};
use perfdb_ingest::model::{key_display, key_from_json, metric, Direction, SeriesKey};
use std::collections::HashMap;

/// One commit of a series: when it was made and first ingested, and its trials (one
/// per run: the median of the run's repeats) with their runs (indices into the runs).
pub(super) struct Point {
    pub(super) commit: String,
    pub(super) commit_time: i64,
    pub(super) ingested_at: i64,
    pub(super) trials: Vec<f64>,
    pub(super) runs: Vec<usize>,
}

/// The change points of one series, each as an event of one metric (its `metrics`
/// empty) and that metric's move.
pub(super) fn series_events(
    id: &SeriesId,
    dir: Direction,
    key_order: Option<&str>,
    mut ordered: Vec<Point>,
    runs: &[RunPoint],
    params: &changepoint::Params,
    confirm: usize,
) -> Vec<(Event, MetricMove)> {
    let SeriesId {
        series:
            SeriesKey {
                table,
                variant,
                key,
                metric: metric_name,
                unit,
            },
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
    let mut bounds: Vec<usize> = vec![0];
    bounds.extend(cps.iter().map(|c| c.index));
    bounds.push(n);
    let segs = Segments {
        trials: &trials,
        bounds,
        confirm,
    };
    let (bounds, level) = (&segs.bounds, |k: usize| segs.level(k));
    let shown = key_display(&perfdb_ingest::model::in_source_order(
        key_from_json(key),
        key_order.unwrap_or("[]"),
    ));
    let tail = metric::is_tail(metric_name);
    let mut out = Vec::new();
    for (c, cp) in cps.iter().enumerate() {
        let seg = c + 1; // the new level's segment
        let before_level = level(c);
        let before = segs.values(bounds[c], cp.index);
        let after = segs.values(cp.index, bounds[seg + 1]);
        let is_confirmed = segs.confirmed(seg, before_level);
        let (now, returned) = segs.standing(seg, before_level, dir, params.min_step, &ordered);
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
            underneath: Default::default(),
        };
        out.push((ev, mv));
    }
    out
}

/// Events of only tail metrics join the nearest event of the same series (kernel,
/// shape, machine) that has a median-like metric within [`NEAR`] commits.
pub(super) fn join_tails(events: Vec<Event>, position: &HashMap<&str, usize>) -> Vec<Event> {
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
pub(super) fn with_kind(mut e: Event) -> Event {
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

/// A series' commits cut at its change points: segment k runs from `bounds[k]` to
/// `bounds[k + 1]`.
struct Segments<'a> {
    trials: &'a [Vec<f64>],
    bounds: Vec<usize>,
    /// Commits a segment must hold to be confirmed.
    confirm: usize,
}

impl Segments<'_> {
    /// Every trial of commits `from..to`.
    fn values(&self, from: usize, to: usize) -> Vec<f64> {
        self.trials[from..to].iter().flatten().copied().collect()
    }

    /// Segment k's level: the median of its trials.
    fn level(&self, k: usize) -> f64 {
        stats::median(&self.values(self.bounds[k], self.bounds[k + 1]))
    }

    /// A segment is confirmed when it held `confirm` commits, and, reaching the tip,
    /// every one of its commits sits nearer its level than the level it left.
    fn confirmed(&self, k: usize, from_level: f64) -> bool {
        let (lo, hi) = (self.bounds[k], self.bounds[k + 1]);
        if hi - lo < self.confirm {
            return false;
        }
        if hi < self.trials.len() {
            return true;
        }
        let to = self.level(k);
        let mid = (to.ln() + from_level.ln()) / 2.0;
        (lo..hi).all(|i| {
            let m = stats::median(&self.trials[i]).ln();
            if to > from_level {
                m > mid
            } else {
                m < mid
            }
        })
    }

    /// Where the series stands after the step into segment `seg`: the latest confirmed
    /// segment's level, and the first of them back within `min_step` of the level
    /// before the step.
    fn standing(
        &self,
        seg: usize,
        before_level: f64,
        dir: Direction,
        min_step: f64,
        ordered: &[Point],
    ) -> (f64, Option<Return>) {
        // How much worse `x` is than `base` in this metric's direction (> 1: worse).
        let worse_by = |x: f64, base: f64| match dir {
            Direction::Higher => base / x,
            _ => x / base,
        };
        let mut now = self.level(seg);
        let mut returned = None;
        for k in seg + 1..self.bounds.len() - 1 {
            if !self.confirmed(k, self.level(k - 1)) {
                continue;
            }
            now = self.level(k);
            if returned.is_none() && worse_by(now, before_level) <= 1.0 + min_step {
                let first = &ordered[self.bounds[k]];
                returned = Some(Return {
                    commit: first.commit.clone(),
                    ingested_at_us: first.ingested_at,
                });
            }
        }
        (now, returned)
    }
}
