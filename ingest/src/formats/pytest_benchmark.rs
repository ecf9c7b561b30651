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

use crate::formats::parser::{ParseError, Parser};
use crate::formats::support::emit::{lines_of, Row, Spec};
use crate::formats::support::json::{self, Fields};
use crate::model::Format;
use crate::model::Parsed;
use std::borrow::Cow;

/// The parts of the file perfdb reads; the rest (`datetime`, `version`, each
/// benchmark's `options`, `extra_info`, `stats.data`) is skipped unread. A benchmark and
/// its stats are read in the same pass as the document (their fields named here), so
/// each byte is scanned once, not once more per nested object.
#[derive(serde::Deserialize)]
struct Doc<'a> {
    #[serde(borrow)]
    benchmarks: Vec<Bench<'a>>,
    #[serde(borrow, default)]
    commit_info: Option<Fields<'a>>,
    #[serde(borrow, default)]
    machine_info: Option<Fields<'a>>,
}

/// One benchmark: each field as its raw JSON value (`null` included), read as the
/// parser needs it.
#[derive(serde::Deserialize)]
struct Bench<'a> {
    #[serde(borrow, default, deserialize_with = "json::raw")]
    group: Option<&'a str>,
    #[serde(borrow, default, deserialize_with = "json::raw")]
    name: Option<&'a str>,
    #[serde(borrow, default, deserialize_with = "json::raw")]
    fullname: Option<&'a str>,
    #[serde(borrow, default, deserialize_with = "json::raw")]
    params: Option<&'a str>,
    #[serde(borrow, default)]
    stats: Option<Stats<'a>>,
}

/// The stats perfdb keeps (`KEPT`, the median and rounds); the rest is skipped.
#[derive(serde::Deserialize)]
#[serde(expecting = "a stats object")]
struct Stats<'a> {
    #[serde(borrow, default, deserialize_with = "json::raw")]
    median: Option<&'a str>,
    #[serde(borrow, default, deserialize_with = "json::raw")]
    min: Option<&'a str>,
    #[serde(borrow, default, deserialize_with = "json::raw")]
    max: Option<&'a str>,
    #[serde(borrow, default, deserialize_with = "json::raw")]
    mean: Option<&'a str>,
    #[serde(borrow, default, deserialize_with = "json::raw")]
    stddev: Option<&'a str>,
    #[serde(borrow, default, deserialize_with = "json::raw")]
    iqr: Option<&'a str>,
    #[serde(borrow, default, deserialize_with = "json::raw")]
    rounds: Option<&'a str>,
}

