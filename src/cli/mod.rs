//! The command line (clap derive).

use clap::{Args, Parser, Subcommand, ValueEnum};
use perfdb_ingest::model::AlertStatus;
// How two sides are judged: the options `compare` and `ab` share, defined once with the
// web query they also are.
use perfdb_reports::compare::JudgeArgs;
pub use perfdb_reports::fmt::OutputFormat;
pub use perfdb_reports::query::table::TableFormat;
pub use perfdb_reports::render::ReportFormat as CompareFormat;
use std::path::PathBuf;

mod ingest;
mod judge;
mod store;
mod watch;

pub use ingest::*;
pub use judge::*;
pub use store::*;
pub use watch::*;

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
    /// are compared by the adaptive t-test (Yuen's on trimmed means where a few trials
    /// lie far out, else Welch's; --test welch|trimmed chooses; mann-whitney refused),
    /// each p adjusted by the simulated cost of the planned looks,
    /// and the run stops once every row is a regression shown beyond the threshold, an
    /// improvement, cleared (a slowdown beyond the threshold is ruled out) or undecidable
    /// (the noise cannot tell at --max-trials). The report is `compare`'s, with each
    /// row's state and the trials a side an undecided row would need. Method:
    /// docs/STATS.md, "Sequential A/B".
    ///
    /// Three ways to give the arms:
    ///   perfdb ab --base 'cd ../main && python bench.py' --head 'python bench.py'
    ///   perfdb ab --base-dir ../main --head-dir . -- python bench.py
    ///   perfdb ab --base-env USE_NEW_KERNEL=0 --head-env USE_NEW_KERNEL=1 -- python bench.py
    #[command(after_help = exit_codes_text(), verbatim_doc_comment)]
    Ab(Box<AbArgs>),
    /// Find the commit that made a regression: `ab` at each step of a halving search
    ///
    /// From an alert (its group's range and series, its machine: a group has one bisect) or
    /// --good/--bad: each step checks a commit out in a git worktree, builds it (--build;
    /// a failed build skips the commit), and runs `ab`'s interleaved trials of it against
    /// the good end with the sequential rule on the watched rows and the control. Bad: a
    /// watched row is a regression beyond the threshold; good: every watched row is
    /// cleared; a step still undecided at --max-trials ends the search at the range it
    /// proved. The good end's trials of each step are kept and count in every later
    /// step. Every trial is ingested under the label bisect-ID with its commit. With an
    /// alert, a culprit whose step is well under the alert's is bisected past (a step in
    /// two parts says each part's share). Ends with the culprit (sha, subject, author,
    /// date), its evidence, the commits skipped and the GPU time spent; with an alert the
    /// result is stored with every alert of its group (`perfdb alerts show`, /alerts/ID).
    ///
    ///   perfdb bisect 48b945bd --repo . --build 'make -j' -- python bench.py
    ///   perfdb bisect --good v1.2 --bad main --series gemm --repo . -- python bench.py
    #[command(after_help = exit_codes_text(), verbatim_doc_comment)]
    Bisect(Box<BisectArgs>),
    /// How noisy each series of a label is, and the trials a side a change needs
    ///
    /// Per series (table, variant, key, metric): sigma, the pooled standard deviation of
    /// ln values within each commit (a history) or within the label (A/A runs of one
    /// commit), its robust twin (1.4826 x MAD), and the trials a side a two-sided Welch
    /// test needs to see 1%, 2%, 5% and the threshold at --alpha with power 0.8.
    Noise(NoiseArgs),
    /// List the input formats `ingest` reads (auto-detected; `--format NAME` forces one)
    Formats,
    /// List the devices whose peaks runs are held against: dense TFLOPS per data type,
    /// memory bandwidth, the names runs match them by, and the document of each figure
    ///
    /// A run on one of these gets percent of peak on its TFLOPS and TB/s values, and a
    /// value above the peak (by more than boost clocks allow) is reported as impossible.
    /// `[[device]]` entries in perfdb.toml add devices or replace one by id.
    Devices(DevicesArgs),
    /// Ingest the bundled H200 sample data and compare base with head
    #[command(after_help = exit_codes_text())]
    Demo,
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DevicesFormat {
    Text,
    Json,
}

#[derive(Debug, Args)]
pub struct DevicesArgs {
    #[command(subcommand)]
    pub action: Option<DevicesAction>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: DevicesFormat,
    /// Config file with `[[device]]` entries [default: perfdb.toml if present]
    #[arg(long)]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum DevicesAction {
    /// Measure what this machine's GPU really reaches and store it: a 2 GiB copy
    /// (bandwidth) and an 8192^3 matrix product per data type (compute), through torch
    ///
    /// The roofs are stored in the warehouse under the label `roofs`, with the GPU's
    /// name, driver, clocks and power limit; `perfdb devices` and the roofline page show
    /// them beside the datasheet's.
    Measure(MeasureArgs),
}

#[derive(Debug, Args)]
pub struct MeasureArgs {
    /// The Python that imports torch
    #[arg(long, default_value = "python3", value_name = "PYTHON")]
    pub python: String,
    /// Deadline of the measurement (`10m`): killed with what it started when passed
    #[arg(long, value_name = "DURATION", default_value = "20m", value_parser = judge::duration)]
    pub timeout: std::time::Duration,
}
