//! A kernel's GPU energy per call, as the benchmark measured it around its own calls:
//! `perfdb-energy call {"calls": N, "joules": J, "seconds": S, "gpu": G}` lines, which
//! `perfdb_energy.per_call` (put on the trials' `PYTHONPATH` by `ab --energy`) prints
//! before the row it measured. Each reading becomes the metric [`METRIC`] (J a call,
//! lower is better) of the row printed next, so `compare` and `ab` judge it like the
//! row's time.
//!
//! The lines are blanked (line numbers kept) before the benchmark's format reads the
//! output. A reading is stored only where it can be told to one row: the next line
//! holding rows holds one row, and no other reading lies between the two. Any other
//! reading (several before one row, as a table printed at the end gives, or one after
//! the last row) is a warning of the run, not a value.

use crate::model::{Direction, Measurement, Numerics, Parsed, Warning};
use serde::Deserialize;
use std::collections::BTreeMap;

/// The prefix of the lines.
pub const PREFIX: &str = "perfdb-energy ";
/// The metric each reading is stored as, in [`UNIT`].
pub const METRIC: &str = "energy_per_call";
pub const UNIT: &str = "J";
/// The column the readings come from.
pub const COLUMN: &str = "perfdb_energy";

/// Whether `metric` is the energy per call.
pub fn is_metric(metric: &str) -> bool {
    metric == METRIC
}

/// One reading as printed.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Reading {
    pub calls: u64,
    pub joules: f64,
    pub seconds: f64,
    #[serde(default)]
    pub gpu: Option<String>,
    /// `ticks`: the power between the counter's steps times the loop's time; `around`:
    /// the counter's difference around the loop (off by up to one step's energy).
    #[serde(default)]
    pub method: Option<String>,
    /// How many times the counter stepped during the loop.
    #[serde(default)]
    pub ticks: Option<u64>,
}

/// What the output held besides the benchmark's own lines.
#[derive(Debug, Default)]
pub struct Lines {
    /// Each reading with its (1-based) line.
    pub readings: Vec<(u32, Reading)>,
    /// Why a reading was not made or not read, with its line.
    pub warnings: Vec<Warning>,
}

/// The output with every `perfdb-energy` line blanked, and what they said; `None` when
/// there is none (the text is read as it is).
pub fn read(text: &str) -> Option<(String, Lines)> {
    if !text.contains(PREFIX.trim_end()) {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut lines = Lines::default();
    let mut found = false;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let Some(rest) = line.trim_end().strip_prefix(PREFIX) else {
            out.push_str(line);
            continue;
        };
        found = true;
        if line.ends_with('\n') {
            out.push('\n');
        }
        let at = u32::try_from(i + 1).unwrap_or(u32::MAX);
        let warn = |reason: String| Warning {
            line: at as usize,
            reason,
        };
        let (kind, json) = rest.split_once(' ').unwrap_or((rest, "{}"));
        match kind {
            "call" => match serde_json::from_str::<Reading>(json) {
                Ok(r) if r.calls > 0 && r.joules.is_finite() && r.joules >= 0.0 => {
                    lines.readings.push((at, r))
                }
                Ok(r) => lines.warnings.push(warn(format!(
                    "energy per call not stored: {} J over {} call(s) is not a reading",
                    r.joules, r.calls
                ))),
                Err(e) => lines
                    .warnings
                    .push(warn(format!("energy per call not read: {e}"))),
            },
            _ => {
                let why = serde_json::from_str::<serde_json::Value>(json)
                    .ok()
                    .and_then(|v| v.get("why")?.as_str().map(str::to_string))
                    .unwrap_or_else(|| json.trim().to_string());
                lines
                    .warnings
                    .push(warn(format!("energy per call not measured: {why}")))
            }
        }
    }
    found.then_some((out, lines))
}

