//! The arguments of the commands that judge: `perfdb compare`, `perfdb ab`, `perfdb noise`.

use super::*;

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Base side: benchmark files read straight, no warehouse needed (a FILE, a FOLDER,
    /// or a quoted 'GLOB' such as 'base/*.log'; anything with a `/`, `*`, `?` or `[` is a
    /// path, `./NAME` names a file of the working folder); or warehouse runs: LABEL
    /// (refused when its runs span commits), LABEL@COMMIT, LABEL@latest, LABEL@merge-base
    /// (the label's runs at the commit this checkout forked from its branch of that
    /// name), a commit prefix or run:ID
    pub base: String,
    /// Head side, as BASE
    pub head: String,
    #[command(flatten)]
    pub judge: JudgeArgs,
    #[arg(long, value_enum, default_value = "table")]
    pub format: CompareFormat,
    /// Keep the result in the warehouse (listed by `perfdb serve` under /alerts)
    #[arg(long)]
    pub save: bool,
    /// Pool the runs of the base label's last N commits (by commit time) as the base
    /// distribution: history as the baseline, e.g. `--baseline-window 5 main head@X`
    #[arg(long, value_name = "N", value_parser = at_least_one)]
    pub baseline_window: Option<usize>,
    /// The checkout LABEL@merge-base is read in [default: the working directory]
    #[arg(long, value_name = "DIR")]
    pub git_dir: Option<PathBuf>,
    /// LABEL@merge-base with no run at the merge base: compare with the label's nearest
    /// measured first-parent ancestor instead (said on stderr)
    #[arg(long)]
    pub nearest_measured: bool,
    /// Input format of file sides: auto, or one of the names `perfdb formats` lists
    #[arg(long, default_value = "auto", value_parser = input_format)]
    pub input_format: InputFormat,
    /// Unit of file sides' values whose source prints none (Triton's save_path CSV)
    #[arg(long, value_name = "UNIT")]
    pub unit: Option<String>,
    /// After the verdict, store the head side's files in the warehouse under this label
    /// (with --commit, --tag, --machine, --device), as `perfdb ingest` would
    #[arg(long, value_name = "LABEL")]
    pub keep: Option<String>,
    /// The commit the head side's files were measured at (stored with --keep)
    #[arg(long, value_parser = commit_name, requires = "keep")]
    pub commit: Option<String>,
    /// Metadata of file sides' runs, repeatable: --tag gpu=0
    #[arg(long = "tag", value_name = "KEY=VALUE")]
    pub tags: Vec<String>,
    /// Machine class of file sides' runs (the tag machine=NAME)
    #[arg(long, value_name = "NAME")]
    pub machine: Option<String>,
    /// The GPU file sides' runs ran on (`perfdb devices` lists them)
    #[arg(long, value_name = "DEVICE")]
    pub device: Option<String>,
}

#[derive(Debug, Args)]
pub struct AbArgs {
    /// The base arm as a shell command (run with `sh -c`)
    #[arg(long, value_name = "CMD", requires = "head", conflicts_with_all = ["base_dir", "base_env"])]
    pub base: Option<String>,
    /// The head arm as a shell command (run with `sh -c`)
    #[arg(long, value_name = "CMD", requires = "base")]
    pub head: Option<String>,
    /// Run the command after `--` in this directory for the base arm
    #[arg(
        long,
        value_name = "DIR",
        requires = "head_dir",
        conflicts_with = "base_env"
    )]
    pub base_dir: Option<PathBuf>,
    /// Run the command after `--` in this directory for the head arm
    #[arg(long, value_name = "DIR", requires = "base_dir")]
    pub head_dir: Option<PathBuf>,
    /// Run the command after `--` with this variable set for the base arm (repeatable)
    #[arg(long, value_name = "KEY=VALUE")]
    pub base_env: Vec<String>,
    /// Run the command after `--` with this variable set for the head arm (repeatable)
    #[arg(long, value_name = "KEY=VALUE")]
    pub head_env: Vec<String>,
    /// The benchmark command and its arguments (with --base-dir/--head-dir or
    /// --base-env/--head-env)
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
    /// Trials a side at most (even: blocks add two a side); the last look
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = even_trials)]
    pub max_trials: usize,
    /// Run an identity pass of each arm first (docs/affected.md): rows whose compiled
    /// Triton kernels and launches are the same in both arms are not timed (the others
    /// are named to the benchmark through PERFDB_AFFECTED); when none differs, no trial
    /// runs
    #[arg(long)]
    pub affected: bool,
    /// Time budget for the whole run (`90s`, `30m`, `2h`): it stops at the last complete
    /// block that fits, and a trial still running at the budget is stopped, not stored
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    pub max_time: Option<std::time::Duration>,
    /// Keep every trial's stdout and stderr here [default: perfdb-ab/SESSION]
    #[arg(long, value_name = "DIR")]
    pub logs: Option<PathBuf>,
    /// Label of the base trials [default: ab-base-SESSION]
    #[arg(long, value_name = "LABEL")]
    pub label_base: Option<String>,
    /// Label of the head trials [default: ab-head-SESSION]
    #[arg(long, value_name = "LABEL")]
    pub label_head: Option<String>,
    /// Commit of the base arm, stored with its runs
    #[arg(long, value_name = "COMMIT", value_parser = commit_name)]
    pub commit_base: Option<String>,
    /// Commit of the head arm, stored with its runs
    #[arg(long, value_name = "COMMIT", value_parser = commit_name)]
    pub commit_head: Option<String>,
    /// Machine class of the trials (stored as the tag machine=NAME)
    #[arg(long, value_name = "NAME")]
    pub machine: Option<String>,
    #[command(flatten)]
    pub trials: TrialArgs,
    #[command(flatten)]
    pub judge: JudgeArgs,
    /// Report format
    #[arg(long, value_enum, default_value = "table")]
    pub format: CompareFormat,
}

