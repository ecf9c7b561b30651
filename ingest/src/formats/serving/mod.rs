//! Serving benchmark results: vLLM `vllm bench serve --save-result` JSON
//! (`vllm/benchmarks/serve.py`), TokenSpeed's serve export (the same fields, sample 20)
//! and SGLang `bench_serving` JSONL (one result object per line appended to the output
//! file, `python/sglang/bench_serving.py`).
//!
//! Each result object is one row of table `serving`: the backend is the variant, the
//! load settings (model, request rate, max concurrency, prompt count and lengths, label)
//! the key. `<stat>_<ttft|tpot|itl|e2el|e2e_latency>_ms` are latencies (metric
//! `ttft_median`, `ttft_p99`...; lower is better, the spread `_std` derived), the
//! throughputs are `req/s` and `tokens/s` (higher is better); counts and durations are
//! kept derived. [`field`] is shared with the `TS_BENCH_*` lines of the probe format.

mod console;

use crate::formats::parser::{Evidence, ParseError, Parser};
use crate::formats::support::emit::{lines_of, Row, Spec, SpecsByPlace};
use crate::formats::support::json::{self, Fields};
use crate::formats::support::serving_fields::{field, spec};
use crate::model::Format;
use crate::model::{Direction, Parsed};

pub struct Serving;

/// The table every serving result lands in.
pub const TABLE: &str = "serving";

/// Fields that set the load: the key (`block`: the place of a printed block among
/// blocks of the same load, [`console`]).
pub(super) const KEY_FIELDS: &[&str] = &[
    "model_id",
    "label",
    "request_rate",
    "max_concurrency",
    "burstiness",
    "num_prompts",
    "dataset_name",
    "random_input_len",
    "random_output_len",
    "random_range_ratio",
    "sharegpt_output_len",
    "block",
];

/// A load as a result names it: its backend (the variant) and its key.
type LoadId = (Option<String>, Vec<(String, String)>);

/// What a result field is, worked out once per field name.
#[derive(Clone, Copy)]
enum Role {
    /// Part of the key: its place in [`KEY_FIELDS`].
    Key(usize),
    /// A value stored as the spec says; `true` when [`field`] knows the name.
    Value(Spec, bool),
}

impl Role {
    fn of(name: &str) -> Role {
        match KEY_FIELDS.iter().position(|k| *k == name) {
            Some(i) => Role::Key(i),
            None => Role::Value(spec(name), field(name).is_some()),
        }
    }
}

impl Parser for Serving {
    fn format(&self) -> Format {
        Format::Serving
    }
    fn sniff(&self, text: &str) -> bool {
        self.evidence(text) != Evidence::None
    }
    fn evidence(&self, text: &str) -> Evidence {
        // One look a text: a JSON result by its fields, else the printed block, whose
        // title is vLLM's and SGLang's own.
        if text.trim_start().starts_with('{') {
            let fields = crate::formats::support::text::has(text, "\"request_throughput\"")
                || crate::formats::support::text::has(text, "_ttft_ms\"");
            if fields {
                Evidence::Marker
            } else {
                Evidence::None
            }
        } else if printed(text) {
            Evidence::Signature
        } else {
            Evidence::None
        }
    }
    fn parse(&self, text: &str) -> Result<Parsed, ParseError> {
        // The printed result blocks, read as the JSON objects they stand for.
        if !text.trim_start().starts_with('{') && printed(text) {
            let blocks = console::objects(text)?;
            let objects = blocks
                .iter()
                .map(|b| {
                    crate::formats::support::json_scan::fields(&b.json)
                        .map(|f| (b.line, f))
                        .map_err(|e| ParseError::at(b.line, format!("a serving result block: {e}")))
                })
                .collect::<Result<Vec<_>, _>>()?;
            let lines: Vec<&[usize]> = blocks.iter().map(|b| b.lines.as_slice()).collect();
            return results(text, objects, &lines);
        }
        // SGLang's `bench_serving` at the default request rate writes `Infinity`.
        let cleaned = json::python_tokens(text);
        let text: &str = &cleaned;
        // One JSON document, else one per line (JSONL).
        let objects: Vec<(usize, Fields)> = match crate::formats::support::json_scan::fields(text) {
            Ok(f) => vec![(
                lines_of(text, "\"request_throughput\"")
                    .first()
                    .copied()
                    .unwrap_or(1),
                f,
            )],
            Err(_) => {
                let mut out = Vec::new();
                let mut at = 0;
                for (no, line) in crate::formats::support::split_bytes(text, b'\n').enumerate() {
                    let start = at;
                    at += line.len() + 1;
                    if line.trim().is_empty() {
                        continue;
                    }
                    let line = &text[start..start + line.len()];
                    let f = crate::formats::support::json_scan::fields(line).map_err(|e| {
                        ParseError::at(no + 1, format!("not a JSON result object (JSONL): {e}"))
                    })?;
                    out.push((no + 1, f));
                }
                out
            }
        };
        results(text, objects, &[])
    }
}

/// Whether `text` holds a printed result block ([`console`]).
fn printed(text: &str) -> bool {
    crate::formats::support::text::has(text, "Serving Benchmark Result")
        && text.lines().any(console::is_title)
}

