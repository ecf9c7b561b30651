//! The arguments of `perfdb ingest` and `perfdb run`.

use super::*;

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
    /// The GPU the runs ran on, as `perfdb devices` lists it (h200, mi300x, or a product
    /// name such as "NVIDIA H200"): every TFLOPS and TB/s value is then held against its
    /// peak [default: the device the machine tag, the GPU the output prints or the arch
    /// names, when one names a device]
    #[arg(long, value_name = "DEVICE")]
    pub device: Option<String>,
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
    /// Time only the rows whose kernels changed since BASE (a selector: `nightly@latest`,
    /// `run:ID`): an identity pass first records each row's compiled Triton kernels and
    /// launches; rows equal to BASE's are not timed and say which run their result is
    /// (docs/affected.md). A toolchain, driver or device change times every row
    #[arg(long, value_name = "BASE")]
    pub affected: Option<String>,
    /// Run the identity pass and store each row's identity with the run, timing every
    /// row: the first run a later `--affected` compares with
    #[arg(long, conflicts_with = "affected")]
    pub identity: bool,
    /// With --affected: the share of rows not timed that are timed anyway, to audit
    /// the skipping (0 to 1)
    #[arg(
        long,
        value_name = "SHARE",
        default_value_t = 0.05,
        requires = "affected"
    )]
    pub audit: f64,
    /// With --affected: time the rows whose only change is the autotuner's choice (a
    /// config drift: same source, toolchain and launch), not timed by default
    #[arg(long, requires = "affected")]
    pub time_drift: bool,
    /// With --affected or --identity: run the timed pass N times, each stored as a run
    /// (a trial; compare needs 3 a side), under one --commit
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub trials: usize,
    /// The benchmark command and its arguments, after `--`
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}
