//! pytest-benchmark `--benchmark-json` files (`src/pytest_benchmark/session.py`):
//! `{machine_info, commit_info, benchmarks: [{group, name, fullname, params, stats}],
//! datetime, version}`, times in seconds.
//!
//! One file is one trial. The group is the table (the test file when there is none),
//! the test function (the name without its `[params]`) the variant, the params the key:
//! together the row identity is group, name and params. `stats.median` is the value;
//! `min`, `mean`, `stddev`, `iqr` and `rounds` are kept beside it (derived). The commit
//! (`commit_info.id`, with `branch` and `dirty` as tags) and the machine
//! (`machine_info.cpu.brand_raw`, else `machine_info.machine`; the host as a tag) fill
//! in what the command line did not give.

use super::emit::{json_cell, json_number, lines_of, Row, Spec};
use super::{Format, ParseError, Parser};
use crate::model::Parsed;
use serde_json::Value;

pub struct PytestBenchmark;

/// Stats kept beside the median: (field, metric).
const KEPT: &[(&str, &str)] = &[
    ("min", "latency_min"),
    ("max", "latency_max"),
    ("mean", "latency_mean"),
    ("stddev", "latency_stddev"),
    ("iqr", "latency_iqr"),
];

impl Parser for PytestBenchmark {
    fn format(&self) -> Format {
        Format::PytestBenchmark
    }
    fn sniff(&self, text: &str) -> bool {
        text.trim_start().starts_with('{')
            && crate::text::has(text, "\"benchmarks\"")
            && crate::text::has(text, "\"machine_info\"")
            && crate::text::has(text, "\"stats\"")
    }
    fn parse(&self, text: &str) -> Result<Parsed, ParseError> {
        let doc: Value = serde_json::from_str(text)
            .map_err(|e| ParseError::at(e.line(), format!("not JSON: {e}")))?;
        let benches = doc
            .get("benchmarks")
            .and_then(Value::as_array)
            .ok_or_else(|| ParseError::at(1, "no `benchmarks` array"))?;
        let mut parsed = Parsed::default();
        let prov = &mut parsed.provenance;
        if let Some(c) = doc.get("commit_info") {
            prov.commit = c.get("id").and_then(Value::as_str).map(str::to_string);
            if let Some(b) = c.get("branch").and_then(Value::as_str) {
                prov.tags.push(("branch".to_string(), b.to_string()));
            }
            if c.get("dirty").and_then(Value::as_bool) == Some(true) {
                prov.tags.push(("dirty".to_string(), "true".to_string()));
            }
        }
        if let Some(m) = doc.get("machine_info") {
            prov.machine = m
                .pointer("/cpu/brand_raw")
                .and_then(Value::as_str)
                .or_else(|| m.get("machine").and_then(Value::as_str))
                .map(str::to_string);
            if let Some(node) = m.get("node").and_then(Value::as_str) {
                prov.tags.push(("host".to_string(), node.to_string()));
            }
        }
        let record_lines = lines_of(text, "\"stats\"");
        // What each stat is stored as, once.
        let median_spec = Spec::measured(None, "sec", "stats.median");
        let kept_specs: Vec<Spec> = KEPT
            .iter()
            .map(|(field, metric)| {
                Spec::measured(Some(metric), "sec", &format!("stats.{field}")).kept()
            })
            .collect();
        let rounds_spec = Spec::derived("rounds", "", "stats.rounds", None);
        for (i, b) in benches.iter().enumerate() {
            let no = record_lines.get(i).copied().unwrap_or(1);
            let s = |k: &str| b.get(k).and_then(Value::as_str);
            let name = s("name")
                .ok_or_else(|| ParseError::at(no, format!("benchmark {i} has no name")))?;
            let fullname = s("fullname").unwrap_or(name);
            let table = match s("group") {
                Some(g) => g.to_string(),
                None => fullname
                    .split("::")
                    .next()
                    .filter(|f| *f != fullname)
                    .unwrap_or("pytest-benchmark")
                    .to_string(),
            };
            let variant = name.split('[').next().unwrap_or(name);
            let key: Vec<(String, String)> = match b.get("params") {
                Some(Value::Object(p)) => {
                    p.iter().map(|(k, v)| (k.clone(), json_cell(v))).collect()
                }
                // Parametrised ids only (`test_x[a-b]`): the id is the key.
                _ => match name.find('[') {
                    Some(at) => vec![(
                        "param".to_string(),
                        name[at + 1..].trim_end_matches(']').to_string(),
                    )],
                    None => Vec::new(),
                },
            };
            let stats = b
                .get("stats")
                .ok_or_else(|| ParseError::at(no, format!("benchmark `{name}` has no stats")))?;
            let stat = |k: &str| -> Result<Option<f64>, ParseError> {
                match stats.get(k) {
                    None => Ok(None),
                    Some(v) => json_number(v).ok_or_else(|| {
                        ParseError::at(no, format!("`{name}`: stats.{k} is {v}, not a number"))
                    }),
                }
            };
            let row = Row::new(&table, variant, &key, no);
            let median = stats
                .get("median")
                .ok_or_else(|| ParseError::at(no, format!("`{name}`: stats has no median")))?;
            parsed
                .measurements
                .push(row.put(&median_spec, stat("median")?, &median.to_string()));
            for ((field, _), spec) in KEPT.iter().zip(&kept_specs) {
                if let Some(v) = stats.get(*field) {
                    parsed
                        .measurements
                        .push(row.put(spec, stat(field)?, &v.to_string()));
                }
            }
            if let Some(v) = stats.get("rounds") {
                parsed
                    .measurements
                    .push(row.put(&rounds_spec, stat("rounds")?, &v.to_string()));
            }
        }
        Ok(parsed)
    }
}
