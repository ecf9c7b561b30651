//! perfdb: a benchmark-results warehouse for GPU kernel performance.

mod cli;
mod commands;

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
            for cause in e.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            ExitCode::from(Exit::Error as u8)
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
