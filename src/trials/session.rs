//! One `perfdb ab` run's trials as processes: each runs its arm's command supervised
//! (deadline, budget, signals), reads the GPU's state before and after, keeps its output
//! in the logs folder and is ingested as one run with its tags; a look compares what
//! the two labels hold. The experiment that drives it is `perfdb_reports::ab`.

use super::arms::Arms;
use super::energy::{self, TrialEnergy};
use super::gpu::GpuTool;
use super::lanes::{self, Lane, Readings};
use crate::process::{self, Echo, Ended};
use anyhow::Context;
use perfdb_ingest::formats::Format;
use perfdb_ingest::gpu_state::GpuState;
use perfdb_ingest::model::RunMeta;
use perfdb_ingest::trial_energy;
use perfdb_ingest::warehouse::Warehouse;
use perfdb_reports::ab::{Arm, Facts, GpuFacts, Job, LookError, Trial, TrialEnd, Trials};
use perfdb_reports::compare::strata::Strata;
use perfdb_reports::compare::{compare, CompareError, Options, Report};
use perfdb_reports::db::Db;
use perfdb_reports::fmt::human_seconds as human;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The default trial deadline: ten times the slowest trial so far, at least a minute.
pub const DEADLINE_FACTOR: f64 = 10.0;
pub const MIN_DEADLINE: Duration = Duration::from_secs(60);

/// The deadline of a trial without `--trial-timeout`: from the slowest trial that
/// ended by itself (the warm-up's first), none before one has.
pub fn default_timeout(slowest: Option<f64>) -> Option<Duration> {
    slowest.map(|s| Duration::from_secs_f64(s * DEADLINE_FACTOR).max(MIN_DEADLINE))
}

pub struct Session {
    pub arms: Arms,
    /// Set on every trial's command (`ab --affected`: the rows to time).
    pub env: Vec<(String, String)>,
    /// Folders put first on every trial's PYTHONPATH (perfdb's Python helpers).
    pub python: Vec<PathBuf>,
    pub wh: Warehouse,
    pub root: PathBuf,
    /// The device table of the config (`Config::device_table`).
    pub devices: Arc<perfdb_ingest::devices::Table>,
    pub format: Option<Format>,
    pub metas: [RunMeta; 2],
    /// What a look compares: each arm's label, or `LABEL@COMMIT`.
    pub selectors: [String; 2],
    pub logs: PathBuf,
    pub echo: Echo,
    pub gpu: Option<GpuTool>,
    pub seed: u64,
    pub opt: Options,
    pub started: Instant,
    pub last_end: Option<Instant>,
    pub trial_no: usize,
    /// Seconds each measured trial's command took.
    pub durations: Vec<f64>,
    pub perfdb_time: Duration,
    pub clocks: [Vec<f64>; 2],
    pub throttled: usize,
    /// `--trial-timeout`, when given.
    pub trial_timeout: Option<Duration>,
    /// `--max-time`, when given.
    pub budget: Option<Duration>,
    /// Seconds of the slowest trial that ended by itself: the default deadline's base.
    pub slowest: Option<f64>,
    /// Print the progress line after each block (both outputs a terminal).
    pub show_progress: bool,
    /// `--gpus`: the GPUs blocks run on (empty without the flag: today's one GPU, not
    /// pinned), those still used (indices into `lanes`), and per lane its measured
    /// trials' runs, whole blocks, GPU readings and why it was dropped.
    pub lanes: Vec<Lane>,
    pub active: Vec<usize>,
    pub lane_runs: Vec<Vec<String>>,
    pub lane_blocks: Vec<usize>,
    pub lane_readings: Vec<Readings>,
    pub lane_dropped: Vec<Option<String>>,
}

/// Which GPU ran each measured trial of this process's experiments (`--gpus`), by run.
static STRATA: std::sync::LazyLock<std::sync::Mutex<Strata>> =
    std::sync::LazyLock::new(Default::default);

/// One trial to run: its arm, its place (a block and position, or a warm-up), its name in
/// the logs folder, and the GPU it is pinned to (`--gpus`: an index into the lanes).
struct Step {
    arm: Arm,
    block: Option<(usize, usize)>,
    what: String,
    lane: Option<usize>,
}

/// What a step's process did and the GPU around it, before perfdb keeps it.
struct Ran {
    out: process::Captured,
    end_how: TrialEnd,
    timeout: Option<Duration>,
    started_at: chrono::DateTime<chrono::Utc>,
    seconds: f64,
    since_previous: Option<f64>,
    described: String,
    before: Option<Result<GpuState, String>>,
    after: Option<Result<GpuState, String>>,
    energy: TrialEnergy,
}

impl Trials for Session {
    type Error = anyhow::Error;

