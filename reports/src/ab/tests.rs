//! The stopping rule against a mock trial source: values drawn in memory (lognormal
//! noise around each row's true time), looks judged by `compare_values`. No process,
//! no warehouse; each test runs in milliseconds.

use super::*;
use crate::compare::sequential::{look_options, Rule};
use crate::compare::{compare_values, MemoryRow, Options};
use crate::stats::SplitMix64;

/// A row the mock measures: its variant and shape, base's true time and head's factor.
struct TrueRow {
    variant: &'static str,
    m: &'static str,
    base_us: f64,
    head_factor: f64,
}

struct Mock {
    rows: Vec<TrueRow>,
    /// Noise as the log's standard deviation.
    noise: f64,
    rng: SplitMix64,
    /// Each arm's stored trials: one value per row each.
    stored: [Vec<Vec<f64>>; 2],
    opt: Options,
    /// Simulated time: every trial takes `trial_secs`.
    clock: f64,
    trial_secs: f64,
    /// The budget, as the binary's trial deadline applies it: a trial that would end
    /// past it is cut.
    budget: Option<f64>,
    /// This arm's nth trial (warm-ups counted) exits with an error.
    fails: Option<(Arm, usize)>,
    /// A signal arrives once this many trials have run.
    signal_after: Option<usize>,
    trials: Vec<(Arm, Option<(usize, usize)>)>,
    looks: usize,
}

impl Mock {
    fn new(rows: Vec<TrueRow>, noise: f64, max_trials: usize) -> Mock {
        let opt = look_options(
            Options {
                control: vec!["torch".to_string()],
                ..Options::default()
            },
            max_trials,
            Rule::default(),
        );
        Mock {
            rows,
            noise,
            rng: SplitMix64::new(7),
            stored: [Vec::new(), Vec::new()],
            opt,
            clock: 0.0,
            trial_secs: 1.0,
            budget: None,
            fails: None,
            signal_after: None,
            trials: Vec::new(),
            looks: 0,
        }
    }

    fn side(&self, arm: Arm) -> Vec<MemoryRow> {
        self.rows
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let values = self.stored[arm.index()].iter().map(|t| t[i]).collect();
                MemoryRow::latency(r.variant, &[("M", r.m)], values)
            })
            .collect()
    }
}

impl Trials for Mock {
    type Error = String;

    fn trial(&mut self, arm: Arm, block: Option<(usize, usize)>) -> Result<Trial, String> {
        self.trials.push((arm, block));
        let log = format!("{:03}-{}.out", self.trials.len(), arm.name());
        if let Some(b) = self.budget {
            if self.clock + self.trial_secs > b {
                self.clock = b;
                return Ok(Trial {
                    end: TrialEnd::OverBudget,
                    log,
                });
            }
        }
        self.clock += self.trial_secs;
        let nth = self.trials.iter().filter(|(a, _)| *a == arm).count();
        if self.fails == Some((arm, nth)) {
            return Ok(Trial {
                end: TrialEnd::Exited(false),
                log,
            });
        }
        if block.is_some() {
            let values = self
                .rows
                .iter()
                .map(|r| {
                    let factor = if arm == Arm::Head { r.head_factor } else { 1.0 };
                    r.base_us * factor * (self.noise * self.rng.normal()).exp()
                })
                .collect();
            self.stored[arm.index()].push(values);
        }
        Ok(Trial {
            end: TrialEnd::Exited(true),
            log,
        })
    }

    fn look(&mut self) -> Result<Report, LookError<String>> {
        self.looks += 1;
        if self.stored.iter().any(|s| s.is_empty()) {
            return Err(LookError::NothingStored("no runs on one side".to_string()));
        }
        let (b, h) = (self.side(Arm::Base), self.side(Arm::Head));
        compare_values(&b, &h, &self.opt).map_err(|e| LookError::Failed(e.to_string()))
    }

    fn mean_trial_seconds(&self) -> f64 {
        if self.stored.iter().all(|s| s.is_empty()) {
            0.0
        } else {
            self.trial_secs
        }
    }

    fn elapsed(&self) -> Duration {
        Duration::from_secs_f64(self.clock)
    }

