//! A table's columns: which are axes (the key), which are times, noise, rates or
//! counts, read from the header and, where it does not tell, from the first row.

use crate::formats::nvbench_markdown::cells::is_time_cell;
use crate::formats::nvbench_markdown::cells::shape_of;
use crate::formats::nvbench_markdown::cells::Cell;
use crate::formats::support::emit::Spec;
use crate::formats::support::text::trim;
use crate::model::Direction;

/// What a column of a results table holds.
#[derive(Debug, Clone)]
pub(super) enum Column {
    Axis(String),
    Value(Spec, Cell),
    /// `Skip Reason`: a warning, no value.
    SkipReason,
}

/// The columns nvbench's own summaries print under (user element counts aside).
pub(super) const SUMMARY_COLUMNS: &[&str] = &[
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

/// nvbench's summaries that the default and `--md` tables print, shown or not.
pub(super) const TIME_SUMMARIES: &[&str] = &[
    "GPU Time",
    "CPU Time",
    "Batch GPU",
    "Min GPU Time",
    "Max GPU Time",
    "Median GPU Time",
    "Min CPU Time",
    "Max CPU Time",
];

/// A header row of an nvbench results table: two or more of its summary columns, one
/// a time, and no compare-report column (`Ref Time`, `Cmp Time`).
pub(super) fn is_summary_header(line: &str) -> bool {
    if !line.trim_start().starts_with('|') {
        return false;
    }
    let cells = pipe_cells(line);
    let known = |c: &&&str| SUMMARY_COLUMNS.contains(*c) || TIME_SUMMARIES.contains(*c);
    cells.iter().filter(known).count() >= 2
        && cells.iter().any(|c| TIME_SUMMARIES.contains(c))
        && !cells.iter().any(|c| matches!(*c, "Ref Time" | "Cmp Time"))
}

/// The first row under a header (its `|---|` rule skipped), as cells.
pub(super) fn first_body_row<'a>(mut below: impl Iterator<Item = &'a str>) -> Option<Vec<&'a str>> {
    let rule = below.next()?;
    if !pipe_cells(rule).iter().all(|c| is_rule(c)) {
        return None;
    }
    let row = below.next()?;
    row.trim_start().starts_with('|').then(|| pipe_cells(row))
}

/// A cell that holds a measured value (a time, a percentage, a rate, a size or a
/// count with nvbench's `x`), never an axis value.
pub(super) fn is_measured_cell(cell: &str) -> bool {
    let number = |n: &str| n.parse::<f64>().is_ok() || matches!(n, "inf" | "-inf" | "nan");
    if cell.ends_with("/s") || is_time_cell(cell) {
        return true;
    }
    if let Some(n) = cell.strip_suffix('%').or_else(|| cell.strip_suffix('x')) {
        return number(n);
    }
    // `641.915T`: nvbench's SI-suffixed rates print three decimals.
    if let Some(n) = cell.strip_suffix(['k', 'M', 'G', 'T', 'P']) {
        return n.contains('.') && number(n);
    }
    cell.split_once(' ')
        .is_some_and(|(n, u)| number(n) && matches!(u, "B" | "KiB" | "MiB" | "GiB" | "TiB"))
}

/// Each header cell's role, by name and place; a column nvbench does not name (a
/// user summary, `Min GPU Time`) is read by the shape of its first cell.
///
/// The compared time is the cold `GPU Time` (a mean); where a table hides it (nvbench's
/// summaries example shows `Min GPU Time` and `Max GPU Time` instead) the median, else
/// the minimum: [`primary_time`] says which, and the run's method names it.
pub(super) fn columns(header: &[&str], axes: &[String], first_row: Option<&[&str]>) -> Vec<Column> {
    let mut samples = 0;
    let mut last_time = "";
    let primary = primary_time(header);
    header
        .iter()
        .enumerate()
        .map(|(i, &h)| {
            if axes.iter().any(|a| a == h) {
                return Column::Axis(h.to_string());
            }
            let shape = first_row
                .and_then(|r| r.get(i))
                .map_or(Cell::Count, |c| shape_of(c));
            let (metric, cell, compared): (String, Cell, bool) = match h {
                _ if Some(h) == primary => ("latency".into(), Cell::Time, true),
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
                "GPU Time" => ("latency_mean".into(), Cell::Time, false),
                "Batch GPU" => ("latency_batch".into(), Cell::Time, false),
                "Noise" => {
                    let m = match last_time {
                        "CPU Time" | "Min CPU Time" | "Max CPU Time" => "cpu_noise",
                        "Batch GPU" => "noise_batch",
                        _ => "noise",
                    };
                    (m.into(), Cell::Percent, false)
                }
                "Elem/s" => ("item_rate".into(), Cell::Count, true),
                "GlobalMem BW" => ("bandwidth".into(), Cell::Bandwidth, true),
                "BWUtil" => ("bw_util".into(), Cell::Percent, false),
                "Skip Reason" => return Column::SkipReason,
                other => (metric_name(other), shape, false),
            };
            if TIME_SUMMARIES.contains(&h) {
                last_time = h;
            }
            let spec = match (cell, compared) {
                (Cell::Time, true) => Spec::measured(Some(&metric), "us", h),
                (Cell::Time, false) => Spec::measured(Some(&metric), "us", h).kept(),
                (Cell::Bandwidth, true) => Spec::measured(Some(&metric), "TB/s", h),
                (Cell::Bandwidth, false) => Spec::measured(Some(&metric), "TB/s", h).kept(),
                (Cell::Count, true) => Spec::directed(&metric, "items/s", Direction::Higher, h),
                (Cell::Percent, _) => Spec::derived(&metric, "fraction", h, None),
                (Cell::Count, false) => Spec::derived(&metric, "", h, None),
            };
            Column::Value(spec, cell)
        })
        .collect()
}

/// The time column compared: `GPU Time`, else `Median GPU Time`, else `Min GPU Time`.
pub(super) fn primary_time<'a>(header: &[&'a str]) -> Option<&'a str> {
    ["GPU Time", "Median GPU Time", "Min GPU Time"]
        .into_iter()
        .find_map(|name| header.iter().find(|h| **h == name).copied())
}

/// The run's method for the compared time column.
pub(super) fn method_of(primary: &str) -> &'static str {
    match primary {
        "Median GPU Time" => "nvbench:cold-median",
        "Min GPU Time" => "nvbench:cold-min",
        _ => "nvbench:cold-mean",
    }
}

/// `GlobalMem BW` -> `globalmem_bw`, `Duration (s)` -> `duration_s`.
pub(super) fn metric_name(header: &str) -> String {
    let lower = header.trim().to_ascii_lowercase();
    lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join("_")
}

/// `| a |  b |` -> `["a", "b"]`.
pub(super) fn pipe_cells(line: &str) -> Vec<&str> {
    let t = line.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = t.strip_suffix('|').unwrap_or(t);
    t.split('|').map(trim).collect()
}

/// `|------|` or `|:---:|`.
pub(super) fn is_rule(cell: &str) -> bool {
    !cell.is_empty() && cell.bytes().all(|b| b == b'-' || b == b':')
}
