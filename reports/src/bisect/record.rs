//! What a bisect watches and what it found: one record, printed by `perfdb bisect`,
//! stored with the alert ([`super::store`]) and read back by `perfdb alerts show`, its
//! JSON, the alert's page and the webhook.

use crate::compare::Row;
use serde::{Deserialize, Serialize};

/// A commit as a person reads it in a culprit line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommitInfo {
    pub sha: String,
    pub subject: String,
    pub author: String,
    /// Commit date, ISO 8601.
    pub date: String,
}

/// What one step found of a commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Found {
    /// The step's size is there: the commit is at or after the culprit.
    Bad,
    /// Cleared: the commit is before the culprit.
    Good,
    /// Not built, a trial failed, or the watched rows not printed: no verdict; another
    /// commit is tried (as `git bisect skip`).
    #[serde(rename = "skipped")]
    Skip,
    /// The trials could not decide at the cap: the search ends at the range proven.
    Undecided,
}

impl std::fmt::Display for Found {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Found::Bad => "bad",
            Found::Good => "good",
            Found::Skip => "skipped",
            Found::Undecided => "undecided",
        })
    }
}

/// One series an alert watched, with the size of its step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Watch {
    /// The series of the alert's group (one change: every alert of its label, machine
    /// class and overlapping range).
    pub series: Vec<Series>,
    /// `--series` texts.
    pub texts: Vec<String>,
}

impl Watch {
    /// The alert series `r` is, if any.
    pub fn series_of(&self, r: &Row) -> Option<&Series> {
        self.series.iter().find(|s| {
            s.table == r.table
                && s.variant == r.variant
                && s.key_text == r.key_text
                && s.metrics.contains(&r.metric)
        })
    }

    /// Whether the bisect watches `r`: a `--series` text's row, else the alerts' series,
    /// else (neither given) every row but the control.
    pub fn holds(&self, r: &Row) -> bool {
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

/// One watched row at a step: its state, change and interval against the step's base.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    pub row: String,
    /// |ln ratio| over |ln the alert's ratio| when the row is an alert's series.
    pub share: Option<f64>,
    pub state: Option<String>,
    pub ratio: Option<f64>,
    pub ratio_ci: Option<(f64, f64)>,
    pub trials: (usize, usize),
}

/// One step of the search: a commit's trials against another.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    pub commit: String,
    /// Against this commit (the good end, or the culprit of the part before).
    pub against: String,
    pub found: Found,
    /// Why the commit was skipped or left undecided (a flaky commit says so here).
    pub why: Option<String>,
    pub trials_a_side: usize,
    pub seconds: f64,
    pub evidence: Vec<Evidence>,
    /// The hardware counters that moved with the watched rows (`--profile`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counters: Vec<crate::compare::counters::Explained>,
}

impl Step {
    /// A step with no verdict yet (skipped until trials say otherwise).
    pub fn new(against: &str, commit: &str) -> Step {
        Step {
            commit: commit.to_string(),
            against: against.to_string(),
            found: Found::Skip,
            why: None,
            trials_a_side: 0,
            seconds: 0.0,
            evidence: Vec::new(),
            counters: Vec::new(),
        }
    }
}

/// A commit the step lies at, with its share of the alert's step when known.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Part {
    pub culprit: CommitInfo,
    /// |ln(its ratio)| / |ln(the alert's ratio)|, the watched rows' median (latency and
    /// throughput rows alike).
    pub share: Option<f64>,
    /// Trials of the culprit against its parent, the part's start or the good end (the
    /// ends' trials when the culprit is the bad end): never the alert's word alone.
    pub evidence: Vec<Evidence>,
    /// The hardware counters that moved with it, from the same step (`--profile`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counters: Vec<crate::compare::counters::Explained>,
    /// Its parents and how each is known good (a merge has two or more).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parents: Vec<Parent>,
}

/// A culprit's parent and how it is known good: `measured good`, `the good end`, `the
/// part's start`, `an ancestor of X, measured good`, `an ancestor of the good end`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Parent {
    pub sha: String,
    pub known: String,
}

/// What a bisect found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ends: Option<Step>,
    pub steps: Vec<Step>,
    pub skipped: Vec<String>,
    /// Wall seconds of the steps' trials (the GPU time spent).
    pub gpu_seconds: f64,
    pub max_trials: usize,
}

impl Bisected {
    /// Why no culprit was named when the ends did not show the step: `Some(found)` of
    /// the ends when it is not `Bad`.
    pub fn ends_not_bad(&self) -> Option<&Step> {
        self.ends.as_ref().filter(|e| e.found != Found::Bad)
    }
}
