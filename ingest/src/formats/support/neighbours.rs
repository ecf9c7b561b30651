//! Outputs of tools beside the benchmark harnesses that look like a format perfdb reads
//! but hold no results of one, named as what they are instead of read as something
//! else: an nvbench compare report is a pipe table of differences between two runs, a
//! profiler's table sums one profiled run per operator.

use super::text::has;
use crate::formats::parser::ParseError;

/// Why `text` is a neighbouring tool's output, or `None`.
pub fn refusal(text: &str) -> Option<ParseError> {
    NEIGHBOURS.iter().find_map(|n| {
        let line = (n.is)(text)?;
        Some(ParseError::at(line, n.why))
    })
}

struct Neighbour {
    /// The 1-based line that shows it, when the text is this tool's.
    is: fn(&str) -> Option<usize>,
    why: &'static str,
}

const NEIGHBOURS: &[Neighbour] = &[
    Neighbour {
        is: nvbench_compare,
        why: "an nvbench compare report (nvbench_compare.py / nvbench-compare): it holds \
              the differences between two runs, not a run's results; ingest the two nvbench \
              JSON files it compared (or their markdown) under two labels and `perfdb \
              compare` them",
    },
    Neighbour {
        is: torch_profiler,
        why: "a PyTorch profiler table (key_averages().table()): per-operator totals of one \
              profiled run, not benchmark results; time the kernel with a benchmark harness \
              (torch.utils.benchmark, triton.testing, tritonbench) and ingest its output",
    },
    Neighbour {
        is: nsys_stats,
        why: "an Nsight Systems stats report (nsys stats): per-kernel totals of one \
              profiled run, not benchmark results; ingest a benchmark harness's output",
    },
    Neighbour {
        is: google_benchmark_console,
        why: "google-benchmark's console table (`Benchmark  Time  CPU  Iterations`): \
              perfdb reads its JSON; run the benchmark again with \
              --benchmark_format=json (or --benchmark_out=FILE \
              --benchmark_out_format=json) and ingest that",
    },
    Neighbour {
        is: pytest_benchmark_console,
        why: "pytest-benchmark's console table (`Name (time in us)  Min  Max  Mean ...`): \
              perfdb reads its JSON; run pytest again with --benchmark-json=FILE and \
              ingest that",
    },
    Neighbour {
        is: action_benchmark_history,
        why: "a github-action-benchmark history (`window.BENCHMARK_DATA`, dev/bench/data.js): \
              one summary value per benchmark and commit, its trials gone; ingest the \
              benchmark tool's own output of each commit (pytest-benchmark or \
              google-benchmark JSON...) with --commit",
    },
    Neighbour {
        is: rocprof_stats,
        why: "a rocprof kernel statistics CSV: per-kernel totals of one profiled run, not \
              benchmark results; ingest a benchmark harness's output",
    },
];

/// The line of the first line holding every one of `needles`.
fn line_with_all(text: &str, needles: &[&str]) -> Option<usize> {
    if !needles.iter().all(|n| has(text, n)) {
        return None;
    }
    text.lines()
        .position(|l| needles.iter().all(|n| l.contains(n)))
        .map(|i| i + 1)
}

/// `| ... |   Ref Time |   Ref Noise |   Cmp Time | ... |  Status  |`
fn nvbench_compare(text: &str) -> Option<usize> {
    line_with_all(text, &["Ref Time", "Cmp Time", "|"])
}

fn torch_profiler(text: &str) -> Option<usize> {
    line_with_all(text, &["Self CPU %", "# of Calls"])
}

fn nsys_stats(text: &str) -> Option<usize> {
    line_with_all(text, &["Total Time (ns)", "Instances"])
        .or_else(|| line_with_all(text, &["Total Time (ns)", "Calls"]))
}

/// `Benchmark   Time   CPU Iterations` over a rule of dashes.
fn google_benchmark_console(text: &str) -> Option<usize> {
    if !has(text, "Iterations") {
        return None;
    }
    let lines: Vec<&str> = text.lines().collect();
    lines
        .windows(2)
        .position(|w| {
            let words: Vec<&str> = w[0].split_whitespace().collect();
            words.starts_with(&["Benchmark", "Time", "CPU", "Iterations"])
                && w[1].trim().len() > 20
                && w[1].trim().bytes().all(|b| b == b'-')
        })
        .map(|i| i + 1)
}

/// `Name (time in us)   Min   Max   Mean ...` (pytest-benchmark's terminal report).
fn pytest_benchmark_console(text: &str) -> Option<usize> {
    if !has(text, "(time in ") {
        return None;
    }
    text.lines()
        .position(|l| {
            let t = l.trim_start();
            t.starts_with("Name (time in ") && t.contains("Min") && t.contains("Max")
        })
        .map(|i| i + 1)
}

fn action_benchmark_history(text: &str) -> Option<usize> {
    text.trim_start()
        .starts_with("window.BENCHMARK_DATA")
        .then(|| {
            text.lines()
                .position(|l| l.contains("BENCHMARK_DATA"))
                .unwrap_or(0)
                + 1
        })
}

fn rocprof_stats(text: &str) -> Option<usize> {
    line_with_all(text, &["TotalDurationNs", "AverageNs"])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbours_are_named_at_their_header_line() {
        let compare = "# sequence_bench\n\n## [0] Quadro RTX 8000\n\n\
            |   Num   |   Ref Time |   Ref Noise |   Cmp Time |   Cmp Noise |      Diff |   %Diff |  Status  |\n\
            |---------|------------|-------------|------------|-------------|-----------|---------|----------|\n\
            |   10    |   6.288 us |      13.70% |   6.301 us |      14.38% |  0.013 us |   0.20% |   SAME   |\n";
        let e = refusal(compare).unwrap();
        assert_eq!(e.line, 5);
        assert!(e.reason.contains("nvbench compare report"), "{e}");
        let prof = "---------  ------------  ------------\n\
            Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg    # of Calls\n";
        assert!(refusal(prof).unwrap().reason.contains("PyTorch profiler"));
        let rocprof = "\"Name\",\"Calls\",\"TotalDurationNs\",\"AverageNs\",\"Percentage\"\n\"k\",1,2,2,100.0\n";
        assert_eq!(refusal(rocprof).unwrap().line, 1);
        assert!(refusal("| M | us |\n|---|---|\n| 1 | 2.0 |\n").is_none());
    }
}
