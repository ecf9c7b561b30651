//! The experiment over recorded trials, in memory: each arm's trials (one parsed output
//! each) handed out in the schedule's order, each look judged by `compare_values`. The
//! same rule as `perfdb ab` on a GPU, with no process and no warehouse: how the rule
//! spends trials on real data (docs/STATS.md, "Sequential A/B"), and its simulations.

use super::{Arm, LookError, Trial, TrialEnd, Trials};
use crate::compare::{compare_values, MemoryRow, Options, Report};
use crate::stats::median;
use perfdb_ingest::formats::{parse, ParseError};
use perfdb_ingest::model::{self, metric, Direction, Parsed};
use std::collections::BTreeMap;
use std::time::Duration;

/// A row's identity: table, variant, key in source order, metric, unit.
type RowId = (String, String, Vec<(String, String)>, String, String);

/// One trial: each row's value (a row printed more than once: its median, as `compare`
/// reduces a run's repeats).
pub type TrialRows = Vec<MemoryRow>;

/// The compared rows of one parsed output, one value each.
pub fn trial_rows(parsed: &Parsed) -> TrialRows {
    let mut rows: BTreeMap<RowId, (Direction, Vec<f64>)> = BTreeMap::new();
    for m in &parsed.measurements {
        let Some(v) = m.value else { continue };
        if metric::is_derived(&m.metric) || m.direction == Direction::None {
            continue;
        }
        let id = (
            m.table.to_string(),
            m.variant.to_string(),
            model::in_source_order(parsed.key_pairs(m), &m.key_order),
            m.metric.to_string(),
            m.unit.to_string(),
        );
        rows.entry(id)
            .or_insert((m.direction, Vec::new()))
            .1
            .push(v);
    }
    rows.into_iter()
        .map(
            |((table, variant, key, metric, unit), (direction, values))| MemoryRow {
                table,
                variant,
                key,
                metric,
                unit,
                direction,
                values: vec![median(&values)],
            },
        )
        .collect()
}

/// A recorded output's rows, read as `perfdb ingest` would (detected format).
pub fn read_trial(text: &str) -> Result<TrialRows, ParseError> {
    parse(text, None).map(|(_, p)| trial_rows(&p))
}

/// Recorded trials of both arms, replayed.
pub struct Replay {
    /// Each arm's recorded trials, in the order they are handed out.
    recorded: [Vec<TrialRows>; 2],
    next: [usize; 2],
    /// The measured trials handed out so far (warm-ups are not stored).
    stored: [Vec<TrialRows>; 2],
    opt: Options,
    /// Each trial counts one second.
    clock: f64,
    /// Looks taken, with the report of each.
    pub looks: Vec<(usize, Report)>,
}

impl Replay {
    pub fn new(base: Vec<TrialRows>, head: Vec<TrialRows>, opt: Options) -> Replay {
        Replay {
            recorded: [base, head],
            next: [0, 0],
            stored: [Vec::new(), Vec::new()],
            opt,
            clock: 0.0,
            looks: Vec::new(),
        }
    }

    /// One side's stored trials, as rows holding every trial's value.
    fn side(&self, arm: Arm) -> Vec<MemoryRow> {
        let mut rows: BTreeMap<RowId, MemoryRow> = BTreeMap::new();
        for trial in &self.stored[arm.index()] {
            for r in trial {
                let id = (
                    r.table.clone(),
                    r.variant.clone(),
                    r.key.clone(),
                    r.metric.clone(),
                    r.unit.clone(),
                );
                rows.entry(id)
                    .or_insert_with(|| MemoryRow {
                        values: Vec::new(),
                        ..r.clone()
                    })
                    .values
                    .extend(&r.values);
            }
        }
        rows.into_values().collect()
    }
}

impl Trials for Replay {
    type Error = String;

    fn trial(&mut self, arm: Arm, block: Option<(usize, usize)>) -> Result<Trial, String> {
        let i = arm.index();
        let Some(t) = self.recorded[i].get(self.next[i]) else {
            return Err(format!(
                "the {} arm has no recorded trial {}",
                arm.name(),
                self.next[i] + 1
            ));
        };
        if block.is_some() {
            self.stored[i].push(t.clone());
        }
        self.next[i] += 1;
        self.clock += 1.0;
        Ok(Trial {
            end: TrialEnd::Exited(true),
            log: format!("{}-{}", arm.name(), self.next[i]),
        })
    }

    fn look(&mut self) -> Result<Report, LookError<String>> {
        if self.stored.iter().any(|s| s.is_empty()) {
            return Err(LookError::NothingStored("no trial on one side".into()));
        }
        let r = compare_values(&self.side(Arm::Base), &self.side(Arm::Head), &self.opt)
            .map_err(|e| LookError::Failed(e.to_string()))?;
        self.looks.push((self.stored[0].len(), r.clone()));
        Ok(r)
    }

    fn mean_trial_seconds(&self) -> f64 {
        1.0
    }

    fn elapsed(&self) -> Duration {
        Duration::from_secs_f64(self.clock)
    }

    fn interrupted(&self) -> Option<&'static str> {
        None
    }
}

/// Run `plan` over recorded trials: the last look's report (None when nothing was
/// compared) and the run's record; Err when the rule asked for a trial the recording
/// does not have.
pub fn replay(
    base: Vec<TrialRows>,
    head: Vec<TrialRows>,
    plan: &super::Plan,
    opt: Options,
) -> Result<(Option<Report>, super::Course), String> {
    let mut src = Replay::new(base, head, opt);
    match super::run(plan, &mut src)? {
        super::Outcome::Compared(report, course) => Ok((Some(*report), course)),
        super::Outcome::NothingCompared(course) => Ok((None, course)),
        super::Outcome::FailedFirst(arm, log) => Err(format!("{} failed: {log}", arm.name())),
    }
}
