//! One module per input format behind the small [`Parser`] trait, and auto-detection
//! that tries each in a fixed order ([`Format::ALL`] says why that order). A parser turns
//! text into [`Parsed`] records and never touches storage; what the parsers share lives
//! in [`support`].

mod aiter_table;
mod aiter_tuned_csv;
mod aorta_matrix;
mod aorta_result;
mod flydsl_bench;
mod google_benchmark;
pub mod gpu_state;
mod nvbench_json;
mod nvbench_markdown;
mod perf_lines;
mod pytest_benchmark;
mod pytorch_v3;
mod rocm_bench_csv;
mod serving;
pub mod support;
mod torch_compare;
mod triton_csv;
mod triton_perf_report;
mod tritonbench;
mod ts_export;
mod ts_probe;

pub use support::columns::{classify_header, ColumnRole, DEFAULT_VARIANT};
pub(crate) use support::{for_each_cell, lines, split_bytes};

pub use crate::model::Format;
use crate::model::Parsed;

/// The parser of `format`.
fn parser_of(format: Format) -> &'static dyn Parser {
    match format {
        Format::AiterTable => &aiter_table::AiterTables,
        Format::PerfLines => &perf_lines::PerfLines,
        Format::TsProbe => &ts_probe::TsProbe,
        Format::TsExport => &ts_export::TsExport,
        Format::TritonPerfReport => &triton_perf_report::TritonPerfReport,
        Format::TritonCsv => &triton_csv::TritonCsv,
        Format::TorchCompare => &torch_compare::TorchCompare,
        Format::PytestBenchmark => &pytest_benchmark::PytestBenchmark,
        Format::GoogleBenchmark => &google_benchmark::GoogleBenchmark,
        Format::RocmBenchCsv => &rocm_bench_csv::RocmBenchCsv,
        Format::AiterTunedCsv => &aiter_tuned_csv::AiterTunedCsv,
        Format::FlydslBench => &flydsl_bench::FlydslBench,
        Format::Serving => &serving::Serving,
        Format::AortaResult => &aorta_result::AortaResult,
        Format::AortaMatrix => &aorta_matrix::AortaMatrix,
        Format::NvbenchJson => &nvbench_json::NvbenchJson,
        Format::NvbenchMarkdown => &nvbench_markdown::NvbenchMarkdown,
        Format::Tritonbench => &tritonbench::Tritonbench,
        Format::PytorchV3 => &pytorch_v3::PytorchV3,
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
    /// `--variant-axis`: the nvbench axis that holds the implementations compared.
    pub variant_axis: Option<&'a str>,
}

/// How strongly a text carries a format's own marks. Detection takes the strongest
/// claim; the order of [`Format::ALL`] only settles claims of the same strength that are
/// not signatures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Evidence {
    None,
    /// A marker the format prints but other tools' text may carry too (a `|---|` pipe
    /// table, a `[perf]` line inside a log of another format).
    Marker,
    /// Something only this format prints: its column set with its value shapes
    /// (nvbench's `GPU Time`/`Noise`/`Samples` with `1.431 ms` cells), its banner
    /// (aiter's `summary (markdown):`). Two formats with a signature each in one text
    /// are not guessed between.
    Signature,
}

/// One input format.
pub trait Parser: Sync {
    fn format(&self) -> Format;
    /// A cheap look at the text: does it carry this format's markers?
    fn sniff(&self, text: &str) -> bool;
    /// How strongly the text is this format's: [`Evidence::Marker`] when [`Parser::sniff`]
    /// takes it, unless the format knows its signatures.
    fn evidence(&self, text: &str) -> Evidence {
        if self.sniff(text) {
            Evidence::Marker
        } else {
            Evidence::None
        }
    }
    /// Parse the whole text. An error names the line and the reason.
    fn parse(&self, text: &str) -> Result<Parsed, ParseError>;
    /// Parse with what is known about the source; formats that need it override this.
    fn parse_in(&self, text: &str, _cx: &Context) -> Result<Parsed, ParseError> {
        self.parse(text)
    }
}

