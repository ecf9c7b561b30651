//! `--profile ncu|rocprof|proton`: after the timed trials decide, one more trial per arm
//! under the profiler, never mixed into the timing (only its counters are stored, in the
//! arm's label, tagged `profiled`), so the report shows the counters that moved with
//! each changed row (`reports::compare::counters`). The profiler is found before any
//! trial runs; its absence is an error then, not after an hour of trials.

use super::arms::Arms;
use super::session::Session;
use crate::process::{self, Echo};
use anyhow::Context;
use perfdb_ingest::formats::Format;
use perfdb_ingest::model::RunMeta;
use perfdb_reports::ab::Arm;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub use crate::cli::Profiler;

fn name_of(p: Profiler) -> &'static str {
    match p {
        Profiler::Ncu => "ncu",
        Profiler::Rocprof => "rocprofv3",
        Profiler::Proton => "proton",
    }
}

/// The metrics ncu collects beside its sections: what the bytes a kernel moves and the
/// work it does are read from.
pub const NCU_METRICS: &str = "dram__bytes_read.sum,dram__bytes_write.sum,\
gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,\
smsp__inst_executed.sum,launch__registers_per_thread";

/// A profiler found and ready.
pub struct Profiling {
    pub profiler: Profiler,
    /// The program started: ncu, rocprofv3, or the arms' Python (proton).
    program: String,
}

fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The profiler `--profile` asks for, found (`--profiler PATH`, else on PATH) before any
/// trial; for proton, both arms must be Python scripts whose interpreter has proton.
pub fn find(
    profiler: Option<Profiler>,
    program: Option<&Path>,
    arms: &Arms,
) -> anyhow::Result<Option<Profiling>> {
    let Some(p) = profiler else {
        if program.is_some() {
            anyhow::bail!(
                "--profiler names a program for --profile: give --profile ncu, rocprof or proton"
            );
        }
        return Ok(None);
    };
    let program = match p {
        Profiler::Ncu | Profiler::Rocprof => match program {
            Some(given) if given.is_file() => given.to_string_lossy().into_owned(),
            Some(given) => anyhow::bail!(
                "--profile {}: --profiler {} is not a file",
                name_of(p),
                given.display()
            ),
            None => on_path(name_of(p))
                .ok_or_else(|| {
                    anyhow::anyhow!(
                        "--profile {0}: `{0}` is not on PATH; install it, or name it with --profiler PATH (nothing was run)",
                        name_of(p)
                    )
                })?
                .to_string_lossy()
                .into_owned(),
        },
        Profiler::Proton => {
            let mut pythons = Vec::new();
            for arm in [Arm::Base, Arm::Head] {
                let python = super::environment::python_of(&arms.describe(arm)).ok_or_else(|| {
                    anyhow::anyhow!(
                        "--profile proton profiles a Python script: the {} arm's command `{}` runs no python (nothing was run)",
                        arm.name(),
                        arms.describe(arm)
                    )
                })?;
                let ok = arms
                    .alongside(arm, &python, &["-c", "import triton.profiler.proton"])
                    .stdin(std::process::Stdio::null())
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success());
                if !ok {
                    anyhow::bail!(
                        "--profile proton: `{python}` of the {} arm cannot import triton.profiler.proton (nothing was run)",
                        arm.name()
                    );
                }
                pythons.push(python);
            }
            pythons.swap_remove(0)
        }
    };
    Ok(Some(Profiling {
        profiler: p,
        program,
    }))
}

/// What one profiled trial left: the files to ingest, each with its format, and how
/// long it took.
struct Profiled {
    files: Vec<(PathBuf, Format)>,
    seconds: f64,
}

