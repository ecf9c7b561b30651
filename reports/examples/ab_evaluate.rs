//! `perfdb ab`'s rule against the reference rule of docs/STATS.md, on every recorded
//! replay and on simulated runs: trials a side, verdicts, false flags. The tables of
//! docs/STATS.md ("Sequential A/B: the rule as built") are its output.
//!
//!   cargo run -p perfdb-reports --release --example ab_evaluate -- [--seeds N] [--splits N]
//!
//! Run from the repository root (it reads `sample-data/`).

use perfdb_ingest::model::Direction;
use perfdb_reports::ab::replay::{read_trial, replay, TrialRows};
use perfdb_reports::ab::{Course, Plan};
use perfdb_reports::compare::sequential::{Look, Rule};
use perfdb_reports::compare::{compare_values, MemoryRow, Options, Report, State, Test, Verdict};
use perfdb_reports::stats::SplitMix64;
use std::path::Path;

/// The rules compared: the reference, the calibrated looks with Welch's test, and with
/// Yuen's (what `perfdb ab` runs).
const RULES: [(Rule, Test, &str); 4] = [
    (Rule::UnionBound, Test::Welch, "reference"),
    (Rule::Calibrated, Test::Welch, "calibrated, Welch"),
    (Rule::Calibrated, Test::Trimmed, "calibrated, trimmed"),
    (Rule::Calibrated, Test::Adaptive, "calibrated, adaptive"),
];

fn recorded(dir: &Path) -> Vec<TrialRows> {
    (1..)
        .map_while(|n| std::fs::read_to_string(dir.join(format!("trial{n}.log"))).ok())
        .map(|t| read_trial(&t).expect("a recorded trial reads"))
        .collect()
}

fn options(rule: Rule, test: Test, max: usize, tau: f64) -> Options {
    Options {
        control: vec!["torch".to_string()],
        sequential: Some(Look::new(max, rule)),
        test,
        threshold: tau,
        ..Options::default()
    }
}

/// One run: trials a side, why it stopped, and the latency rows flagged (key, state).
struct Run {
    trials: usize,
    stopped: String,
    flagged: Vec<(String, State)>,
    undecidable: usize,
}

fn run(
    b: Vec<TrialRows>,
    h: Vec<TrialRows>,
    (rule, test, _): (Rule, Test, &str),
    max: usize,
    tau: f64,
    seed: u64,
) -> Run {
    let plan = Plan {
        warmup: 1,
        max_trials: max,
        max_time: None,
        seed,
    };
    match replay(b, h, &plan, options(rule, test, max, tau)) {
        Ok((report, course)) => summarise(report.as_ref(), &course),
        Err(e) => Run {
            trials: usize::MAX,
            stopped: format!("ran out of recorded trials ({e})"),
            flagged: Vec::new(),
            undecidable: 0,
        },
    }
}

fn summarise(report: Option<&Report>, course: &Course) -> Run {
    let rows = report.map(|r| r.rows.as_slice()).unwrap_or(&[]);
    let latency = |r: &&perfdb_reports::compare::Row| !r.control && r.metric == "latency";
    Run {
        trials: course.trials_per_arm,
        stopped: format!("{:?}", course.stopped),
        flagged: rows
            .iter()
            .filter(latency)
            .filter_map(|r| match r.state {
                Some(s @ (State::Regression | State::Improvement)) => {
                    Some((format!("{} {}", r.variant, r.key_display()), s))
                }
                _ => None,
            })
            .collect(),
        undecidable: rows
            .iter()
            .filter(latency)
            .filter(|r| r.state == Some(State::Undecidable))
            .count(),
    }
}

fn flag(args: &[String], name: &str, default: usize) -> usize {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map_or(default, |v| v.parse().expect("a number"))
}

