//! The course of a run: warm-up, then blocks until every row is decided, the control
//! moves, a trial ends the run, or the trials or the time run out; a look at each
//! planned look, and one more at the end over the trials since.

use super::schedule::{letters, Schedule};
use super::{Arm, Course, Job, LookError, Outcome, Plan, Stopped, Trial, TrialEnd, Trials};
use crate::compare::sequential::planned_looks;
use crate::compare::{Overall, Report, Row, State};
use crate::fmt::human_seconds as human;
use perfdb_ingest::model::metric;
use std::time::Duration;

/// Rows that keep the run going: undecided, not a tail metric, not the control.
pub fn undecided(report: &Report) -> Vec<&Row> {
    report
        .rows
        .iter()
        .filter(|r| !r.control && r.state == Some(State::Undecided) && !metric::is_tail(&r.metric))
        .collect()
}

/// Rows decided, and rows judged (neither the control nor a tail metric).
pub fn decided_count(report: &Report) -> (usize, usize) {
    let judged: Vec<_> = report
        .rows
        .iter()
        .filter(|r| !r.control && r.state.is_some() && !metric::is_tail(&r.metric))
        .collect();
    let open = judged
        .iter()
        .filter(|r| r.state == Some(State::Undecided))
        .count();
    (judged.len() - open, judged.len())
}

/// Run the experiment to its end.
pub fn run<S: Trials>(plan: &Plan, src: &mut S) -> Result<Outcome, S::Error> {
    let mut course = Course {
        trials_per_arm: 0,
        looks: Vec::new(),
        planned_looks: planned_looks(plan.max_trials),
        stopped: Stopped::MaxTrials,
        blocks: Vec::new(),
        failed: None,
        cut_trial: None,
    };
    let mut last = None;
    if !warm_up(plan, src, &mut course)? {
        blocks(plan, src, &mut course, &mut last)?;
    }
    finish(src, course, last)
}

/// Whether a trial ended the run: records why in the course.
fn ends_run(t: &Trial, arm: Arm, course: &mut Course) -> bool {
    let (stopped, failed, cut) = match t.end {
        TrialEnd::Exited(true) => return false,
        TrialEnd::Exited(false) => (Stopped::FailedRun, Some((arm, t.log.clone())), None),
        TrialEnd::TimedOut(secs) => (
            Stopped::TrialTimeout,
            Some((arm, t.log.clone())),
            Some(format!(
                "a {} trial passed its deadline of {} and was killed with every process it started; stored as a failed run ({})",
                arm.name(),
                human(secs),
                t.log
            )),
        ),
        TrialEnd::OverBudget => (
            Stopped::MaxTime,
            None,
            Some(format!(
                "the {} trial running at the --max-time budget was stopped with every process it started, not stored ({})",
                arm.name(),
                t.log
            )),
        ),
        TrialEnd::Interrupted(signal) => (
            Stopped::Interrupted,
            None,
            Some(format!(
                "{signal} received: the {} trial running was stopped with every process it started, not stored ({})",
                arm.name(),
                t.log
            )),
        ),
    };
    (course.stopped, course.failed, course.cut_trial) = (stopped, failed, cut);
    true
}