/// Pick the format of `text`, or say why none fits.
///
/// Formats are asked in [`Format::ALL`]'s order how strongly the text is theirs
/// ([`Parser::evidence`]). The first signature ends the search, unless a format asked
/// before it found one too: then the text is refused naming both, with the `--format`
/// that settles it. Without a signature, outputs of neighbouring tools that look like a
/// format but hold no results of one (an nvbench compare report, tritonbench's A/B
/// print, a profiler's table) are refused as what they are; else the first format with
/// a marker takes the text.
pub fn detect(text: &str) -> Result<Format, ParseError> {
    if let Some(e) = known_without_values(text) {
        return Err(e);
    }
    let mut first_marker: Option<Format> = None;
    let mut signature: Option<Format> = None;
    for f in Format::ALL {
        match parser_of(f).evidence(text) {
            Evidence::Signature => match signature {
                Some(earlier) => return Err(ambiguous(earlier, f)),
                None => {
                    signature = Some(f);
                    // Formats after the aiter tables print no pipe table: a log with
                    // aiter's banner pays no further scans.
                    if f == Format::AiterTable {
                        break;
                    }
                }
            },
            Evidence::Marker if first_marker.is_none() => first_marker = Some(f),
            _ => {}
        }
    }
    if let Some(f) = signature {
        return Ok(f);
    }
    if let Some(e) = support::neighbours::refusal(text) {
        return Err(e);
    }
    first_marker.ok_or_else(|| {
        ParseError::at(
            0,
            "no recognizable benchmark data: the text matches none of the formats \
             `perfdb formats` lists (aiter tables, `[perf]` lines, TokenSpeed probe lines, \
             JSON and CSV benchmark outputs...); `--format NAME` says why a given one does \
             not fit",
        )
    })
}

/// A text two formats each claim by a signature.
fn ambiguous(a: Format, b: Format) -> ParseError {
    ParseError::at(
        0,
        format!(
            "the text carries the signatures of two formats, {a} and {b}: perfdb does not \
             guess between them; say which it is with `--format {a}` or `--format {b}` (or \
             split the file)"
        ),
    )
}

