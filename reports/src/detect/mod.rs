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
//! - `crate::render::detect` prints both.
//!
//! This one's files: [`types`] (what is found), [`passes`] (the history read in
//! passes), [`series`] (one series' events).

pub mod lifecycle;
mod passes;
mod read;
mod series;
pub mod stale;
mod types;

pub use passes::{detect, detect_in_passes};
pub use types::*;

pub use lifecycle::{raise, reported, Raised};
pub use read::Coding;

use crate::db::DbError;

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
