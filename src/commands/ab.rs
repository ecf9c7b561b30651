//! `perfdb ab`: run base and head interleaved, one process a trial, compare at the
//! planned looks and stop once every row is decided (docs/STATS.md, "Sequential A/B").
//!
//! The steps: the arms from the command line ([`Arms`]); the schedule (warm-up runs,
//! then blocks of four, ABBA or BAAB from the seed); each trial ([`Session::trial`]:
//! the GPU's state before and after, the output kept in the logs folder and ingested
//! as one run with its tags); a look ([`Session::look`]: `compare` with the sequential
//! rule); and the report, `compare`'s plus the run's own section.

use super::child::{self, Echo, Ended};
use super::compare::{exit_of, options, render};
use super::run::shell_word;
use crate::cli::{AbArgs, CompareFormat};
use crate::Exit;
use anyhow::Context;
use perfdb_ingest::formats::gpu_state::{self, GpuState};
use perfdb_ingest::formats::Format;
use perfdb_ingest::model::{metric, RunMeta};
use perfdb_ingest::warehouse::{Label, Warehouse};
use perfdb_reports::compare::sequential::{planned_looks, Look};
use perfdb_reports::compare::State;
use perfdb_reports::compare::{compare, Options, Report, Test};
use perfdb_reports::db::Db;
use perfdb_reports::stats::SplitMix64;
use serde::Serialize;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum Arm {
    Base,
    Head,
}

impl Arm {
    fn name(self) -> &'static str {
        match self {
            Arm::Base => "base",
            Arm::Head => "head",
        }
    }
    fn letter(self) -> char {
        match self {
            Arm::Base => 'A',
            Arm::Head => 'B',
        }
    }
}

/// How each arm's trial is started: two shell commands, one command in two
/// directories, or one command with two environments.
enum Arms {
    Shell([String; 2]),
    Dirs([PathBuf; 2], Vec<String>),
    Envs([Vec<(String, String)>; 2], Vec<String>),
}

impl Arms {
    fn from_args(a: &AbArgs) -> anyhow::Result<Arms> {
        let needs_command = |form: &str| -> anyhow::Result<Vec<String>> {
            if a.command.is_empty() {
                anyhow::bail!("{form} runs the command given after `--` (e.g. -- python bench.py)");
            }
            Ok(a.command.clone())
        };
        match (&a.base, &a.head, &a.base_dir, &a.head_dir) {
            (Some(b), Some(h), None, None) => {
                if !a.command.is_empty() || !a.base_env.is_empty() || !a.head_env.is_empty() {
                    anyhow::bail!(
                        "--base/--head are whole shell commands: give no command after `--` and no --base-env/--head-env"
                    );
                }
                Ok(Arms::Shell([b.clone(), h.clone()]))
            }
            (None, None, Some(b), Some(h)) => {
                for d in [b, h] {
                    if !d.is_dir() {
                        anyhow::bail!("--base-dir/--head-dir {}: not a directory", d.display());
                    }
                }
                Ok(Arms::Dirs(
                    [b.clone(), h.clone()],
                    needs_command("--base-dir/--head-dir")?,
                ))
            }
            (None, None, None, None) if !a.base_env.is_empty() || !a.head_env.is_empty() => {
                Ok(Arms::Envs(
                    [
                        super::parse_pairs(&a.base_env, "--base-env")?,
                        super::parse_pairs(&a.head_env, "--head-env")?,
                    ],
                    needs_command("--base-env/--head-env")?,
                ))
            }
            _ => anyhow::bail!(
                "give the arms one way: --base CMD --head CMD, or --base-dir DIR --head-dir DIR -- CMD, or --base-env K=V --head-env K=V -- CMD"
            ),
        }
    }

    fn index(arm: Arm) -> usize {
        match arm {
            Arm::Base => 0,
            Arm::Head => 1,
        }
    }

    fn command(&self, arm: Arm) -> Command {
        let i = Arms::index(arm);
        match self {
            Arms::Shell(c) => {
                let mut cmd = Command::new("sh");
                cmd.arg("-c").arg(&c[i]);
                cmd
            }
            Arms::Dirs(d, argv) => {
                let mut cmd = Command::new(&argv[0]);
                cmd.args(&argv[1..]).current_dir(&d[i]);
                cmd
            }
            Arms::Envs(e, argv) => {
                let mut cmd = Command::new(&argv[0]);
                cmd.args(&argv[1..]).envs(e[i].iter().cloned());
                cmd
            }
        }
    }

