//! The process's exit codes: what each means (`--help` and the README print them), and
//! a comparison's, from its verdict.

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
        use perfdb_reports::compare::Overall;
        match report.verdict {
            Overall::Ok => Exit::Ok,
            Overall::Regression => Exit::Regression,
            Overall::Inconclusive | Overall::Unreliable => Exit::Inconclusive,
        }
    }
}