/// How each trial runs: `perfdb ab`'s, and each step's of `perfdb bisect`.
#[derive(Debug, Clone, Args)]
pub struct TrialArgs {
    /// Discarded runs per arm before the first block (JIT, autotuning, caches)
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub warmup: usize,
    /// Deadline of one trial (`90s`, `10m`): a trial still running at it is killed with
    /// every process it started and stored as a failed run [default: ten times the
    /// slowest trial so far (the warm-up's first), at least 60s; none before one ends]
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    pub trial_timeout: Option<std::time::Duration>,
    /// Seed of the block orientations [default: from the clock; printed and stored]
    #[arg(long)]
    pub seed: Option<u64>,
    /// Do not show the commands' output as they run (the progress line stays)
    #[arg(long)]
    pub quiet: bool,
    /// Do not read the GPU (NVML, nvidia-smi, amd-smi): neither its name (the device tag,
    /// the percent of peak) nor its state and energy around each trial
    #[arg(long)]
    pub no_gpu_state: bool,
    /// Judge GPU energy beside time, at --energy-threshold: each trial's (read through
    /// NVML) and each row's energy per call where the benchmark measures it with
    /// `perfdb_energy.per_call(fn)` (put on the trials' PYTHONPATH). Without it a trial's
    /// energy is stored, for `compare` and the history, and not judged here
    #[arg(long)]
    pub energy: bool,
    /// Measure each Triton `do_bench`'s function for energy per call, after its timing and
    /// without changing the benchmark (perfdb's sitecustomize; adds PERFDB_ENERGY_SECONDS,
    /// 0.5 s by default, to each timing). Implies --energy
    #[arg(long)]
    pub energy_per_call: bool,
    /// Run blocks on these GPUs at once (`0-7`, `0,2,5`, `all`): each GPU runs whole ABBA
    /// blocks of both arms, its trials pinned to it (CUDA_VISIBLE_DEVICES by UUID,
    /// HIP_VISIBLE_DEVICES), and each row is tested with each GPU's offset taken out. A GPU
    /// whose clock, temperature or throttling departs from the others' has its blocks
    /// dropped. One GPU: pinned, judged as without the flag
    #[arg(long, value_name = "LIST")]
    pub gpus: Option<crate::trials::GpuList>,
    /// Format of the trials' output: auto, or one of the names `perfdb formats` lists
    #[arg(long, value_name = "NAME", default_value = "auto", value_parser = input_format)]
    pub input_format: InputFormat,
    /// After the timed trials decide, one more trial per arm under this profiler: its
    /// counters (never its time) are stored and shown beside the rows that changed
    #[arg(long, value_enum, value_name = "PROFILER")]
    pub profile: Option<Profiler>,
    /// The profiler's program [default: ncu or rocprofv3 on PATH; proton: the arms'
    /// python]
    #[arg(long, value_name = "PATH")]
    pub profiler: Option<PathBuf>,
    /// More arguments for the profiler, as one shell-quoted string, placed before the
    /// profiled command (`--profile-args '-k regex:add -c 4'`, `--set full`). With ncu,
    /// any of -k/--kernel-name/--kernel-id/-c/--launch-count/--launch-skip replaces the
    /// default scope: the first launch of each kernel (`--kernel-id ::regex:.:1`), so a
    /// long benchmark is not replayed launch by launch
    #[arg(long, value_name = "ARGS", allow_hyphen_values = true)]
    pub profile_args: Option<String>,
}

impl TrialArgs {
    /// Whether GPU energy is judged (`--energy`, or `--energy-per-call`, which implies it).
    pub fn judges_energy(&self) -> bool {
        self.energy || self.energy_per_call
    }
}

/// Which profiler runs the profiled trial (`--profile`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Profiler {
    /// Nsight Compute: `ncu --csv` with its speed-of-light, launch and occupancy sections
    /// and DRAM bytes
    Ncu,
    /// rocprofv3: the kernel trace and FETCH_SIZE/WRITE_SIZE counters, as CSV
    Rocprof,
    /// Triton's proton around the arm's Python script (`python -m triton.profiler.proton`)
    Proton,
}

