//! perfdb: a benchmark-results warehouse for GPU kernel performance.

mod cli;
mod commands;
mod process;

use clap::Parser;
use std::process::ExitCode;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Process exit codes, documented in `--help` and the README.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Success; for compare: no regression.
    Ok = 0,
    /// compare: a regression or a numerics failure.
    Regression = 1,
    /// Usage or input error (including any input file that failed to ingest).
    Error = 2,
    /// compare: inconclusive or unreliable (nothing matched, too few trials, control moved).
    Inconclusive = 3,
    /// run, ab: SIGINT or SIGTERM arrived; the command was stopped with its process
    /// group (128 + SIGINT, as a shell reports it).
    Interrupted = 130,
}

impl Exit {
    /// A comparison's exit code: its verdict's.
    pub fn of(report: &perfdb_reports::compare::Report) -> Exit {
        match report.verdict.exit_code() {
            0 => Exit::Ok,
            1 => Exit::Regression,
            _ => Exit::Inconclusive,
        }
    }
}

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    match commands::run(cli) {
        Ok(code) => ExitCode::from(code as u8),
        Err(e) => {
            if is_broken_pipe(&e) {
                return ExitCode::SUCCESS;
            }
            eprintln!("error: {e}");
            for cause in causes(&e) {
                eprintln!("  caused by: {cause}");
            }
            ExitCode::from(Exit::Error as u8)
        }
    }
}

/// The causes under an error worth a line each: a cause whose text its parent already
/// quotes is left out (object_store's errors repeat each source inside their own text,
/// four or five deep for one failed request).
fn causes(e: &anyhow::Error) -> Vec<String> {
    let mut shown = e.to_string();
    let mut out = Vec::new();
    for cause in e.chain().skip(1) {
        let text = cause.to_string();
        if !shown.contains(text.trim()) {
            out.push(text.clone());
        }
        shown = text;
    }
    out
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn causes_a_parent_quotes_are_left_out() {
        let inner = anyhow::anyhow!("Server returned 501 Not Implemented");
        let mid = inner.context("Error performing GET /b: Server returned 501 Not Implemented");
        let e = mid
            .context("list failed")
            .context("runs/_delta_log: list failed");
        // `list failed` is quoted by its parent; the GET line is not, and its own cause
        // is quoted by it.
        assert_eq!(
            super::causes(&e),
            ["Error performing GET /b: Server returned 501 Not Implemented"]
        );
        let plain = anyhow::anyhow!("disk full").context("writing runs");
        assert_eq!(super::causes(&plain), ["disk full"]);
    }
}
