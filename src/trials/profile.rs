//! `--profile ncu|rocprof|proton`: after the timed trials decide, one more trial per arm
//! under the profiler, never mixed into the timing (only its counters are stored, in the
//! arm's label, tagged `profiled`), so the report shows the counters that moved with
//! each changed row (`reports::compare::counters`). The profiler is found before any
//! trial runs; its absence is an error then, not after an hour of trials. Each arm is
//! profiled where and with what it runs: its folder, its environment, its shell
//! command's own `cd`, its own interpreter (proton). ncu profiles the first launch of
//! each kernel unless `--profile-args` scopes it otherwise.

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

/// ncu's default scope: the first launch of each kernel (a benchmark's timing loop
/// launches each kernel hundreds of times; every one would be replayed).
pub const NCU_SCOPE: [&str; 2] = ["--kernel-id", "::regex:.:1"];

/// The ncu flags that scope what it profiles: given in `--profile-args`, they replace
/// [`NCU_SCOPE`].
const NCU_SCOPE_FLAGS: [&str; 7] = [
    "-k",
    "--kernel-name",
    "--kernel-id",
    "-c",
    "--launch-count",
    "-s",
    "--launch-skip",
];

/// A profiler found and ready.
pub struct Profiling {
    pub profiler: Profiler,
    /// The program started: ncu or rocprofv3; for proton, each arm's own interpreter.
    program: String,
    /// `--profile-args`, split as the shell would.
    extra: Vec<String>,
}

