//! The markdown NVIDIA nvbench prints (its default output, or `--md FILE`): a `# Devices`
//! section, a `# Log` of the states as they ran, and `# Benchmark Results` with one
//! pipe table per benchmark (and per device, under `### [0] NVIDIA H200`).
//!
//! The tables repeat column names, so columns are read by place: a `Noise` belongs to
//! the time column before it (CPU or GPU), the first `Samples` is the cold count and a
//! later one the batch count. Cells carry their units and SI suffixes (`1.431 ms`,
//! `768.556T`, `281.454 GB/s`, `16.000 MiB`, `1056x`, `inf%`); an empty cell is no value.
//!
//! The axis columns are the names the log's `Run:` lines give (`[Device=0 N=2048
//! Op=matmul]`); without a log, the columns before the first `Samples`/time column
//! whose cells are not sizes or blank. Table = benchmark, key = axis values (a power-of-
//! two axis `2^10 = 1024` by its value), variant = `default` unless `--variant-axis`
//! names an axis, as for nvbench JSON.
//!
//! The printed `GPU Time` is the cold *mean* (the median is only in the JSON), so the
//! run's method is `nvbench:cold-mean`: never compared with a JSON run's cold median.
//! The log's throttle warnings (`GPU throttled below threshold (1370.87 MHz / 1980.00
//! MHz)`) are counted per state and kept beside its values as `throttled` (the lowest
//! clock in the note); `Skip:` lines are warnings.

use crate::formats::nvbench_markdown::cells::is_time_cell;
use crate::formats::nvbench_markdown::columns::columns;
use crate::formats::nvbench_markdown::columns::first_body_row;
use crate::formats::nvbench_markdown::columns::is_measured_cell;
use crate::formats::nvbench_markdown::columns::is_rule;
use crate::formats::nvbench_markdown::columns::is_summary_header;
use crate::formats::nvbench_markdown::columns::method_of;
use crate::formats::nvbench_markdown::columns::pipe_cells;
use crate::formats::nvbench_markdown::columns::primary_time;
use crate::formats::nvbench_markdown::columns::Column;
use crate::formats::nvbench_markdown::columns::SUMMARY_COLUMNS;
use crate::formats::nvbench_markdown::columns::TIME_SUMMARIES;
use crate::formats::nvbench_markdown::rows::row;
use crate::formats::parser::{Context, Evidence, ParseError, Parser};
mod cells;
mod columns;
mod rows;

use crate::formats::support::text::has;
use crate::model::Format;
use crate::model::{Parsed, Warning};

pub struct NvbenchMarkdown;

/// What nvbench prints under a benchmark none of whose states measured anything.
const NO_DATA: &str = "No data -- check log.";

/// An nvbench report with results and no table: every benchmark `No data -- check
/// log.` (its states skipped). Asked only of text no format claimed, so other files
/// never pay its scans.
pub(crate) fn only_no_data(text: &str) -> bool {
    has(text, NO_DATA) && has(text, "# Benchmark Results")
}

/// One state of the log: its benchmark, device and axis values as `Run:` printed them.
struct LogState {
    bench: String,
    device: Option<String>,
    axes: Vec<(String, String)>,
    throttled: usize,
    lowest: Option<(f64, String)>,
    /// Why nvbench skipped the state (`OOM: ...`), when it did.
    skipped: Option<String>,
}

