//! `perfdb ingest`: files read into the warehouse, one run a file; the options and the
//! report `perfdb run` shares ([`super::run`]).

use crate::cli::{IngestArgs, IngestOptions};
use crate::Exit;
use anyhow::Context;
use perfdb_ingest::devices::Table;
use perfdb_ingest::formats::Format;
use perfdb_ingest::model::RunMeta;
use perfdb_ingest::warehouse::{Label, Warehouse, DEFAULT_LABEL};
use perfdb_ingest::FileReport;
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::Arc;

/// Inputs at least this long get a progress bar (on a terminal).
const PROGRESS_MIN_FILES: usize = 50;

/// What `ingest` and `run` share, resolved from their flags.
pub(super) struct Options {
    /// The label the runs are stored under.
    pub label: Label,
    /// The format asked for (`--input-format`); none: detected a file at a time.
    pub format: Option<Format>,
    /// The runs' commit, time, machine and tags.
    pub meta: RunMeta,
    /// The device table runs are read against (perfdb.toml's `[[device]]` entries with
    /// the built-in ones).
    pub devices: Arc<Table>,
}

/// The [`Options`] of the flags: `--device` is resolved here, once, to the id stored.
pub(super) fn options(a: IngestOptions) -> anyhow::Result<Options> {
    options_on(a, super::device_table(None)?)
}

/// [`options`] read against `devices` (a command's own `--config`).
pub(super) fn options_on(a: IngestOptions, devices: Arc<Table>) -> anyhow::Result<Options> {
    let format = a.format.0;
    let label = Label::new(a.label.as_deref().unwrap_or(DEFAULT_LABEL))?;
    let commit_time = match (&a.commit_time, &a.git_dir) {
        (Some(t), _) => Some(t.clone()),
        (None, Some(dir)) => Some(git_commit_time(dir, a.commit.as_deref())?),
        (None, None) => None,
    };
    let device = match a.device.as_deref() {
        None => None,
        Some(d) => Some(devices.named(d).map(|d| d.id.clone()).ok_or_else(|| {
            anyhow::anyhow!(
                "--device {d}: not a device perfdb knows; `perfdb devices` lists them, \
                         and a [[device]] entry in perfdb.toml adds one"
            )
        })?),
    };
    let meta = RunMeta {
        label: label.as_str().to_string(),
        commit: a.commit,
        commit_time_us: match commit_time.as_deref() {
            None => None,
            Some(t) => Some(
                chrono::DateTime::parse_from_rfc3339(t)
                    .map_err(|e| {
                        anyhow::anyhow!(
                            "--commit-time '{t}': {e}; give RFC 3339, e.g. 2026-11-30T09:00:00Z \
                             (`git show -s --format=%cI HEAD` prints it)"
                        )
                    })?
                    .timestamp_micros(),
            ),
        },
        arch: a.arch,
        tags: {
            let mut tags = super::parse_pairs(&a.tags, "--tag")?;
            for (flag, tag, given) in [
                ("--machine", "machine", a.machine.as_deref()),
                ("--device", "device", device.as_deref()),
                (
                    "--method",
                    perfdb_ingest::model::METHOD_TAG,
                    a.method.as_deref(),
                ),
            ] {
                if let Some(m) = given {
                    if tags.iter().any(|(k, v)| k == tag && v != m) {
                        anyhow::bail!("{flag} {m} and --tag {tag}=... disagree; give one");
                    }
                    tags.retain(|(k, _)| k != tag);
                    tags.push((tag.to_string(), m.to_string()));
                }
            }
            tags
        },
        unit: a.unit,
        variant_axis: a.variant_axis,
        failed: None,
    };
    Ok(Options {
        label,
        format,
        meta,
        devices,
    })
}

