//! The sequential A/B experiment (`perfdb ab`; docs/STATS.md, "Sequential A/B"): the
//! arms' schedule from the seed, when to look, when to stop and why, and the record the
//! report carries. The trials themselves (processes, logs, the warehouse) belong to the
//! caller, behind [`Trials`]: the binary runs commands, the tests a mock source.
//!
//! The steps: [`schedule`] (warm-up runs, then blocks of four, ABBA or BAAB from the
//! seed), [`course`] (run the blocks, look at the planned looks, stop), [`render`] (the
//! run's own section of the report, and the progress line).

pub mod course;
pub mod render;
pub mod replay;
pub mod schedule;
#[cfg(test)]
mod tests;

pub use course::{decided_count, run, undecided};

use crate::compare::Report;
use serde::Serialize;
use std::time::Duration;

/// One side of the experiment; `A` is base.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Arm {
    Base,
    Head,
}

impl Arm {
    pub fn name(self) -> &'static str {
        match self {
            Arm::Base => "base",
            Arm::Head => "head",
        }
    }
    pub fn letter(self) -> char {
        match self {
            Arm::Base => 'A',
            Arm::Head => 'B',
        }
    }
    /// 0 for base, 1 for head: the index of the arm's entry in a pair.
    pub fn index(self) -> usize {
        match self {
            Arm::Base => 0,
            Arm::Head => 1,
        }
    }
}

/// How a trial ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TrialEnd {
    /// Its command exited, successfully (`true`) or not.
    Exited(bool),
    /// Killed at its deadline (seconds): stored as a failed run.
    TimedOut(f64),
    /// Stopped at the `--max-time` budget: not stored.
    OverBudget,
    /// Stopped by a signal (its name, `SIGINT`): not stored.
    Interrupted(&'static str),
}

/// What one trial did: how it ended, and where its output is kept.
#[derive(Debug, Clone, PartialEq)]
pub struct Trial {
    pub end: TrialEnd,
    pub log: String,
}

/// Why the run stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stopped {
    /// Every row decided.
    Decided,
    MaxTrials,
    MaxTime,
    /// The control moved: more trials do not cure drift.
    Unreliable,
    FailedRun,
    /// A trial passed its deadline: killed with its process group, stored as failed.
    TrialTimeout,
    /// SIGINT or SIGTERM (a cancelled CI job): the running trial stopped, not stored.
    Interrupted,
}

/// The experiment as asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Untimed runs of each arm before the first block.
    pub warmup: usize,
    /// Trials a side at most.
    pub max_trials: usize,
    /// The whole run's budget: no block starts that would not end within it.
    pub max_time: Option<Duration>,
    pub seed: u64,
}

/// A look that could not compare.
#[derive(Debug)]
pub enum LookError<E> {
    /// One side has no stored run yet: nothing to compare.
    NothingStored(E),
    Failed(E),
}

/// What the experiment drives: one trial of an arm, and a look at what the stored
/// trials say.
pub trait Trials {
    type Error;
    /// Run one trial of `arm`: a warm-up (`block` is `None`), or the measured trial at
    /// (block number, position in it from 1), which the source stores.
    fn trial(&mut self, arm: Arm, block: Option<(usize, usize)>) -> Result<Trial, Self::Error>;
    /// Compare the measured trials stored so far, with the sequential rule.
    fn look(&mut self) -> Result<Report, LookError<Self::Error>>;
    /// Mean seconds of a measured trial so far (0 before any).
    fn mean_trial_seconds(&self) -> f64;
    /// Time since the run started.
    fn elapsed(&self) -> Duration;
    /// The signal that asked the run to stop, if one did.
    fn interrupted(&self) -> Option<&'static str>;
    /// After each block that did not end the run: where it stands, for a person.
    fn progress(&mut self, _line: &str) {}
    /// GPUs that run blocks at once (`perfdb ab --gpus`); 1: one trial at a time.
    fn lanes(&self) -> usize {
        1
    }
    /// Each job on a GPU of its own, all at once; each job's trials in order, up to and
    /// with the first that ended the run. One GPU: the jobs in turn ([`in_turn`]).
    fn round(&mut self, jobs: &[Job]) -> Result<Vec<Vec<Trial>>, Self::Error> {
        in_turn(self, jobs)
    }
}