impl Parser for NvbenchMarkdown {
    fn format(&self) -> Format {
        Format::NvbenchMarkdown
    }
    fn sniff(&self, text: &str) -> bool {
        self.evidence(text) > Evidence::None
    }
    /// A signature: a pipe-table header with nvbench's own summary columns (two or more
    /// of `Samples`, `CPU Time`, `GPU Time`, `Noise`, `Elem/s`, ...; a time among them)
    /// over a row with a time as nvbench prints it (`1.431 ms`). nvbench pads its cells
    /// to the widest value, so names are matched as cells, not as `| GPU Time`.
    fn evidence(&self, text: &str) -> Evidence {
        let b = text.as_bytes();
        let mut rows = crate::formats::support::text::finder!("GPU Time")
            .find_iter(b)
            .peekable();
        // One scan of a log that holds no `GPU Time` (every aiter log). A report whose
        // every benchmark has no data holds none either: `detect` asks
        // [`only_no_data`] when no format claimed the text.
        if rows.peek().is_none() {
            return Evidence::None;
        }
        let signed = rows.any(|at| {
            let start = text[..at].rfind('\n').map_or(0, |s| s + 1);
            let header = text[start..].lines().next().unwrap_or("");
            is_summary_header(header) && {
                let below = text[start..].lines().skip(1);
                first_body_row(below).is_some_and(|r| r.iter().any(|c| is_time_cell(c)))
            }
        });
        if signed {
            Evidence::Signature
        } else if has(text, "# Benchmark Results") {
            Evidence::Marker
        } else {
            Evidence::None
        }
    }
    fn parse(&self, text: &str) -> Result<Parsed, ParseError> {
        self.parse_in(text, &Context::default())
    }
    fn parse_in(&self, text: &str, cx: &Context) -> Result<Parsed, ParseError> {
        let mut parsed = Parsed::sized_for(text, 40);
        let mut devices: Vec<(String, String, Option<String>)> = Vec::new(); // id, name, arch
        let mut log: Vec<LogState> = Vec::new();
        let mut section = "";
        let mut bench: Option<String> = None;
        let mut device: Option<String> = None;
        let mut header: Option<(Vec<Column>, usize)> = None;
        let mut results_seen = false;
        // Benchmarks printed as `No data -- check log.`, with their lines.
        let mut no_data: Vec<(String, usize)> = Vec::new();
        let mut used_devices: Vec<String> = Vec::new();
        let lines: Vec<&str> = text.lines().collect();
        // The benchmark of a table under no `## <benchmark>` heading (the file's name
        // would differ between trials of one benchmark).
        let untitled = "nvbench";
        // The compared time column of each table (the run's method names it).
        let mut primaries: Vec<String> = Vec::new();
        // Devices the result headings name (`### [1] Quadro GP100`), for tables pasted
        // without the `# Devices` section.
        let headed_devices = headed_devices(&lines);
        for (i, raw) in lines.iter().enumerate() {
            let no = i + 1;
            let line = raw.trim_end();
            if let Some(title) = line.strip_prefix("# ") {
                section = section_of(title);
                header = None;
                continue;
            }
            match section {
                "devices" => read_device_line(line, &mut devices),
                "log" => read_log_line(line, no, &mut log, &mut parsed.warnings),
                // Tables pasted without nvbench's `# Benchmark Results` line (an issue,
                // a README) are read where their header is nvbench's.
                _ => {
                    if let Some(name) = line.strip_prefix("### ") {
                        device = Some(device_heading(name, &mut used_devices));
                        header = None;
                    } else if let Some(name) = line.strip_prefix("## ") {
                        bench = Some(name.trim().to_string());
                        device = None;
                        header = None;
                    } else if line.trim_start().starts_with('|') {
                        let cells = pipe_cells(line);
                        if header.is_none() && !is_summary_header(line) {
                            // Another table of the page (a README's own): not nvbench's.
                            header = Some((Vec::new(), usize::MAX));
                            continue;
                        }
                        if header.as_ref().is_some_and(|(_, w)| *w == usize::MAX) {
                            continue;
                        }
                        results_seen = true;
                        let bench = bench.as_deref().unwrap_or(untitled);
                        match &header {
                            None => {
                                let (cols, primary) =
                                    table_header(&log, bench, &cells, &lines[i + 1..]);
                                primaries.extend(primary);
                                header = Some((cols, cells.len()));
                            }
                            Some(_) if cells.iter().all(|c| is_rule(c)) => {}
                            Some((cols, width)) => {
                                if cells.len() != *width {
                                    return Err(ParseError::at(
                                        no,
                                        format!(
                                            "{bench}: a row of {} cells under a header of {width}",
                                            cells.len()
                                        ),
                                    ));
                                }
                                row(
                                    &mut parsed,
                                    cx,
                                    (
                                        bench,
                                        device.as_deref(),
                                        devices.len() > 1 || headed_devices > 1,
                                    ),
                                    cols,
                                    &cells,
                                    &mut log,
                                    no,
                                )?;
                            }
                        }
                    } else if line.trim() == NO_DATA {
                        results_seen = true;
                        no_data.push((bench.clone().unwrap_or_else(|| untitled.into()), no));
                        header = None;
                    } else if !line.trim().is_empty() {
                        header = None;
                    }
                }
            }
        }
        if !results_seen {
            return Err(no_results_table());
        }
        unmatched_throttling(&mut parsed, &log);
        without_data(&mut parsed, &no_data, &log);
        ran_on(&mut parsed.provenance, &devices, &used_devices);
        tag_method(&mut parsed, primaries)?;
        Ok(parsed)
    }
}

/// The run's method tag, from the compared time column of its tables.
fn tag_method(parsed: &mut Parsed, primaries: Vec<String>) -> Result<(), ParseError> {
    let method = method_tag(primaries)?;
    parsed
        .provenance
        .tags
        .push((crate::model::METHOD_TAG.to_string(), method.to_string()));
    Ok(())
}

/// The section a `# TITLE` line opens: nvbench's three, else none.
fn section_of(title: &str) -> &'static str {
    match title.trim() {
        "Devices" => "devices",
        "Log" => "log",
        "Benchmark Results" => "results",
        _ => "",
    }
}