fn shuffled(mut v: Vec<TrialRows>, rng: &mut SplitMix64) -> Vec<TrialRows> {
    for i in (1..v.len()).rev() {
        v.swap(i, rng.below(i + 1));
    }
    v
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let seeds = flag(&args, "--seeds", 2000);
    let splits = flag(&args, "--splits", 100);
    let root = Path::new("sample-data");
    fixed_n(seeds);

    println!("## Recorded replays (tau 5%, alpha 5%, warm-up 1, seed 7)\n");
    println!("| replay | max | trials a side, stop: reference / calibrated, Welch / calibrated, trimmed / calibrated, adaptive | flagged (each rule) |");
    println!("|---|---|---|---|");
    for (name, dir, max) in [
        ("H200 GEMM sweep, 30 a side", "h200-gemm/ab30/aiter", 20),
        ("H200 GEMM sweep, 5 a side", "h200-gemm/ab/aiter", 4),
        ("torch GEMM, K padded by 384", "h200-torch-ab/pad384", 20),
        ("torch GEMM, K padded by 160", "h200-torch-ab/pad160", 20),
    ] {
        let d = root.join(dir);
        let (b, h) = (recorded(&d.join("base")), recorded(&d.join("head")));
        let runs: Vec<Run> = RULES
            .iter()
            .map(|&r| run(b.clone(), h.clone(), r, max, 0.05, 7))
            .collect();
        let cell = |r: &Run| {
            if r.trials == usize::MAX {
                r.stopped.clone()
            } else {
                format!("{}, {}", r.trials, r.stopped)
            }
        };
        let names = |r: &Run| {
            let mut v: Vec<String> = r
                .flagged
                .iter()
                .map(|(k, s)| format!("{k} ({})", s.as_str()))
                .collect();
            v.sort();
            v.join("; ")
        };
        println!(
            "| {name} | {max} | {} | {} |",
            runs.iter().map(cell).collect::<Vec<_>>().join(" / "),
            runs.iter().map(names).collect::<Vec<_>>().join(" / ")
        );
    }

    println!("\n## A/A splits of the recorded arms (30 trials: 15 a side, max 14)\n");
    println!("| arm | splits | rule | rows flagged | trials a side (median, mean) | runs with an undecidable row |");
    println!("|---|---|---|---|---|---|");
    for arm in ["base", "head"] {
        let all = recorded(&root.join("h200-gemm/ab30/aiter").join(arm));
        for rule in RULES {
            let mut rng = SplitMix64::new(0xa0a0);
            let (mut flagged, mut trials, mut undecidable) = (0, Vec::new(), 0);
            for _ in 0..splits {
                let s = shuffled(all.clone(), &mut rng);
                let (b, h) = (s[..15].to_vec(), s[15..].to_vec());
                let r = run(b, h, rule, 14, 0.05, 7);
                flagged += r.flagged.len();
                trials.push(r.trials);
                undecidable += usize::from(r.undecidable > 0);
            }
            println!(
                "| {arm} | {splits} | {} | {flagged} | {} | {undecidable} |",
                rule.2,
                spread(&trials)
            );
        }
    }

    println!("\n## Simulated runs ({seeds} seeds each, max 20)\n");
    println!("| noise | head | tau | rule | runs flagging a null row | detected +7.5% / +10% / +30% | +2% flagged | trials a side (median, mean) | stopped |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for noise in NOISES {
        for (head, tau) in [("A/A", 0.0), ("A/A", 0.05), ("mixed", 0.05)] {
            for rule in RULES {
                let mut s = Sim::default();
                for seed in 0..seeds as u64 {
                    let changes = if head == "A/A" { [0.0; 6] } else { MIXED };
                    let (b, h) = synthetic(noise, &changes, 20, seed);
                    let r = run(b, h, rule, 20, tau, seed);
                    s.add(&r, &changes, tau);
                }
                let stops: Vec<String> = s.stops.iter().map(|(k, n)| format!("{k} {n}")).collect();
                println!(
                    "| {} | {head} | {:.0}% | {} | {:.4} | {} | {} | {} | {} |",
                    noise.name,
                    tau * 100.0,
                    rule.2,
                    s.null_flag_runs as f64 / seeds as f64,
                    if head == "A/A" {
                        "-".to_string()
                    } else {
                        format!(
                            "{:.3} / {:.3} / {:.3}",
                            s.detected[0] as f64 / seeds as f64,
                            s.detected[1] as f64 / seeds as f64,
                            s.detected[2] as f64 / seeds as f64
                        )
                    },
                    if head == "A/A" {
                        "-".to_string()
                    } else {
                        format!("{:.3}", s.small_flagged as f64 / seeds as f64)
                    },
                    spread(&s.trials),
                    stops.join(", ")
                );
            }
        }
    }
}

/// `compare` at a fixed n: how often a row is reported beyond 5%, by its point estimate
/// (a significant row whose median passes tau: the rule before) and by its test against
/// the margin (the rule now; the rest are `size unknown`).
fn fixed_n(seeds: usize) {
    println!("\n## compare at fixed n: rows reported as regressions beyond 5% ({seeds} seeds)\n");
    println!("| noise | true change | n a side | point estimate (before) | test against the margin (now) |");
    println!("|---|---|---|---|---|");
    for sigma in [0.01, 0.03] {
        for change in [0.02, 0.075] {
            for n in [3, 5, 10] {
                let (mut before, mut now) = (0, 0);
                for seed in 0..seeds as u64 {
                    let mut rng = SplitMix64::new(seed ^ 0x3a11);
                    let mut side = |level: f64| -> Vec<MemoryRow> {
                        let v = (0..n)
                            .map(|_| level * (sigma * rng.normal()).exp())
                            .collect();
                        vec![MemoryRow::latency("triton", &[("M", "16")], v)]
                    };
                    let (b, h) = (side(20.0), side(20.0 * (1.0 + change)));
                    let r = compare_values(&b, &h, &Options::default()).expect("compares");
                    let v = r.rows[0].verdict;
                    now += usize::from(v == Verdict::Regression);
                    before += usize::from(matches!(v, Verdict::Regression | Verdict::SizeUnknown));
                }
                println!(
                    "| {:.0}% | +{:.1}% | {n} | {:.3} | {:.3} |",
                    sigma * 100.0,
                    change * 100.0,
                    before as f64 / seeds as f64,
                    now as f64 / seeds as f64
                );
            }
        }
    }
}

