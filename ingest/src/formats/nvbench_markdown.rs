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

use super::{Format, ParseError, Parser};
use crate::formats::support::emit::{Row, Spec};
use crate::formats::support::text::{has, trim};
use crate::formats::support::units;
use crate::model::{Direction, Parsed, Warning};

pub struct NvbenchMarkdown;

/// What a column of a results table holds.
#[derive(Debug, Clone)]
enum Column {
    Axis(String),
    Value(Spec, Cell),
    /// `Skip Reason`: a warning, no value.
    SkipReason,
}

/// How a column's cells are read.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Cell {
    /// `88.492 us`, `1.431 ms`: stored in us.
    Time,
    /// `14.24%`, `inf%`: stored as a fraction.
    Percent,
    /// `940.305 GB/s`: stored in TB/s.
    Bandwidth,
    /// `641.915T`, `17179869184`, `1056x`, `16.000 MiB`: SI suffix or size unit applied.
    Count,
}

/// One state of the log: its benchmark, device and axis values as `Run:` printed them.
struct LogState {
    bench: String,
    device: Option<String>,
    axes: Vec<(String, String)>,
    throttled: usize,
    lowest: Option<(f64, String)>,
}

impl Parser for NvbenchMarkdown {
    fn format(&self) -> Format {
        Format::NvbenchMarkdown
    }
    fn sniff(&self, text: &str) -> bool {
        has(text, "# Benchmark Results") && has(text, "| GPU Time")
    }
    fn parse(&self, text: &str) -> Result<Parsed, ParseError> {
        self.parse_in(text, &super::Context::default())
    }
    fn parse_in(&self, text: &str, cx: &super::Context) -> Result<Parsed, ParseError> {
        let mut parsed = Parsed::sized_for(text, 40);
        let mut devices: Vec<(String, String, Option<String>)> = Vec::new(); // id, name, arch
        let mut log: Vec<LogState> = Vec::new();
        let mut section = "";
        let mut bench: Option<String> = None;
        let mut device: Option<String> = None;
        let mut header: Option<(Vec<Column>, usize)> = None;
        let mut results_seen = false;
        let mut used_devices: Vec<String> = Vec::new();
        let lines: Vec<&str> = text.lines().collect();
        for (i, raw) in lines.iter().enumerate() {
            let no = i + 1;
            let line = raw.trim_end();
            if let Some(title) = line.strip_prefix("# ") {
                section = match title.trim() {
                    "Devices" => "devices",
                    "Log" => "log",
                    "Benchmark Results" => {
                        results_seen = true;
                        "results"
                    }
                    _ => "",
                };
                header = None;
                continue;
            }
            match section {
                "devices" => {
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
                "log" => read_log_line(line, no, &mut log, &mut parsed.warnings),
                "results" => {
                    if let Some(name) = line.strip_prefix("### ") {
                        // `### [0] NVIDIA H200`
                        let d = name.split_once(']').map_or(name, |(_, n)| n).trim();
                        device = Some(d.to_string());
                        if !used_devices.iter().any(|u| u == d) {
                            used_devices.push(d.to_string());
                        }
                        header = None;
                    } else if let Some(name) = line.strip_prefix("## ") {
                        bench = Some(name.trim().to_string());
                        device = None;
                        header = None;
                    } else if line.trim_start().starts_with('|') {
                        let cells = pipe_cells(line);
                        let Some(bench) = bench.as_deref() else {
                            return Err(ParseError::at(
                                no,
                                "a results table before any `## <benchmark>` heading",
                            ));
                        };
                        match &header {
                            None => {
                                let axes = axis_names(&log, bench, &cells, &lines[i + 1..]);
                                header = Some((columns(&cells, &axes), cells.len()));
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
                                    (bench, device.as_deref(), devices.len() > 1),
                                    cols,
                                    &cells,
                                    &mut log,
                                    no,
                                )?;
                            }
                        }
                    } else if !line.trim().is_empty() {
                        header = None;
                    }
                }
                _ => {}
            }
        }
        if !results_seen {
            return Err(ParseError::at(0, "no `# Benchmark Results` section"));
        }
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
        let prov = &mut parsed.provenance;
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
        prov.tags.push((
            crate::model::METHOD_TAG.to_string(),
            "nvbench:cold-mean".to_string(),
        ));
        Ok(parsed)
    }
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
        for pair in axes.split_whitespace() {
            if let Some((k, v)) = pair.split_once('=') {
                if k == "Device" {
                    device = Some(v.to_string());
                } else {
                    pairs.push((k.to_string(), v.to_string()));
                }
            }
        }
        log.push(LogState {
            bench: bench.to_string(),
            device,
            axes: pairs,
            throttled: 0,
            lowest: None,
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
        let what = log.last().map(|s| s.bench.as_str()).unwrap_or("a state");
        warnings.push(Warning {
            line: no,
            reason: format!("{what}: skipped by nvbench ({}): no values", rest.trim()),
        });
    }
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
        .take_while(|(_, h)| !SUMMARY_COLUMNS.contains(h))
        .filter(|(c, _)| {
            body.iter().all(|r| {
                r.get(*c)
                    .is_some_and(|v| !v.is_empty() && !v.ends_with("iB") && !v.ends_with(" B"))
            })
        })
        .map(|(_, h)| h.to_string())
        .collect()
}

/// The columns nvbench's own summaries print under (user element counts aside).
const SUMMARY_COLUMNS: &[&str] = &[
    "Samples",
    "CPU Time",
    "GPU Time",
    "Noise",
    "Elem/s",
    "GlobalMem BW",
    "BWUtil",
    "Batch GPU",
    "Skip Reason",
];

/// Each header cell's role, by name and place.
fn columns(header: &[&str], axes: &[String]) -> Vec<Column> {
    let mut samples = 0;
    let mut last_time = "";
    header
        .iter()
        .map(|&h| {
            if axes.iter().any(|a| a == h) {
                return Column::Axis(h.to_string());
            }
            let (metric, cell, compared): (String, Cell, bool) = match h {
                "Samples" => {
                    samples += 1;
                    let m = if samples == 1 {
                        "samples"
                    } else {
                        "samples_batch"
                    };
                    (m.into(), Cell::Count, false)
                }
                "CPU Time" => ("cpu_latency".into(), Cell::Time, false),
                "GPU Time" => ("latency".into(), Cell::Time, true),
                "Batch GPU" => ("latency_batch".into(), Cell::Time, false),
                "Noise" => {
                    let m = match last_time {
                        "CPU Time" => "cpu_noise",
                        "Batch GPU" => "noise_batch",
                        _ => "noise",
                    };
                    (m.into(), Cell::Percent, false)
                }
                "Elem/s" => ("item_rate".into(), Cell::Count, true),
                "GlobalMem BW" => ("bandwidth".into(), Cell::Bandwidth, true),
                "BWUtil" => ("bw_util".into(), Cell::Percent, false),
                "Skip Reason" => return Column::SkipReason,
                other => (metric_name(other), Cell::Count, false),
            };
            if matches!(h, "CPU Time" | "GPU Time" | "Batch GPU") {
                last_time = h;
            }
            let spec = match (cell, compared) {
                (Cell::Time, true) => Spec::measured(Some(&metric), "us", h),
                (Cell::Time, false) => Spec::measured(Some(&metric), "us", h).kept(),
                (Cell::Bandwidth, _) => Spec::measured(Some(&metric), "TB/s", h),
                (Cell::Count, true) => Spec::directed(&metric, "items/s", Direction::Higher, h),
                (Cell::Percent, _) => Spec::derived(&metric, "fraction", h, None),
                (Cell::Count, false) => Spec::derived(&metric, "", h, None),
            };
            Column::Value(spec, cell)
        })
        .collect()
}

/// `GlobalMem BW` -> `globalmem_bw`.
fn metric_name(header: &str) -> String {
    header
        .trim()
        .to_ascii_lowercase()
        .replace(|c: char| !c.is_ascii_alphanumeric(), "_")
}

/// One table row: its key, its values, and the throttle count of its state.
fn row(
    parsed: &mut Parsed,
    cx: &super::Context,
    (bench, device, several_devices): (&str, Option<&str>, bool),
    cols: &[Column],
    cells: &[&str],
    log: &mut [LogState],
    no: usize,
) -> Result<(), ParseError> {
    let mut key: Vec<(String, String)> = Vec::new();
    let mut printed_axes: Vec<(&str, &str)> = Vec::new();
    let mut variant = crate::model::DEFAULT_VARIANT.to_string();
    for (col, &cell) in cols.iter().zip(cells) {
        match col {
            Column::Axis(name) => {
                printed_axes.push((name, cell));
                let v = axis_value(cell).to_string();
                if cx.variant_axis == Some(name.as_str()) {
                    variant = v;
                } else {
                    key.push((name.clone(), v));
                }
            }
            Column::SkipReason if !cell.is_empty() => {
                parsed.warnings.push(Warning {
                    line: no,
                    reason: format!("{bench}: skipped by nvbench ({cell}): no values"),
                });
                return Ok(());
            }
            _ => {}
        }
    }
    if let (true, Some(d)) = (several_devices, device) {
        key.insert(0, ("device".to_string(), d.to_string()));
    }
    let r = Row::new(&mut parsed.keys, bench, &variant, &key, no);
    for (col, &cell) in cols.iter().zip(cells) {
        let Column::Value(spec, how) = col else {
            continue;
        };
        if cell.is_empty() {
            continue;
        }
        let value = read_cell(cell, *how).ok_or_else(|| {
            ParseError::at(
                no,
                format!(
                    "{bench}: {} is '{cell}', not a value nvbench prints",
                    spec.column
                ),
            )
        })?;
        parsed
            .measurements
            .push(r.put(&mut parsed.keys, spec, value, cell));
    }
    // The log's throttle warnings of this state, matched by benchmark and axis values.
    let state = log.iter_mut().find(|s| {
        s.bench == bench
            && s.axes.len() == printed_axes.len()
            && s.axes.iter().all(|(k, v)| {
                printed_axes
                    .iter()
                    .any(|(n, c)| n == k && (c == v || axis_value(c) == axis_value(v)))
            })
            && (!several_devices || s.device.is_some())
    });
    if let Some(s) = state {
        let n = std::mem::take(&mut s.throttled);
        if n > 0 {
            let note = match &s.lowest {
                Some((_, clock)) => format!("{n} throttle warnings, lowest ({clock})"),
                None => format!("{n} throttle warnings"),
            };
            let spec = Spec::derived("throttled", "", "Log", None);
            let m = r.put(&mut parsed.keys, &spec, Some(n as f64), &note);
            parsed.measurements.push(m);
        }
    }
    Ok(())
}

/// `2^10 = 1024` (a power-of-two axis) -> `1024`; other cells as printed.
fn axis_value(cell: &str) -> &str {
    match cell.split_once(" = ") {
        Some((p, v)) if p.starts_with("2^") => v.trim(),
        _ => cell,
    }
}

/// A cell's value in the column's stored unit; `Some(None)`: printed as no value
/// (`inf%`, `nan`).
fn read_cell(cell: &str, how: Cell) -> Option<Option<f64>> {
    let (num, unit) = match cell.find([' ', '%']) {
        Some(at) => (&cell[..at], trim(&cell[at..])),
        None => (cell, ""),
    };
    if matches!(num, "inf" | "-inf" | "nan") {
        return Some(None);
    }
    match how {
        Cell::Time => {
            let u = units::unit_of(unit)?;
            (u.metric == crate::model::metric::LATENCY)
                .then(|| Some(units::to_canonical(num.parse::<f64>().ok()?, u.factor)))
        }
        Cell::Percent => {
            (unit == "%").then_some(())?;
            Some(Some(num.parse::<f64>().ok()? / 100.0))
        }
        Cell::Bandwidth => {
            let u = units::unit_of_any_case(unit)?;
            (u.metric == crate::model::metric::BANDWIDTH)
                .then(|| Some(units::to_canonical(num.parse::<f64>().ok()?, u.factor)))
        }
        Cell::Count => {
            let scale = match unit {
                "" => 1.0,
                "B" => 1.0,
                "KiB" => 1024.0,
                "MiB" => 1024.0 * 1024.0,
                "GiB" => 1024.0 * 1024.0 * 1024.0,
                "TiB" => 1024f64.powi(4),
                _ => return None,
            };
            let num = num.strip_suffix('x').unwrap_or(num);
            let (digits, si) = match num.as_bytes().last() {
                Some(b'k') => (&num[..num.len() - 1], 1e3),
                Some(b'M') => (&num[..num.len() - 1], 1e6),
                Some(b'G') => (&num[..num.len() - 1], 1e9),
                Some(b'T') => (&num[..num.len() - 1], 1e12),
                Some(b'P') => (&num[..num.len() - 1], 1e15),
                _ => (num, 1.0),
            };
            Some(Some(units::to_canonical(
                digits.parse::<f64>().ok()?,
                si * scale,
            )))
        }
    }
}

/// `| a |  b |` -> `["a", "b"]`.
fn pipe_cells(line: &str) -> Vec<&str> {
    let t = line.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = t.strip_suffix('|').unwrap_or(t);
    t.split('|').map(trim).collect()
}

/// `|------|` or `|:---:|`.
fn is_rule(cell: &str) -> bool {
    !cell.is_empty() && cell.bytes().all(|b| b == b'-' || b == b':')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_in_their_units() {
        assert_eq!(read_cell("1.431 ms", Cell::Time), Some(Some(1431.0)));
        assert_eq!(read_cell("26.763 us", Cell::Time), Some(Some(26.763)));
        assert_eq!(read_cell("14.24%", Cell::Percent), Some(Some(0.1424)));
        assert_eq!(read_cell("inf%", Cell::Percent), Some(None));
        assert_eq!(read_cell("768.556T", Cell::Count), Some(Some(768.556e12)));
        assert_eq!(read_cell("1056x", Cell::Count), Some(Some(1056.0)));
        assert_eq!(
            read_cell("16.000 MiB", Cell::Count),
            Some(Some(16.0 * 1048576.0))
        );
        assert_eq!(
            read_cell("281.454 GB/s", Cell::Bandwidth),
            Some(Some(0.281454))
        );
        assert_eq!(read_cell("2.333 TB/s", Cell::Bandwidth), Some(Some(2.333)));
        assert_eq!(read_cell("fast", Cell::Time), None);
        assert_eq!(read_cell("12 GB/s", Cell::Time), None);
        assert_eq!(axis_value("2^10 = 1024"), "1024");
        assert_eq!(axis_value("matmul"), "matmul");
    }
}