impl<'a> Stats<'a> {
    fn get(&self, field: &str) -> Option<&'a str> {
        match field {
            "median" => self.median,
            "min" => self.min,
            "max" => self.max,
            "mean" => self.mean,
            "stddev" => self.stddev,
            "iqr" => self.iqr,
            "rounds" => self.rounds,
            _ => None,
        }
    }
}

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
            && crate::formats::support::text::has(text, "\"benchmarks\"")
            && crate::formats::support::text::has(text, "\"machine_info\"")
            && crate::formats::support::text::has(text, "\"stats\"")
    }
    fn parse(&self, text: &str) -> Result<Parsed, ParseError> {
        // Python's json.dumps writes `NaN` / `Infinity` for non-finite floats.
        let cleaned = crate::formats::support::json::python_tokens(text);
        let text: &str = &cleaned;
        let doc: Doc = serde_json::from_str(text)
            .map_err(|e| ParseError::at(e.line(), format!("not a pytest-benchmark JSON: {e}")))?;
        let mut parsed = Parsed::sized_for(text, 80);
        let prov = &mut parsed.provenance;
        if let Some(c) = &doc.commit_info {
            prov.commit = c.str("id").map(Cow::into_owned);
            if let Some(b) = c.str("branch") {
                prov.tags.push(("branch".to_string(), b.into_owned()));
            }
            if c.get("dirty") == Some("true") {
                prov.tags.push(("dirty".to_string(), "true".to_string()));
            }
        }
        if let Some(m) = &doc.machine_info {
            let brand = m
                .get("cpu")
                .and_then(|cpu| crate::formats::support::json_scan::fields(cpu).ok())
                .and_then(|cpu| cpu.str("brand_raw").map(Cow::into_owned));
            prov.machine = brand.or_else(|| m.str("machine").map(Cow::into_owned));
            if let Some(node) = m.str("node") {
                prov.tags.push(("host".to_string(), node.into_owned()));
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
        for (i, b) in doc.benchmarks.iter().enumerate() {
            let no = record_lines.get(i).copied().unwrap_or(1);
            let name = b
                .name
                .and_then(json::text)
                .ok_or_else(|| ParseError::at(no, format!("benchmark {i} has no name")))?;
            let fullname = b.fullname.and_then(json::text);
            let fullname = fullname.as_deref().unwrap_or(&name);
            let table = match b.group.and_then(json::text) {
                Some(g) => g.into_owned(),
                None => fullname
                    .split("::")
                    .next()
                    .filter(|f| *f != fullname)
                    .unwrap_or("pytest-benchmark")
                    .to_string(),
            };
            let variant = name.split('[').next().unwrap_or(&name);
            let params = b
                .params
                .and_then(|p| crate::formats::support::json_scan::fields(p).ok());
            let key: Vec<(String, String)> = match params {
                Some(p) => {
                    p.0.iter()
                        .map(|(k, v)| (k.0.to_string(), json::key_text(v).into_owned()))
                        .collect()
                }
                // Parametrised ids only (`test_x[a-b]`): the id is the key.
                None => match name.find('[') {
                    Some(at) => vec![(
                        "param".to_string(),
                        name[at + 1..].trim_end_matches(']').to_string(),
                    )],
                    None => Vec::new(),
                },
            };
            let Some(stats) = &b.stats else {
                return Err(ParseError::at(
                    no,
                    format!("benchmark `{name}` has no stats"),
                ));
            };
            let stat = |k: &str| -> Result<Option<(Option<f64>, &str)>, ParseError> {
                match stats.get(k) {
                    None => Ok(None),
                    Some(v) => json::number(v).map(|x| Some((x, v))).map_err(|t| {
                        ParseError::at(no, format!("`{name}`: stats.{k} is {t}, not a number"))
                    }),
                }
            };
            let row = Row::new(&mut parsed.keys, &table, variant, &key, no);
            let (median, printed) = stat("median")?
                .ok_or_else(|| ParseError::at(no, format!("`{name}`: stats has no median")))?;
            parsed
                .measurements
                .push(row.put(&mut parsed.keys, &median_spec, median, printed));
            for ((field, _), spec) in KEPT.iter().zip(&kept_specs) {
                if let Some((v, printed)) = stat(field)? {
                    parsed
                        .measurements
                        .push(row.put(&mut parsed.keys, spec, v, printed));
                }
            }
            if let Some((v, printed)) = stat("rounds")? {
                parsed
                    .measurements
                    .push(row.put(&mut parsed.keys, &rounds_spec, v, printed));
            }
        }
        Ok(parsed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(stats: &str) -> String {
        format!(
            "{{\"machine_info\": {{}}, \"benchmarks\": [\n{{\"name\": \"test_x[1]\", \"params\": \
             {{\"n\": 1}},\n \"stats\": {stats}}}]}}"
        )
    }

    #[test]
    fn stats_read_in_the_documents_pass_keep_nulls_and_errors() {
        let p = PytestBenchmark
            .parse(&doc(
                "{\"median\": null, \"min\": 1e-3, \"q1\": [1, {\"x\": 2}]}",
            ))
            .unwrap();
        let m: Vec<(&str, Option<f64>)> = p
            .measurements
            .iter()
            .map(|m| (m.column.as_str(), m.value))
            .collect();
        assert_eq!(
            m,
            [("stats.median", None), ("stats.min", Some(1000.0))],
            "a null median is a missing value, not an absent one"
        );
        let e = PytestBenchmark.parse(&doc("{\"min\": 1}")).unwrap_err();
        assert_eq!(
            (e.line, e.reason.as_str()),
            (3, "`test_x[1]`: stats has no median")
        );
        let e = PytestBenchmark.parse(&doc("5")).unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.reason.contains("expected a stats object"), "{}", e.reason);
    }
}
