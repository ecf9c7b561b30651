//! The command line (clap derive).

use clap::{Args, Parser, Subcommand, ValueEnum};
use perfdb_ingest::model::AlertStatus;
// How two sides are judged: the options `compare` and `ab` share, defined once with the
// web query they also are.
use perfdb_reports::compare::JudgeArgs;
pub use perfdb_reports::render::alerts::AlertsFormat;
pub use perfdb_reports::render::ReportFormat as CompareFormat;
use std::path::PathBuf;

/// An input format asked for: `None` for auto-detection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputFormat(pub Option<perfdb_ingest::formats::Format>);

/// `auto`, or a name `perfdb formats` lists.
fn input_format(s: &str) -> Result<InputFormat, String> {
    match s {
        "auto" => Ok(InputFormat(None)),
        name => name.parse().map(|f| InputFormat(Some(f))),
    }
}

/// The exit codes as `--help` ends: [`crate::EXIT_MEANINGS`], each wrapped under its code.
pub fn exit_codes_text() -> String {
    let mut out = String::from("Exit codes:");
    for (code, meaning) in crate::EXIT_MEANINGS {
        out.push_str(&format!("\n  {:<4}", *code as u8));
        let (mut width, mut first) = (6, true);
        for word in meaning.split_whitespace() {
            let len = word.chars().count();
            if !first && width + 1 + len > 88 {
                out.push_str("\n      ");
                width = 6;
            } else if !first {
                out.push(' ');
                width += 1;
            }
            out.push_str(word);
            width += len;
            first = false;
        }
    }
    out
}