/// `-k 'regex:add|mul' -c 4` -> its words, as the shell splits them (single and double
/// quotes, backslash).
pub fn shell_split(s: &str) -> anyhow::Result<Vec<String>> {
    let (mut out, mut cur, mut any) = (Vec::new(), String::new(), false);
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                any = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => cur.push(c),
                        None => anyhow::bail!("--profile-args: a ' is not closed in `{s}`"),
                    }
                }
            }
            '"' => {
                any = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => cur.extend(chars.next()),
                        Some(c) => cur.push(c),
                        None => anyhow::bail!("--profile-args: a \" is not closed in `{s}`"),
                    }
                }
            }
            '\\' => {
                any = true;
                cur.extend(chars.next());
            }
            c if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            c => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    Ok(out)
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
    extra: Option<&str>,
    arms: &Arms,
) -> anyhow::Result<Option<Profiling>> {
    let Some(p) = profiler else {
        if program.is_some() || extra.is_some() {
            anyhow::bail!(
                "--profiler and --profile-args are for --profile: give --profile ncu, rocprof or proton"
            );
        }
        return Ok(None);
    };
    let extra = shell_split(extra.unwrap_or(""))?;
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
            // Each arm's own interpreter, where the arm runs it, must import proton.
            for arm in [Arm::Base, Arm::Head] {
                let Some((mut cmd, python)) =
                    arms.python_command(arm, &["-c", "import triton.profiler.proton"], false)
                else {
                    anyhow::bail!(
                        "--profile proton profiles a Python script: the {} arm's command `{}` runs no python (nothing was run)",
                        arm.name(),
                        arms.describe(arm)
                    );
                };
                let ok = cmd
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
            }
            String::new()
        }
    };
    Ok(Some(Profiling {
        profiler: p,
        program,
        extra,
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

    /// One profiled trial of each arm of the session `s` (outputs under `dirs`), then,
    /// once both ended, their counters stored with each arm's metadata tagged
    /// `profiled=PROFILER`: an interrupted or failed trial stores nothing. Returns the
    /// seconds each took.
    pub fn run(
        &self,
        s: &Session,
        dirs: [&Path; 2],
        deadline: Duration,
    ) -> anyhow::Result<[f64; 2]> {
        let mut done = Vec::new();
        for arm in [Arm::Base, Arm::Head] {
            let dir = dirs[arm.index()];
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            // Absolute: the profiled command runs in the arm's own folder.
            let dir = &std::fs::canonicalize(dir)
                .with_context(|| format!("cannot resolve {}", dir.display()))?;
            say!("ab: profiling the {} arm ({})", arm.name(), dir.display());
            let profiled = self.trial(&s.arms, arm, dir, deadline, &s.pinned())?;
            if profiled.files.is_empty() {
                anyhow::bail!(
                    "the {} arm's profiled trial wrote no {} output under {}",
                    arm.name(),
                    name_of(self.profiler),
                    dir.display()
                );
            }
            done.push((arm, profiled));
        }
        let mut seconds = [0.0; 2];
        for (arm, profiled) in done {
            self.store(s, arm, &profiled)?;
            seconds[arm.index()] = profiled.seconds;
        }
        Ok(seconds)
    }

    /// A profiled trial's files stored under the arm's label, tagged `profiled`.
    fn store(&self, s: &Session, arm: Arm, profiled: &Profiled) -> anyhow::Result<()> {
        let (wh, meta) = (&s.wh, &s.metas[arm.index()]);
        let mut tags = meta.tags.clone();
        tags.push(("profiled".into(), name_of(self.profiler).into()));
        tags.push(("arm".into(), arm.name().into()));
        let meta = RunMeta {
            tags,
            ..meta.clone()
        };
        for (file, format) in &profiled.files {
            let bytes =
                std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
            let name = file.to_string_lossy();
            let reports =
                perfdb_ingest::ingest_bytes(wh, &name, &bytes, Some(*format), &meta, &s.devices)
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
        Ok(())
    }

    /// The profiler's own arguments before the profiled command, its output under `dir`,
    /// `--profile-args` last.
    fn args(&self, dir: &Path) -> Vec<String> {
        let mut args: Vec<String> = match self.profiler {
            Profiler::Ncu => {
                let mut a: Vec<String> = [
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
                .to_vec();
                let scoped = self.extra.iter().any(|w| {
                    NCU_SCOPE_FLAGS
                        .iter()
                        .any(|f| w == f || w.starts_with(&format!("{f}=")))
                });
                if !scoped {
                    a.extend(NCU_SCOPE.map(String::from));
                }
                a
            }
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
            ],
            Profiler::Proton => vec![
                "-m".into(),
                "triton.profiler.proton".into(),
                "-n".into(),
                dir.join("profile").to_string_lossy().into_owned(),
            ],
        };
        args.extend(self.extra.iter().cloned());
        if self.profiler == Profiler::Rocprof {
            args.push("--".into());
        }
        args
    }

    fn trial(
        &self,
        arms: &Arms,
        arm: Arm,
        dir: &Path,
        deadline: Duration,
        pin: &[(String, String)],
    ) -> anyhow::Result<Profiled> {
        let args = self.args(dir);
        let arg_refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut cmd = match self.profiler {
            // proton runs the script itself: the arm's interpreter, where the arm runs it,
            // with proton's module before the script.
            Profiler::Proton => {
                arms.python_command(arm, &arg_refs, true)
                    .ok_or_else(|| anyhow::anyhow!("the {} arm runs no python", arm.name()))?
                    .0
            }
            // ncu and rocprofv3 start the arm's whole command (`sh -c CMD` for a shell
            // command, so its `cd` is followed) in the arm's folder and environment.
            _ => {
                let mut words = arg_refs.clone();
                let argv = arms.argv(arm);
                words.extend(argv.iter().map(String::as_str));
                arms.alongside(arm, &self.program, &words)
            }
        };
        cmd.envs(pin.iter().map(|(k, v)| (k, v)));
        let start = Instant::now();
        let out = process::run(&mut cmd, Echo::Quiet, Some(start + deadline))
            .with_context(|| format!("cannot run the {} arm under {}", arm.name(), self.name()))?;
        let seconds = start.elapsed().as_secs_f64();
        std::fs::write(dir.join("profile.log"), &out.merged).ok();
        if let process::Ended::Interrupted(sig) = out.ended {
            return Err(Interrupted(sig).into());
        }
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

/// A profiled trial stopped by SIGINT/SIGTERM: the command ends with 130, nothing of the
/// profile stored.
#[derive(Debug)]
pub struct Interrupted(pub i32);

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the profiled trial was stopped by signal {}", self.0)
    }
}

impl std::error::Error for Interrupted {}

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

#[cfg(test)]
mod tests {
    #[test]
    fn profile_args_split_as_the_shell_splits_them() {
        assert_eq!(
            super::shell_split(r#"-k 'regex:add|mul' -c 4 --x "a b" c\ d ''"#).unwrap(),
            ["-k", "regex:add|mul", "-c", "4", "--x", "a b", "c d", ""]
        );
        assert!(super::shell_split("-k 'open").is_err());
    }
}