fn spread(v: &[usize]) -> String {
    let mut s: Vec<usize> = v.iter().copied().filter(|&t| t != usize::MAX).collect();
    s.sort();
    if s.is_empty() {
        return "-".into();
    }
    let mean = s.iter().sum::<usize>() as f64 / s.len() as f64;
    format!("{}, {mean:.1}", s[s.len() / 2])
}

/// The mixed head's true changes, row by row: two null rows, +2%, +7.5%, +10%, +30%.
const MIXED: [f64; 6] = [0.0, 0.0, 0.02, 0.075, 0.10, 0.30];

#[derive(Default)]
struct Sim {
    null_flag_runs: usize,
    detected: [usize; 3],
    small_flagged: usize,
    trials: Vec<usize>,
    stops: std::collections::BTreeMap<String, usize>,
}

impl Sim {
    fn add(&mut self, r: &Run, changes: &[f64; 6], tau: f64) {
        self.trials.push(r.trials);
        *self.stops.entry(r.stopped.clone()).or_default() += 1;
        let flagged = |i: usize| {
            r.flagged
                .iter()
                .any(|(k, _)| k.ends_with(&format!("row={i}")))
        };
        let null = (0..6).any(|i| changes[i].abs() <= tau && changes[i] != 0.02 && flagged(i));
        self.null_flag_runs += usize::from(null);
        for (j, i) in [3, 4, 5].into_iter().enumerate() {
            self.detected[j] += usize::from(flagged(i));
        }
        self.small_flagged += usize::from(changes[2] > 0.0 && flagged(2));
    }
}

/// How one trial's value of a row is drawn.
#[derive(Clone, Copy)]
struct Noise {
    name: &'static str,
    sigma: f64,
    /// One trial in `outlier_every` slowed by 10-70% (0: never).
    outlier_every: usize,
    /// Slowdown per trial a side (both arms drift together: the blocks interleave them).
    drift: f64,
    /// Probability of a trial in a slow mode 30% slower (a short kernel's two speeds).
    bimodal: f64,
}

const NOISES: [Noise; 5] = [
    Noise {
        name: "lognormal 1%",
        sigma: 0.01,
        outlier_every: 0,
        drift: 0.0,
        bimodal: 0.0,
    },
    Noise {
        name: "lognormal 3%",
        sigma: 0.03,
        outlier_every: 0,
        drift: 0.0,
        bimodal: 0.0,
    },
    Noise {
        name: "1%, one trial in 8 slowed 10-70%",
        sigma: 0.01,
        outlier_every: 8,
        drift: 0.0,
        bimodal: 0.0,
    },
    Noise {
        name: "1%, drift +0.2% a trial",
        sigma: 0.01,
        outlier_every: 0,
        drift: 0.002,
        bimodal: 0.0,
    },
    Noise {
        name: "1%, 30% of trials in a mode 30% slower",
        sigma: 0.01,
        outlier_every: 0,
        drift: 0.0,
        bimodal: 0.3,
    },
];

/// `n + 1` trials a side (the first is the warm-up) of six rows with `changes` on head,
/// and a torch control row.
fn synthetic(
    noise: Noise,
    changes: &[f64; 6],
    n: usize,
    seed: u64,
) -> (Vec<TrialRows>, Vec<TrialRows>) {
    let mut rng = SplitMix64::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x51);
    let value = |base: f64, i: usize, rng: &mut SplitMix64| {
        let mut v = base * (noise.sigma * rng.normal()).exp() * (1.0 + noise.drift * i as f64);
        if noise.outlier_every > 0 && rng.below(noise.outlier_every) == 0 {
            v *= 1.1 + 0.6 * rng.uniform();
        }
        if noise.bimodal > 0.0 && rng.uniform() < noise.bimodal {
            v *= 1.3;
        }
        v
    };
    let mut arms = (Vec::new(), Vec::new());
    for i in 0..=n {
        let trial = |change: Option<&[f64; 6]>, rng: &mut SplitMix64| -> TrialRows {
            let mut rows: Vec<MemoryRow> = (0..6)
                .map(|r| {
                    let level = 20.0 * (1.0 + r as f64) * change.map_or(1.0, |c| 1.0 + c[r]);
                    MemoryRow::latency(
                        "triton",
                        &[("row", &r.to_string())],
                        vec![value(level, i, rng)],
                    )
                })
                .collect();
            // The control shares the machine's noise and drift, not a kernel's own
            // outliers or modes (on the H200 sweep torch stayed put while triton jumped).
            let control =
                50.0 * (noise.sigma * rng.normal()).exp() * (1.0 + noise.drift * i as f64);
            rows.push(MemoryRow::latency(
                "torch",
                &[("row", "control")],
                vec![control],
            ));
            for r in &mut rows {
                r.direction = Direction::Lower;
            }
            rows
        };
        arms.0.push(trial(None, &mut rng));
        arms.1.push(trial(Some(changes), &mut rng));
    }
    arms
}