/// The rows of result objects (each with its line in `text`; `field_lines`, where the
/// text gives each field a line of its own, those lines, object by object).
fn results(
    text: &str,
    objects: Vec<(usize, Fields)>,
    field_lines: &[&[usize]],
) -> Result<Parsed, ParseError> {
    let mut parsed = Parsed::sized_for(text, 24);
    // How many results of each load (variant and key) came before: a load run again
    // in one file (SGLang appends every run to its JSONL) is a further trial of the
    // same row, not a row of its own.
    let mut seen: std::collections::HashMap<LoadId, usize> = Default::default();
    // Results in which no request completed (`completed: 0`): their latencies and
    // throughputs measure nothing.
    let mut failed_results: Vec<usize> = Vec::new();
    let mut roles: SpecsByPlace<Role> = SpecsByPlace::default();
    // Each record's key cells by their place in KEY_FIELDS (the first of a repeated
    // name, as `Fields::get` reads).
    let mut key_cells: [Option<&str>; KEY_FIELDS.len()] = [None; KEY_FIELDS.len()];
    // The roles of one record's fields, by place.
    let mut places: Vec<Role> = Vec::new();
    for (k, (no, obj)) in objects.iter().enumerate() {
        let own_lines = field_lines.get(k);
        let no = *no;
        key_cells.fill(None);
        places.clear();
        let (mut variant, mut result) = (None, false);
        for (place, (k, v)) in obj.0.iter().enumerate() {
            let role = roles.get(place, &k.0, || Role::of(&k.0));
            places.push(role);
            match role {
                Role::Key(i) => {
                    key_cells[i].get_or_insert(v);
                }
                Role::Value(s, _) => {
                    result |= s.direction != Direction::None;
                    if variant.is_none() && k.0 == "backend" {
                        variant = Some(json::text(v));
                    }
                }
            }
        }
        if !result {
            return Err(ParseError::at(
                no,
                "a JSON object with no serving result field (request_throughput, \
                     median_ttft_ms, ...)",
            ));
        }
        let key = key_of(&key_cells);
        let variant = variant.flatten();
        let trial = {
            let n = seen
                .entry((variant.as_deref().map(str::to_string), key.clone()))
                .or_insert(0);
            *n += 1;
            *n - 1
        };
        let none_completed = none_completed(obj);
        if none_completed {
            failed_results.push(no);
        }
        let row = Row::new(
            &mut parsed.keys,
            TABLE,
            variant.as_deref().unwrap_or("serve"),
            &key,
            no,
        );
        for (place, ((_, v), role)) in obj.0.iter().zip(&places).enumerate() {
            let Role::Value(spec, known) = *role else {
                continue;
            };
            let value = match json::scalar(v) {
                // Nothing completed: the zeros it prints are no latency or rate.
                json::Scalar::Number(_, _)
                    if none_completed && spec.direction != Direction::None =>
                {
                    None
                }
                json::Scalar::Number(x, _) => x.is_finite().then_some(x),
                // A missing measurement is kept as missing; other nulls are skipped.
                json::Scalar::Null if known => None,
                // A latency or throughput written as text: the file is not what its
                // field names say.
                json::Scalar::String(t) if known && spec.direction != Direction::None => {
                    return Err(ParseError::at(
                        no,
                        format!("`{}` is \"{t}\", not a number", spec.column.as_str()),
                    ))
                }
                _ => continue, // strings (date, backend), per-request arrays
            };
            let mut m = row.put(&mut parsed.keys, &spec, value, v);
            if let Some(l) = own_lines.and_then(|l| l.get(place)) {
                m.line = *l as u32;
            }
            parsed.push_trial(trial, m);
        }
    }
    note_failed_results(&mut parsed, &failed_results, objects.len());
    Ok(parsed)
}

/// A record's key: each key field it gives (not null), in KEY_FIELDS' order.
fn key_of(cells: &[Option<&str>; KEY_FIELDS.len()]) -> Vec<(String, String)> {
    KEY_FIELDS
        .iter()
        .zip(cells)
        .filter_map(|(k, v)| {
            v.filter(|v| json::scalar(v) != json::Scalar::Null)
                .map(|v| (k.to_string(), json::key_text(v).into_owned()))
        })
        .collect()
}

/// Whether a result says no request completed (`completed: 0`): its latencies and
/// throughputs measure nothing.
fn none_completed(obj: &Fields) -> bool {
    obj.get("completed")
        .is_some_and(|c| matches!(json::scalar(c), json::Scalar::Number(x, _) if x == 0.0))
}

/// Results in which no request completed: a warning naming their lines, and a failed
/// run when every result of the file is one.
fn note_failed_results(parsed: &mut Parsed, failed_results: &[usize], results: usize) {
    if !failed_results.is_empty() {
        let lines: Vec<String> = failed_results.iter().map(usize::to_string).collect();
        parsed.warnings.push(crate::model::Warning {
            line: failed_results[0],
            reason: format!(
                "no request completed (`completed: 0`) in the result at line {}: its \
                     latencies and throughputs are stored as missing, not as zeros",
                lines.join(", ")
            ),
        });
        // Every result failed: the run failed.
        if failed_results.len() == results {
            parsed.provenance.verdict = Some(crate::model::RunVerdict::Fail);
            parsed.provenance.verdict_detail =
                Some("no request completed (`completed: 0`)".to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::support::serving_fields::Field;

    #[test]
    fn fields_name_their_quantity() {
        assert_eq!(
            field("median_ttft_ms"),
            Some(Field::Measured("ttft_median".into(), "ms"))
        );
        assert_eq!(
            field("p99_e2e_latency_ms"),
            Some(Field::Measured("e2el_p99".into(), "ms"))
        );
        assert_eq!(
            field("std_itl_ms"),
            Some(Field::Derived("itl_std".into(), "ms"))
        );
        assert_eq!(
            field("output_throughput"),
            Some(Field::Measured("output_throughput".into(), "tokens/s"))
        );
        assert_eq!(
            field("server_startup_sec"),
            Some(Field::Measured("server_startup".into(), "sec"))
        );
        assert_eq!(field("date"), None);
    }
}