/// A results table's columns from its header `cells` and the lines after it; its
/// compared time column, when it has one.
fn table_header(
    log: &[LogState],
    bench: &str,
    cells: &[&str],
    after: &[&str],
) -> (Vec<Column>, Option<String>) {
    let axes = axis_names(log, bench, cells, after);
    let first = first_body_row(after.iter().copied());
    let cols = columns(cells, &axes, first.as_deref());
    (cols, primary_time(cells).map(str::to_string))
}

/// The log's throttle warnings no table row took (their states are in no results table).
fn unmatched_throttling(parsed: &mut Parsed, log: &[LogState]) {
    let unmatched: usize = log.iter().map(|s| s.throttled).sum();
    if unmatched > 0 {
        parsed.warnings.push(Warning {
            line: 0,
            reason: format!(
                "{unmatched} throttle warnings of the log belong to states not in the \
                 results tables"
            ),
        });
    }
}

/// Benchmarks nvbench printed no data for: a warning each, naming why the log skipped
/// their states; with nothing measured at all, a failed run on record (never a run of no
/// rows that reads as nothing changed).
fn without_data(parsed: &mut Parsed, no_data: &[(String, usize)], log: &[LogState]) {
    let mut details = Vec::new();
    for (bench, no) in no_data {
        let states: Vec<&LogState> = log.iter().filter(|s| &s.bench == bench).collect();
        let mut why: Vec<&str> = states.iter().filter_map(|s| s.skipped.as_deref()).collect();
        why.sort_unstable();
        why.dedup();
        let skipped = states.iter().filter(|s| s.skipped.is_some()).count();
        let detail = match (skipped, why.as_slice()) {
            (0, _) => format!("{bench}: no data (nvbench: \"{NO_DATA}\")"),
            (n, [one]) => format!(
                "{bench}: no data: nvbench skipped {n} of its {} state(s) ({one})",
                states.len()
            ),
            (n, _) => format!(
                "{bench}: no data: nvbench skipped {n} of its {} state(s) ({} reasons)",
                states.len(),
                why.len()
            ),
        };
        parsed.warnings.push(Warning {
            line: *no,
            reason: detail.clone(),
        });
        details.push(detail);
    }
    if parsed.measurements.is_empty() && !details.is_empty() {
        parsed.provenance.verdict = Some(crate::model::RunVerdict::Fail);
        parsed.provenance.verdict_detail = Some(details.join("; "));
    }
}

/// A `### [0] NVIDIA H200` heading's device, noted among those the results ran on.
fn device_heading(name: &str, used_devices: &mut Vec<String>) -> String {
    let d = name.split_once(']').map_or(name, |(_, n)| n).trim();
    if !used_devices.iter().any(|u| u == d) {
        used_devices.push(d.to_string());
    }
    d.to_string()
}

fn no_results_table() -> ParseError {
    ParseError::at(
        0,
        "no nvbench results table (a pipe table with nvbench's `Samples`, `GPU Time`, \
         `Noise`... columns)",
    )
}

/// How many devices the result headings name (`### [1] Quadro GP100`), for tables
/// pasted without the `# Devices` section.
fn headed_devices(lines: &[&str]) -> usize {
    let mut d: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("### ["))
        .collect();
    d.sort_unstable();
    d.dedup();
    d.len()
}

/// A line of the `# Devices` section: a device's id and name, or its SM version.
fn read_device_line(line: &str, devices: &mut Vec<(String, String, Option<String>)>) {
    if let Some(rest) = line.strip_prefix("## [") {
        if let Some((id, name)) = rest.split_once(']') {
            let name = name.trim().trim_matches('`').to_string();
            devices.push((id.to_string(), name, None));
        }
    } else if let Some(sm) = line.strip_prefix("* SM Version: ") {
        let v: String = sm.chars().take_while(char::is_ascii_digit).collect();
        if let (Some(d), Ok(v)) = (devices.last_mut(), v.parse::<u32>()) {
            d.2 = Some(format!("sm_{}", v / 10));
        }
    }
}

/// The machine and arch of the devices the results ran on.
fn ran_on(
    prov: &mut crate::model::Provenance,
    devices: &[(String, String, Option<String>)],
    used_devices: &[String],
) {
    let ran_on: Vec<&(String, String, Option<String>)> = devices
        .iter()
        .filter(|(_, n, _)| used_devices.is_empty() || used_devices.contains(n))
        .collect();
    let names: Vec<&str> = if ran_on.is_empty() {
        used_devices.iter().map(String::as_str).collect()
    } else {
        ran_on.iter().map(|(_, n, _)| n.as_str()).collect()
    };
    if !names.is_empty() {
        prov.machine = Some(names.join(" + "));
    }
    let archs: Vec<&str> = ran_on.iter().filter_map(|(_, _, a)| a.as_deref()).collect();
    if !archs.is_empty() {
        prov.arch = Some(archs.join("+"));
    }
}

