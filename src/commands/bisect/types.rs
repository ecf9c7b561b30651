//! What a bisect watches and what it found: the records `perfdb bisect` prints, stores
//! with the alert and sends.

use super::git::CommitInfo;
use perfdb_reports::compare::Row;
use serde::Serialize;

/// One series an alert watched, with the size of its step.
#[derive(Debug, Clone, Serialize)]
pub struct Series {
    pub alert: String,
    pub table: String,
    pub variant: String,
    pub key_text: String,
    pub metrics: Vec<String>,
    /// The alert's head-over-base ratio.
    pub ratio: f64,
}

/// The rows a bisect watches.
#[derive(Debug, Clone, Serialize)]
pub struct Watch {
    /// The series of the alert's group (one change: every alert of its label, machine
    /// class and overlapping range).
    pub series: Vec<Series>,
    /// `--series` texts.
    pub texts: Vec<String>,
}

impl Watch {
    /// The alert series `r` is, if any.
    pub(super) fn series_of(&self, r: &Row) -> Option<&Series> {
        self.series.iter().find(|s| {
            s.table == r.table
                && s.variant == r.variant
                && s.key_text == r.key_text
                && s.metrics.contains(&r.metric)
        })
    }

    pub(super) fn holds(&self, r: &Row) -> bool {
        if r.control {
            return false;
        }
        if !self.texts.is_empty() {
            let text = format!("{} {} {}", r.table, r.variant, r.key_text);
            return self.texts.iter().any(|s| text.contains(s.as_str()));
        }
        self.series.is_empty() || self.series_of(r).is_some()
    }
}

/// One watched row at a step: its state, change and interval against the good end.
#[derive(Debug, Clone, Serialize)]
pub struct Evidence {
    pub row: String,
    /// |ln ratio| over |ln the alert's ratio| when the row is an alert's series.
    pub share: Option<f64>,
    pub state: Option<String>,
    pub ratio: Option<f64>,
    pub ratio_ci: Option<(f64, f64)>,
    pub trials: (usize, usize),
}

/// One step of the search.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    pub commit: String,
    /// Against this commit (the good end, or the culprit of the part before).
    pub against: String,
    pub found: super::search::Found,
    /// Why the commit was skipped or left undecided.
    pub why: Option<String>,
    pub trials_a_side: usize,
    pub seconds: f64,
    pub evidence: Vec<Evidence>,
}

/// A commit the step lies at, with its share of the alert's step when known.
#[derive(Debug, Clone, Serialize)]
pub struct Part {
    pub culprit: CommitInfo,
    /// |ln(its ratio)| / |ln(the alert's ratio)|, the watched rows' median (latency and
    /// throughput rows alike).
    pub share: Option<f64>,
    /// The step's evidence (absent when the culprit is the bad end, never tested: the
    /// alert's own step is its evidence).
    pub evidence: Vec<Evidence>,
}

/// What a bisect found.
#[derive(Debug, Clone, Serialize)]
pub struct Bisected {
    pub alert: Option<String>,
    pub label: String,
    pub good: String,
    pub bad: String,
    /// Commits after good up to bad.
    pub commits: usize,
    pub watch: Watch,
    /// The culprit(s), oldest first; empty when only a range was proven.
    pub parts: Vec<Part>,
    /// When no culprit: the range it lies in, (after this, up to this].
    pub range: Option<(String, String)>,
    /// The bad end measured against the good before any search: the search runs only
    /// when the bad end is worse there (a false alarm, or a step this machine does not
    /// show, names no culprit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ends: Option<Step>,
    pub steps: Vec<Step>,
    pub skipped: Vec<String>,
    /// Wall seconds of the steps' trials (the GPU time spent).
    pub gpu_seconds: f64,
    pub max_trials: usize,
}
