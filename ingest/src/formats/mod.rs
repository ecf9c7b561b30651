//! One module per input format behind the small [`Parser`] trait, and auto-detection
//! that tries each in a fixed order ([`Format::ALL`] says why that order). A parser turns
//! text into [`Parsed`] records and never touches storage; what the parsers share lives
//! in [`support`].

mod aiter_table;
mod aiter_tuned_csv;
/// The kernel an aiter tuned CSV chose for each shape (`aiter_tuned_csv::choices`).
pub use aiter_tuned_csv::choices as aiter_tuned_choices;
mod aorta_matrix;
mod aorta_result;
mod checks;
pub mod counters;
mod flydsl_bench;
mod google_benchmark;
mod nvbench_json;
mod nvbench_markdown;
mod parser;
mod perf_lines;
mod pytest_benchmark;
pub mod pytorch_v3;
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

pub use crate::model::Format;
use crate::model::Parsed;
use checks::Measured;
pub use parser::{Context, Evidence, ParseError, Parser};

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
        Format::NcuCsv => &counters::ncu::NcuCsv,
        Format::Rocprofv3Csv => &counters::rocprof::Rocprofv3Csv,
        Format::ProtonHatchet => &counters::proton::ProtonHatchet,
    }
}

/// Pick the format of `text`, or say why none fits.
///
/// Formats are asked in [`Format::ALL`]'s order how strongly the text is theirs
/// ([`Parser::evidence`]). The first signature ends the search, unless a format asked
/// before it found one too: then the text is refused naming both, with the `--format`
/// that settles it. Without a signature, outputs of neighbouring tools that look like a
/// format but hold no results of one (an nvbench compare report, a profiler's table, a
/// harness's console table whose JSON perfdb reads) are refused as what they are
/// ([`support::neighbours`]); else the first format with a marker takes the text.
///
/// A text carrying Nsight Compute's CSV is the profiled program's output with ncu's lines
/// in it: its format is the one the rest of the text is in, the counters ride along
/// ([`parse_in`]); with no other format there, it is [`Format::NcuCsv`]. ncu's lines
/// claim no format of their own, so a text that is another format with them in it is
/// still that format.
pub fn detect(text: &str) -> Result<Format, ParseError> {
    // The common case pays nothing for ncu: its lines are looked for only when the text
    // is no other format as it stands, or when one is found (`parse_in` masks them).
    match detect_among(text) {
        Ok(f) => Ok(f),
        Err(_) if counters::ncu::carries(text) => {
            Ok(detect_among(&counters::ncu::without_own(text)).unwrap_or(Format::NcuCsv))
        }
        Err(e) => Err(e),
    }
}

/// [`detect`] over a text that carries no ncu CSV.
fn detect_among(text: &str) -> Result<Format, ParseError> {
    if let Some(e) = known_without_values(text) {
        return Err(e);
    }
    let mut first_marker: Option<Format> = None;
    let mut signature: Option<Format> = None;
    for f in Format::ALL {
        if f == Format::NcuCsv {
            continue; // told apart before the others: see `detect`
        }
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
    if first_marker.is_none() && nvbench_markdown::only_no_data(text) {
        return Ok(Format::NvbenchMarkdown);
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

/// `text` read as `format`. Nsight Compute's CSV in the output of the program it
/// profiled: the program's output read by its own format (ncu's lines blanked), the
/// counters added to the same run; read as ncu's CSV alone, the program lines left
/// unread are said.
fn read_with_ncu(format: Format, text: &str, cx: &Context) -> Result<Parsed, ParseError> {
    if format == Format::NcuCsv {
        let mut parsed = parser_of(format).parse_in(text, cx)?;
        let program = counters::ncu::without_own(text);
        let lines = program.lines().filter(|l| !l.trim().is_empty()).count();
        if lines > 0 {
            parsed.warnings.push(crate::model::Warning {
                line: 0,
                reason: format!(
                    "{lines} line(s) of the profiled program's own output are in no format \
                     perfdb reads: only Nsight Compute's counters are stored"
                ),
            });
        }
        return Ok(parsed);
    }
    if !counters::ncu::carries(text) {
        return parser_of(format).parse_in(text, cx);
    }
    let mut parsed = parser_of(format).parse_in(&counters::ncu::without_own(text), cx)?;
    counters::ncu::read_into(text, &mut parsed)?;
    Ok(parsed)
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
    let mut parsed = read_with_ncu(format, text, cx)?;
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
    if !failed_run && !format.is_counters() {
        match checks::nothing_measured(format, &parsed) {
            Measured::Some => {}
            Measured::Empty(e) => return Err(e),
            // Every kernel errored: a failed run on record, never rows of nothing.
            Measured::AllFailed(detail) => {
                parsed.provenance.verdict = Some(crate::model::RunVerdict::Fail);
                parsed.provenance.verdict_detail = Some(detail);
            }
        }
    }
    if let Some(e) = checks::unread_cells(&parsed) {
        return Err(e);
    }
    mark_profiled(&mut parsed);
    Ok((format, parsed))
}

/// A profiler's capture is a profiled run, whoever ingests it: tagged `profiled=PROFILER`,
/// and the profiled program's own timing rows in it (ncu's CSV inside the program's
/// output), timed under the profiler's replay, stored undirected with a note saying so,
/// so that compare, detect, history and noise never take them for a timed trial.
fn mark_profiled(parsed: &mut Parsed) {
    let Some(profiler) = parsed
        .measurements
        .iter()
        .find(|m| counters::is_counter(m))
        .map(|m| m.table.to_string())
    else {
        return;
    };
    let note: crate::model::Name = counters::profiled_note(&profiler).as_str().into();
    let mut marked = 0;
    let runs = std::iter::once(&mut parsed.measurements).chain(parsed.repetitions.iter_mut());
    for m in runs.flatten() {
        if !counters::is_counter(m) {
            m.direction = crate::model::Direction::None;
            m.note = Some(note);
            marked += 1;
        }
    }
    let tags = &mut parsed.provenance.tags;
    if !tags.iter().any(|(k, _)| k == counters::PROFILED_TAG) {
        tags.push((counters::PROFILED_TAG.into(), profiler.clone()));
    }
    if marked > 0 {
        parsed.warnings.push(crate::model::Warning {
            line: 0,
            reason: format!(
                "{marked} value(s) of the profiled program's own output ran under \
                 {profiler}'s replay: stored marked profiled (undirected), never a timed trial"
            ),
        });
    }
}

#[cfg(test)]
mod tests;
