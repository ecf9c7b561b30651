//! `perfdb run -- CMD`: run a benchmark, pass its output through as it comes, and
//! ingest what it printed as one run (the command line, exit code and duration as tags).

use super::ingest::{options, report};
use crate::cli::RunArgs;
use crate::Exit;
use anyhow::Context;
use perfdb_ingest::warehouse::Warehouse;
use std::io::Write;
use std::path::Path;

/// `perfdb run [options] -- CMD ARGS...`: run the benchmark with its output passed
/// through as it comes, then ingest what it printed (stdout and stderr, lines kept
/// whole, in arrival order) as one run.
pub fn run(root: &Path, a: RunArgs) -> anyhow::Result<Exit> {
    let (label, format, mut meta) = options(a.options)?;
    let command_line = a
        .command
        .iter()
        .map(|w| shell_word(w))
        .collect::<Vec<_>>()
        .join(" ");
    let started = std::time::Instant::now();
    let mut cmd = std::process::Command::new(&a.command[0]);
    cmd.args(&a.command[1..]);
    let out = tee(&mut cmd, Echo::AsIs).with_context(|| format!("cannot run `{command_line}`"))?;
    let (status, output) = (
        out.status,
        if a.stdout_only {
            out.stdout
        } else {
            out.merged
        },
    );
    let seconds = started.elapsed().as_secs_f64();
    let code = status.code();
    meta.tags
        .push(("command".to_string(), command_line.clone()));
    meta.tags.push((
        "exit_code".to_string(),
        code.map_or_else(|| "signal".to_string(), |c| c.to_string()),
    ));
    meta.tags
        .push(("duration_s".to_string(), format!("{seconds:.3}")));
    if !status.success() {
        meta.failed = Some(match code {
            Some(c) => format!("command exited with code {c}"),
            None => "command was killed by a signal".to_string(),
        });
    }
    let name = a.name.unwrap_or_else(|| command_line.clone());
    let wh = Warehouse::new(root);
    let reports = perfdb_ingest::ingest_bytes(&wh, &name, &output, format, &meta)
        .with_context(|| format!("cannot write the warehouse at {}", root.display()))?;
    let exit = report(root, &label, &reports)?;
    if exit != Exit::Ok {
        return Ok(exit);
    }
    if let Some(why) = meta.failed {
        eprintln!("error: `{command_line}`: {why}; stored as a failed run");
        return Ok(Exit::Regression);
    }
    Ok(Exit::Ok)
}

/// Quote a word for display the way a shell would need it.
pub(super) fn shell_word(w: &str) -> String {
    if !w.is_empty()
        && w.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b))
    {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

/// Where a command's output is shown while it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Echo {
    /// stdout to ours, stderr to ours.
    AsIs,
    /// Both to our stderr (our stdout carries a report).
    ToStderr,
    Quiet,
}

/// What a command printed: stdout and stderr merged as whole lines in the order they
/// arrived, and stdout alone.
pub(super) struct Captured {
    pub status: std::process::ExitStatus,
    pub merged: Vec<u8>,
    pub stdout: Vec<u8>,
}

/// Run `command`, showing its stdout and stderr as `echo` says as they come, and return
/// its status and everything it printed.
pub(super) fn tee(command: &mut std::process::Command, echo: Echo) -> std::io::Result<Captured> {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let collected = std::sync::Mutex::new(Vec::<u8>::new());
    let pump = |mut from: Box<dyn Read + Send>, is_stderr: bool| {
        let collected = &collected;
        move || -> std::io::Result<Vec<u8>> {
            let mut buf = [0u8; 16 * 1024];
            let mut partial: Vec<u8> = Vec::new();
            let mut own = Vec::new();
            loop {
                let n = from.read(&mut buf)?;
                if n == 0 {
                    break;
                }
                let chunk = &buf[..n];
                match (echo, is_stderr) {
                    (Echo::Quiet, _) => {}
                    (Echo::AsIs, false) => {
                        let mut o = std::io::stdout().lock();
                        o.write_all(chunk)?;
                        o.flush()?;
                    }
                    _ => {
                        let mut e = std::io::stderr().lock();
                        e.write_all(chunk)?;
                        e.flush()?;
                    }
                }
                if !is_stderr {
                    own.extend_from_slice(chunk);
                }
                partial.extend_from_slice(chunk);
                if let Some(last) = partial.iter().rposition(|b| *b == b'\n') {
                    let rest = partial.split_off(last + 1);
                    collected
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .extend_from_slice(&partial);
                    partial = rest;
                }
            }
            if !partial.is_empty() {
                partial.push(b'\n');
                collected
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .extend_from_slice(&partial);
            }
            Ok(own)
        }
    };
    let out = Box::new(child.stdout.take().expect("piped"));
    let err = Box::new(child.stderr.take().expect("piped"));
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(pump(out, false));
        let b = s.spawn(pump(err, true));
        (a.join(), b.join())
    });
    let status = child.wait()?;
    let panicked = || std::io::Error::other("output thread panicked");
    let stdout = a.unwrap_or_else(|_| Err(panicked()))?;
    b.unwrap_or_else(|_| Err(panicked()))?;
    Ok(Captured {
        status,
        merged: collected.into_inner().unwrap_or_else(|p| p.into_inner()),
        stdout,
    })
}