/// The warm-up runs, base then head each round; true when one ended the run.
fn warm_up<S: Trials>(plan: &Plan, src: &mut S, course: &mut Course) -> Result<bool, S::Error> {
    // Every GPU warms up, all at once.
    for _ in 0..plan.warmup {
        let job = Job {
            block: None,
            arms: vec![Arm::Base, Arm::Head],
        };
        let jobs = vec![job; src.lanes().max(1)];
        if ends_round(&jobs, &src.round(&jobs)?, course) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Why no further block starts, if none does: a signal, or a block that would end
/// past the budget.
fn before_block<S: Trials>(plan: &Plan, src: &S, course: &mut Course) -> bool {
    if let Some(signal) = src.interrupted() {
        course.stopped = Stopped::Interrupted;
        course.cut_trial = Some(format!(
            "{signal} received between trials: no trial was running"
        ));
        return true;
    }
    if let Some(budget) = plan.max_time {
        let block = Duration::from_secs_f64(4.0 * src.mean_trial_seconds());
        if course.trials_per_arm > 0 && src.elapsed() + block > budget {
            course.stopped = Stopped::MaxTime;
            return true;
        }
    }
    false
}

/// Whether a trial of a round ended the run (the first such, GPU by GPU).
fn ends_round(jobs: &[Job], trials: &[Vec<Trial>], course: &mut Course) -> bool {
    jobs.iter().zip(trials).any(|(job, ts)| {
        job.arms
            .iter()
            .zip(ts)
            .any(|(arm, t)| ends_run(t, *arm, course))
    })
}

/// The next blocks: one on each GPU (a round), at most the blocks the trials left
/// allow; true when a trial ended the run.
fn next_blocks<S: Trials>(
    plan: &Plan,
    src: &mut S,
    course: &mut Course,
    schedule: &mut Schedule,
) -> Result<bool, S::Error> {
    let lanes = src.lanes().max(1);
    let left = (plan.max_trials - course.trials_per_arm).div_ceil(2);
    let jobs: Vec<Job> = (0..lanes.min(left))
        .map(|_| {
            let order = schedule.next_block();
            course.blocks.push(letters(&order));
            Job {
                block: Some(course.blocks.len()),
                arms: order.to_vec(),
            }
        })
        .collect();
    if ends_round(&jobs, &src.round(&jobs)?, course) {
        return Ok(true);
    }
    course.trials_per_arm += 2 * jobs.len();
    Ok(false)
}

/// Blocks of four until the run stops.
fn blocks<S: Trials>(
    plan: &Plan,
    src: &mut S,
    course: &mut Course,
    last: &mut Option<Report>,
) -> Result<(), S::Error> {
    let mut schedule = Schedule::new(plan.seed);
    let mut next_look = 0;
    while course.trials_per_arm < plan.max_trials {
        if before_block(plan, src, course) {
            return Ok(());
        }
        if next_blocks(plan, src, course, &mut schedule)? {
            return Ok(());
        }
        let n = course.trials_per_arm;
        if next_look < course.planned_looks.len() && n >= course.planned_looks[next_look] {
            // A round over several GPUs may pass more than one planned look: one look.
            while next_look < course.planned_looks.len() && n >= course.planned_looks[next_look] {
                next_look += 1;
            }
            let report = src.look().map_err(|e| match e {
                LookError::NothingStored(e) | LookError::Failed(e) => e,
            })?;
            course.looks.push(n);
            let unreliable = report.verdict == Overall::Unreliable;
            let done = undecided(&report).is_empty();
            *last = Some(report);
            if unreliable {
                course.stopped = Stopped::Unreliable;
                return Ok(());
            }
            if done {
                course.stopped = Stopped::Decided;
                return Ok(());
            }
        }
        let line =
            super::render::progress(n, plan.max_trials, last.as_ref(), src.mean_trial_seconds());
        src.progress(&line);
    }
    Ok(())
}

/// The last trials since the last look are looked at too (a failed run, the budget).
fn finish<S: Trials>(
    src: &mut S,
    mut course: Course,
    last: Option<Report>,
) -> Result<Outcome, S::Error> {
    let n = course.trials_per_arm;
    let report = match last {
        Some(r) if course.looks.last() == Some(&n) => r,
        _ => match src.look() {
            Ok(r) => r,
            Err(LookError::NothingStored(e)) => {
                return match course.failed.take() {
                    // Nothing to compare yet (an arm failed before the other had a
                    // trial).
                    Some((arm, log)) => Ok(Outcome::FailedFirst(arm, log)),
                    // Stopped (a signal, the budget) before both arms had a measured
                    // trial.
                    None if matches!(course.stopped, Stopped::Interrupted | Stopped::MaxTime) => {
                        Ok(Outcome::NothingCompared(course))
                    }
                    None => Err(e),
                };
            }
            Err(LookError::Failed(e)) => return Err(e),
        },
    };
    if n > 0 && course.looks.last() != Some(&n) {
        course.looks.push(n);
    }
    Ok(Outcome::Compared(Box::new(report), course))
}