/// The jobs run one trial at a time through [`Trials::trial`], each up to and with its
/// first trial that ended the run.
pub fn in_turn<S: Trials + ?Sized>(src: &mut S, jobs: &[Job]) -> Result<Vec<Vec<Trial>>, S::Error> {
    let mut out = Vec::new();
    for job in jobs {
        let mut trials = Vec::new();
        for (pos, arm) in job.arms.iter().enumerate() {
            let t = src.trial(*arm, job.block.map(|b| (b, pos + 1)))?;
            let ended = t.end != TrialEnd::Exited(true);
            trials.push(t);
            if ended {
                break;
            }
        }
        out.push(trials);
    }
    Ok(out)
}

/// What one GPU runs in a round: a block (its number and its four trials), or warm-ups
/// (`block` is `None`).
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    pub block: Option<usize>,
    pub arms: Vec<Arm>,
}

/// The run's record that is the experiment's own (the caller's facts are added in
/// [`Sequential`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Course {
    /// Trials a side in the blocks run whole.
    pub trials_per_arm: usize,
    /// Trials a side at each look taken.
    pub looks: Vec<usize>,
    pub planned_looks: Vec<usize>,
    pub stopped: Stopped,
    /// Block orientations in order (`ABBA`, `BAAB`; A = base).
    pub blocks: Vec<String>,
    /// A failed trial that ended the run: arm and log file.
    pub failed: Option<(Arm, String)>,
    /// A trial stopped before it ended (deadline, budget, signal): what happened to it.
    pub cut_trial: Option<String>,
}

/// How the experiment ended.
#[derive(Debug)]
pub enum Outcome {
    /// Compared: the last look's report and the run's record.
    Compared(Box<Report>, Course),
    /// Stopped by a signal or the budget before both arms had a measured trial.
    NothingCompared(Course),
    /// A trial failed before both arms had a measured trial: nothing to compare.
    FailedFirst(Arm, String),
}

/// The run's own section of the report (`sequential` in JSON): the course, the plan's
/// seed and warm-up, and what the caller measured of the trials and the machine.
#[derive(Debug, Serialize)]
pub struct Sequential {
    #[serde(flatten)]
    pub course: Course,
    pub seed: u64,
    pub warmup: usize,
    #[serde(flatten)]
    pub facts: Facts,
}

/// What the caller measured of the run, for its record.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Facts {
    pub labels: [String; 2],
    pub logs: String,
    pub seconds: f64,
    pub perfdb_seconds_per_trial: f64,
    pub gpu_tool: Option<String>,
    pub mean_clock_mhz: [Option<f64>; 2],
    pub throttled_trials: usize,
    pub trials_stored: usize,
    /// The GPUs the blocks ran on (`--gpus`), each with its offset over the rows.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gpus: Vec<GpuFacts>,
}

/// One GPU of a run over several (`perfdb ab --gpus`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct GpuFacts {
    /// Its index (NVML's / the query tool's).
    pub gpu: u32,
    /// What the trials were pinned to (`CUDA_VISIBLE_DEVICES`): its UUID, or the index.
    pub visible: String,
    pub blocks: usize,
    /// The median over the judged rows of its offset (`Row::gpu_offsets`).
    pub median_offset: Option<f64>,
    /// Why its blocks were dropped, when its state departed from the other GPUs'.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dropped: Option<String>,
}

impl Facts {
    /// Each GPU's median offset over the report's judged rows (not the control's).
    pub fn offsets_from(&mut self, report: &Report) {
        for g in &mut self.gpus {
            let mut v: Vec<f64> = report
                .rows
                .iter()
                .filter(|r| !r.control && r.state.is_some())
                .flat_map(|r| r.gpu_offsets.iter().filter(|o| o.gpu == g.gpu))
                .map(|o| o.offset)
                .collect();
            g.median_offset = (!v.is_empty()).then(|| crate::stats::median_in_place(&mut v));
        }
    }
}

impl Sequential {
    pub fn new(course: Course, plan: &Plan, facts: Facts) -> Sequential {
        Sequential {
            course,
            seed: plan.seed,
            warmup: plan.warmup,
            facts,
        }
    }
}