fn even_trials(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n >= 4 && n % 2 == 0 && n <= 1000 => Ok(n),
        _ => Err(format!(
            "'{s}': trials a side come two a block (ABBA): give an even number from 4 to 1000"
        )),
    }
}

/// `90s`, `30m`, `2h`, or plain seconds.
pub(crate) fn duration(s: &str) -> Result<std::time::Duration, String> {
    let (num, unit) = match s.find(|c: char| !(c.is_ascii_digit() || c == '.')) {
        Some(i) => s.split_at(i),
        None => (s, "s"),
    };
    let scale = match unit {
        "s" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return Err(format!("'{s}': give a duration like 90s, 30m or 2h")),
    };
    match num.parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(std::time::Duration::from_secs_f64(v * scale)),
        _ => Err(format!("'{s}': give a duration like 90s, 30m or 2h")),
    }
}

#[derive(Debug, Args)]
pub struct NoiseArgs {
    /// The label: A/A runs of one commit, or a history (noise within each commit)
    pub label: String,
    /// Significance level of the planned test [default: 0.05]
    #[arg(long)]
    pub alpha: Option<f64>,
    /// The threshold shown beside 1%, 2% and 5% [default: 0.05]
    #[arg(long)]
    pub threshold: Option<f64>,
    /// Config file [default: ./perfdb.toml when present]
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Filter rows: table=, variant=, metric= (repeatable)
    #[arg(long = "where", value_name = "KEY=VALUE")]
    pub filters: Vec<String>,
    #[arg(long, value_enum, default_value = "table")]
    pub format: OutputFormat,
}

fn at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("'{s}' is not a number of commits, 1 or more")),
    }
}

#[derive(Debug, Args)]
pub struct BisectArgs {
    /// An alert (any unique prefix of its id): the range and series of its group (every
    /// alert of one change: `perfdb alerts list --grouped`), its machine and, from its
    /// runs, the benchmark command
    pub alert: Option<String>,
    /// The project's git repository: each step checks a commit out in a worktree of it
    #[arg(long, value_name = "DIR")]
    pub repo: PathBuf,
    /// The good end (a commit, branch or tag) [default: the alert group's last good
    /// commit]
    #[arg(long, value_name = "COMMIT")]
    pub good: Option<String>,
    /// The bad end [default: the alert group's first bad commit]
    #[arg(long, value_name = "COMMIT")]
    pub bad: Option<String>,
    /// Rows to watch: one whose `table variant key` contains TEXT (repeatable) [default:
    /// the alert group's series; without an alert, every row but the control]
    #[arg(long, value_name = "TEXT")]
    pub series: Vec<String>,
    /// Build a commit's worktree with this shell command before its trials; a commit
    /// whose build fails is skipped (as `git bisect skip`)
    #[arg(long, value_name = "CMD")]
    pub build: Option<String>,
    /// Seconds a build may take: past them its process group is stopped and the commit
    /// skipped
    #[arg(long, value_name = "SECONDS", default_value_t = 1800)]
    pub build_timeout: u64,
    /// Build the next step's two candidates (one if this step is good, one if bad) on
    /// spare cores while this step's trials run; a build not needed is stopped. For
    /// builds that take long beside the trials: the builds share the machine with them
    #[arg(long, requires = "build")]
    pub build_ahead: bool,
    /// Run an identity pass at each commit (docs/affected.md): a step whose rows' compiled
    /// Triton kernels and launches equal those of a commit already measured inherits its
    /// verdict without trials
    #[arg(long)]
    pub affected: bool,
    /// Trials a side at most per step (even); a step still undecided there ends the
    /// search at the range it proved
    #[arg(long, value_name = "N", default_value_t = 12, value_parser = even_trials)]
    pub max_trials: usize,
    /// Machine class of the trials (the tag machine=NAME) [default: the alert's]
    #[arg(long, value_name = "NAME")]
    pub machine: Option<String>,
    /// Keep the trials' output and the steps' reports here [default:
    /// perfdb-bisect/LABEL]
    #[arg(long, value_name = "DIR")]
    pub logs: Option<PathBuf>,
    /// With an alert: POST what was found to these targets (repeatable; the forms of
    /// `perfdb detect --notify`: http(s)://, slack+https://, github+https://...)
    #[arg(long, value_name = "URL")]
    pub notify: Vec<String>,
    #[command(flatten)]
    pub trials: TrialArgs,
    #[command(flatten)]
    pub judge: JudgeArgs,
    #[arg(long, value_enum, default_value = "table")]
    pub format: OutputFormat,
    /// The benchmark command, run in each worktree [default: the alert's runs' command]
    #[arg(last = true, value_name = "BENCH")]
    pub command: Vec<String>,
}
