//! What detect finds: an event (a kernel and shape whose metrics moved at one commit),
//! each metric's move, the levels before and after, a return to level, and the whole
//! detection.

use perfdb_ingest::model::{metric, Direction};
use serde::Serialize;

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
    /// What changed underneath the step (driver, toolchain, image...), from the
    /// environment tags of the runs either side of it.
    pub underneath: crate::environment::Underneath,
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

    pub(crate) fn same_series(&self, o: &Event) -> bool {
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
