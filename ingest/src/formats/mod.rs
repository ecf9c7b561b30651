//! One module per input format behind the small [`Parser`] trait, and auto-detection
//! that tries each in a fixed order (most specific first).

mod aiter;
mod columns;
mod perf;
mod probe;
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
}

impl Format {
    pub const ALL: [Format; 5] = [
        Format::TsExport,
        Format::TsProbe,
        Format::TritonPerfReport,
        Format::AiterTable,
        Format::PerfLines,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Format::AiterTable => "aiter-table",
            Format::PerfLines => "perf-lines",
            Format::TsProbe => "ts-probe",
            Format::TsExport => "ts-export",
            Format::TritonPerfReport => "triton-perf-report",
        }
    }
    fn parser(self) -> &'static dyn Parser {
        match self {
            Format::AiterTable => &aiter::AiterTables,
            Format::PerfLines => &perf::PerfLines,
            Format::TsProbe => &probe::TsProbe,
            Format::TsExport => &ts_export::TsExport,
            Format::TritonPerfReport => &triton::TritonPerfReport,
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

/// One input format.
pub trait Parser: Sync {
    fn format(&self) -> Format;
    /// A cheap look at the text: does it carry this format's markers?
    fn sniff(&self, text: &str) -> bool;
    /// Parse the whole text. An error names the line and the reason.
    fn parse(&self, text: &str) -> Result<Parsed, ParseError>;
}

/// Pick the format of `text`, or say why none fits.
pub fn detect(text: &str) -> Result<Format, ParseError> {
    Format::ALL
        .into_iter()
        .find(|f| f.parser().sniff(text))
        .ok_or_else(|| {
            ParseError::at(
                0,
                "no recognizable benchmark data: found no `summary (markdown):` or pipe table, \
                 no `[perf]` line, no `TS_KERNEL_METRIC` line, no kernel_bench JSON array and no \
                 Triton perf_report table",
            )
        })
}

/// Parse `text` as `format`, or auto-detect when `format` is `None`.
pub fn parse(text: &str, format: Option<Format>) -> Result<(Format, Parsed), ParseError> {
    let format = match format {
        Some(f) => f,
        None => detect(text)?,
    };
    let parsed = format.parser().parse(text)?;
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

#[cfg(test)]
mod tests {
    #[test]
    fn split_bytes_is_split() {
        for text in ["", "a", "a\nb", "a\n", "\n\nb\n", "é|ü||x"] {
            for sep in [b'\n', b'|'] {
                let ours: Vec<&str> = super::split_bytes(text, sep).collect();
                let std: Vec<&str> = text.split(sep as char).collect();
                assert_eq!(ours, std, "{text:?}");
            }
        }
    }
}
