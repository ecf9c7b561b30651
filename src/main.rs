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
mod exit;
mod identity;
mod merge_base;
mod private;
mod process;
mod trials;

use clap::Parser;
use std::process::ExitCode;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

pub use exit::{Exit, EXIT_MEANINGS};

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