    fn trial(&mut self, arm: Arm, block: Option<(usize, usize)>) -> anyhow::Result<Trial> {
        // `--gpus`: the one GPU still used (not always the first listed).
        let lane = self.active.first().copied();
        let step = self.step(arm, block, lane);
        let ran = self.launch(&step, self.last_end)?;
        self.last_end = Some(ran.out.exited_at);
        self.record(&step, ran)
    }

    fn lanes(&self) -> usize {
        self.active.len()
    }

    /// Each job on its own GPU, in threads; the trials stored GPU by GPU once all have
    /// ended; then each GPU's state held against the others'.
    fn round(&mut self, jobs: &[Job]) -> anyhow::Result<Vec<Vec<Trial>>> {
        // One GPU (or none named): one trial at a time, as without `--gpus`.
        if self.active.len() <= 1 {
            return perfdb_reports::ab::in_turn(self, jobs);
        }
        let steps: Vec<Vec<Step>> = jobs
            .iter()
            .zip(self.active.clone())
            .map(|(job, lane)| {
                job.arms
                    .iter()
                    .enumerate()
                    .map(|(pos, arm)| self.step(*arm, job.block.map(|b| (b, pos + 1)), Some(lane)))
                    .collect()
            })
            .collect();
        let this = &*self;
        let ran: Vec<anyhow::Result<Vec<Ran>>> = std::thread::scope(|scope| {
            let handles: Vec<_> = steps
                .iter()
                .map(|lane_steps| {
                    scope.spawn(move || {
                        let mut out: Vec<Ran> = Vec::new();
                        let mut last = this.last_end;
                        for step in lane_steps {
                            let r = this.launch(step, last)?;
                            last = Some(r.out.exited_at);
                            let ended = r.end_how != TrialEnd::Exited(true);
                            out.push(r);
                            if ended {
                                break;
                            }
                        }
                        Ok(out)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a GPU's trials panicked"))
                .collect()
        });
        let mut out = Vec::new();
        for (lane_steps, ran) in steps.iter().zip(ran) {
            let mut trials = Vec::new();
            for (step, r) in lane_steps.iter().zip(ran?) {
                trials.push(self.record(step, r)?);
            }
            out.push(trials);
        }
        self.last_end = Some(Instant::now());
        if jobs.iter().any(|j| j.block.is_some()) {
            self.drop_departed();
        }
        Ok(out)
    }

    fn look(&mut self) -> Result<Report, LookError<anyhow::Error>> {
        let t0 = Instant::now();
        let db = Db::open(&self.root, &self.devices)
            .with_context(|| format!("cannot open the warehouse at {}", self.root.display()))
            .map_err(LookError::Failed)?;
        // Over several GPUs: which GPU ran each trial (every experiment of this process:
        // a bisect's earlier steps stored trials of the same commits).
        if self.lanes.len() > 1 {
            let strata = STRATA.lock().unwrap_or_else(|p| p.into_inner()).clone();
            self.opt.strata = Some(Arc::new(strata));
        }
        let report = compare(&db, &self.selectors[0], &self.selectors[1], &self.opt);
        self.perfdb_time += t0.elapsed();
        report.map_err(|e| match e {
            CompareError::NoRuns(_) => LookError::NothingStored(e.into()),
            e => LookError::Failed(e.into()),
        })
    }

    fn mean_trial_seconds(&self) -> f64 {
        if self.durations.is_empty() {
            0.0
        } else {
            self.durations.iter().sum::<f64>() / self.durations.len() as f64
        }
    }

    fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    fn interrupted(&self) -> Option<&'static str> {
        process::interrupted().map(process::signal_name)
    }

    fn progress(&mut self, line: &str) {
        if self.show_progress {
            say!("{line}");
        }
    }
}

impl Session {
    /// The next trial's name and place.
    fn step(&mut self, arm: Arm, block: Option<(usize, usize)>, lane: Option<usize>) -> Step {
        self.trial_no += 1;
        let gpu = match lane {
            Some(l) => format!("-gpu{}", self.lanes[l].index),
            None => String::new(),
        };
        let what = match block {
            Some(_) => format!("{:03}-{}{gpu}", self.trial_no, arm.name()),
            None => format!("warmup-{:03}-{}{gpu}", self.trial_no, arm.name()),
        };
        Step {
            arm,
            block,
            what,
            lane,
        }
    }

    /// What pins a trial outside the blocks (the profiled trials) to the first GPU still
    /// used (`--gpus`); nothing without the flag.
    pub fn pinned(&self) -> Vec<(String, String)> {
        self.active
            .first()
            .map(|&l| self.lanes[l].env())
            .unwrap_or_default()
    }

    /// The GPU a step runs on, as the index its readings are taken of.
    fn device(&self, step: &Step) -> String {
        match step.lane {
            Some(l) => self.lanes[l].index.to_string(),
            None => GpuTool::device(),
        }
    }

    /// Runs a step's process (reading the GPU around it); nothing is kept yet. Takes
    /// `&self` alone: the GPUs of a round run theirs at once.
    fn launch(&self, step: &Step, last_end: Option<Instant>) -> anyhow::Result<Ran> {
        let arm = step.arm;
        let device = self.device(step);
        let before = self.gpu.map(|g| g.query_at(&device));
        let sampler = energy::start(self.gpu, &device);
        let start = Instant::now();
        let started_at = chrono::Utc::now();
        let since_previous = last_end.map(|t| start.saturating_duration_since(t).as_secs_f64());
        let described = self.arms.describe(arm);
        let mut cmd = self.arms.command(arm);
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        if !self.python.is_empty() {
            cmd.env(
                "PYTHONPATH",
                crate::identity::python_path_with(&self.python),
            );
        }
        // The GPU `perfdb_energy` reads: the trial's, as NVML numbers it.
        if matches!(self.gpu, Some(GpuTool::Nvml)) {
            cmd.env("PERFDB_ENERGY_GPU", &device);
        }
        if let Some(l) = step.lane {
            cmd.envs(self.lanes[l].env());
        }
        // The trial's deadline: its own, or the budget's end, whichever is first.
        let timeout = self.trial_timeout.or_else(|| default_timeout(self.slowest));
        let by_timeout = timeout.map(|t| start + t);
        let by_budget = self.budget.map(|b| self.started + b);
        let deadline = match (by_timeout, by_budget) {
            (Some(t), Some(b)) => Some(t.min(b)),
            (t, b) => t.or(b),
        };
        let out = process::run(&mut cmd, self.echo, deadline)
            .with_context(|| format!("cannot run the {} arm: `{described}`", arm.name()))?;
        let end_how = match out.ended {
            Ended::Exited => TrialEnd::Exited(out.status.success()),
            Ended::Interrupted(sig) => TrialEnd::Interrupted(process::signal_name(sig)),
            Ended::Deadline if by_budget.is_some_and(|b| by_timeout.is_none_or(|t| b <= t)) => {
                TrialEnd::OverBudget
            }
            Ended::Deadline => TrialEnd::TimedOut(timeout.unwrap_or_default().as_secs_f64()),
        };
        // The trial ends when its command does, not when its output closes.
        let seconds = out.exited_at.duration_since(start).as_secs_f64();
        let after = self.gpu.map(|g| g.query_at(&device));
        let energy = TrialEnergy::measured(before.as_ref(), after.as_ref(), sampler);
        Ok(Ran {
            out,
            end_how,
            timeout,
            started_at,
            seconds,
            since_previous,
            described,
            before,
            after,
            energy,
        })
    }

    /// Keeps what a step did: its output in the logs folder, and (measured, or a
    /// warm-up that failed) a run in the warehouse with its tags.
    fn record(&mut self, step: &Step, ran: Ran) -> anyhow::Result<Trial> {
        let (arm, block, what) = (step.arm, step.block, &step.what);
        let Ran {
            out,
            end_how,
            timeout,
            started_at,
            seconds,
            since_previous,
            described,
            before,
            after,
            energy,
        } = ran;
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
        let trial = Trial { end: end_how, log };
        // Stopped by the budget or a signal: kept in the logs folder, never stored (a
        // cut output would read as a trial).
        if matches!(end_how, TrialEnd::OverBudget | TrialEnd::Interrupted(_)) {
            self.perfdb_time += perfdb_start.elapsed();
            return Ok(trial);
        }
        let ok = end_how == TrialEnd::Exited(true);
        if ok {
            self.slowest = Some(self.slowest.map_or(seconds, |s| s.max(seconds)));
        }
        let failed = match end_how {
            TrialEnd::TimedOut(_) => Some(format!(
                "killed at its deadline of {} with every process it started (--trial-timeout)",
                human(timeout.unwrap_or_default().as_secs_f64())
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
        if let Some(l) = step.lane {
            tags.push(("ab_gpu".into(), self.lanes[l].index.to_string()));
        }
        if let Some(note) = &out.after_exit {
            say!("ab: the {} arm's trial ({}): {note}", arm.name(), trial.log);
            tags.push(("output_after_exit".into(), note.clone()));
        }
        if block.is_none() {
            if !ok {
                // A warm-up that fails is stored as a failed run like any trial: the
                // arm does not run.
                self.store(arm, &out.stdout, &trial.log, tags, failed, None)?;
            }
            self.perfdb_time += perfdb_start.elapsed();
            return Ok(trial);
        }
        self.durations.push(seconds);
        if let (Some(l), Some(Ok(g))) = (step.lane, &after) {
            self.lane_readings[l].push(g.clone());
        }
        tags.extend(self.gpu_readings(arm, before, after));
        let device = self.device(step);
        tags.extend(energy.tags(&device));
        let joules = energy.counter_j.map(|j| (device.as_str(), j));
        let runs = self.store(arm, &out.stdout, &trial.log, tags, failed, joules)?;
        if let Some(l) = step.lane {
            let mut strata = STRATA.lock().unwrap_or_else(|p| p.into_inner());
            for r in &runs {
                strata.gpu_of.insert(r.clone(), self.lanes[l].index);
            }
            self.lane_runs[l].extend(runs);
            if block.is_some_and(|(_, pos)| pos == 4) {
                self.lane_blocks[l] += 1;
            }
        }
        self.perfdb_time += perfdb_start.elapsed();
        Ok(trial)
    }

    /// The GPU's state before and after a measured trial, as tags; its clocks and any
    /// throttling kept for the run's facts.
    fn gpu_readings(
        &mut self,
        arm: Arm,
        before: Option<Result<GpuState, String>>,
        after: Option<Result<GpuState, String>>,
    ) -> Vec<(String, String)> {
        let mut tags = Vec::new();
        for (reading, when) in [(before, "before"), (after, "after")] {
            match reading {
                Some(Ok(g)) => {
                    if let Some(c) = g.clock_mhz {
                        self.clocks[arm.index()].push(c);
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
        tags
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
        let mut t = self.metas[arm.index()].tags.clone();
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
        energy: Option<(&str, f64)>,
    ) -> anyhow::Result<Vec<String>> {
        let meta = RunMeta {
            tags,
            failed,
            ..self.metas[arm.index()].clone()
        };
        let mut prepared =
            perfdb_ingest::prepare_bytes(log, stdout, self.format, &meta, &self.devices);
        energy::say_refused(log, &prepared);
        // The trial's energy, a row beside what the benchmark printed (judged by `compare`,
        // and by `ab` with `--energy`).
        if let (Ok(p), Some((device, j))) = (&mut prepared, energy) {
            trial_energy::add(p, device, j);
        }
        let reports = perfdb_ingest::ingest_prepared(&self.wh, log, prepared)
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
        Ok(reports
            .into_iter()
            .filter_map(|r| r.result.ok().map(|i| i.run_id))
            .collect())
    }

    /// Drops the blocks of each GPU whose state departs from the others' (`lanes::departed`):
    /// its trials leave the looks' strata and it runs no further block. Said on stderr and
    /// in the run's facts.
    fn drop_departed(&mut self) {
        if self.active.len() < 2 {
            return;
        }
        let readings: Vec<&Readings> = self
            .active
            .iter()
            .map(|&l| &self.lane_readings[l])
            .collect();
        let gone: Vec<(usize, String)> = lanes::departed(&readings)
            .into_iter()
            .map(|(i, why)| (self.active[i], why))
            .collect();
        // Never every GPU: with all departing from each other, nothing is told apart.
        if gone.is_empty() || gone.len() == self.active.len() {
            return;
        }
        let mut strata = STRATA.lock().unwrap_or_else(|p| p.into_inner());
        for (l, why) in gone {
            for r in &self.lane_runs[l] {
                strata.gpu_of.remove(r);
            }
            say!(
                "ab: GPU {} dropped: {why}; its {} trial(s) are not compared",
                self.lanes[l].index,
                self.lane_runs[l].len()
            );
            self.lane_dropped[l] = Some(why);
            self.active.retain(|&a| a != l);
        }
    }

    /// What the run measured of itself, for its record.
    pub fn facts(&self, labels: [String; 2]) -> Facts {
        let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
        Facts {
            labels,
            logs: self.logs.to_string_lossy().into_owned(),
            seconds: self.started.elapsed().as_secs_f64(),
            perfdb_seconds_per_trial: self.perfdb_time.as_secs_f64()
                / self.durations.len().max(1) as f64,
            gpu_tool: self.gpu.map(|g| g.name().to_string()),
            mean_clock_mhz: [mean(&self.clocks[0]), mean(&self.clocks[1])],
            throttled_trials: self.throttled,
            trials_stored: self.durations.len(),
            gpus: self
                .lanes
                .iter()
                .enumerate()
                .map(|(l, lane)| GpuFacts {
                    gpu: lane.index,
                    visible: lane.visible.clone(),
                    blocks: self.lane_blocks[l],
                    median_offset: None,
                    dropped: self.lane_dropped[l].clone(),
                })
                .collect(),
        }
    }
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