    /// The arm's command as a person would type it.
    fn describe(&self, arm: Arm) -> String {
        let i = Arms::index(arm);
        let words = |argv: &[String]| {
            argv.iter()
                .map(|w| shell_word(w))
                .collect::<Vec<_>>()
                .join(" ")
        };
        match self {
            Arms::Shell(c) => c[i].clone(),
            Arms::Dirs(d, argv) => format!(
                "(cd {} && {})",
                shell_word(&d[i].to_string_lossy()),
                words(argv)
            ),
            Arms::Envs(e, argv) => {
                let env: Vec<String> = e[i]
                    .iter()
                    .map(|(k, v)| shell_word(&format!("{k}={v}")))
                    .collect();
                format!("{} {}", env.join(" "), words(argv))
            }
        }
    }
}

/// The GPU query tool on PATH, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GpuTool {
    NvidiaSmi,
    AmdSmi,
}

impl GpuTool {
    fn find() -> Option<GpuTool> {
        let path = std::env::var_os("PATH")?;
        let on_path = |name: &str| std::env::split_paths(&path).any(|d| d.join(name).is_file());
        if on_path("nvidia-smi") {
            Some(GpuTool::NvidiaSmi)
        } else if on_path("amd-smi") {
            Some(GpuTool::AmdSmi)
        } else {
            None
        }
    }

    fn name(self) -> &'static str {
        match self {
            GpuTool::NvidiaSmi => "nvidia-smi",
            GpuTool::AmdSmi => "amd-smi",
        }
    }

    /// The GPU the benchmark sees first: the first entry of CUDA_VISIBLE_DEVICES /
    /// HIP_VISIBLE_DEVICES when it is a number, else 0.
    fn device() -> String {
        [
            "CUDA_VISIBLE_DEVICES",
            "HIP_VISIBLE_DEVICES",
            "ROCR_VISIBLE_DEVICES",
        ]
        .iter()
        .filter_map(|k| std::env::var(k).ok())
        .filter_map(|v| v.split(',').next().map(|s| s.trim().to_string()))
        .find(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit()))
        .unwrap_or_else(|| "0".to_string())
    }

    /// One reading, or why there is none.
    fn query(self) -> Result<GpuState, String> {
        let dev = GpuTool::device();
        let out = match self {
            GpuTool::NvidiaSmi => Command::new("nvidia-smi")
                .args(gpu_state::NVIDIA_SMI_ARGS)
                .args(["-i", &dev])
                .output(),
            GpuTool::AmdSmi => Command::new("amd-smi")
                .args(["metric", "--json", "-g", &dev])
                .output(),
        }
        .map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!(
                "exited with {}: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let parsed = match self {
            GpuTool::NvidiaSmi => gpu_state::parse_nvidia_smi(&text),
            GpuTool::AmdSmi => gpu_state::parse_amd_smi(&text),
        }?;
        parsed
            .into_iter()
            .next()
            .ok_or_else(|| "printed no GPU".to_string())
    }
}

