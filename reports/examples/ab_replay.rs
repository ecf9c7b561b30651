//! Replay recorded trials through `perfdb ab`'s rule in memory and print, look by look,
//! the state of every row and why: where a run's trials go.
//!
//!   cargo run -p perfdb-reports --release --example ab_replay -- BASE_DIR HEAD_DIR \
//!       [--seed N] [--max-trials N] [--control NAME] [--split K] [--rule calibrated|union-bound] [--test welch|trimmed|adaptive] [--dump KEY]
//!
//! BASE_DIR and HEAD_DIR hold `trial1.log`, `trial2.log`... (one trial each, in the order
//! they were recorded). `--split K`: an A/A, BASE_DIR's trials dealt round-robin to the
//! two arms after a rotation by K (HEAD_DIR is ignored).

use perfdb_reports::ab::replay::{read_trial, Replay, TrialRows};
use perfdb_reports::ab::{run, Outcome, Plan};
use perfdb_reports::compare::sequential::{look_options, Rule};
use perfdb_reports::compare::Options;
use std::path::Path;

fn recorded(dir: &Path) -> Vec<TrialRows> {
    let mut out = Vec::new();
    for n in 1.. {
        let Ok(text) = std::fs::read_to_string(dir.join(format!("trial{n}.log"))) else {
            break;
        };
        out.push(
            read_trial(&text).unwrap_or_else(|e| panic!("{}: trial{n}.log: {e}", dir.display())),
        );
    }
    out
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let positional: Vec<&String> = args
        .iter()
        .enumerate()
        .filter(|(i, a)| !a.starts_with("--") && (*i == 0 || !args[i - 1].starts_with("--")))
        .map(|(_, a)| a)
        .collect();
    let seed: u64 = flag("--seed").map_or(7, |s| s.parse().expect("--seed N"));
    let max: usize = flag("--max-trials").map_or(20, |s| s.parse().expect("--max-trials N"));
    let rule = match flag("--rule").as_deref() {
        None | Some("calibrated") => Rule::Calibrated,
        Some("union-bound") => Rule::UnionBound,
        Some(other) => panic!("--rule calibrated|union-bound, not {other}"),
    };
    let control = flag("--control").unwrap_or_else(|| "torch".to_string());
    let base = recorded(Path::new(positional[0]));
    let (b, h) = match flag("--split") {
        Some(k) => {
            let k: usize = k.parse().expect("--split K");
            let mut all = base.clone();
            let len = all.len();
            all.rotate_left(k % len);
            let (mut b, mut h) = (Vec::new(), Vec::new());
            for (i, t) in all.into_iter().enumerate() {
                if i % 2 == 0 {
                    b.push(t)
                } else {
                    h.push(t)
                }
            }
            (b, h)
        }
        None => (base, recorded(Path::new(positional[1]))),
    };
    if let Some(pat) = flag("--dump") {
        // Each arm's values of the rows whose key contains PAT, in recorded order.
        for (arm, trials) in [("base", &b), ("head", &h)] {
            let mut rows: std::collections::BTreeMap<String, Vec<f64>> = Default::default();
            for t in trials {
                for r in t.iter().filter(|r| {
                    r.metric == "latency"
                        && format!("{} {:?}", r.variant, r.key).contains(pat.as_str())
                }) {
                    rows.entry(format!("{} {:?}", r.variant, r.key))
                        .or_default()
                        .push(r.values[0]);
                }
            }
            for (k, v) in rows {
                let s: Vec<String> = v.iter().map(|x| format!("{x:.4}")).collect();
                println!("{arm} {k}: {}", s.join(" "));
            }
        }
        return;
    }
    let mut opt = look_options(
        Options {
            control: vec![control],
            ..Options::default()
        },
        max,
        rule,
    );
    match flag("--test").as_deref() {
        None => {}
        Some("welch") => opt.test = perfdb_reports::compare::Test::Welch,
        Some("trimmed") => opt.test = perfdb_reports::compare::Test::Trimmed,
        Some("adaptive") => opt.test = perfdb_reports::compare::Test::Adaptive,
        Some(other) => panic!("--test welch|trimmed|adaptive, not {other}"),
    }
    let mut src = Replay::new(b, h, opt);
    let plan = Plan {
        warmup: 1,
        max_trials: max,
        max_time: None,
        seed,
    };
    let outcome = run(&plan, &mut src).expect("replay");
    for (n, report) in &src.looks {
        println!("look at {n} a side: {:?}", report.verdict);
        for r in report
            .rows
            .iter()
            .filter(|r| !r.control && r.state.is_some())
        {
            println!(
                "  {:<11} {} {} {} {}: {}",
                r.state.map(|s| s.as_str()).unwrap_or(""),
                r.variant,
                r.key_display(),
                r.metric,
                r.ratio
                    .map_or(String::new(), |x| format!("{:+.1}%", (x - 1.0) * 100.0)),
                r.reason
            );
        }
    }
    if let Outcome::Compared(_, course) = outcome {
        println!(
            "stopped: {:?} at {} a side; looks {:?} of {:?}",
            course.stopped, course.trials_per_arm, course.looks, course.planned_looks
        );
    }
}
