//! The interleaved trials of `perfdb ab` and of each `perfdb bisect` step: base and head,
//! one process a trial, compared at the planned looks until every row is decided
//! (docs/STATS.md, "Sequential A/B"). Shared by those two commands, not one of them.
//!
//! The experiment (schedule, looks, stop reasons, the report's section) is
//! `perfdb_reports::ab`; this module holds the processes: the arms from the command line
//! ([`arms`]), the GPU's state ([`gpu`]), the trials that run, keep their output and are
//! ingested ([`session`]), and [`experiment`], from flags to a report and exit code.

mod affected;
mod arms;
mod energy;
pub mod environment;
mod gpu;
mod lanes;
mod nvml;
mod profile;
mod session;

use crate::cli::AbArgs;
use crate::commands::judge_options as options;
use crate::process::{self, Echo};
use crate::Exit;
use anyhow::Context;
use arms::Arms;
pub use gpu::GpuTool;
pub use lanes::GpuList;
use perfdb_ingest::devices::Table;
use perfdb_ingest::model::RunMeta;
use perfdb_ingest::warehouse::{Label, Warehouse};
use perfdb_reports::ab::{self as experiment, Arm, Outcome, Plan, Sequential, Stopped};
use perfdb_reports::compare::sequential::{self, Rule};
use perfdb_reports::compare::{Options, Test};
use session::Session;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The comparison each look makes: `compare`'s options with the sequential rule.
fn look_options(a: &AbArgs) -> anyhow::Result<Options> {
    let cfg = perfdb_reports::config::Config::load_or_default(a.judge.config.as_deref())?;
    let opt = options(&cfg, &a.judge, None)?;
    if opt.test == Test::MannWhitney {
        anyhow::bail!("--test mann-whitney: ab's stopping rule is built on t-tests of log values");
    }
    let chosen = a.judge.test;
    let mut opt = sequential::look_options(opt, a.max_trials, Rule::default());
    // The trials' energy is stored either way; judged here only when asked.
    opt.skip_energy = !a.trials.judges_energy();
    // The rule's test unless one is asked for on the command line.
    if let Some(test) = chosen {
        opt.test = test;
    }
    Ok(opt)
}

/// The two labels: given, or `ab-base-SESSION` and `ab-head-SESSION`. One label for both
/// arms only when they are told apart by commit (`by_commit`).
fn labels(a: &AbArgs, session: &str, by_commit: bool) -> anyhow::Result<[String; 2]> {
    let label = |given: &Option<String>, arm: &str, flag: &str| -> anyhow::Result<String> {
        let l = given
            .clone()
            .unwrap_or_else(|| format!("ab-{arm}-{session}"));
        Label::new(&l).map_err(|e| anyhow::anyhow!("{flag} {e}"))?;
        Ok(l)
    };
    let labels = [
        label(&a.label_base, "base", "--label-base")?,
        label(&a.label_head, "head", "--label-head")?,
    ];
    if labels[0] == labels[1] && !(by_commit && a.commit_base != a.commit_head) {
        anyhow::bail!(
            "--label-base and --label-head are both '{}': the arms would pool",
            labels[0]
        );
    }
    Ok(labels)
}