    fn interrupted(&self) -> Option<&'static str> {
        self.signal_after
            .filter(|n| self.trials.len() >= *n)
            .map(|_| "SIGTERM")
    }
}

fn kernels(head_factor: f64, control_factor: f64) -> Vec<TrueRow> {
    let mut rows: Vec<TrueRow> = ["512", "1024", "2048"]
        .into_iter()
        .map(|m| TrueRow {
            variant: "triton",
            m,
            base_us: 100.0,
            head_factor,
        })
        .collect();
    rows.push(TrueRow {
        variant: "torch",
        m: "512",
        base_us: 80.0,
        head_factor: control_factor,
    });
    rows
}

fn plan(max_trials: usize) -> Plan {
    Plan {
        warmup: 1,
        max_trials,
        max_time: None,
        seed: 42,
    }
}

fn compared(o: Outcome) -> (Report, Course) {
    match o {
        Outcome::Compared(r, c) => (*r, c),
        other => panic!("expected a comparison, got {other:?}"),
    }
}

#[test]
fn stops_at_the_first_look_when_every_row_clears() {
    let mut src = Mock::new(kernels(1.0, 1.0), 0.002, 30);
    let (report, course) = compared(run(&plan(30), &mut src).unwrap());
    assert_eq!(course.stopped, Stopped::Decided);
    assert_eq!(course.looks, vec![4]);
    assert_eq!(course.trials_per_arm, 4);
    // One warm-up a side, then two blocks.
    assert_eq!(src.trials.len(), 2 + 8);
    assert_eq!(course.blocks.len(), 2);
    let states: Vec<_> = report
        .rows
        .iter()
        .filter(|r| !r.control)
        .map(|r| r.state)
        .collect();
    assert_eq!(states, vec![Some(crate::compare::State::Cleared); 3]);
}

#[test]
fn a_real_slowdown_is_decided_a_regression() {
    let mut src = Mock::new(kernels(1.3, 1.0), 0.01, 30);
    let (report, course) = compared(run(&plan(30), &mut src).unwrap());
    assert_eq!(course.stopped, Stopped::Decided);
    assert!(report
        .rows
        .iter()
        .filter(|r| !r.control)
        .all(|r| r.state == Some(crate::compare::State::Regression)));
    assert_eq!(report.verdict, crate::compare::Overall::Regression);
}

#[test]
fn blocks_follow_the_seed_and_each_holds_two_trials_an_arm() {
    let mut src = Mock::new(kernels(1.05, 1.0), 0.03, 8);
    let (_, course) = compared(run(&plan(8), &mut src).unwrap());
    let mut again = Schedule::new(42);
    let expected: Vec<String> = (0..course.blocks.len())
        .map(|_| schedule::letters(&again.next_block()))
        .collect();
    assert_eq!(course.blocks, expected);
    for block in &course.blocks {
        assert!(block == "ABBA" || block == "BAAB", "{block}");
    }
    let measured: Vec<_> = src.trials.iter().filter(|(_, b)| b.is_some()).collect();
    assert_eq!(measured.len(), 4 * course.blocks.len());
}

#[test]
fn undecided_rows_run_to_the_cap_and_the_last_trials_are_looked_at() {
    // +5% at 10% noise with tau 5%: neither cleared nor a regression, and below the 6
    // trials a side from which a row may be called undecidable.
    assert_eq!(Rule::default().undecidable_from(), 6);
    let mut src = Mock::new(kernels(1.05, 1.0), 0.10, 4);
    let (report, course) = compared(run(&plan(4), &mut src).unwrap());
    assert_eq!(course.planned_looks, vec![4]);
    assert_eq!(course.stopped, Stopped::MaxTrials);
    assert_eq!(course.trials_per_arm, 4);
    assert_eq!(course.looks, vec![4]);
    assert!(!undecided(&report).is_empty());
}

use super::schedule::Schedule;

#[test]
fn a_failed_head_trial_ends_the_run_and_what_was_stored_is_compared() {
    let mut src = Mock::new(kernels(1.0, 1.0), 0.03, 30);
    // The warm-up is head's first trial; its fourth is in the second block.
    src.fails = Some((Arm::Head, 4));
    let (_, course) = compared(run(&plan(30), &mut src).unwrap());
    assert_eq!(course.stopped, Stopped::FailedRun);
    assert_eq!(course.failed.as_ref().map(|f| f.0), Some(Arm::Head));
    assert_eq!(course.trials_per_arm, 2);
    // The one whole block was looked at after the run stopped.
    assert_eq!(course.looks, vec![2]);
    assert!(src.looks >= 1);
}