#[derive(Debug, Parser)]
#[command(
    name = "perfdb",
    version,
    about = "A benchmark-results warehouse for GPU kernel performance",
    long_about = "perfdb ingests benchmark output (aiter summary tables, [perf] lines, TokenSpeed \
                  probe lines, Triton, torch.utils.benchmark, pytest-benchmark, google-benchmark, \
                  ROCm bench CSVs, serving results... `perfdb formats` lists them) into a Parquet \
                  warehouse, and compares runs with a proper statistical test.",
    after_help = exit_codes_text()
)]
pub struct Cli {
    /// Warehouse: a directory, or a URL (s3://bucket/prefix, gs://, az://, file://; credentials
    /// and endpoint from the usual environment variables, e.g. AWS_ENDPOINT_URL)
    #[arg(
        long,
        global = true,
        env = "PERFDB_WAREHOUSE",
        default_value = "perfdb-warehouse"
    )]
    pub warehouse: PathBuf,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Parse benchmark logs into the warehouse (one run per file)
    Ingest(IngestArgs),
    /// List runs
    Runs(RunsArgs),
    /// What moved, where and since when, worst first: every compared series of a label
    /// on one machine class over its newest commits
    ///
    /// Each row: the series' commit medians as a sparkline, its latest change point and
    /// size (over the window, with `[detect]`'s thresholds), its open alerts, and the last
    /// commit that measured it. Sorted by open alerts, then the largest step for the
    /// worse, then the commits since it was last measured. The web's overview page (`/`)
    /// shows the same rows. Exits 0 whatever it shows.
    Status(StatusArgs),
    /// Run DuckDB SQL over the views `runs`, `measurements` and `summaries`
    ///
    /// Read-only: only queries run (SELECT, FROM, WITH, VALUES, DESCRIBE, SHOW,
    /// SUMMARIZE, EXPLAIN), and they read the warehouse's committed files and nothing
    /// else. `--write` runs any statement (COPY ... TO a file, ATTACH...) with file
    /// access on; what it writes is not part of the warehouse.
    Sql(SqlArgs),
    /// Compare two sets of runs and exit with a code CI can act on
    #[command(after_help = exit_codes_text())]
    Compare(CompareArgs),
    /// Find change points over the history of every series of a label (commits ordered by
    /// commit time) and store each regression as an alert; exits 1 when a new one was raised
    #[command(after_help = exit_codes_text())]
    Detect(DetectArgs),
    /// The alerts `detect` stored: list, show, acknowledge, dismiss, reopen
    Alerts(AlertsArgs),
    /// Merge small files into bounded ones (replaced files stay on disk until `vacuum`)
    Compact(CompactArgs),
    /// Delete files no table lists any more (replaced by `compact`, or left by
    /// interrupted commands) once they are older than the retention
    Vacuum(VacuumArgs),
    /// Move a warehouse written by an older perfdb (`_manifest.json`) to the Delta log
    Migrate,
    /// Serve the web app over the warehouse (read-only)
    Serve(ServeArgs),
    /// Write the web app's pages as a static site (HTML and SVG, relative links) for
    /// GitHub Pages or any file server
    ExportSite(ExportSiteArgs),
    /// Write a label's compared values in another tool's format
    ///
    /// `--format pytorch-v3`: PyTorch's benchmark database records (what the PyTorch HUD
    /// dashboards read), one per row and metric, the label's trials as its
    /// `benchmark_values`: table = `benchmark.name`, variant = `model.backend`, the key's
    /// `model`/`mode`/`dtype`/`input.*` cells where v3 keeps them and the other cells in
    /// `metric.extra_info`, the metric named with its unit (`latency(us)`), the machine as
    /// the runner and the commit as the `repo` dependency's sha. `perfdb ingest` reads
    /// the file back to the same rows. Only values with a direction are written (derived
    /// ones are perfdb's own reading).
    Export(ExportArgs),
    /// Run a benchmark command and ingest what it prints as one run
    ///
    /// The command's output is shown as it runs (stdout and stderr unchanged), then read
    /// like `ingest` reads a file; the command line, exit code and duration are stored as
    /// the run's tags (`command`, `exit_code`, `duration_s`). A command that exits
    /// non-zero is stored as a failed run, with whatever values it printed. Exits 0, 1
    /// when the command failed, 2 when its output could not be ingested.
    ///
    /// Example: perfdb run --label head --commit $(git rev-parse HEAD) -- python bench.py
    Run(RunArgs),
    /// Run base and head interleaved until every row is decided: "is my branch faster?"
    ///
    /// Each trial is one process whose stdout is ingested as one run. After --warmup
    /// discarded runs per arm, trials come in blocks of four, ABBA or BAAB at random
    /// (--seed); at 4, 6, 8, 12, 16, 20, 30 trials a side (cut at --max-trials) the arms
    /// are compared with each p multiplied by the number of planned looks, and the run
    /// stops once every row is a regression, an improvement, cleared (a slowdown beyond
    /// the threshold is ruled out) or undecidable (the noise cannot tell at
    /// --max-trials). The report is `compare`'s, with each row's state and the trials a
    /// side an undecided row would need. Method: docs/STATS.md, "Sequential A/B".
    ///
    /// Three ways to give the arms:
    ///   perfdb ab --base 'cd ../main && python bench.py' --head 'python bench.py'
    ///   perfdb ab --base-dir ../main --head-dir . -- python bench.py
    ///   perfdb ab --base-env USE_NEW_KERNEL=0 --head-env USE_NEW_KERNEL=1 -- python bench.py
    #[command(after_help = exit_codes_text(), verbatim_doc_comment)]
    Ab(Box<AbArgs>),
    /// How noisy each series of a label is, and the trials a side a change needs
    ///
    /// Per series (table, variant, key, metric): sigma, the pooled standard deviation of
    /// ln values within each commit (a history) or within the label (A/A runs of one
    /// commit), its robust twin (1.4826 x MAD), and the trials a side a two-sided Welch
    /// test needs to see 1%, 2%, 5% and the threshold at --alpha with power 0.8.
    Noise(NoiseArgs),
    /// List the input formats `ingest` reads (auto-detected; `--format NAME` forces one)
    Formats,
    /// Ingest the bundled H200 sample data and compare base with head
    #[command(after_help = exit_codes_text())]
    Demo,
}

#[derive(Debug, Args)]
pub struct IngestArgs {
    /// Files or directories (walked recursively); each file becomes one run. `-` reads
    /// one run from standard input (give it a --name)
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub options: IngestOptions,
    /// Source name of the run read from standard input (`-`): it stands in for the file
    /// path, so re-ingesting the same output under the same name adds nothing
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
}