impl Profiling {
    pub fn name(&self) -> &'static str {
        name_of(self.profiler)
    }

    /// One profiled trial of `arm` of the session `s` (its output under `dir`), its
    /// counters stored with the arm's metadata tagged `profiled=PROFILER`. Returns the
    /// seconds it took.
    pub fn run(
        &self,
        s: &Session,
        arm: Arm,
        dir: &Path,
        deadline: Duration,
    ) -> anyhow::Result<f64> {
        let (wh, meta) = (&s.wh, &s.metas[arm.index()]);
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let profiled = self.trial(&s.arms, arm, dir, deadline)?;
        let mut tags = meta.tags.clone();
        tags.push(("profiled".into(), name_of(self.profiler).into()));
        tags.push(("arm".into(), arm.name().into()));
        let meta = RunMeta {
            tags,
            ..meta.clone()
        };
        if profiled.files.is_empty() {
            anyhow::bail!(
                "the {} arm's profiled trial wrote no {} output under {}",
                arm.name(),
                name_of(self.profiler),
                dir.display()
            );
        }
        for (file, format) in &profiled.files {
            let bytes =
                std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
            let name = file.to_string_lossy();
            let reports =
                perfdb_ingest::ingest_bytes(wh, &name, &bytes, Some(*format), &meta, s.devices)
                    .context("cannot write the warehouse")?;
            for r in &reports {
                if let Err(e) = &r.result {
                    anyhow::bail!(
                        "the {} arm's profile {name} could not be read: {e}",
                        arm.name()
                    );
                }
            }
        }
        Ok(profiled.seconds)
    }

    /// The profiler's own arguments before the profiled command, its output under `dir`.
    fn args(&self, dir: &Path) -> Vec<String> {
        match self.profiler {
            Profiler::Ncu => [
                "--csv",
                "--target-processes",
                "all",
                "--section",
                "SpeedOfLight",
                "--section",
                "LaunchStats",
                "--section",
                "Occupancy",
                "--metrics",
                NCU_METRICS,
            ]
            .map(String::from)
            .to_vec(),
            Profiler::Rocprof => vec![
                "--kernel-trace".into(),
                "--pmc".into(),
                "FETCH_SIZE".into(),
                "WRITE_SIZE".into(),
                "--output-format".into(),
                "csv".into(),
                "-d".into(),
                dir.to_string_lossy().into_owned(),
                "-o".into(),
                "profile".into(),
                "--".into(),
            ],
            Profiler::Proton => vec![
                "-m".into(),
                "triton.profiler.proton".into(),
                "-n".into(),
                dir.join("profile").to_string_lossy().into_owned(),
            ],
        }
    }

    fn trial(
        &self,
        arms: &Arms,
        arm: Arm,
        dir: &Path,
        deadline: Duration,
    ) -> anyhow::Result<Profiled> {
        let argv = arms.argv(arm);
        let mut args = self.args(dir);
        let command = match self.profiler {
            // proton runs the script itself: the words after the interpreter.
            Profiler::Proton => {
                let words: Vec<String> = arms
                    .describe(arm)
                    .split_whitespace()
                    .map(String::from)
                    .collect();
                let at = words
                    .iter()
                    .position(|w| super::environment::python_of(w).is_some())
                    .unwrap_or(0);
                words[at + 1..].to_vec()
            }
            _ => argv,
        };
        args.extend(command);
        let arg_refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut cmd = arms.alongside(arm, &self.program, &arg_refs);
        let start = Instant::now();
        let out = process::run(&mut cmd, Echo::Quiet, Some(start + deadline))
            .with_context(|| format!("cannot run {} for the {} arm", self.program, arm.name()))?;
        let seconds = start.elapsed().as_secs_f64();
        std::fs::write(dir.join("profile.log"), &out.merged).ok();
        if !out.status.success() {
            anyhow::bail!(
                "the {} arm's profiled trial under {} failed ({}): its output is in {}",
                arm.name(),
                name_of(self.profiler),
                match out.ended {
                    process::Ended::Deadline => format!(
                        "killed at its deadline of {}",
                        perfdb_reports::fmt::human_seconds(deadline.as_secs_f64())
                    ),
                    _ => format!(
                        "exit {}",
                        out.status
                            .code()
                            .map_or("by a signal".into(), |c| c.to_string())
                    ),
                },
                dir.join("profile.log").display()
            );
        }
        let files = match self.profiler {
            Profiler::Ncu => {
                let f = dir.join("profile.csv");
                std::fs::write(&f, &out.stdout)
                    .with_context(|| format!("cannot write {}", f.display()))?;
                vec![(f, Format::NcuCsv)]
            }
            Profiler::Rocprof => csvs_under(dir)
                .into_iter()
                .map(|f| (f, Format::Rocprofv3Csv))
                .collect(),
            Profiler::Proton => {
                let f = dir.join("profile.hatchet");
                if f.is_file() {
                    vec![(f, Format::ProtonHatchet)]
                } else {
                    Vec::new()
                }
            }
        };
        Ok(Profiled { files, seconds })
    }
}

/// rocprofv3's counter-collection and kernel-trace CSVs under `dir` (it writes them a
/// folder or two down: `HOST/PID_...`).
fn csvs_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n.ends_with("counter_collection.csv") || n.ends_with("kernel_trace.csv")
            }) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}
