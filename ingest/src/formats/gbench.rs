//! google-benchmark `--benchmark_format=json` (or `--benchmark_out`):
//! `{context: {executable, host_name, ...}, benchmarks: [{name, run_name, run_type,
//! aggregate_name, repetitions, repetition_index, threads, iterations, real_time,
//! cpu_time, time_unit, bytes_per_second?, items_per_second?, counters...}]}`
//! (`src/json_reporter.cc`).
//!
//! The executable is the table, the family (`BM_Gemm` of `BM_Gemm/512/64/threads:2`) the
//! variant, the arguments the key (`arg1`, `arg2`... for positional ones, `name:value`
//! ones by name, plus `threads`). `real_time` is the latency, `cpu_time` kept as
//! `latency_cpu`, in `time_unit`; `bytes_per_second` is bandwidth, `items_per_second`
//! a throughput; other counters are kept unclassified. With `--benchmark_repetitions`,
//! each repetition is a trial (a run of its own); the aggregates (`_mean`, `_median`,
//! `_stddev`, `_cv`) are kept as derived values, and when only aggregates were reported
//! the median is the value.

use super::emit::{json_number, lines_of, Row};
use super::{Format, ParseError, Parser};
use crate::model::{Direction, Measurement, Parsed};
use serde_json::{Map, Value};

pub struct GoogleBenchmark;

/// Name segments that set how a benchmark runs, not what it computes.
const RUN_OPTIONS: &[&str] = &[
    "iterations",
    "repeats",
    "min_time",
    "min_warmup_time",
    "real_time",
    "process_time",
    "manual_time",
];

/// Fields every record has that are not counters.
const STANDARD: &[&str] = &[
    "name",
    "family_index",
    "per_family_instance_index",
    "run_name",
    "run_type",
    "repetitions",
    "repetition_index",
    "threads",
    "iterations",
    "real_time",
    "cpu_time",
    "time_unit",
    "aggregate_name",
    "aggregate_unit",
    "label",
    "error_occurred",
    "error_message",
    "big_o",
    "rms",
];

/// `BM_Gemm/512/64/threads:2/real_time` -> (`BM_Gemm`, [(arg1, 512), (arg2, 64),
/// (threads, 2)]).
fn split_name(run_name: &str) -> (&str, Vec<(String, String)>) {
    let mut parts = run_name.split('/');
    let family = parts.next().unwrap_or(run_name);
    let mut key = Vec::new();
    let mut positional = 0;
    for p in parts {
        match p.split_once(':') {
            Some((k, _)) if RUN_OPTIONS.contains(&k) => {}
            Some((k, v)) => key.push((k.to_string(), v.to_string())),
            None if RUN_OPTIONS.contains(&p) => {}
            None => {
                positional += 1;
                key.push((format!("arg{positional}"), p.to_string()));
            }
        }
    }
    (family, key)
}

impl Parser for GoogleBenchmark {
    fn format(&self) -> Format {
        Format::GoogleBenchmark
    }
    fn sniff(&self, text: &str) -> bool {
        text.trim_start().starts_with('{')
            && crate::text::has(text, "\"context\"")
            && crate::text::has(text, "\"benchmarks\"")
            && crate::text::has(text, "\"time_unit\"")
    }
    fn parse(&self, text: &str) -> Result<Parsed, ParseError> {
        let doc: Value = serde_json::from_str(text)
            .map_err(|e| ParseError::at(e.line(), format!("not JSON: {e}")))?;
        let benches = doc
            .get("benchmarks")
            .and_then(Value::as_array)
            .ok_or_else(|| ParseError::at(1, "no `benchmarks` array"))?;
        let table = doc
            .pointer("/context/executable")
            .and_then(Value::as_str)
            .and_then(|e| e.rsplit(['/', '\\']).next())
            .filter(|e| !e.is_empty())
            .unwrap_or("google-benchmark")
            .to_string();
        let mut parsed = Parsed::default();
        if let Some(h) = doc.pointer("/context/host_name").and_then(Value::as_str) {
            parsed
                .provenance
                .tags
                .push(("host".to_string(), h.to_string()));
        }
        let record_lines = lines_of(text, "\"run_type\"");
        // Run names that reported iterations: their aggregates are derived.
        let iterated: std::collections::HashSet<&str> = benches
            .iter()
            .filter(|b| b.get("run_type").and_then(Value::as_str) != Some("aggregate"))
            .filter_map(|b| b.get("run_name").or(b.get("name")).and_then(Value::as_str))
            .collect();
        for (i, b) in benches.iter().enumerate() {
            let no = record_lines.get(i).copied().unwrap_or(1);
            let obj = b
                .as_object()
                .ok_or_else(|| ParseError::at(no, format!("benchmark {i} is not an object")))?;
            let s = |k: &str| obj.get(k).and_then(Value::as_str);
            let run_name = s("run_name")
                .or(s("name"))
                .ok_or_else(|| ParseError::at(no, format!("benchmark {i} has no name")))?;
            let (family, mut key) = split_name(run_name);
            if !key.iter().any(|(k, _)| k == "threads") {
                if let Some(t) = obj.get("threads").and_then(Value::as_u64) {
                    key.push(("threads".to_string(), t.to_string()));
                }
            }
            let row = Row::new(&table, family, &key, no);
            let unit = s("time_unit").unwrap_or("ns");
            if crate::units::unit_of(unit).is_none() && unit != "s" {
                return Err(ParseError::at(
                    no,
                    format!("`{run_name}`: time_unit `{unit}` is not ns, us, ms or s"),
                ));
            }
            let unit = if unit == "s" { "sec" } else { unit };
            let out: &mut Vec<Measurement> = if s("run_type") == Some("aggregate") {
                &mut parsed.measurements
            } else {
                let rep = obj
                    .get("repetition_index")
                    .and_then(Value::as_u64)
                    .unwrap_or(0) as usize;
                if rep == 0 {
                    &mut parsed.measurements
                } else {
                    if parsed.repetitions.len() < rep {
                        parsed.repetitions.resize_with(rep, Vec::new);
                    }
                    &mut parsed.repetitions[rep - 1]
                }
            };
            if obj.get("error_occurred").and_then(Value::as_bool) == Some(true) {
                let why = s("error_message").unwrap_or("error");
                let mut m = row.value(None, unit, None, "error", "real_time");
                m.note = Some(format!("benchmark error: {why}").into());
                out.push(m);
                continue;
            }
            match s("run_type") {
                Some("aggregate") => {
                    let agg = s("aggregate_name").unwrap_or("aggregate");
                    let primary = agg == "median" && !iterated.contains(run_name);
                    record(&row, obj, unit, agg, primary, no, out)?;
                }
                _ => record(&row, obj, unit, "", true, no, out)?,
            }
        }
        if parsed.repetitions.iter().any(Vec::is_empty) {
            return Err(ParseError::at(
                0,
                "repetition indexes with gaps: a repetition no benchmark reported",
            ));
        }
        Ok(parsed)
    }
}