/// Each reading given to the row printed next, as that row's [`METRIC`]; the readings
/// that cannot be told to one row become warnings. Returns how many were stored.
pub fn attach(parsed: &mut Parsed, lines: Lines) -> usize {
    parsed.warnings.extend(lines.warnings);
    if lines.readings.is_empty() {
        return 0;
    }
    if !parsed.repetitions.is_empty() {
        parsed.warnings.push(Warning {
            line: 0,
            reason: format!(
                "energy per call not stored: {} reading(s) in an output of several trials",
                lines.readings.len()
            ),
        });
        return 0;
    }
    // The rows on each line: (table, variant, key) and the first measurement's index.
    let mut rows: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for (i, m) in parsed.measurements.iter().enumerate() {
        if m.line == 0 {
            continue;
        }
        let on = rows.entry(m.line).or_default();
        let same = |j: &usize| {
            let o = &parsed.measurements[*j];
            o.table == m.table && o.variant == m.variant && o.key == m.key
        };
        if !on.iter().any(same) {
            on.push(i);
        }
    }
    let mut next: BTreeMap<u32, Vec<(u32, Reading)>> = BTreeMap::new();
    let mut refused = Vec::new();
    for (at, r) in lines.readings {
        match rows.range(at + 1..).next() {
            Some((row_line, _)) => next.entry(*row_line).or_default().push((at, r)),
            None => refused.push((at, "no row is printed after it".to_string())),
        }
    }
    // Several readings before one row: the benchmark does not print a row after each
    // reading (a table at the end), so none of its readings can be told to a row.
    if next.values().any(|g| g.len() > 1) {
        let n: usize = next.values().map(Vec::len).sum();
        for (at, _) in next.into_values().flatten() {
            refused.push((
                at,
                format!(
                    "{n} readings are not each followed by a row (a table printed at the end?)"
                ),
            ));
        }
        next = BTreeMap::new();
    }
    let mut stored = 0;
    for (row_line, group) in next {
        let (at, r) = &group[0];
        let on = &rows[&row_line];
        if on.len() > 1 {
            refused.push((
                *at,
                format!("line {row_line} holds {} rows, not one", on.len()),
            ));
            continue;
        }
        let m = parsed.measurements[on[0]];
        let per_call = r.joules / r.calls as f64;
        let raw = parsed.keys.raw_joined(&format!("{per_call:.6e}"), UNIT);
        let gpu = r.gpu.as_deref().unwrap_or("?");
        parsed.measurements.push(Measurement {
            metric: METRIC.into(),
            unit: UNIT.into(),
            direction: Direction::Lower,
            value: Some(per_call),
            raw,
            column: COLUMN.into(),
            numerics: Numerics::NotChecked,
            line: *at,
            note: Some(
                format!(
                    "measured by the benchmark through perfdb_energy: NVML's energy counter of GPU {gpu} over {} back-to-back calls ({:.3} s, {:.0} W; {})",
                    r.calls,
                    r.seconds,
                    if r.seconds > 0.0 { r.joules / r.seconds } else { f64::NAN },
                    match (r.method.as_deref(), r.ticks) {
                        (Some("ticks"), Some(t)) => format!("power between the counter's {t} steps"),
                        (Some("around"), _) => "the counter read around the loop".to_string(),
                        (Some(m), _) => m.to_string(),
                        (None, _) => "the counter read around the loop".to_string(),
                    }
                )
                .into(),
            ),
            ..m
        });
        stored += 1;
    }
    for (at, why) in refused {
        parsed.warnings.push(Warning {
            line: at as usize,
            reason: format!("energy per call not stored: {why}"),
        });
    }
    stored
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::parse;

    /// The output read as `prepare_bytes` reads it: energy lines out, the format's rows,
    /// the readings given to them.
    fn read_all(text: &str) -> (Parsed, usize) {
        let (blanked, lines) = read(text).expect("energy lines");
        assert_eq!(blanked.lines().count(), text.lines().count());
        let (_, mut parsed) = parse(&blanked, None).unwrap();
        let n = attach(&mut parsed, lines);
        (parsed, n)
    }

    fn per_call(p: &Parsed) -> Vec<(String, f64, u32)> {
        p.measurements
            .iter()
            .filter(|m| is_metric(&m.metric))
            .map(|m| (p.keys.get(m.key).to_string(), m.value.unwrap(), m.line))
            .collect()
    }

    const E: &str = "perfdb-energy call";

    #[test]
    fn each_reading_goes_to_the_row_printed_next() {
        let text = format!(
            "start\n{E} {{\"calls\": 1000, \"joules\": 300.0, \"seconds\": 0.5, \"gpu\": \"0\"}}\n\
             [perf][add] dim: (4096,), dtype: torch.float32, torch avg: 10.0 us\n\
             {E} {{\"calls\": 500, \"joules\": 300.0, \"seconds\": 0.5, \"gpu\": \"0\"}}\n\
             [perf][add] dim: (8192,), dtype: torch.float32, torch avg: 20.0 us\n\
             [perf][add] dim: (16384,), dtype: torch.float32, torch avg: 40.0 us\n"
        );
        let (p, n) = read_all(&text);
        assert_eq!(n, 2);
        let got = per_call(&p);
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(got[0].0.contains("4096") && (got[0].1 - 0.3).abs() < 1e-12 && got[0].2 == 2);
        assert!(got[1].0.contains("8192") && (got[1].1 - 0.6).abs() < 1e-12 && got[1].2 == 4);
        // The third row measured no energy: it has none, and nothing is said of it.
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let m = p
            .measurements
            .iter()
            .find(|m| is_metric(&m.metric))
            .unwrap();
        assert_eq!((&*m.unit, m.direction), (UNIT, Direction::Lower));
        assert!(m
            .note
            .as_deref()
            .unwrap()
            .contains("1000 back-to-back calls"));
    }

    #[test]
    fn readings_before_a_table_at_the_end_are_told_to_no_row() {
        let text = format!(
            "{E} {{\"calls\": 10, \"joules\": 3.0, \"seconds\": 0.5}}\n\
             {E} {{\"calls\": 10, \"joules\": 6.0, \"seconds\": 0.5}}\n\
             [perf][add] dim: (4096,), dtype: torch.float32, torch avg: 10.0 us\n\
             [perf][add] dim: (8192,), dtype: torch.float32, torch avg: 20.0 us\n"
        );
        let (p, n) = read_all(&text);
        assert_eq!(n, 0);
        assert!(per_call(&p).is_empty());
        assert_eq!(p.warnings.len(), 2, "{:?}", p.warnings);
        assert!(p.warnings[0]
            .reason
            .contains("2 readings are not each followed by a row"));
    }

    #[test]
    fn a_reading_after_the_last_row_or_before_a_line_of_several_rows_is_refused() {
        let text = format!(
            "{E} {{\"calls\": 10, \"joules\": 3.0, \"seconds\": 0.5}}\n\
             [perf] dim: (64, 4096), dtype: torch.bfloat16, torch avg: 8.10 us, ck avg: 5.20 us, uplift: 55.8%\n\
             {E} {{\"calls\": 10, \"joules\": 3.0, \"seconds\": 0.5}}\n"
        );
        let (p, n) = read_all(&text);
        assert_eq!(n, 0);
        let why: Vec<&str> = p.warnings.iter().map(|w| w.reason.as_str()).collect();
        assert!(
            why.iter().any(|w| w.contains("no row is printed after it")),
            "{why:?}"
        );
        assert!(
            why.iter()
                .any(|w| w.contains("line 2 holds 3 rows, not one")),
            "{why:?}"
        );
    }

    #[test]
    fn errors_and_bad_readings_are_warnings_not_values() {
        let text = format!(
            "perfdb-energy error {{\"why\": \"NVML did not load\"}}\n\
             {E} {{\"calls\": 0, \"joules\": 3.0, \"seconds\": 0.5}}\n\
             {E} {{\"calls\": 10}}\n\
             [perf][add] dim: (4096,), dtype: torch.float32, torch avg: 10.0 us\n"
        );
        let (p, n) = read_all(&text);
        assert_eq!(n, 0);
        let why: Vec<(usize, &str)> = p
            .warnings
            .iter()
            .map(|w| (w.line, w.reason.as_str()))
            .collect();
        assert_eq!(why.len(), 3, "{why:?}");
        assert_eq!(why[0].1, "energy per call not measured: NVML did not load");
        assert!(why[1].1.contains("over 0 call(s) is not a reading") && why[1].0 == 2);
        assert!(why[2].1.contains("not read: missing field `joules`") && why[2].0 == 3);
    }

    #[test]
    fn an_output_without_energy_lines_is_read_as_it_is() {
        assert!(read("[perf][add] dim: (1,), dtype: f, torch avg: 1 us\n").is_none());
    }
}