/// The run's method from the time column its tables compare: one statistic a run.
fn method_tag(mut primaries: Vec<String>) -> Result<&'static str, ParseError> {
    primaries.dedup();
    if primaries.len() > 1 {
        return Err(ParseError::at(
            0,
            format!(
                "tables compare different GPU time statistics ({}): one run holds one; \
                 split the file by table",
                primaries.join(", ")
            ),
        ));
    }
    Ok(method_of(
        primaries.first().map_or("GPU Time", String::as_str),
    ))
}

/// A `Run:`, `Warn:` or `Skip:` line of the log.
fn read_log_line(line: &str, no: usize, log: &mut Vec<LogState>, warnings: &mut Vec<Warning>) {
    if let Some(rest) = line.strip_prefix("Run:") {
        // `Run:  [1/4] torch_bf16 [Device=0 N=2048 Op=matmul]`
        let rest = rest.trim();
        let rest = rest
            .strip_prefix('[')
            .and_then(|r| r.split_once(']'))
            .map_or(rest, |(_, r)| r.trim());
        let (bench, axes) = match rest.rsplit_once(" [") {
            Some((b, a)) => (b.trim(), a.trim_end_matches(']')),
            None => (rest, ""),
        };
        let mut device = None;
        let mut pairs = Vec::new();
        for (k, v) in run_axes(axes) {
            if k == "Device" {
                device = Some(v);
            } else {
                pairs.push((k, v));
            }
        }
        log.push(LogState {
            bench: bench.to_string(),
            device,
            axes: pairs,
            throttled: 0,
            lowest: None,
            skipped: None,
        });
    } else if let Some(rest) = line.strip_prefix("Warn:") {
        if let (Some(state), Some(at)) = (log.last_mut(), rest.find("throttled below threshold")) {
            state.throttled += 1;
            // `(1370.87 MHz / 1980.00 MHz)`
            let clock = rest[at..]
                .split_once('(')
                .and_then(|(_, r)| r.split_once(')'))
                .map(|(c, _)| c.trim().to_string());
            if let Some(c) = clock {
                let mhz = c
                    .split_whitespace()
                    .next()
                    .and_then(|v| v.parse::<f64>().ok());
                if let Some(mhz) = mhz {
                    if state.lowest.as_ref().is_none_or(|(l, _)| mhz < *l) {
                        state.lowest = Some((mhz, c));
                    }
                }
            }
        }
    } else if let Some(rest) = line.strip_prefix("Skip:") {
        if let Some(state) = log.last_mut() {
            state.skipped = Some(rest.trim().to_string());
        }
        let what = log.last().map(|s| s.bench.as_str()).unwrap_or("a state");
        warnings.push(Warning {
            line: no,
            reason: format!("{what}: skipped by nvbench ({}): no values", rest.trim()),
        });
    }
}

/// `Device=0 Axis Size=2^1 Num Threads=2^9` -> its pairs. Axis names may hold spaces
/// (nvbench prints them as given); values never do.
fn run_axes(s: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut name = String::new();
    for tok in s.split_whitespace() {
        if !name.is_empty() {
            name.push(' ');
        }
        match tok.split_once('=') {
            Some((k, v)) => {
                name.push_str(k);
                out.push((std::mem::take(&mut name), v.to_string()));
            }
            None => name.push_str(tok),
        }
    }
    out
}

/// The axis columns of a table of `bench`: the names its `Run:` lines give, or without
/// a log the columns before the first nvbench summary whose cells look like axis values.
fn axis_names(log: &[LogState], bench: &str, header: &[&str], rows: &[&str]) -> Vec<String> {
    if let Some(s) = log.iter().find(|s| s.bench == bench) {
        return s.axes.iter().map(|(k, _)| k.clone()).collect();
    }
    let body: Vec<Vec<&str>> = rows
        .iter()
        .skip(1)
        .take_while(|l| l.trim_start().starts_with('|'))
        .map(|l| pipe_cells(l))
        .collect();
    header
        .iter()
        .enumerate()
        .take_while(|(_, h)| !SUMMARY_COLUMNS.contains(h) && !TIME_SUMMARIES.contains(h))
        .filter(|(c, _)| {
            body.iter().all(|r| {
                r.get(*c)
                    .is_some_and(|v| !v.is_empty() && !is_measured_cell(v))
            })
        })
        .map(|(_, h)| h.to_string())
        .collect()
}

#[cfg(test)]
mod tests;