#[test]
fn a_trial_that_fails_before_both_arms_measured_compares_nothing() {
    let mut src = Mock::new(kernels(1.0, 1.0), 0.03, 30);
    src.fails = Some((Arm::Head, 1));
    match run(&plan(30), &mut src).unwrap() {
        Outcome::FailedFirst(arm, log) => {
            assert_eq!(arm, Arm::Head);
            assert_eq!(log, "002-head.out");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn max_time_stops_before_a_block_that_would_end_past_it() {
    let mut src = Mock::new(kernels(1.05, 1.0), 0.03, 30);
    let mut p = plan(30);
    p.warmup = 0;
    p.max_time = Some(Duration::from_secs(10));
    let (_, course) = compared(run(&p, &mut src).unwrap());
    // Blocks of 4 s: after two (8 s) a third would end at 12 s.
    assert_eq!(course.stopped, Stopped::MaxTime);
    assert_eq!(course.trials_per_arm, 4);
    assert_eq!(course.cut_trial, None);
    assert!(src.clock <= 10.0);
}

#[test]
fn a_trial_cut_at_the_budget_is_said_and_the_whole_blocks_compared() {
    // The first trial is slow: the estimate allows a block the budget then cuts.
    let mut src = Mock::new(kernels(1.05, 1.0), 0.03, 30);
    src.budget = Some(6.0);
    let mut p = plan(30);
    p.warmup = 0;
    p.max_time = Some(Duration::from_secs(100));
    let (_, course) = compared(run(&p, &mut src).unwrap());
    assert_eq!(course.stopped, Stopped::MaxTime);
    assert_eq!(course.trials_per_arm, 2);
    let cut = course.cut_trial.expect("the cut trial is described");
    assert!(cut.contains("--max-time budget"), "{cut}");
    assert!(cut.contains("not stored"), "{cut}");
}

#[test]
fn a_control_that_moves_stops_the_run_as_unreliable() {
    let mut src = Mock::new(kernels(1.0, 1.25), 0.002, 30);
    let (report, course) = compared(run(&plan(30), &mut src).unwrap());
    assert_eq!(course.stopped, Stopped::Unreliable);
    assert_eq!(course.looks, vec![4]);
    assert_eq!(report.verdict, crate::compare::Overall::Unreliable);
}

#[test]
fn a_signal_between_trials_stops_before_the_next_block() {
    let mut src = Mock::new(kernels(1.05, 1.0), 0.03, 30);
    src.signal_after = Some(6);
    let (_, course) = compared(run(&plan(30), &mut src).unwrap());
    assert_eq!(course.stopped, Stopped::Interrupted);
    assert_eq!(course.trials_per_arm, 2);
    assert_eq!(
        course.cut_trial.as_deref(),
        Some("SIGTERM received between trials: no trial was running")
    );
}

#[test]
fn a_signal_before_any_measured_trial_compares_nothing() {
    let mut src = Mock::new(kernels(1.0, 1.0), 0.03, 30);
    src.signal_after = Some(0);
    match run(&plan(30), &mut src).unwrap() {
        Outcome::NothingCompared(course) => {
            assert_eq!(course.stopped, Stopped::Interrupted);
            assert_eq!(course.trials_per_arm, 0);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_trial_past_its_deadline_is_a_failed_run() {
    struct Slow(Mock);
    impl Trials for Slow {
        type Error = String;
        fn trial(&mut self, arm: Arm, block: Option<(usize, usize)>) -> Result<Trial, String> {
            let t = self.0.trial(arm, block)?;
            Ok(if block == Some((2, 3)) {
                Trial {
                    end: TrialEnd::TimedOut(60.0),
                    log: t.log,
                }
            } else {
                t
            })
        }
        fn look(&mut self) -> Result<Report, LookError<String>> {
            self.0.look()
        }
        fn mean_trial_seconds(&self) -> f64 {
            self.0.mean_trial_seconds()
        }
        fn elapsed(&self) -> Duration {
            self.0.elapsed()
        }
        fn interrupted(&self) -> Option<&'static str> {
            None
        }
    }
    let mut src = Slow(Mock::new(kernels(1.05, 1.0), 0.03, 30));
    let (_, course) = compared(run(&plan(30), &mut src).unwrap());
    assert_eq!(course.stopped, Stopped::TrialTimeout);
    assert!(course.failed.is_some());
    let cut = course.cut_trial.unwrap();
    assert!(cut.contains("deadline of 60s"), "{cut}");
}

/// The recorded trials of one arm of a sample folder (`trial1.log` ... in order).
fn recorded(dir: &str) -> Vec<super::replay::TrialRows> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../sample-data")
        .join(dir);
    let mut n = 1;
    let mut out = Vec::new();
    while let Ok(text) = std::fs::read_to_string(root.join(format!("trial{n}.log"))) {
        out.push(super::replay::read_trial(&text).expect("a recorded trial reads"));
        n += 1;
    }
    assert!(!out.is_empty(), "no trials under {}", root.display());
    out
}

fn replay_options(max_trials: usize) -> Options {
    look_options(
        Options {
            control: vec!["torch".to_string()],
            ..Options::default()
        },
        max_trials,
        Rule::default(),
    )
}

/// The H200 GEMM sweep's recorded trials, replayed in memory, stop where `perfdb ab`
/// replaying them as processes stops (tests/it/cli_ab.rs): decided, the four slowed
/// shapes flagged, at the same trials a side.
#[test]
fn the_recorded_h200_sweep_replays_as_the_binary_runs_it() {
    let base = recorded("h200-gemm/ab30/aiter/base");
    let head = recorded("h200-gemm/ab30/aiter/head");
    let mut src = super::replay::Replay::new(base, head, replay_options(20));
    let p = Plan {
        warmup: 1,
        max_trials: 20,
        max_time: None,
        seed: 7,
    };
    let (report, course) = compared(run(&p, &mut src).unwrap());
    assert_eq!(course.stopped, Stopped::Decided);
    assert_eq!(course.trials_per_arm, 8);
    let mut regressed: Vec<String> = report
        .rows
        .iter()
        .filter(|r| r.state == Some(crate::compare::State::Regression) && r.metric == "latency")
        .map(|r| r.key_display())
        .collect();
    regressed.sort();
    assert_eq!(
        regressed,
        [
            "M=2048 N=8192 K=8192 dtype=torch.bfloat16",
            "M=256 N=8192 K=8192 dtype=torch.bfloat16",
            "M=4096 N=14336 K=4096 dtype=torch.bfloat16",
            "M=512 N=4096 K=4096 dtype=torch.bfloat16",
        ]
    );
}

/// A/A splits of real trials: each recorded arm of the H200 sweep (30 trials) shuffled
/// and dealt 15 and 15, 100 times an arm, run through the rule: no row may be flagged.
#[test]
fn two_hundred_a_a_splits_of_real_trials_flag_nothing() {
    let mut rng = SplitMix64::new(0xa0a0);
    let mut runs = 0;
    for arm in ["base", "head"] {
        let all = recorded(&format!("h200-gemm/ab30/aiter/{arm}"));
        assert_eq!(all.len(), 30);
        for _ in 0..100 {
            let mut s = all.clone();
            for i in (1..s.len()).rev() {
                s.swap(i, rng.below(i + 1));
            }
            let (b, h) = (s[..15].to_vec(), s[15..].to_vec());
            let mut src = super::replay::Replay::new(b, h, replay_options(14));
            let (report, _) = compared(run(&plan(14), &mut src).unwrap());
            let flagged: Vec<String> = report
                .rows
                .iter()
                .filter(|r| {
                    matches!(
                        r.state,
                        Some(
                            crate::compare::State::Regression | crate::compare::State::Improvement
                        )
                    )
                })
                .map(|r| r.key_display())
                .collect();
            assert!(flagged.is_empty(), "{arm} split {runs}: {flagged:?}");
            runs += 1;
        }
    }
    assert_eq!(runs, 200);
}