/// What `ingest` and `run` say about the runs they add.
#[derive(Debug, Args)]
pub struct IngestOptions {
    /// Label of these runs, e.g. base, head, a branch name
    #[arg(long)]
    pub label: Option<String>,
    /// Commit the runs were measured at [default: the commit the output names
    /// (pytest-benchmark), else none]
    #[arg(long, value_parser = commit_name)]
    pub commit: Option<String>,
    /// When that commit was made, RFC 3339 (e.g. 2026-11-30T09:00:00Z); orders commits
    /// for `LABEL@latest` [default: now]
    #[arg(long, value_name = "RFC3339")]
    pub commit_time: Option<String>,
    /// Read the commit time of --commit from this git checkout (`git show -s --format=%cI`)
    #[arg(long, value_name = "DIR", conflicts_with = "commit_time")]
    pub git_dir: Option<PathBuf>,
    /// GPU architecture, e.g. gfx942 (a probe log's own arch is used otherwise)
    #[arg(long)]
    pub arch: Option<String>,
    /// Extra metadata, repeatable: --tag gpu=0 --tag host=ci-3
    #[arg(long = "tag", value_name = "KEY=VALUE")]
    pub tags: Vec<String>,
    /// Machine class of these runs, e.g. mi300x (stored as the tag machine=NAME): history,
    /// detect and compare never mix machine classes [default: the tag, else what the
    /// output names (pytest-benchmark's CPU), else `default`]
    #[arg(long, value_name = "NAME")]
    pub machine: Option<String>,
    /// Input format: auto, or one of the names `perfdb formats` lists
    #[arg(long, default_value = "auto", value_parser = input_format)]
    pub format: InputFormat,
    /// Unit of values whose source prints none (Triton's save_path CSV), e.g. TFLOPS,
    /// GB/s, ms
    #[arg(long, value_name = "UNIT")]
    pub unit: Option<String>,
    /// How the values were measured, e.g. do_bench:median, do_bench_cudagraph (stored
    /// as the tag method=NAME): compare and detect never pool or compare two methods
    /// [default: what the output says (nvbench-json: nvbench:cold), else none]
    #[arg(long, value_name = "NAME")]
    pub method: Option<String>,
    /// The nvbench axis that holds the implementations compared (its values become the
    /// variants instead of part of the key), e.g. Op
    #[arg(long, value_name = "AXIS")]
    pub variant_axis: Option<String>,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub options: IngestOptions,
    /// Source name of the run [default: the command line]
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Ingest only what the command prints on standard output (its standard error is
    /// still shown): for tools that print JSON on stdout and progress on stderr
    #[arg(long)]
    pub stdout_only: bool,
    /// The benchmark command and its arguments, after `--`
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub struct DetectArgs {
    /// The label whose history to scan, e.g. main
    #[arg(long, default_value = "main")]
    pub label: String,
    /// What CI runs after each commit: read the history from `context` commits before
    /// this commit (prefix; [detect] in perfdb.toml, default 200), not the whole
    /// label, and hold the alerts of that window to it (a step confirmed only now,
    /// an old alert's fix); report the changes from this commit on and every alert
    /// this run raised, confirmed or resolved
    #[arg(long, value_name = "COMMIT")]
    pub since: Option<String>,
    /// POST each active alert not yet delivered there (repeatable): `http://` or
    /// `https://` (extra CA certificates from $PERFDB_CA_FILE), `user:password@` for
    /// Basic auth; `slack+https://...` sends Slack's incoming-webhook payload,
    /// `github+https://api.github.com/repos/O/R/issues/N/comments` a comment (token from
    /// $GITHUB_TOKEN). Also `notify = [...]` under [compare] in perfdb.toml. Checked
    /// before anything is stored
    #[arg(long, value_name = "URL")]
    pub notify: Vec<String>,
    /// Deadline of one delivery attempt, from connect to the answer's status line
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0, value_parser = positive_seconds)]
    pub notify_timeout: f64,
    /// Config file [default: ./perfdb.toml when present]
    #[arg(long)]
    pub config: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "table")]
    pub format: DetectFormat,
}

fn positive_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 3600.0 => Ok(v),
        _ => Err(format!("'{s}' is not a number of seconds in (0, 3600]")),
    }
}

