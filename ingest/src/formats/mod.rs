//! One module per input format behind the small [`Parser`] trait, and auto-detection
//! that tries each in a fixed order ([`Format::ALL`] says why that order).

mod aiter;
mod aorta;
mod columns;
mod csv;
mod emit;
mod flydsl;
mod gbench;
mod json;
pub(crate) mod json_scan;
mod perf;
mod probe;
mod pytest_bench;
mod serving;
mod torch_compare;
mod triton;
mod ts_export;

pub use columns::{classify_header, ColumnRole, DEFAULT_VARIANT};

use crate::model::Parsed;
use std::fmt;
use std::str::FromStr;

/// A format perfdb reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// aiter logs with `summary (markdown):` pipe tables (and `to_string` fallbacks).
    AiterTable,
    /// `[perf]` lines (aiter checkAllclose, print()ed, MoE `_avg:`, FlyDSL `us/call`).
    PerfLines,
    /// TokenSpeed kernel-probe stdout (`host_launch:`, `TS_KERNEL_*`).
    TsProbe,
    /// TokenSpeed `kernel_bench.<token>.json` export.
    TsExport,
    /// Triton `perf_report(...).run(print_data=True)` stdout.
    TritonPerfReport,
    /// Triton `perf_report(..., save_path=DIR)`'s `<plot_name>.csv`.
    TritonCsv,
    /// `torch.utils.benchmark.Compare` printouts.
    TorchCompare,
    /// pytest-benchmark `--benchmark-json` files.
    PytestBenchmark,
    /// google-benchmark `--benchmark_format=json` output.
    GoogleBenchmark,
    /// hipBLASLt-bench / hipblas-bench / rocblas-bench CSV output.
    RocmBenchCsv,
    /// aiter tuned-config CSVs (`*_tuned_gemm.csv`).
    AiterTunedCsv,
    /// FlyDSL CI bench tables and `=== Benchmark: current vs ... ===` lines.
    FlydslBench,
    /// Serving benchmark results: vLLM `bench serve` JSON, TokenSpeed's serve export,
    /// SGLang `bench_serving` JSONL.
    Serving,
    /// aorta's per-trial `result.json`.
    AortaResult,
    /// aorta's triage `matrix.md`.
    AortaMatrix,
}