/// The values of one record. `agg` is the aggregate name (empty for an iteration);
/// `primary` says its times are the compared latency.
fn record(
    row: &Row,
    obj: &Map<String, Value>,
    unit: &str,
    agg: &str,
    primary: bool,
    no: usize,
    out: &mut Vec<Measurement>,
) -> Result<(), ParseError> {
    let number = |k: &str, v: &Value| {
        json_number(v).ok_or_else(|| ParseError::at(no, format!("{k} is {v}, not a number")))
    };
    let percent = obj.get("aggregate_unit").and_then(Value::as_str) == Some("percentage");
    for (k, v) in obj {
        let value = match v {
            Value::Number(_) | Value::Null => number(k, v)?,
            _ => continue,
        };
        let printed = v.to_string();
        let suffix = if agg.is_empty() {
            String::new()
        } else {
            format!("_{agg}")
        };
        let m = match k.as_str() {
            "real_time" | "cpu_time" => {
                let base = if k == "real_time" {
                    "latency"
                } else {
                    "latency_cpu"
                };
                if percent {
                    row.derived(&format!("{base}{suffix}"), "%", value, &printed, k, None)
                } else {
                    let metric = if primary && k == "real_time" {
                        base.to_string()
                    } else {
                        format!("{base}{suffix}")
                    };
                    let mut m = row.value(Some(&metric), unit, value, &printed, k);
                    if !primary || (k == "cpu_time" && !agg.is_empty()) {
                        m.direction = Direction::None;
                    }
                    m
                }
            }
            "bytes_per_second" => {
                let mut m = row.value(
                    Some(&format!("bandwidth{suffix}")),
                    "mb/s",
                    value.map(|v| v / 1e6),
                    &printed,
                    k,
                );
                m.raw = crate::model::Raw::new(&format!("{printed} B/s"));
                if !primary {
                    m.direction = Direction::None;
                }
                m
            }
            "items_per_second" => row.directed(
                &format!("items_per_second{suffix}"),
                "items/s",
                if primary {
                    Direction::Higher
                } else {
                    Direction::None
                },
                value,
                &printed,
                k,
            ),
            "iterations" if agg.is_empty() => {
                row.derived("iterations", "", value, &printed, k, None)
            }
            k if STANDARD.contains(&k) => continue,
            counter => row.derived(
                &format!("{counter}{suffix}"),
                "",
                value,
                &printed,
                counter,
                Some("user counter"),
            ),
        };
        out.push(m);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_into_family_and_arguments() {
        let (f, k) = split_name("BM_Gemm/512/64/threads:2/real_time");
        assert_eq!(f, "BM_Gemm");
        assert_eq!(
            k,
            [
                ("arg1".to_string(), "512".to_string()),
                ("arg2".to_string(), "64".to_string()),
                ("threads".to_string(), "2".to_string())
            ]
        );
        let (f, k) = split_name("BM_Copy/size:4096/min_time:0.500");
        assert_eq!(
            (f, k),
            ("BM_Copy", vec![("size".to_string(), "4096".to_string())])
        );
    }
}
