//! `perfdb run -- CMD`: run a benchmark, pass its output through as it comes, and
//! ingest what it printed as one run (the command line, exit code and duration as tags).

use super::ingest::{note_command, options, report};
use crate::cli::RunArgs;
use crate::process::{self as child, Echo, Ended};
use crate::Exit;
use anyhow::Context;
use perfdb_ingest::warehouse::Warehouse;
use std::path::Path;

/// `perfdb run [options] -- CMD ARGS...`: run the benchmark with its output passed
/// through as it comes, then ingest what it printed (stdout and stderr, lines kept
/// whole, in arrival order) as one run.
pub fn run(root: &Path, a: RunArgs) -> anyhow::Result<Exit> {
    if a.affected.is_some() || a.identity {
        return super::affected::run(root, a);
    }
    let super::ingest::Options {
        label,
        format,
        mut meta,
        devices,
    } = options(a.options)?;
    let command_line = child::command_line(&a.command);
    let started = std::time::Instant::now();
    let mut cmd = std::process::Command::new(&a.command[0]);
    cmd.args(&a.command[1..]);
    // The command runs in a process group of its own: a Ctrl-C or a cancelled job
    // reaches perfdb, which stops the whole group and stores nothing.
    child::catch_interrupts();
    let out = child::run(&mut cmd, Echo::AsIs, None)
        .with_context(|| format!("cannot run `{command_line}`"))?;
    if let Ended::Interrupted(sig) = out.ended {
        say!(
            "perfdb run: {} received: `{command_line}` was stopped with every process it \
             started; nothing was stored",
            child::signal_name(sig)
        );
        return Ok(Exit::Interrupted);
    }
    let seconds = out.exited_at.duration_since(started).as_secs_f64();
    note_command(&mut meta, &command_line, &out, seconds);
    let output = if a.stdout_only {
        out.stdout
    } else {
        out.merged
    };
    let name = a.name.unwrap_or_else(|| command_line.clone());
    let wh = Warehouse::new(root);
    let reports = perfdb_ingest::ingest_bytes(&wh, &name, &output, format, &meta, &devices)
        .with_context(|| format!("cannot write the warehouse at {}", root.display()))?;
    let exit = report(root, &label, &reports)?;
    if exit != Exit::Ok {
        return Ok(exit);
    }
    if let Some(why) = meta.failed {
        say!("error: `{command_line}`: {why}; stored as a failed run");
        return Ok(Exit::Regression);
    }
    Ok(Exit::Ok)
}