/// The run's trials from the flags, checked in the order they are given; the labels.
fn session(
    root: &Path,
    a: &AbArgs,
    stamp: &str,
    seed: u64,
    by_commit: bool,
    devices: &Arc<Table>,
) -> anyhow::Result<(Session, [String; 2])> {
    let arms = Arms::from_args(a)?;
    let opt = look_options(a)?;
    let format = a.trials.input_format.0;
    let labels = labels(a, stamp, by_commit)?;
    // What each look compares: the labels, or each arm's commit within them (so the
    // trials earlier runs stored of that commit count too).
    let selectors = [(0, &a.commit_base), (1, &a.commit_head)].map(|(i, c)| match c {
        Some(c) if by_commit => format!("{}@{c}", labels[i]),
        _ => labels[i].clone(),
    });
    let logs = a
        .logs
        .clone()
        .unwrap_or_else(|| PathBuf::from("perfdb-ab").join(stamp));
    let mut tags = vec![("ab_session".to_string(), stamp.to_string())];
    if let Some(m) = &a.machine {
        tags.push(("machine".to_string(), m.clone()));
    }
    let gpu = if a.trials.no_gpu_state {
        None
    } else {
        GpuTool::find()
    };
    if gpu.is_none() && !a.trials.no_gpu_state {
        say!("ab: neither nvidia-smi nor amd-smi is on PATH: the GPU's clock and power are not recorded");
    }
    let lanes = match &a.trials.gpus {
        Some(list) => lanes::resolve(list, gpu)?,
        None => Vec::new(),
    };
    // Made once the flags are known good: a refused run leaves no folder behind.
    std::fs::create_dir_all(&logs)
        .with_context(|| format!("cannot create the logs folder {}", logs.display()))?;
    if lanes.len() > 1 {
        say!(
            "ab: blocks on GPUs {} at once, each GPU a block of both arms",
            lanes
                .iter()
                .map(|l| l.index.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if let Some(d) = gpu.and_then(|g| gpu::device_tag(g, a.machine.as_deref(), devices)) {
        tags.push(("device".to_string(), d));
    }
    // What ran underneath: the driver, and each arm's Python versions, read before
    // any trial.
    if let Some(g) = gpu {
        tags.extend(environment::driver(g));
    }
    let meta = |arm: Arm, commit: &Option<String>| {
        let mut tags = tags.clone();
        tags.extend(environment::of_arm(&arms, arm));
        RunMeta {
            label: labels[arm.index()].clone(),
            commit: commit.clone(),
            tags,
            ..Default::default()
        }
    };
    let s = Session {
        metas: [
            meta(Arm::Base, &a.commit_base),
            meta(Arm::Head, &a.commit_head),
        ],
        selectors,
        arms,
        env: Vec::new(),
        python: Vec::new(),
        wh: Warehouse::new(root),
        root: root.to_path_buf(),
        devices: devices.clone(),
        format,
        logs,
        echo: if a.trials.quiet {
            Echo::Quiet
        } else {
            Echo::ToStderr
        },
        gpu,
        seed,
        opt,
        started: Instant::now(),
        last_end: None,
        trial_no: 0,
        durations: Vec::new(),
        perfdb_time: Duration::ZERO,
        clocks: [Vec::new(), Vec::new()],
        throttled: 0,
        trial_timeout: a.trials.trial_timeout,
        budget: a.max_time,
        slowest: None,
        show_progress: std::io::stdout().is_terminal() && std::io::stderr().is_terminal(),
        active: (0..lanes.len()).collect(),
        lane_runs: vec![Vec::new(); lanes.len()],
        lane_blocks: vec![0; lanes.len()],
        lane_readings: vec![Vec::new(); lanes.len()],
        lane_dropped: vec![None; lanes.len()],
        lanes,
    };
    Ok((s, labels))
}

/// One profiled trial per arm after the timed trials decided, its counters joined to the
/// report's changed rows and its cost said in the report.
fn profiled_trials(
    p: &profile::Profiling,
    s: &Session,
    report: &mut perfdb_reports::compare::Report,
) -> anyhow::Result<()> {
    // A profiler replays each kernel many times: a deadline far beyond a trial's.
    let slowest = s.slowest.unwrap_or(60.0);
    let deadline = Duration::from_secs_f64((slowest * 100.0).max(600.0));
    let dirs = [Arm::Base, Arm::Head].map(|arm| s.logs.join(format!("profile-{}", arm.name())));
    let seconds = p.run(s, [&dirs[0], &dirs[1]], deadline)?;
    let db = perfdb_reports::db::Db::open(&s.root, &s.devices)
        .with_context(|| format!("cannot open the warehouse at {}", s.root.display()))?;
    perfdb_reports::compare::counters::attach(&db, report)?;
    let timed: f64 = s.durations.iter().sum();
    report.profiling.push(format!(
        "one profiled trial a side under {}: base {}, head {} (the {} timed trials took {}); its counters are stored, never its time",
        p.name(),
        perfdb_reports::fmt::human_seconds(seconds[0]),
        perfdb_reports::fmt::human_seconds(seconds[1]),
        s.durations.len(),
        perfdb_reports::fmt::human_seconds(timed)
    ));
    Ok(())
}

/// The profiled trials after the verdict: a profiler that fails leaves the verdict
/// standing (a warning says what failed); SIGINT/SIGTERM during it is the experiment's
/// interruption (exit 130), its profile stored nowhere. Returns whether it was
/// interrupted.
fn profile_after_verdict(
    p: &profile::Profiling,
    s: &Session,
    report: &mut perfdb_reports::compare::Report,
) -> bool {
    match profiled_trials(p, s, report) {
        Ok(()) => false,
        Err(e) if e.downcast_ref::<profile::Interrupted>().is_some() => {
            report.warnings.push(format!(
                "profiling stopped: {e}; nothing of it was stored (the verdict above was reached before)"
            ));
            true
        }
        Err(e) => {
            say!("ab: profiling failed after the trials decided: {e:#}");
            report.warnings.push(format!(
                "profiling under {} failed after the trials decided ({e:#}): the verdict stands, without counters",
                p.name()
            ));
            false
        }
    }
}

/// How an experiment ended.
pub enum Ran {
    /// Compared: the last look's report, the run's record and the exit code it earns.
    Compared {
        report: Box<perfdb_reports::compare::Report>,
        seq: Box<Sequential>,
        exit: Exit,
    },
    /// Nothing compared (said on stderr): the exit code, and what happened (a bisect's
    /// skipped step says it).
    NotCompared(Exit, String),
    /// No trial run (`--affected`): every row's identity is the same in both arms, as
    /// said.
    Unchanged(String),
}

/// One experiment as `a` describes it: the trials run, stored and compared (what `perfdb
/// ab` runs, and each step of `perfdb bisect`). Progress and problems go to stderr. With
/// `by_commit` each look compares `LABEL@COMMIT` of each arm, so trials of those commits
/// already stored (by an earlier step) are compared too.
/// `devices`: the command's device table (`Config::device_table`), made once: a bisect
/// runs an experiment a step.
pub fn experiment(
    root: &Path,
    a: &AbArgs,
    by_commit: bool,
    devices: &Arc<Table>,
) -> anyhow::Result<Ran> {
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ").to_string();
    let seed = a.trials.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0)
    });
    let (mut s, labels) = session(root, a, &stamp, seed, by_commit, devices)?;
    if a.trials.judges_energy() {
        energy::helper(&mut s, a.trials.energy_per_call)?;
    }
    let unchanged = match a.affected {
        false => Vec::new(),
        true => match affected::apply(&mut s)? {
            Ok(same) => same,
            Err(ran) => return Ok(ran),
        },
    };
    // The profiler is found before any trial runs.
    let profiling = profile::find(
        a.trials.profile,
        a.trials.profiler.as_deref(),
        a.trials.profile_args.as_deref(),
        &s.arms,
    )?;
    // A cancelled job's SIGINT/SIGTERM stops the running trial with its process group;
    // what was stored stays, and the report says so.
    process::catch_interrupts();
    say!(
        "ab: base `{}`, head `{}`; seed {seed}; labels {} and {}; logs in {}",
        s.arms.describe(Arm::Base),
        s.arms.describe(Arm::Head),
        labels[0],
        labels[1],
        s.logs.display()
    );
    let plan = Plan {
        warmup: a.trials.warmup,
        max_trials: a.max_trials,
        max_time: a.max_time,
        seed,
    };
    let (report, course) = match experiment::run(&plan, &mut s)? {
        Outcome::Compared(report, course) => (report, course),
        Outcome::NothingCompared(course) => {
            let what = format!(
                "{}; {} measured trial(s): not both arms, nothing compared",
                course.cut_trial.as_deref().unwrap_or("stopped"),
                s.durations.len()
            );
            say!("ab: {what}");
            return Ok(Ran::NotCompared(
                if course.stopped == Stopped::Interrupted {
                    Exit::Interrupted
                } else {
                    Exit::Inconclusive
                },
                what,
            ));
        }
        Outcome::FailedFirst(arm, log) => {
            let what = format!(
                "the {} arm's trial failed ({log}) before both arms had a measured trial",
                arm.name()
            );
            say!(
                "error: {what}: stored as a failed run in {}; nothing compared",
                s.metas[arm.index()].label
            );
            return Ok(Ran::NotCompared(
                match arm {
                    Arm::Head => Exit::Regression,
                    Arm::Base => Exit::Inconclusive,
                },
                what,
            ));
        }
    };
    let (stopped, failed) = (course.stopped, course.failed.clone());
    let mut report = report;
    let mut interrupted = stopped == Stopped::Interrupted;
    if let (
        Some(p),
        Stopped::Decided | Stopped::MaxTrials | Stopped::MaxTime | Stopped::Unreliable,
    ) = (&profiling, stopped)
    {
        interrupted |= profile_after_verdict(p, &s, &mut report);
    }
    for row in &unchanged {
        report.warnings.push(format!(
            "not timed: {row}: identity equal in both arms (its compiled kernels and launches)"
        ));
    }
    let mut facts = s.facts(labels);
    facts.offsets_from(&report);
    let seq = Sequential::new(course, &plan, facts);
    let exit = if interrupted {
        Exit::Interrupted
    } else {
        match &failed {
            Some((Arm::Head, _)) => Exit::Regression,
            Some((Arm::Base, _)) => Exit::Inconclusive,
            None => Exit::of(&report),
        }
    };
    Ok(Ran::Compared {
        report,
        seq: Box::new(seq),
        exit,
    })
}