/// Why the run stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
enum Stopped {
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

/// The run's own section of the report (`sequential` in JSON).
#[derive(Debug, Serialize)]
struct Sequential {
    trials_per_arm: usize,
    /// Trials a side at each look taken.
    looks: Vec<usize>,
    planned_looks: Vec<usize>,
    stopped: Stopped,
    seed: u64,
    /// Block orientations in order (`ABBA`, `BAAB`; A = base).
    blocks: Vec<String>,
    warmup: usize,
    labels: [String; 2],
    logs: String,
    seconds: f64,
    /// Mean seconds of perfdb's own work per trial (ingest and looks), not the command's.
    perfdb_seconds_per_trial: f64,
    /// `nvidia-smi`, `amd-smi`, or null when neither was on PATH.
    gpu_tool: Option<&'static str>,
    /// Mean GPU clock over each arm's readings (MHz), when the tool reported one.
    mean_clock_mhz: [Option<f64>; 2],
    throttled_trials: usize,
    /// A failed trial that ended the run: arm and log file.
    failed: Option<(Arm, String)>,
    /// A trial stopped before it ended (deadline, budget, signal): what happened to it.
    cut_trial: Option<String>,
    /// Measured trials stored, both arms together.
    trials_stored: usize,
}

struct Session {
    arms: Arms,
    wh: Warehouse,
    root: PathBuf,
    format: Option<Format>,
    metas: [RunMeta; 2],
    logs: PathBuf,
    echo: Echo,
    gpu: Option<GpuTool>,
    seed: u64,
    started: Instant,
    last_end: Option<Instant>,
    trial_no: usize,
    /// Seconds each measured trial's command took.
    durations: Vec<f64>,
    perfdb_time: Duration,
    clocks: [Vec<f64>; 2],
    throttled: usize,
    /// `--trial-timeout`, when given.
    trial_timeout: Option<Duration>,
    /// `--max-time`, when given.
    budget: Option<Duration>,
    /// Seconds of the slowest trial that ended by itself: the default deadline's base.
    slowest: Option<f64>,
}

/// What one trial did.
struct Trial {
    ok: bool,
    log: String,
    end: TrialEnd,
}

/// How a trial ended.
#[derive(Debug, Clone, Copy, PartialEq)]
enum TrialEnd {
    /// Its command exited (ok or not).
    Exited,
    /// Killed at its deadline (seconds): stored as a failed run.
    TimedOut(f64),
    /// Stopped at the `--max-time` budget: not stored.
    OverBudget,
    /// Stopped by SIGINT/SIGTERM: not stored.
    Interrupted(i32),
}

/// The default trial deadline: ten times the slowest trial so far, at least a minute.
pub const DEADLINE_FACTOR: f64 = 10.0;
pub const MIN_DEADLINE: Duration = Duration::from_secs(60);

/// The deadline of a trial without `--trial-timeout`: from the slowest trial that
/// ended by itself (the warm-up's first), none before one has.
fn default_timeout(slowest: Option<f64>) -> Option<Duration> {
    slowest.map(|s| Duration::from_secs_f64(s * DEADLINE_FACTOR).max(MIN_DEADLINE))
}

impl Session {
    /// Run one trial of `arm`; a measured one (`block` given: its number and the
    /// position in it) is ingested as one run.
    fn trial(&mut self, arm: Arm, block: Option<(usize, usize)>) -> anyhow::Result<Trial> {
        self.trial_no += 1;
        let what = match block {
            Some(_) => format!("{:03}-{}", self.trial_no, arm.name()),
            None => format!("warmup-{:03}-{}", self.trial_no, arm.name()),
        };
        let before = self.gpu.map(|g| g.query());
        let start = Instant::now();
        let started_at = chrono::Utc::now();
        let since_previous = self.last_end.map(|t| start.duration_since(t).as_secs_f64());
        let described = self.arms.describe(arm);
        let mut cmd = self.arms.command(arm);
        // The trial's deadline: its own, or the budget's end, whichever is first.
        let timeout = self.trial_timeout.or_else(|| default_timeout(self.slowest));
        let by_timeout = timeout.map(|t| start + t);
        let by_budget = self.budget.map(|b| self.started + b);
        let deadline = match (by_timeout, by_budget) {
            (Some(t), Some(b)) => Some(t.min(b)),
            (t, b) => t.or(b),
        };
        let out = child::run(&mut cmd, self.echo, deadline)
            .with_context(|| format!("cannot run the {} arm: `{described}`", arm.name()))?;
        let end_how = match out.ended {
            Ended::Exited => TrialEnd::Exited,
            Ended::Interrupted(sig) => TrialEnd::Interrupted(sig),
            Ended::Deadline if by_budget.is_some_and(|b| by_timeout.is_none_or(|t| b <= t)) => {
                TrialEnd::OverBudget
            }
            Ended::Deadline => TrialEnd::TimedOut(timeout.unwrap_or_default().as_secs_f64()),
        };
        // The trial ends when its command does, not when its output closes.
        let end = out.exited_at;
        self.last_end = Some(end);
        let seconds = end.duration_since(start).as_secs_f64();
        let after = self.gpu.map(|g| g.query());
        let perfdb_start = Instant::now();
        let out_path = self.logs.join(format!("{what}.out"));
        std::fs::write(&out_path, &out.stdout)
            .and_then(|_| std::fs::write(self.logs.join(format!("{what}.log")), &out.merged))
            .with_context(|| {
                format!(
                    "cannot write the trial's output under {}",
                    self.logs.display()
                )
            })?;
        let log = out_path.to_string_lossy().into_owned();
        // Stopped by the budget or a signal: kept in the logs folder, never stored (a
        // cut output would read as a trial).
        if matches!(end_how, TrialEnd::OverBudget | TrialEnd::Interrupted(_)) {
            self.perfdb_time += perfdb_start.elapsed();
            return Ok(Trial {
                ok: false,
                log,
                end: end_how,
            });
        }
        let ok = out.status.success() && end_how == TrialEnd::Exited;
        if ok {
            self.slowest = Some(self.slowest.map_or(seconds, |s| s.max(seconds)));
        }
        let failed = match end_how {
            TrialEnd::TimedOut(t) => Some(format!(
                "killed at its deadline of {} with every process it started (--trial-timeout)",
                human(t)
            )),
            _ if !ok => Some(match out.status.code() {
                Some(c) => format!("command exited with code {c}"),
                None => "command was killed by a signal".to_string(),
            }),
            _ => None,
        };
        let mut tags = self.base_tags(
            arm,
            &described,
            &started_at,
            seconds,
            since_previous,
            &out.status,
            block,
        );
        if let Some(note) = &out.after_exit {
            eprintln!("ab: the {} arm's trial ({log}): {note}", arm.name());
            tags.push(("output_after_exit".into(), note.clone()));
        }
        if block.is_none() {
            if !ok {
                // A warm-up that fails is stored as a failed run like any trial: the
                // arm does not run.
                self.store(arm, &out.stdout, &log, tags, failed)?;
            }
            self.perfdb_time += perfdb_start.elapsed();
            return Ok(Trial {
                ok,
                log,
                end: end_how,
            });
        }
        self.durations.push(seconds);
        for (reading, when) in [(before, "before"), (after, "after")] {
            match reading {
                Some(Ok(g)) => {
                    if let Some(c) = g.clock_mhz {
                        self.clocks[Arms::index(arm)].push(c);
                    }
                    if g.throttled() && when == "after" {
                        self.throttled += 1;
                    }
                    tags.extend(g.tags(when));
                }
                Some(Err(e)) => tags.push((format!("gpu_error_{when}"), e)),
                None => {}
            }
        }
        self.store(arm, &out.stdout, &log, tags, failed)?;
        self.perfdb_time += perfdb_start.elapsed();
        Ok(Trial {
            ok,
            log,
            end: end_how,
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn base_tags(
        &self,
        arm: Arm,
        command: &str,
        started_at: &chrono::DateTime<chrono::Utc>,
        seconds: f64,
        since_previous: Option<f64>,
        status: &std::process::ExitStatus,
        block: Option<(usize, usize)>,
    ) -> Vec<(String, String)> {
        let mut t = self.metas[Arms::index(arm)].tags.clone();
        t.push(("arm".into(), arm.name().into()));
        if let Some((b, p)) = block {
            t.push(("block".into(), b.to_string()));
            t.push(("block_position".into(), p.to_string()));
        } else {
            t.push(("warmup".into(), "true".into()));
        }
        t.push(("ab_seed".into(), self.seed.to_string()));
        t.push((
            "started_at".into(),
            started_at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        ));
        t.push(("duration_s".into(), format!("{seconds:.3}")));
        t.push((
            "exit_code".into(),
            status
                .code()
                .map_or_else(|| "signal".to_string(), |c| c.to_string()),
        ));
        if let Some(s) = since_previous {
            t.push(("since_previous_s".into(), format!("{s:.3}")));
        }
        t.push(("command".into(), command.to_string()));
        t
    }

    fn store(
        &self,
        arm: Arm,
        stdout: &[u8],
        log: &str,
        tags: Vec<(String, String)>,
        failed: Option<String>,
    ) -> anyhow::Result<()> {
        let meta = RunMeta {
            tags,
            failed,
            ..self.metas[Arms::index(arm)].clone()
        };
        let reports = perfdb_ingest::ingest_bytes(&self.wh, log, stdout, self.format, &meta)
            .with_context(|| format!("cannot write the warehouse at {}", self.root.display()))?;
        for r in &reports {
            if let Err(e) = &r.result {
                // A trial whose output perfdb cannot read decides nothing: stop and say
                // which, with the file kept to read.
                anyhow::bail!(
                    "the {} arm's trial could not be ingested: {e} (its output is kept in {log}; --input-format forces a format)",
                    arm.name()
                );
            }
        }
        Ok(())
    }

    fn look(&self, opt: &Options) -> anyhow::Result<Report> {
        let db = Db::open(&self.root)
            .with_context(|| format!("cannot open the warehouse at {}", self.root.display()))?;
        Ok(compare(
            &db,
            &self.metas[0].label,
            &self.metas[1].label,
            opt,
        )?)
    }

    fn mean_trial(&self) -> f64 {
        if self.durations.is_empty() {
            0.0
        } else {
            self.durations.iter().sum::<f64>() / self.durations.len() as f64
        }
    }
}

/// Rows that keep the run going: undecided, not a tail metric, not the control.
fn undecided(report: &Report) -> Vec<&perfdb_reports::compare::Row> {
    report
        .rows
        .iter()
        .filter(|r| !r.control && r.state == Some(State::Undecided) && !metric::is_tail(&r.metric))
        .collect()
}

fn decided_count(report: &Report) -> (usize, usize) {
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

fn pct(x: f64) -> String {
    format!("{:+.1}%", x * 100.0)
}

fn progress(s: &Session, n: usize, max: usize, last: Option<&Report>) -> String {
    let mut line = format!("ab: {n} base / {n} head trial(s) of at most {max}");
    if let Some(r) = last {
        let (done, all) = decided_count(r);
        line.push_str(&format!("; {done} of {all} row(s) decided"));
        let open = undecided(r);
        for u in open.iter().take(3) {
            let ci = u
                .ratio_ci
                .map(|(a, b)| format!(" [{}, {}]", pct(a - 1.0), pct(b - 1.0)))
                .unwrap_or_default();
            line.push_str(&format!(
                "; {} {} {} {}{ci}",
                u.variant,
                u.key_display(),
                u.metric,
                u.ratio.map(|x| pct(x - 1.0)).unwrap_or_default()
            ));
        }
        if open.len() > 3 {
            line.push_str(&format!("; {} more undecided", open.len() - 3));
        }
    }
    let left = 2.0 * (max - n) as f64 * s.mean_trial();
    if left > 0.0 {
        line.push_str(&format!("; at most ~{} left", human(left)));
    }
    line
}

fn human(secs: f64) -> String {
    if secs < 90.0 {
        format!("{secs:.0}s")
    } else if secs < 5400.0 {
        format!("{:.0}m{:02.0}s", (secs / 60.0).floor(), secs % 60.0)
    } else {
        format!("{:.1}h", secs / 3600.0)
    }
}

pub fn run(root: &Path, a: AbArgs) -> anyhow::Result<Exit> {
    let arms = Arms::from_args(&a)?;
    let mut opt = options(&a.judge, None)?;
    if opt.test != Test::Welch {
        anyhow::bail!(
            "--test mann-whitney: ab's stopping rule is built on Welch's test on log values"
        );
    }
    let planned = planned_looks(a.max_trials);
    opt.sequential = Some(Look {
        looks: planned.len(),
        max_trials: a.max_trials,
    });
    let format: Option<Format> = match a.input_format.as_str() {
        "auto" => None,
        f => Some(
            f.parse()
                .map_err(|e| anyhow::anyhow!("--input-format {e}"))?,
        ),
    };
    let session = chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ").to_string();
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
    if labels[0] == labels[1] {
        anyhow::bail!(
            "--label-base and --label-head are both '{}': the arms would pool",
            labels[0]
        );
    }
    let seed = a.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0)
    });
    let logs = a
        .logs
        .clone()
        .unwrap_or_else(|| PathBuf::from("perfdb-ab").join(&session));
    std::fs::create_dir_all(&logs)
        .with_context(|| format!("cannot create the logs folder {}", logs.display()))?;
    let mut tags = vec![("ab_session".to_string(), session.clone())];
    if let Some(m) = &a.machine {
        tags.push(("machine".to_string(), m.clone()));
    }
    let meta = |arm: usize, commit: &Option<String>| RunMeta {
        label: labels[arm].clone(),
        commit: commit.clone(),
        tags: tags.clone(),
        ..Default::default()
    };
    let gpu = if a.no_gpu_state {
        None
    } else {
        GpuTool::find()
    };
    if gpu.is_none() && !a.no_gpu_state {
        eprintln!("ab: neither nvidia-smi nor amd-smi is on PATH: the GPU's clock and power are not recorded");
    }
    let mut s = Session {
        metas: [meta(0, &a.commit_base), meta(1, &a.commit_head)],
        arms,
        wh: Warehouse::new(root),
        root: root.to_path_buf(),
        format,
        logs,
        echo: if a.quiet { Echo::Quiet } else { Echo::ToStderr },
        gpu,
        seed,
        started: Instant::now(),
        last_end: None,
        trial_no: 0,
        durations: Vec::new(),
        perfdb_time: Duration::ZERO,
        clocks: [Vec::new(), Vec::new()],
        throttled: 0,
        trial_timeout: a.trial_timeout,
        budget: a.max_time,
        slowest: None,
    };
    // A cancelled job's SIGINT/SIGTERM stops the running trial with its process group;
    // what was stored stays, and the report says so.
    child::catch_interrupts();
    eprintln!(
        "ab: base `{}`, head `{}`; seed {seed}; labels {} and {}; logs in {}",
        s.arms.describe(Arm::Base),
        s.arms.describe(Arm::Head),
        labels[0],
        labels[1],
        s.logs.display()
    );
    let show_progress = std::io::stdout().is_terminal() && std::io::stderr().is_terminal();
    let mut failed: Option<(Arm, String)> = None;
    let mut cut_trial: Option<String> = None;
    let mut stopped = Stopped::MaxTrials;
    // Why a trial ended the run, if one did: the stop, the failed arm and log, and what
    // to say of the trial.
    type EndOfRun = (Stopped, Option<(Arm, String)>, Option<String>);
    let ended_run = |t: &Trial, arm: Arm| -> Option<EndOfRun> {
        match t.end {
            TrialEnd::Exited if t.ok => None,
            TrialEnd::Exited => Some((Stopped::FailedRun, Some((arm, t.log.clone())), None)),
            TrialEnd::TimedOut(secs) => Some((
                Stopped::TrialTimeout,
                Some((arm, t.log.clone())),
                Some(format!(
                    "a {} trial passed its deadline of {} and was killed with every process it started; stored as a failed run ({})",
                    arm.name(),
                    human(secs),
                    t.log
                )),
            )),
            TrialEnd::OverBudget => Some((
                Stopped::MaxTime,
                None,
                Some(format!(
                    "the {} trial running at the --max-time budget was stopped with every process it started, not stored ({})",
                    arm.name(),
                    t.log
                )),
            )),
            TrialEnd::Interrupted(sig) => Some((
                Stopped::Interrupted,
                None,
                Some(format!(
                    "{} received: the {} trial running was stopped with every process it started, not stored ({})",
                    child::signal_name(sig),
                    arm.name(),
                    t.log
                )),
            )),
        }
    };
    let mut ended = false;
    'warm: for _ in 0..a.warmup {
        for arm in [Arm::Base, Arm::Head] {
            let t = s.trial(arm, None)?;
            if let Some((why, f, cut)) = ended_run(&t, arm) {
                (stopped, failed, cut_trial, ended) = (why, f, cut, true);
                break 'warm;
            }
        }
    }
    let mut rng = SplitMix64::new(seed);
    let mut n = 0usize;
    let mut blocks: Vec<String> = Vec::new();
    let mut looks_taken: Vec<usize> = Vec::new();
    let mut last: Option<Report> = None;
    let mut next_look = 0;
    while !ended && n < a.max_trials {
        if let Some(sig) = child::interrupted() {
            stopped = Stopped::Interrupted;
            cut_trial = Some(format!(
                "{} received between trials: no trial was running",
                child::signal_name(sig)
            ));
            break;
        }
        if let Some(budget) = a.max_time {
            let block = Duration::from_secs_f64(4.0 * s.mean_trial());
            if n > 0 && s.started.elapsed() + block > budget {
                stopped = Stopped::MaxTime;
                break;
            }
        }
        let order = if rng.next_u64() & 1 == 0 {
            [Arm::Base, Arm::Head, Arm::Head, Arm::Base]
        } else {
            [Arm::Head, Arm::Base, Arm::Base, Arm::Head]
        };
        let block_no = blocks.len() + 1;
        blocks.push(order.iter().map(|a| a.letter()).collect());
        for (pos, arm) in order.into_iter().enumerate() {
            let t = s.trial(arm, Some((block_no, pos + 1)))?;
            if let Some((why, f, cut)) = ended_run(&t, arm) {
                (stopped, failed, cut_trial, ended) = (why, f, cut, true);
                break;
            }
        }
        if ended {
            break;
        }
        n += 2;
        if next_look < planned.len() && n >= planned[next_look] {
            next_look += 1;
            let t0 = Instant::now();
            let report = s.look(&opt)?;
            s.perfdb_time += t0.elapsed();
            looks_taken.push(n);
            let unreliable = report.verdict == perfdb_reports::compare::Overall::Unreliable;
            let done = undecided(&report).is_empty();
            last = Some(report);
            if unreliable {
                stopped = Stopped::Unreliable;
                break;
            }
            if done {
                stopped = Stopped::Decided;
                break;
            }
        }
        if show_progress {
            eprintln!("{}", progress(&s, n, a.max_trials, last.as_ref()));
        }
    }
    let interrupted = stopped == Stopped::Interrupted;
    // The last trials since the last look are looked at too (a failed run, the budget).
    if looks_taken.last() != Some(&n) || last.is_none() {
        let t0 = Instant::now();
        let report = match (s.look(&opt), &failed) {
            (Ok(r), _) => r,
            // Stopped (a signal, the budget) before both arms had a measured trial:
            // nothing to compare, and said so.
            (Err(e), None)
                if matches!(stopped, Stopped::Interrupted | Stopped::MaxTime)
                    && matches!(
                        e.downcast_ref::<perfdb_reports::compare::CompareError>(),
                        Some(perfdb_reports::compare::CompareError::NoRuns(_))
                    ) =>
            {
                eprintln!(
                    "ab: {}; {} measured trial(s) stored: not both arms, nothing compared",
                    cut_trial.as_deref().unwrap_or("stopped"),
                    s.durations.len()
                );
                return Ok(if interrupted {
                    Exit::Interrupted
                } else {
                    Exit::Inconclusive
                });
            }
            // Nothing to compare yet (an arm failed before the other had a trial): say so.
            (Err(e), Some((arm, log)))
                if matches!(
                    e.downcast_ref::<perfdb_reports::compare::CompareError>(),
                    Some(perfdb_reports::compare::CompareError::NoRuns(_))
                ) =>
            {
                eprintln!(
                    "error: the {} arm's trial failed ({log}) before both arms had a measured trial: stored as a failed run in {}; nothing compared",
                    arm.name(),
                    s.metas[Arms::index(*arm)].label
                );
                return Ok(match arm {
                    Arm::Head => Exit::Regression,
                    Arm::Base => Exit::Inconclusive,
                });
            }
            (Err(e), _) => return Err(e),
        };
        s.perfdb_time += t0.elapsed();
        if n > 0 && looks_taken.last() != Some(&n) {
            looks_taken.push(n);
        }
        last = Some(report);
    }
    // The report warns of clocks and throttling from the runs' tags, as compare does.
    let report = last.expect("looked");
    let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    let clocks = [mean(&s.clocks[0]), mean(&s.clocks[1])];
    let measured = s.durations.len().max(1);
    let seq = Sequential {
        trials_per_arm: n,
        looks: looks_taken,
        planned_looks: planned,
        stopped,
        seed,
        blocks,
        warmup: a.warmup,
        labels: labels.clone(),
        logs: s.logs.to_string_lossy().into_owned(),
        seconds: s.started.elapsed().as_secs_f64(),
        perfdb_seconds_per_trial: s.perfdb_time.as_secs_f64() / measured as f64,
        gpu_tool: s.gpu.map(GpuTool::name),
        mean_clock_mhz: clocks,
        throttled_trials: s.throttled,
        failed: failed.clone(),
        cut_trial: cut_trial.clone(),
        trials_stored: s.durations.len(),
    };
    let text = match a.format {
        CompareFormat::Json => {
            let mut v = serde_json::to_value(&report).expect("report serialises");
            v["sequential"] = serde_json::to_value(&seq).expect("serialises");
            serde_json::to_string_pretty(&v).expect("serialises") + "\n"
        }
        CompareFormat::Markdown => render(&report, a.format) + &sequential_markdown(&seq, &report),
        f => render(&report, f) + &sequential_text(&seq, &report),
    };
    std::io::stdout().lock().write_all(text.as_bytes())?;
    if interrupted {
        return Ok(Exit::Interrupted);
    }
    Ok(match &failed {
        Some((Arm::Head, _)) => Exit::Regression,
        Some((Arm::Base, _)) => Exit::Inconclusive,
        None => exit_of(&report),
    })
}

fn stopped_text(s: &Sequential) -> String {
    match s.stopped {
        Stopped::Decided => "every row decided".to_string(),
        Stopped::MaxTrials => format!("--max-trials {} reached", s.trials_per_arm),
        Stopped::MaxTime => match &s.cut_trial {
            Some(cut) => format!("the --max-time budget; {cut}"),
            None => "the --max-time budget".to_string(),
        },
        Stopped::Unreliable => "the control moved (more trials do not cure drift)".to_string(),
        Stopped::FailedRun => match &s.failed {
            Some((arm, log)) => format!("a {} trial failed ({log})", arm.name()),
            None => "a trial failed".to_string(),
        },
        Stopped::TrialTimeout | Stopped::Interrupted => s
            .cut_trial
            .clone()
            .unwrap_or_else(|| "a trial was stopped".to_string()),
    }
}

fn state_rows(report: &Report) -> Vec<[String; 5]> {
    report
        .rows
        .iter()
        .filter(|r| !r.control)
        .filter_map(|r| {
            let state = r.state?;
            Some([
                state.as_str().to_string(),
                format!("{} {} {} {}", r.table, r.variant, r.key_display(), r.metric),
                r.ratio.map(|x| pct(x - 1.0)).unwrap_or_default(),
                r.ratio_ci
                    .map(|(a, b)| format!("[{}, {}]", pct(a - 1.0), pct(b - 1.0)))
                    .unwrap_or_default(),
                r.trials_needed
                    .filter(|_| matches!(state, State::Undecided | State::Undecidable))
                    .map(|k| format!("~{k} a side"))
                    .unwrap_or_default(),
            ])
        })
        .collect()
}

fn summary_line(s: &Sequential) -> String {
    let looks: Vec<String> = s.looks.iter().map(|n| n.to_string()).collect();
    let planned: Vec<String> = s.planned_looks.iter().map(|n| n.to_string()).collect();
    format!(
        "stopped at {} trial(s) a side: {}; looks at {} of {}; seed {}; {} block(s) {}; {}",
        s.trials_per_arm,
        stopped_text(s),
        if looks.is_empty() {
            "none".to_string()
        } else {
            looks.join(", ")
        },
        planned.join(", "),
        s.seed,
        s.blocks.len(),
        s.blocks.join(" "),
        human(s.seconds)
    )
}

fn sequential_text(s: &Sequential, report: &Report) -> String {
    let mut out = format!("\nab: {}\n", summary_line(s));
    out.push_str(&format!(
        "ab: labels {} and {}; trial outputs in {}\n",
        s.labels[0], s.labels[1], s.logs
    ));
    let rows: Vec<Vec<String>> = state_rows(report)
        .into_iter()
        .map(|r| {
            let mut v = vec![String::new()];
            v.extend(r);
            v
        })
        .collect();
    out.push_str(&perfdb_reports::table::aligned(&[], &rows));
    out
}

fn sequential_markdown(s: &Sequential, report: &Report) -> String {
    let mut out = format!(
        "\n### Sequential A/B\n\n{}.\nLabels `{}` and `{}`; trial outputs in `{}`.\n\n",
        summary_line(s),
        s.labels[0],
        s.labels[1],
        s.logs
    );
    let rows = state_rows(report);
    if !rows.is_empty() {
        out.push_str("| state | row | change | 95% CI | trials needed |\n|---|---|---:|---|---|\n");
        for r in rows {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} |\n",
                r[0], r[1], r[2], r[3], r[4]
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_deadline_is_ten_slowest_trials_and_at_least_a_minute() {
        assert_eq!(default_timeout(None), None);
        assert_eq!(default_timeout(Some(0.5)), Some(MIN_DEADLINE));
        assert_eq!(default_timeout(Some(30.0)), Some(Duration::from_secs(300)));
    }
}