/// Files of benchmark tools that hold no measured value, named as what they are instead
/// of "no recognizable benchmark data": a FlashInfer-Bench trace whose every line is a
/// workload definition (`"evaluation": null`).
fn known_without_values(text: &str) -> Option<ParseError> {
    let first = text.lines().next()?.trim();
    let flashinfer = first.starts_with("{\"definition\"")
        && support::text::has(first, "\"workload\"")
        && support::text::has(first, "\"evaluation\"");
    if !flashinfer {
        return None;
    }
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines
        .iter()
        .all(|l| support::text::has(l, "\"evaluation\": null"))
        .then(|| {
            ParseError::at(
                1,
                format!(
                    "a FlashInfer-Bench trace of {} workload definitions (every `evaluation` \
                     is null): no measured values to store",
                    lines.len()
                ),
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
    let mut parsed = parser_of(format).parse_in(text, cx)?;
    // A forced format that reads the text's structure but finds not one value in it (a
    // pytest-benchmark JSON read as google-benchmark: the same `benchmarks` list, other
    // fields) read the wrong thing: refused, as any other forced mismatch is.
    if forced
        && !parsed.measurements.is_empty()
        && parsed.measurements.iter().all(|m| m.value.is_none())
        && !parser_of(format).sniff(text)
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
    let failed_run = parsed.provenance.verdict == Some(crate::model::RunVerdict::Fail);
    if parsed.measurements.is_empty() && !failed_run {
        return Err(ParseError::at(
            0,
            format!("no measurements found for format {format}"),
        ));
    }
    if !failed_run {
        match nothing_measured(format, &parsed) {
            Measured::Some => {}
            Measured::Empty(e) => return Err(e),
            // Every kernel errored: a failed run on record, never rows of nothing.
            Measured::AllFailed(detail) => {
                parsed.provenance.verdict = Some(crate::model::RunVerdict::Fail);
                parsed.provenance.verdict_detail = Some(detail);
            }
        }
    }
    Ok((format, parsed))
}

/// A file with no compared value at all, some of whose value cells are not numbers
/// (`117.30 µs (2050.4 TFLOPs)`): its results are there but in a shape the reader does
/// not take, so storing it would keep nothing to compare. A file of plain numbers that
/// no rule names (an aggregate-only output) is stored, as documented.
fn unreadable_cells<'a>(
    format: Format,
    parsed: &Parsed,
    all: impl Iterator<Item = &'a crate::model::Measurement>,
) -> Measured {
    let mut columns: Vec<&str> = Vec::new();
    let mut first: Option<(u32, String)> = None;
    for m in all {
        let raw = parsed.raw(m).trim();
        let unreadable = m.value.is_none()
            && m.metric.as_str() == crate::model::metric::UNCLASSIFIED
            && !support::text::is_missing_token(raw)
            && support::text::parse_value(raw).is_err();
        if unreadable {
            first.get_or_insert((m.line, raw.to_string()));
            if !columns.contains(&m.column.as_str()) {
                columns.push(m.column.as_str());
            }
        }
    }
    match first {
        None => Measured::Some,
        Some((line, raw)) => Measured::Empty(ParseError::at(
            line as usize,
            format!(
                "read as {format}, no column holds a value perfdb can compare: cells such \
                 as '{raw}' ({}) are not plain numbers; print one number a cell with the \
                 unit in the header (`opus us`, `triton TFLOPS`)",
                columns.join(", ")
            ),
        )),
    }
}

/// What a file's measured values hold.
enum Measured {
    /// At least one value.
    Some,
    /// None, and nothing says why: refused.
    Empty(ParseError),
    /// None, every cell saying its kernel failed (`error`, `OOM`...): the run failed.
    AllFailed(String),
}

/// A cell a harness prints where a kernel failed instead of a value.
fn is_failure_cell(raw: &str) -> bool {
    let t = raw.trim().trim_matches(['*', '`']).to_ascii_lowercase();
    matches!(
        t.as_str(),
        "error"
            | "err"
            | "failed"
            | "fail"
            | "oom"
            | "exception"
            | "crash"
            | "crashed"
            | "timeout"
            | "timed out"
    ) || t.starts_with("error:")
        || t.starts_with("failed:")
}

/// A file whose measured columns all read empty: the reader found its shape but not
/// one value (a table of another tool read by position, a results table whose cells
/// hold no number). Stored, it would be a run of rows with nothing in them, which a
/// comparison reads as rows gone.
fn nothing_measured(format: Format, parsed: &Parsed) -> Measured {
    let all = parsed
        .measurements
        .iter()
        .chain(parsed.repetitions.iter().flatten());
    let mut measured = all
        .clone()
        .filter(|m| m.direction != crate::model::Direction::None);
    let Some(first) = measured.next() else {
        return unreadable_cells(format, parsed, all);
    };
    if first.value.is_some() {
        return Measured::Some;
    }
    let failed = |m: &crate::model::Measurement| {
        is_failure_cell(parsed.raw(m))
            || m.note
                .is_some_and(|n| n.as_str().starts_with("benchmark error"))
    };
    let mut columns: Vec<&str> = vec![first.column.as_str()];
    let mut all_failed = failed(first);
    for m in measured {
        if m.value.is_some() {
            return Measured::Some;
        }
        all_failed &= failed(m);
        if !columns.contains(&m.column.as_str()) {
            columns.push(m.column.as_str());
        }
    }
    if all_failed {
        let what = first
            .note
            .map(|n| n.as_str().to_string())
            .unwrap_or_else(|| parsed.raw(first).trim().to_string());
        return Measured::AllFailed(format!(
            "every measured value is a failure ({what}, line {})",
            first.line
        ));
    }
    Measured::Empty(ParseError::at(
        first.line as usize,
        format!(
            "read as {format}, every measured column is empty ({}): nothing to store; if \
             this is another tool's output, `--format NAME` reads it as that",
            columns.join(", ")
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> (Format, Parsed) {
        parse(text, None).unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    /// (variant, key, metric, value) of every value.
    fn values(p: &Parsed) -> Vec<(String, String, String, Option<f64>)> {
        p.measurements
            .iter()
            .map(|m| {
                let v = m.variant.as_str().to_string();
                (
                    v,
                    p.key(m).to_string(),
                    m.metric.as_str().to_string(),
                    m.value,
                )
            })
            .collect()
    }

    const NVBENCH_TABLE: &str = "\
| T{ct} | Elements{io} | Samples |  CPU Time  | Noise  |  GPU Time  | Noise  |\n\
|-------|--------------|---------|------------|--------|------------|--------|\n\
|   I32 | 2^16 = 65536 |   1000x | 114.193 us | 37.11% |  19.632 us | 75.68% |\n";

    #[test]
    fn an_nvbench_table_is_nvbench_even_in_a_log_the_aiter_tables_would_take() {
        let (f, _) = read(NVBENCH_TABLE);
        assert_eq!(f, Format::NvbenchMarkdown);
        let with_perf_line = format!("[perf] gemm: 12.5 us\n{NVBENCH_TABLE}");
        assert_eq!(read(&with_perf_line).0, Format::NvbenchMarkdown);
    }

    #[test]
    fn two_signatures_are_refused_naming_both_formats() {
        let text = format!(
            "[aiter] gemm summary (markdown):\n| M | torch us |\n|---:|---:|\n| 1 | 2.5 |\n\n{NVBENCH_TABLE}"
        );
        let e = detect(&text).unwrap_err();
        assert!(
            e.reason.contains("nvbench-markdown") && e.reason.contains("aiter-table"),
            "{e}"
        );
        assert!(e.reason.contains("--format"), "{e}");
        // The `--format` it names settles it.
        let (f, p) = parse(&text, Some(Format::AiterTable)).unwrap();
        assert_eq!(f, Format::AiterTable);
        assert!(!p.measurements.is_empty());
    }

    #[test]
    fn hand_written_tables_with_github_separators() {
        for sep in ["| --- | --- |", "|:---:|:---:|", "| :-: | --: |"] {
            let text = format!("| M | triton us |\n{sep}\n| 1 | 17.2 |\n| 16 | 19.9 |\n");
            let (f, p) = read(&text);
            assert_eq!(f, Format::AiterTable, "{sep}");
            assert_eq!(
                values(&p),
                [
                    (
                        "triton".into(),
                        r#"{"M":"1"}"#.into(),
                        "latency".into(),
                        Some(17.2)
                    ),
                    (
                        "triton".into(),
                        r#"{"M":"16"}"#.into(),
                        "latency".into(),
                        Some(19.9)
                    ),
                ],
                "{sep}"
            );
        }
    }

    /// aiter's autotuning tables print the chosen backend with its ratio: the column is
    /// a result, never part of the row's identity.
    #[test]
    fn a_measured_number_inside_a_name_cell_is_never_identity() {
        let text = "| M | torch us | triton us | chosen |\n| --- | --- | --- | --- |\n\
                    | 1 | 18.4 | 17.2 | **triton** (1.07x) |\n| 16 | 18.5 | 19.9 | **torch** (0.93x) |\n";
        let (_, p) = read(text);
        let keys: std::collections::BTreeSet<String> = p
            .measurements
            .iter()
            .map(|m| p.key(m).to_string())
            .collect();
        assert_eq!(
            keys.into_iter().collect::<Vec<_>>(),
            [r#"{"M":"1"}"#, r#"{"M":"16"}"#]
        );
        let chosen: Vec<&str> = p
            .measurements
            .iter()
            .filter(|m| m.column.as_str() == "chosen")
            .map(|m| m.metric.as_str())
            .collect();
        assert_eq!(chosen, ["ratio", "ratio"]);
    }

    #[test]
    fn difference_columns_are_derived_not_latencies() {
        let text = "| kernel | base (ns) | head (ns) | Delta (ns) |\n|:-:|-:|-:|-:|\n\
                    | add | 1200 | 1250 | 50 |\n";
        let (_, p) = read(text);
        let delta = p
            .measurements
            .iter()
            .find(|m| m.column.as_str() == "Delta (ns)")
            .unwrap();
        assert_eq!(delta.direction, crate::model::Direction::None);
        assert_eq!(delta.metric.as_str(), support::columns::DIFFERENCE);
    }

    #[test]
    fn a_file_whose_measured_columns_are_all_empty_is_refused_naming_them() {
        let text = "| M | triton us |\n|---:|---:|\n| 1 |  |\n| 2 | - |\n";
        let e = parse(text, None).unwrap_err();
        assert_eq!(e.line, 3);
        assert!(
            e.reason
                .contains("every measured column is empty (triton us)"),
            "{e}"
        );
    }

    #[test]
    fn a_table_whose_every_kernel_errored_is_a_failed_run() {
        let text = "| M | triton us |\n|---:|---:|\n| 1 | error |\n| 2 | OOM |\n";
        let (_, p) = read(text);
        assert_eq!(p.provenance.verdict, Some(crate::model::RunVerdict::Fail));
        assert!(p.measurements.iter().all(|m| m.value.is_none()));
    }

    #[test]
    fn a_serving_result_with_no_completed_request_is_a_failed_run_not_zeros() {
        let text = r#"{"backend": "vllm", "completed": 0, "failed": 8, "request_throughput": 0.0, "median_ttft_ms": 0.0}"#;
        let (_, p) = read(text);
        assert_eq!(p.provenance.verdict, Some(crate::model::RunVerdict::Fail));
        for m in &p.measurements {
            if m.direction != crate::model::Direction::None {
                assert_eq!(m.value, None, "{}", m.metric.as_str());
            }
        }
    }

    #[test]
    fn a_load_run_twice_in_one_jsonl_is_two_trials_of_one_row() {
        let text = "{\"backend\": \"sglang\", \"request_rate\": 4, \"completed\": 10, \"median_ttft_ms\": 40.0}\n\
                    {\"backend\": \"sglang\", \"request_rate\": 4, \"completed\": 10, \"median_ttft_ms\": 42.0}\n\
                    {\"backend\": \"sglang\", \"request_rate\": 8, \"completed\": 10, \"median_ttft_ms\": 60.0}\n";
        let (_, p) = read(text);
        let ttft = |ms: &[crate::model::Measurement]| -> Vec<(String, Option<f64>)> {
            ms.iter()
                .filter(|m| m.metric.as_str() == "ttft_median")
                .map(|m| (p.key(m).to_string(), m.value))
                .collect()
        };
        assert_eq!(
            ttft(&p.measurements),
            [
                (r#"{"request_rate":"4"}"#.to_string(), Some(40000.0)),
                (r#"{"request_rate":"8"}"#.to_string(), Some(60000.0)),
            ]
        );
        assert_eq!(p.repetitions.len(), 1);
        assert_eq!(
            ttft(&p.repetitions[0]),
            [(r#"{"request_rate":"4"}"#.to_string(), Some(42000.0))]
        );
    }

    #[test]
    fn pytorch_v3_unit_fields_decide_unit_and_direction() {
        let text = r#"[{"benchmark": {"name": "attn"}, "model": {"name": "causal"},
            "metric": {"name": "forward_latency", "unit": "us", "benchmark_values": [6566.7]}},
            {"benchmark": {"name": "attn"}, "model": {"name": "causal"},
            "metric": {"name": "forward_tflops", "unit": "TFLOPS/s", "benchmark_values": [0.0103]}}]"#;
        let (_, p) = read(text);
        let got: Vec<(String, String, crate::model::Direction)> = p
            .measurements
            .iter()
            .map(|m| {
                (
                    m.metric.as_str().into(),
                    m.unit.as_str().into(),
                    m.direction,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (
                    "forward_latency".into(),
                    "us".into(),
                    crate::model::Direction::Lower
                ),
                (
                    "forward_tflops".into(),
                    "TFLOPS".into(),
                    crate::model::Direction::Higher
                ),
            ]
        );
    }
}
