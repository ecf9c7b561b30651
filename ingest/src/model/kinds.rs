//! The closed sets: a value's direction and numerics, the metric kinds, a run's verdict,
//! an alert's status and the actions people take on it.

use serde::{Deserialize, Serialize};

/// Which way is better for a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Lower,
    Higher,
    None,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Lower => "lower",
            Direction::Higher => "higher",
            Direction::None => "none",
        }
    }
    pub fn parse(s: &str) -> Direction {
        match s {
            "lower" => Direction::Lower,
            "higher" => Direction::Higher,
            _ => Direction::None,
        }
    }
}

/// Numerics verdict of one value: `None` from a harness means *not checked*, which is
/// neither a pass nor a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Numerics {
    Pass,
    Fail,
    NotChecked,
}

impl Numerics {
    pub fn as_str(self) -> &'static str {
        match self {
            Numerics::Pass => "pass",
            Numerics::Fail => "fail",
            Numerics::NotChecked => "not_checked",
        }
    }
    pub fn parse(s: &str) -> Numerics {
        match s {
            "pass" => Numerics::Pass,
            "fail" => Numerics::Fail,
            _ => Numerics::NotChecked,
        }
    }
    /// The worse of two verdicts: a failure wins, then not-checked, then pass.
    pub fn worst(self, other: Numerics) -> Numerics {
        use Numerics::*;
        match (self, other) {
            (Fail, _) | (_, Fail) => Fail,
            (NotChecked, _) | (_, NotChecked) => NotChecked,
            _ => Pass,
        }
    }
}

/// What kind of quantity a measurement is. Primary metrics are compared; derived ones
/// (errors, ratios, speedups) are stored but never form part of a row's identity.
pub mod metric {
    pub const LATENCY: &str = "latency";
    pub const THROUGHPUT: &str = "throughput";
    pub const BANDWIDTH: &str = "bandwidth";
    pub const ERROR: &str = "error";
    pub const RATIO: &str = "ratio";
    pub const SPEEDUP: &str = "speedup";
    pub const UPLIFT: &str = "uplift";
    /// Free-text annotation columns (`note`, `status`): kept, never identity.
    pub const NOTE: &str = "note";
    /// Numeric columns whose meaning perfdb cannot tell: kept, reported, never identity.
    pub const UNCLASSIFIED: &str = "unclassified";
    /// A column of differences between two variants (`Delta (ns)`): derived.
    pub const DIFFERENCE: &str = "difference";

    /// Derived metrics: stored, shown, never compared as a performance row.
    pub fn is_derived(metric: &str) -> bool {
        matches!(
            metric,
            ERROR | RATIO | SPEEDUP | UPLIFT | NOTE | UNCLASSIFIED
        ) || metric.starts_with("error_")
    }

    /// Tail metrics: a high percentile (`latency_p90`, `ttft_p99`, `p99.9`) or the
    /// maximum (`latency_max`). They move far more under load than medians, so `detect`
    /// reports them with the median's alert and never raises one on their own.
    pub fn is_tail(metric: &str) -> bool {
        metric.split(['_', '-', ' ']).any(|part| {
            let part = part.to_ascii_lowercase();
            part == "max"
                || part == "tail"
                || part.strip_prefix('p').is_some_and(|n| {
                    n.split('.')
                        .next()
                        .and_then(|n| n.parse::<u32>().ok())
                        .is_some_and(|n| (90..100).contains(&n))
                        && n.chars().all(|c| c.is_ascii_digit() || c == '.')
                })
        })
    }
}

/// What a harness (or `perfdb run`, from the exit status) said of a whole run; stored
/// as `pass` or `fail` in the runs table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunVerdict {
    Pass,
    Fail,
}

impl RunVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            RunVerdict::Pass => "pass",
            RunVerdict::Fail => "fail",
        }
    }
}

/// Where an alert stands (docs/alerts.md, "Lifecycle"). `detect` sets pending, active,
/// resolved, withdrawn and silenced from the history; people set acknowledged and
/// dismissed, and reopen (back to active).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AlertStatus {
    /// A step at the tip whose new level has not yet held for `confirm` commits: shown,
    /// not delivered, not an exit 1. Also an alert whose status was never committed.
    Pending,
    /// A confirmed step: delivered, exit 1 the first time.
    Active,
    /// A person has seen it; it still resolves or withdraws with the data.
    Acknowledged,
    /// A person said it is not a regression (a reason is required); detect leaves it so.
    Dismissed,
    /// The series came back to within the threshold of its level before the step.
    Resolved,
    /// The change point no longer holds with the data now in the warehouse.
    Withdrawn,
    /// A newer step on the same series (still standing) supersedes it.
    Silenced,
}

impl AlertStatus {
    pub const ALL: [AlertStatus; 7] = [
        AlertStatus::Pending,
        AlertStatus::Active,
        AlertStatus::Acknowledged,
        AlertStatus::Dismissed,
        AlertStatus::Resolved,
        AlertStatus::Withdrawn,
        AlertStatus::Silenced,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            AlertStatus::Pending => "pending",
            AlertStatus::Active => "active",
            AlertStatus::Acknowledged => "acknowledged",
            AlertStatus::Dismissed => "dismissed",
            AlertStatus::Resolved => "resolved",
            AlertStatus::Withdrawn => "withdrawn",
            AlertStatus::Silenced => "silenced",
        }
    }

    /// The status a name spells, or an error listing them all.
    pub fn parse(s: &str) -> Result<AlertStatus, String> {
        AlertStatus::ALL
            .into_iter()
            .find(|a| a.as_str() == s)
            .ok_or_else(|| {
                let all: Vec<&str> = AlertStatus::ALL.iter().map(|a| a.as_str()).collect();
                format!("'{s}' is not a status: one of {}", all.join(", "))
            })
    }
}

/// A person's action on an alert, and the statuses it may be taken from: the one
/// place the human transitions live (the CLI, triage and the web's form use it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AlertAction {
    Acknowledge,
    Dismiss,
    Reopen,
}

impl AlertAction {
    /// The status the action sets.
    pub fn target(self) -> AlertStatus {
        match self {
            AlertAction::Acknowledge => AlertStatus::Acknowledged,
            AlertAction::Dismiss => AlertStatus::Dismissed,
            AlertAction::Reopen => AlertStatus::Active,
        }
    }

    /// The statuses a person may take this action from.
    pub fn allowed_from(self, status: AlertStatus) -> bool {
        use AlertStatus::*;
        match self {
            AlertAction::Acknowledge => matches!(status, Active | Pending),
            AlertAction::Dismiss => matches!(status, Active | Pending | Acknowledged),
            AlertAction::Reopen => matches!(
                status,
                Acknowledged | Dismissed | Resolved | Withdrawn | Silenced
            ),
        }
    }
}

impl std::fmt::Display for AlertStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