fn file_rows(s: &str) -> Result<u64, String> {
    match s.parse::<u64>() {
        Ok(v) if v >= 1 => Ok(v),
        _ => Err(format!("'{s}' is not a number of rows (1 or more)")),
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum DetectFormat {
    Table,
    Json,
    /// A pull-request comment body: the new alerts, then every change found
    Markdown,
}

#[derive(Debug, Args)]
pub struct AlertsArgs {
    #[command(subcommand)]
    pub action: Option<AlertsAction>,
    #[arg(long, value_enum, default_value = "table", global = true)]
    pub format: AlertsFormat,
    /// Who acts (recorded with the status change) [default: $USER]
    #[arg(long, global = true)]
    pub who: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum AlertsAction {
    /// Every alert, newest first (the default)
    List {
        /// Only alerts in this status
        #[arg(long, value_parser = alert_status())]
        status: Option<AlertStatus>,
    },
    /// One alert with its metrics, runs and status history, and how to confirm it: the
    /// commit range, the `perfdb ab` command that runs the two commits' builds
    /// interleaved, and `git bisect` hints for commits in the range nobody measured
    Show {
        id: String,
        /// A checkout of the project: the range then lists every commit between last
        /// good and first bad, measured or not
        #[arg(long, value_name = "DIR")]
        git_dir: Option<std::path::PathBuf>,
    },
    /// Acknowledge an active alert (someone is on it)
    Ack {
        id: String,
        #[arg(long, default_value = "")]
        note: String,
    },
    /// Dismiss an alert, saying why (not a real regression, accepted trade-off)
    Dismiss {
        id: String,
        #[arg(long)]
        note: String,
    },
    /// Make an acknowledged, dismissed or resolved alert active again
    Reopen {
        id: String,
        #[arg(long, default_value = "")]
        note: String,
    },
}

#[derive(Debug, Args)]
pub struct CompactArgs {
    /// Seconds after which the files of a commit that never completed (an interrupted
    /// ingest) are taken out of the tables' logs
    #[arg(long, value_name = "SECONDS", default_value_t = 600)]
    pub grace: u64,
    /// Rows a merged measurements file holds at most; a file of half as many or more is
    /// left as it is, so a compaction reads only what was ingested since the last
    /// (a compaction holds one such file in memory: about 1.2 GB at the default, measured)
    #[arg(long, value_name = "ROWS", default_value_t = perfdb_ingest::warehouse::compact::FILE_ROWS, value_parser = file_rows)]
    pub file_rows: u64,
}

#[derive(Debug, Args)]
pub struct VacuumArgs {
    /// Hours a file no table lists is kept before it is deleted: readers that still
    /// hold an older snapshot (a long query, another engine) may be reading it, and an
    /// ingest in flight has written files it has not committed yet. Under 1 h needs
    /// --force
    #[arg(long, value_name = "HOURS", default_value_t = 168.0)]
    pub retain: f64,
    /// Allow --retain under 1 h: only when no ingest, compact or reader runs meanwhile
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum OutFormat {
    Table,
    Csv,
    Json,
}

#[derive(Debug, Args)]
pub struct RunsArgs {
    #[arg(long)]
    pub label: Option<String>,
    /// Commit prefix
    #[arg(long)]
    pub commit: Option<String>,
    /// Only runs carrying this tag (repeatable)
    #[arg(long = "tag", value_name = "KEY=VALUE")]
    pub tags: Vec<String>,
    #[arg(long, value_enum, default_value = "table")]
    pub format: OutFormat,
}

#[derive(Debug, Args)]
pub struct SqlArgs {
    /// The query, e.g. "SELECT metric, count(*) FROM measurements GROUP BY ALL"
    pub query: String,
    #[arg(long, value_enum, default_value = "table")]
    pub format: OutFormat,
    /// Allow statements that change files or settings (COPY ... TO, ATTACH, SET...),
    /// run under the warehouse's writer lock
    #[arg(long)]
    pub write: bool,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Base side: LABEL (refused when its runs span commits), LABEL@COMMIT, LABEL@latest,
    /// a commit prefix or run:ID
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
    /// Discarded runs per arm before the first block (JIT, autotuning, caches)
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub warmup: usize,
    /// Trials a side at most (even: blocks add two a side); the last look
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = even_trials)]
    pub max_trials: usize,
    /// Time budget for the whole run (`90s`, `30m`, `2h`): it stops at the last complete
    /// block that fits, and a trial still running at the budget is stopped, not stored
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    pub max_time: Option<std::time::Duration>,
    /// Deadline of one trial (`90s`, `10m`): a trial still running at it is killed with
    /// every process it started and stored as a failed run [default: ten times the
    /// slowest trial so far (the warm-up's first), at least 60s; none before one ends]
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    pub trial_timeout: Option<std::time::Duration>,
    /// Seed of the block orientations [default: from the clock; printed and stored]
    #[arg(long)]
    pub seed: Option<u64>,
    /// Keep every trial's stdout and stderr here [default: perfdb-ab/SESSION]
    #[arg(long, value_name = "DIR")]
    pub logs: Option<PathBuf>,
    /// Do not show the commands' output as they run (the progress line stays)
    #[arg(long)]
    pub quiet: bool,
    /// Do not query nvidia-smi / amd-smi before and after each trial
    #[arg(long)]
    pub no_gpu_state: bool,
    /// Format of the trials' output: auto, or one of the names `perfdb formats` lists
    #[arg(long, value_name = "NAME", default_value = "auto", value_parser = input_format)]
    pub input_format: InputFormat,
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
    pub judge: JudgeArgs,
    /// Report format
    #[arg(long, value_enum, default_value = "table")]
    pub format: CompareFormat,
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
fn duration(s: &str) -> Result<std::time::Duration, String> {
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
    pub format: NoiseFormat,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum NoiseFormat {
    Table,
    Markdown,
    Json,
}

fn at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("'{s}' is not a number of commits, 1 or more")),
    }
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The label [default: the one with the most commits]
    #[arg(long)]
    pub label: Option<String>,
    /// The machine class (`perfdb status` lists them) [default: the label's with the
    /// most runs]
    #[arg(long)]
    pub machine: Option<String>,
    /// Newest commits spanned
    #[arg(long, default_value_t = perfdb_reports::overview::COMMITS)]
    pub commits: usize,
    #[arg(long)]
    pub table: Option<String>,
    #[arg(long)]
    pub variant: Option<String>,
    #[arg(long)]
    pub metric: Option<String>,
    /// Rows shown at most (0: all)
    #[arg(long, default_value_t = 40)]
    pub limit: usize,
    /// Config file whose `[detect]` thresholds find the change points [default:
    /// ./perfdb.toml when present]
    #[arg(long)]
    pub config: Option<std::path::PathBuf>,
    #[arg(long, value_enum, default_value = "table")]
    pub format: OutFormat,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ExportFormat {
    /// PyTorch benchmark database records, schema v3, as JSON lines
    #[value(name = "pytorch-v3")]
    PytorchV3,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The label whose runs are written
    pub label: String,
    #[arg(long, value_enum, default_value = "pytorch-v3")]
    pub format: ExportFormat,
    /// File to write [default: standard output]
    #[arg(long, short)]
    pub out: Option<std::path::PathBuf>,
}

#[derive(Debug, Args)]
pub struct ExportSiteArgs {
    /// Folder to write (new, empty, or an earlier export, whose pages are replaced)
    pub dir: std::path::PathBuf,
    /// Config file for the comparisons shown, as for `serve` [default: ./perfdb.toml
    /// when present]
    #[arg(long)]
    pub config: Option<std::path::PathBuf>,
    /// Pages at most; links to pages beyond are left as text
    #[arg(long, default_value_t = 5000)]
    pub max_pages: usize,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on: loopback by default; another address (0.0.0.0:8080) makes
    /// the warehouse readable by anyone who reaches it, and says so
    #[arg(long, alias = "addr", default_value = "127.0.0.1:8080")]
    pub bind: std::net::SocketAddr,
    /// Config file with comparison defaults and per table/variant/metric thresholds,
    /// as for `compare` [default: ./perfdb.toml when present]
    #[arg(long)]
    pub config: Option<std::path::PathBuf>,
    /// Accept triage (acknowledge, dismiss, reopen) from the alerts page; the page is
    /// read-only otherwise
    #[arg(long)]
    pub allow_triage: bool,
    /// A host name the server answers to besides the bound address, localhost and
    /// loopback (repeatable): requests naming any other host get 421, so a web page
    /// cannot reach the warehouse through a DNS name rebound to this address
    #[arg(long = "host", value_name = "NAME")]
    pub hosts: Vec<String>,
}

/// An alert status, its possible values listed in `--help` from the one list.
fn alert_status() -> impl clap::builder::TypedValueParser<Value = AlertStatus> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(AlertStatus::ALL.map(AlertStatus::as_str))
        .map(|s| AlertStatus::parse(&s).expect("a status AlertStatus::ALL lists"))
}

/// A commit name as a flag gives it: refused when git or a terminal would misread it
/// ([`perfdb_ingest::model::commit_name_problem`]).
fn commit_name(s: &str) -> Result<String, String> {
    match perfdb_ingest::model::commit_name_problem(s) {
        Some(why) => Err(why.to_string()),
        None => Ok(s.to_string()),
    }
}