impl Format {
    /// Every format, in the order detection tries them: the JSON outputs first (a look
    /// at the first byte rules them out of any log), the CSVs told by their first lines
    /// (a look at those rules them out; tried after the formats that read the whole
    /// text, they waited ~2 ms on a 5 MB CSV for scans that could not match), then the
    /// text formats whose files the aiter tables' sniff would also take (a triage
    /// matrix is a pipe table), the aiter tables themselves (most logs: tried early, so
    /// the rest are rarely sniffed), then formats no aiter log matches, and `[perf]`
    /// lines, which many logs carry beside another format, last.
    pub const ALL: [Format; 15] = [
        Format::TsExport,
        Format::PytestBenchmark,
        Format::GoogleBenchmark,
        Format::Serving,
        Format::AortaResult,
        Format::AiterTunedCsv,
        Format::TritonCsv,
        Format::TsProbe,
        Format::AortaMatrix,
        Format::TritonPerfReport,
        Format::AiterTable,
        Format::TorchCompare,
        Format::FlydslBench,
        Format::RocmBenchCsv,
        Format::PerfLines,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Format::AiterTable => "aiter-table",
            Format::PerfLines => "perf-lines",
            Format::TsProbe => "ts-probe",
            Format::TsExport => "ts-export",
            Format::TritonPerfReport => "triton-perf-report",
            Format::TritonCsv => "triton-csv",
            Format::TorchCompare => "torch-compare",
            Format::PytestBenchmark => "pytest-benchmark",
            Format::GoogleBenchmark => "google-benchmark",
            Format::RocmBenchCsv => "rocm-bench-csv",
            Format::AiterTunedCsv => "aiter-tuned-csv",
            Format::FlydslBench => "flydsl-bench",
            Format::Serving => "serving",
            Format::AortaResult => "aorta-result",
            Format::AortaMatrix => "aorta-matrix",
        }
    }
    /// One line on what the format is and how it maps onto rows: `perfdb formats`
    /// prints it and the README's format table holds the same line (a test checks).
    pub fn summary(self) -> &'static str {
        match self {
            Format::AiterTable => "aiter logs with `summary (markdown):` pipe tables (and the `to_string` fallback): title = table, `*_us`/`*_TFLOPS`/`*_TB/s` columns = variant and metric, derived and measured-looking columns (`err`, `a/b`, `1.31x`, `+49.2%`, `1.5e-05`) kept, the rest = key",
            Format::PerfLines => "`[perf]` lines (checkAllclose-glued, `print()`ed, `[perf][tag]`, MoE `torch_avg:`, FlyDSL `us/call`)",
            Format::TsProbe => "TokenSpeed probe stdout: `TS_KERNEL_METRIC` records, `TS_KERNEL_FAIL`/`RESULT` verdicts, `TS_BENCH_*` serving lines (metrics with units and directions)",
            Format::TsExport => "TokenSpeed `kernel_bench.<token>.json`: op family = table, kernel = variant, shape params and dtype = key",
            Format::TritonPerfReport => "Triton `perf_report(...).run(print_data=True)` stdout: plot = table, `<line> (<ylabel>)` = variant with the ylabel's unit (before Triton 3.6, line names alone: `--unit` gives it), x columns = key (`512.0` reads `512`)",
            Format::TritonCsv => "Triton `perf_report` `save_path` CSV: file name = table, line columns = variants, x columns = key; the unit from `<line> (<ylabel>)` headers (Triton 3.6), else from `--unit` (else kept unclassified)",
            Format::TorchCompare => "`torch.utils.benchmark.Compare` tables: title = table, descriptions = variants, `N threads:` + sub-label = key, unit from the footer, `(! XX%)` kept as a noise note",
            Format::PytestBenchmark => "pytest-benchmark `--benchmark-json`: group = table, test function = variant, params = key, `stats.median` in s (min, mean, stddev, iqr, rounds kept); `commit_info`/`machine_info` fill commit and machine",
            Format::GoogleBenchmark => "google-benchmark `--benchmark_format=json`: executable = table, family = variant, `/args` = key, each repetition a trial (a run of its own), aggregates (`_mean`, `_cv`...) kept derived, `time_unit` respected",
            Format::RocmBenchCsv => "hipBLASLt-bench / hipblas-bench / rocblas-bench CSV: problem columns = key, `*-Gflops` and `us` = metrics",
            Format::AiterTunedCsv => "aiter tuned-config CSV (`gfx,cu_num,M,N,K,...,us,kernelName,tflops,bw,errRatio`): problem columns = key, `us`/`tflops`/`bw` = metrics (`bw` printed in GB/s, stored as TB/s), `errRatio` derived",
            Format::FlydslBench => "FlyDSL CI bench tables (`op shape dtype TB/s TFLOPS`, `<a>(gpu us)` columns, `-`/`skip` cells) and `=== Benchmark: current vs X ===` ratios (derived)",
            Format::Serving => "serving results: vLLM `bench serve` JSON, TokenSpeed serve export, SGLang `bench_serving` JSONL: TTFT/TPOT/ITL/e2e latency stats and throughputs, request rate and concurrency = key",
            Format::AortaResult => "aorta `result.json`: verdict and exit code = the run's verdict, walltime and peak VRAM = values",
            Format::AortaMatrix => "aorta triage `matrix.md`: cell = variant, mean step time = the compared value, failure rate and counts kept, mitigations and confound as notes",
        }
    }
    fn parser(self) -> &'static dyn Parser {
        match self {
            Format::AiterTable => &aiter::AiterTables,
            Format::PerfLines => &perf::PerfLines,
            Format::TsProbe => &probe::TsProbe,
            Format::TsExport => &ts_export::TsExport,
            Format::TritonPerfReport => &triton::TritonPerfReport,
            Format::TritonCsv => &csv::TritonCsv,
            Format::TorchCompare => &torch_compare::TorchCompare,
            Format::PytestBenchmark => &pytest_bench::PytestBenchmark,
            Format::GoogleBenchmark => &gbench::GoogleBenchmark,
            Format::RocmBenchCsv => &csv::RocmBenchCsv,
            Format::AiterTunedCsv => &csv::AiterTunedCsv,
            Format::FlydslBench => &flydsl::FlydslBench,
            Format::Serving => &serving::Serving,
            Format::AortaResult => &aorta::AortaResult,
            Format::AortaMatrix => &aorta::AortaMatrix,
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Format::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Format::ALL.iter().map(|f| f.name()).collect();
                format!(
                    "unknown format '{s}' (expected auto or one of {})",
                    names.join(", ")
                )
            })
    }
}

