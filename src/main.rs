//! perfdb: a benchmark-results warehouse for GPU kernel performance.

/// `eprintln!` for everything perfdb says on stderr: what it quotes from outside (a file's
/// text, a commit subject, a server's reply) has its control characters shown escaped
/// (`perfdb_reports::fmt::visible`), so no log line can drive a terminal.
macro_rules! say {
    () => {
        eprintln!()
    };
    ($($t:tt)*) => {
        eprintln!("{}", perfdb_reports::fmt::visible(&format!($($t)*), false))
    };
}

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

/// Every exit code with what it means: `--help` prints these, and a test holds the
/// README's table to them.
pub const EXIT_MEANINGS: &[(Exit, &str)] = &[
    (
        Exit::Ok,
        "ok (compare: no regression; bisect: the culprit named)",
    ),
    (
        Exit::Regression,
        "compare and ab: a regression, a numerics failure on head that base did not have \
         (`--strict-numerics`: any), or a head run its harness failed; detect: an alert \
         became active (a confirmed step) for the first time",
    ),
    (
        Exit::Error,
        "usage or input error (ingest: any file failed — the others are still ingested; \
         compare: an empty selector, sides sharing runs, a label whose runs span several \
         commits, a `--control` that matches no variant; detect: an alert could not be \
         delivered)",
    ),
    (
        Exit::Inconclusive,
        "compare: inconclusive or unreliable — rows measured on base missing on head \
         (`--allow-missing`), nothing matched, too few trials, a row significant past the \
         threshold by its estimate but not by its interval (size unknown), a row invalid or \
         withheld, \
         a failed base run, different hardware (`--allow-mixed-hardware`), numerics \
         checked on base but not on head (`--allow-unchecked`), the control on one side \
         only or moved; bisect: only a range proven (a step undecided at its cap, or a \
         skipped commit next to the culprit)",
    ),
    (
        Exit::Interrupted,
        "run, ab and bisect: SIGINT or SIGTERM (a cancelled CI job) — the running command \
         was stopped with every process it started and not stored; ab reports on the \
         trials stored before it, bisect on the steps before it",
    ),
];

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
            say!("error: {e}");
            for cause in causes(&e) {
                say!("  caused by: {cause}");
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

    use super::*;

    /// The README's exit-code table says what [`EXIT_MEANINGS`] says, code by code.
    #[test]
    fn the_readme_lists_every_exit_code_as_defined() {
        let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
            .expect("README.md");
        let section = readme
            .split("## Exit codes")
            .nth(1)
            .expect("an Exit codes section");
        let rows: Vec<(String, String)> = section
            .lines()
            .skip_while(|l| !l.starts_with('|'))
            .take_while(|l| l.starts_with('|'))
            .skip(2)
            .map(|l| {
                let cells: Vec<&str> = l.trim_matches('|').split(" | ").collect();
                (cells[0].trim().to_string(), cells[1].trim().to_string())
            })
            .collect();
        let defined: Vec<(String, String)> = EXIT_MEANINGS
            .iter()
            .map(|(code, meaning)| ((*code as u8).to_string(), meaning.to_string()))
            .collect();
        assert_eq!(rows, defined);
    }

    #[test]
    fn help_ends_with_every_exit_code() {
        let help = cli::exit_codes_text();
        for (code, meaning) in EXIT_MEANINGS {
            let first = meaning.split_whitespace().next().unwrap();
            assert!(
                help.contains(&format!("  {:<4}{first}", *code as u8)),
                "{help}"
            );
        }
    }
}