pub fn run(root: &Path, a: IngestArgs) -> anyhow::Result<Exit> {
    let Options {
        label,
        format,
        meta,
        devices,
    } = options(a.options)?;
    let wh = Warehouse::new(root);
    let stdin = a.paths.iter().any(|p| p.as_os_str() == "-");
    if stdin {
        if a.paths.len() > 1 {
            anyhow::bail!(
                "`-` (standard input) cannot be mixed with files; ingest them in two commands"
            );
        }
        let Some(name) = a.name.as_deref().filter(|n| !n.trim().is_empty()) else {
            anyhow::bail!(
                "reading standard input needs --name NAME (e.g. --name gemm-trial-3.log): the \
                 name identifies the run, so the same output ingested twice is recognised"
            );
        };
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut bytes)
            .context("cannot read standard input")?;
        let reports = perfdb_ingest::ingest_bytes(&wh, name, &bytes, format, &meta, &devices)
            .with_context(|| format!("cannot write the warehouse at {}", root.display()))?;
        return report(root, &label, &reports);
    }
    if a.name.is_some() {
        anyhow::bail!("--name names the run read from standard input; it needs `-` as the input");
    }
    let files = perfdb_ingest::expand_inputs(&a.paths)?;
    if files.is_empty() {
        anyhow::bail!(
            "no files found under {}",
            a.paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let total = files.len();
    let show = total >= PROGRESS_MIN_FILES && std::io::stderr().is_terminal();
    let progress = move |done: usize| {
        if show && (done.is_multiple_of(10) || done == total) {
            let width = 30;
            let filled = done * width / total;
            eprint!(
                "\r[{}{}] {done}/{total} files",
                "=".repeat(filled),
                " ".repeat(width - filled)
            );
            if done == total {
                say!();
            }
        }
    };
    let reports = perfdb_ingest::ingest_files(&wh, &files, format, &meta, &devices, &progress)
        .with_context(|| format!("cannot write the warehouse at {}", root.display()))?;
    report(root, &label, &reports)
}

/// Say what happened to each input: data to stdout, warnings and errors to stderr.
pub(super) fn report(root: &Path, label: &Label, reports: &[FileReport]) -> anyhow::Result<Exit> {
    let mut out = std::io::stdout().lock();
    let (mut added, mut present, mut failed) = (0, 0, 0);
    for r in reports {
        match &r.result {
            Ok(i) => {
                for w in &i.warnings {
                    let at = if w.line > 0 {
                        format!(":{}", w.line)
                    } else {
                        String::new()
                    };
                    say!("warning: {}{at}: {}", r.path, w.reason);
                }
                if let Some(why) = &i.failed {
                    say!(
                        "warning: {}: the harness reported this run failed ({why}); it is kept with its verdict",
                        r.path
                    );
                }
                let tables: Vec<String> =
                    i.tables.iter().map(|(t, n)| format!("{t} ({n})")).collect();
                match i.trial {
                    Some(trial) => {
                        added += 1;
                        let values = if tables.is_empty() {
                            "no values (a failed run)".to_string()
                        } else {
                            format!("{} value(s) in {}", i.rows, tables.join(", "))
                        };
                        writeln!(
                            out,
                            "ingested {}: {} run {} trial {trial}, {values}",
                            r.path,
                            i.format.map_or(perfdb_ingest::NO_FORMAT, Format::name),
                            i.run_id,
                        )?;
                        if !i.repetitions.is_empty() {
                            added += i.repetitions.len();
                            let reps: Vec<String> = i
                                .repetitions
                                .iter()
                                .map(|(id, t)| match t {
                                    Some(t) => format!("{id} (trial {t})"),
                                    None => format!("{id} (already present)"),
                                })
                                .collect();
                            writeln!(
                                out,
                                "  its {} further repetition(s), one run each: {}",
                                reps.len(),
                                reps.join(", ")
                            )?;
                        }
                    }
                    None => {
                        present += 1;
                        writeln!(out, "skipped {}: already in the warehouse as run {} (same file name, content and metadata)", r.path, i.run_id)?;
                    }
                }
            }
            Err(e) => {
                failed += 1;
                say!("error: {e}");
            }
        }
    }
    let (unknown_runs, unknown_values) = reports
        .iter()
        .filter_map(|r| r.result.as_ref().ok())
        .filter(|i| i.unknown_device_rows > 0)
        .fold((0, 0), |(r, v), i| (r + 1, v + i.unknown_device_rows));
    if unknown_runs > 0 {
        say!(
            "note: device unknown: percent of peak not computed for {unknown_values} TFLOPS/TB/s \
             value(s) of {unknown_runs} run(s) (name the GPU with --device; `perfdb devices` \
             lists the known ones)"
        );
    }
    writeln!(out, "{added} run(s) added with label '{label}', {present} already present, {failed} failed; warehouse {}", root.display())?;
    if failed > 0 {
        let names: Vec<&str> = reports
            .iter()
            .filter(|r| r.result.is_err())
            .map(|r| r.path.as_str())
            .collect();
        say!(
            "error: {failed} file(s) not ingested (nothing of them was written): {}",
            names.join(", ")
        );
        return Ok(Exit::Error);
    }
    Ok(Exit::Ok)
}

/// The committer time of `commit` in the git checkout `dir`, RFC 3339.
fn git_commit_time(dir: &Path, commit: Option<&str>) -> anyhow::Result<String> {
    let Some(commit) = commit else {
        anyhow::bail!("--git-dir reads the time of --commit: give --commit too");
    };
    perfdb_reports::git::run(
        dir,
        &["show", "-s", "--format=%cI", "--end-of-options", commit],
    )
    .map_err(|e| {
        anyhow::anyhow!(
            "--git-dir {}: git cannot show commit {commit}: {}",
            dir.display(),
            e.why
        )
    })
}

/// `perfdb formats`: every format with its one line (the README's table holds the same).
pub fn formats() -> anyhow::Result<Exit> {
    let mut out = std::io::stdout().lock();
    let width = Format::ALL
        .iter()
        .map(|f| f.name().len())
        .max()
        .unwrap_or(0);
    let mut all = Format::ALL;
    all.sort_by_key(|f| f.name());
    for f in all {
        writeln!(out, "{:width$}  {}", f.name(), f.summary())?;
    }
    writeln!(
        out,
        "\nDetected from the text; `perfdb ingest --format NAME` forces one and says why a file does not fit."
    )?;
    Ok(Exit::Ok)
}

/// A benchmark command's run, as `perfdb run` stores it: the command line, its exit code
/// and duration as tags (and output read after it exited, said), a failed command as the
/// run's failure.
pub(super) fn note_command(
    meta: &mut RunMeta,
    command_line: &str,
    out: &crate::process::Captured,
    seconds: f64,
) {
    let code = out.status.code();
    meta.tags
        .push(("command".to_string(), command_line.to_string()));
    meta.tags.push((
        "exit_code".to_string(),
        code.map_or_else(|| "signal".to_string(), |c| c.to_string()),
    ));
    meta.tags
        .push(("duration_s".to_string(), format!("{seconds:.3}")));
    if let Some(note) = &out.after_exit {
        say!("perfdb run: `{command_line}`: {note}");
        meta.tags
            .push(("output_after_exit".to_string(), note.clone()));
    }
    if !out.status.success() {
        meta.failed = Some(match code {
            Some(c) => format!("command exited with code {c}"),
            None => "command was killed by a signal".to_string(),
        });
    }
}