/// Why a file could not be parsed: a line (1-based, 0 = the file as a whole) and a reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{reason}", if *line > 0 { format!("line {line}: ") } else { String::new() })]
pub struct ParseError {
    pub line: usize,
    pub reason: String,
}

impl ParseError {
    pub fn at(line: usize, reason: impl Into<String>) -> Self {
        ParseError {
            line,
            reason: reason.into(),
        }
    }
}

/// What a parser may know beside the text: where it came from and what the person
/// ingesting it said about it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Context<'a> {
    /// The file path (or `--name`) of the source.
    pub source: &'a str,
    /// `--unit`: the unit of values whose source prints none (Triton's CSV).
    pub unit: Option<&'a str>,
}

/// One input format.
pub trait Parser: Sync {
    fn format(&self) -> Format;
    /// A cheap look at the text: does it carry this format's markers?
    fn sniff(&self, text: &str) -> bool;
    /// Parse the whole text. An error names the line and the reason.
    fn parse(&self, text: &str) -> Result<Parsed, ParseError>;
    /// Parse with what is known about the source; formats that need it override this.
    fn parse_in(&self, text: &str, _cx: &Context) -> Result<Parsed, ParseError> {
        self.parse(text)
    }
}

/// Pick the format of `text`, or say why none fits.
pub fn detect(text: &str) -> Result<Format, ParseError> {
    Format::ALL
        .into_iter()
        .find(|f| f.parser().sniff(text))
        .ok_or_else(|| {
            ParseError::at(
                0,
                "no recognizable benchmark data: the text matches none of the formats \
                 `perfdb formats` lists (aiter tables, `[perf]` lines, TokenSpeed probe lines, \
                 JSON and CSV benchmark outputs...); `--format NAME` says why a given one does \
                 not fit",
            )
        })
}

/// Parse `text` as `format`, or auto-detect when `format` is `None`.
pub fn parse(text: &str, format: Option<Format>) -> Result<(Format, Parsed), ParseError> {
    parse_in(text, format, &Context::default())
}

/// [`parse`] with what is known about the source.
pub fn parse_in(
    text: &str,
    format: Option<Format>,
    cx: &Context,
) -> Result<(Format, Parsed), ParseError> {
    let forced = format.is_some();
    let format = match format {
        Some(f) => f,
        None => detect(text)?,
    };
    let mut parsed = format.parser().parse_in(text, cx)?;
    // A forced format that reads the text's structure but finds not one value in it (a
    // pytest-benchmark JSON read as google-benchmark: the same `benchmarks` list, other
    // fields) read the wrong thing: refused, as any other forced mismatch is.
    if forced
        && !parsed.measurements.is_empty()
        && parsed.measurements.iter().all(|m| m.value.is_none())
        && !format.parser().sniff(text)
    {
        let line = parsed.measurements[0].line as usize;
        return Err(ParseError::at(
            line,
            format!(
                "read as {format} (--format), not one value was found: this is not {format} \
                 output; without --format perfdb detects the format"
            ),
        ));
    }
    let takes_unit = matches!(format, Format::TritonCsv | Format::TritonPerfReport);
    if let (Some(unit), false) = (cx.unit, takes_unit) {
        parsed.warnings.push(crate::model::Warning {
            line: 0,
            reason: format!(
                "--unit {unit} ignored: {format} prints its own units (--unit is for \
                 triton-csv and Triton prints from before 3.6, which carry none)"
            ),
        });
    }
    // A run its harness failed before it measured anything is still a run: on record
    // with its verdict and no values.
    let failed_run = parsed.provenance.verdict.as_deref() == Some("fail");
    if parsed.measurements.is_empty() && !failed_run {
        return Err(ParseError::at(
            0,
            format!("no measurements found for format {format}"),
        ));
    }
    Ok((format, parsed))
}

/// Iterate cleaned lines with 1-based numbers.
pub(crate) fn lines(text: &str) -> impl Iterator<Item = (usize, std::borrow::Cow<'_, str>)> {
    split_bytes(text, b'\n')
        .enumerate()
        .map(|(i, l)| (i + 1, crate::text::clean_line(l)))
}

/// `text.split(sep)` for an ASCII separator, found with `memchr` (faster than std's
/// char searcher on the many short pieces of a log).
pub(crate) fn split_bytes(text: &str, sep: u8) -> impl Iterator<Item = &str> {
    let mut start = 0;
    let mut ends = memchr::memchr_iter(sep, text.as_bytes()).chain(std::iter::once(text.len()));
    std::iter::from_fn(move || {
        let end = ends.next()?;
        // `sep` is ASCII, so both ends are char boundaries.
        let piece = &text[start..end];
        start = end + 1;
        Some(piece)
    })
}

/// Each cell of one line (`text.split(sep)`), trimmed as [`crate::text::trim`] trims,
/// handed to `f` in one byte loop: as an iterator into a list, the cells of the densest
/// formats (9-30 bytes a value) cost a call and an `Option` each.
///
/// Eight bytes at a time: a word's separators are found as one bit mask
/// ([`crate::text::byte_mask`]) and handed on bit by bit, so a cell costs a few
/// instructions whatever its length (a byte loop cost ~7 a byte: a third of the densest
/// parses).
#[inline]
pub(crate) fn for_each_cell<'a>(text: &'a str, sep: u8, mut f: impl FnMut(&'a str)) {
    let b = text.as_bytes();
    let mut start = 0;
    let mut words = b.chunks_exact(8);
    let mut base = 0;
    for w in &mut words {
        let mut mask = crate::text::byte_mask(crate::text::le_word(w), sep);
        while mask != 0 {
            let i = base + (mask.trailing_zeros() / 8) as usize;
            // `sep` is ASCII, so both ends are char boundaries.
            f(crate::text::trim(&text[start..i]));
            start = i + 1;
            mask &= mask - 1;
        }
        base += 8;
    }
    for (i, &c) in words.remainder().iter().enumerate() {
        if c == sep {
            f(crate::text::trim(&text[start..base + i]));
            start = base + i + 1;
        }
    }
    f(crate::text::trim(&text[start..]));
}

#[cfg(test)]
mod tests {
    #[test]
    fn split_bytes_is_split() {
        for text in [
            "",
            "a",
            "a\nb",
            "a\n",
            "\n\nb\n",
            "é|ü||x",
            "|",
            "||",
            " a | b\t|c ",
            "\u{a0}x\u{a0}| y",
            // Longer than a word: separators found eight bytes at a time.
            "| cell3-none | m3 | local | 99% | 3 / 3 | 3/3 | 12345.6 | no effect |",
            "gfx942,304,1,128,8192,torch.int8,0,0,12.3456,a8w8_rowwise_256x16x64x256,1.5,,",
            "12345678|12345678|",
            "1234567|",
            "é é é é | ü ü ü ü ü |\u{a0}\u{a0}\u{a0}\u{a0}|",
        ] {
            for sep in [b'\n', b'|', b','] {
                let ours: Vec<&str> = super::split_bytes(text, sep).collect();
                let std: Vec<&str> = text.split(sep as char).collect();
                assert_eq!(ours, std, "{text:?}");
                let mut trimmed = Vec::new();
                super::for_each_cell(text, sep, |c| trimmed.push(c));
                let std_trimmed: Vec<&str> = std.iter().map(|c| crate::text::trim(c)).collect();
                assert_eq!(trimmed, std_trimmed, "{text:?}");
            }
        }
    }
}
