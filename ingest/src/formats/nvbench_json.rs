//! NVIDIA nvbench `--json` files (JSON format 1.0.0): `{meta, devices, benchmarks:
//! [{name, axes, states: [{name, device, axis_values, summaries, is_skipped}]}]}`.
//!
//! One file is one trial. The benchmark is the table; its axis values are the key (a
//! type axis by its input string, as nvbench prints it); nvbench has no variant, so
//! every row is `default` unless `--variant-axis NAME` names the axis that holds the
//! implementations (`Op=matmul`), which then is the variant and leaves the key.
//!
//! Every number is a JSON *string* (`"0.0014226239919662475"`; a non-finite noise is
//! `"inf"`, read as missing). A summary's unit is its `hint`. The values read, by tag:
//! - `nv/cold/time/gpu/median`: the GPU time of an isolated run, the row's `latency`
//!   (s -> us, compared). nvbench before 0.2 prints no median: then the mean is the
//!   latency and the run's method says so.
//! - `nv/cold/bw/item_rate` (`item_rate`, items/s) and
//!   `nv/cold/bw/global/bytes_per_second` (`bandwidth`, B/s -> TB/s): compared.
//! - kept beside them, never compared: the GPU mean (`latency_mean`), the CPU mean
//!   (`cpu_latency`), the batch GPU mean (`latency_batch`), the relative noise of the
//!   GPU times (`noise`, a fraction) and the mean SM clock (`sm_clock`, Hz -> MHz).
//!
//! A state nvbench skipped (`is_skipped`) holds no values: its reason is a warning.
//! The device a state ran on (`name`, `sm_version`) is the run's machine and arch; a
//! file of states on several devices keys each row by its device too. The run's method
//! is `nvbench:cold` (the cold median), or `nvbench:cold-mean`.
//!
//! The layout nvbench wrote in 2021 (its examples' committed outputs: `states` and
//! `summaries` objects keyed by name, no tags) is read too ([`layout_2021`]).

use crate::formats::parser::{Context, ParseError, Parser};
use crate::formats::support::emit::{lines_of, Row, Spec};
use crate::formats::support::json::{self, Fields};
use crate::model::Format;
use crate::model::{Direction, Parsed, Warning};
use std::borrow::Cow;

#[derive(serde::Deserialize)]
struct Doc<'a> {
    #[serde(borrow, default)]
    devices: Vec<Fields<'a>>,
    #[serde(borrow)]
    benchmarks: Vec<Bench<'a>>,
}

#[derive(serde::Deserialize)]
struct Bench<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow, default)]
    states: Vec<State<'a>>,
}

#[derive(serde::Deserialize)]
struct State<'a> {
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(default)]
    device: Option<i64>,
    /// `null` for a benchmark without axes.
    #[serde(borrow, default)]
    axis_values: Option<Vec<AxisValue<'a>>>,
    #[serde(borrow, default)]
    summaries: Option<Vec<Summary<'a>>>,
    #[serde(default)]
    is_skipped: bool,
    #[serde(borrow, default)]
    skip_reason: Option<Cow<'a, str>>,
}

#[derive(serde::Deserialize)]
struct AxisValue<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow, default, deserialize_with = "json::raw")]
    value: Option<&'a str>,
}

#[derive(serde::Deserialize)]
struct Summary<'a> {
    #[serde(borrow)]
    tag: Cow<'a, str>,
    #[serde(borrow, default)]
    data: Vec<Datum<'a>>,
}

#[derive(serde::Deserialize)]
struct Datum<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow, default, deserialize_with = "json::raw")]
    value: Option<&'a str>,
}

impl Summary<'_> {
    /// The summary's value as printed (the string inside the JSON string).
    fn value(&self) -> Option<Cow<'_, str>> {
        self.data
            .iter()
            .find(|d| d.name == "value")
            .and_then(|d| d.value)
            .and_then(json::text)
    }
}

/// How a tag's value is stored; `None`: not read.
fn spec_of(tag: &str) -> Option<Spec> {
    Some(match tag {
        MEDIAN => Spec::measured(None, "sec", tag),
        MEAN => Spec::measured(Some("latency_mean"), "sec", tag).kept(),
        "nv/cold/time/cpu/mean" => Spec::measured(Some("cpu_latency"), "sec", tag).kept(),
        "nv/batch/time/gpu/mean" => Spec::measured(Some("latency_batch"), "sec", tag).kept(),
        "nv/cold/bw/item_rate" => Spec::directed("item_rate", "items/s", Direction::Higher, tag),
        "nv/cold/bw/global/bytes_per_second" => Spec::measured(None, "B/s", tag),
        "nv/cold/time/gpu/stdev/relative" => Spec::derived("noise", "fraction", tag, None),
        SM_CLOCK => Spec::derived("sm_clock", "MHz", tag, None),
        _ => return None,
    })
}

const MEDIAN: &str = "nv/cold/time/gpu/median";
const MEAN: &str = "nv/cold/time/gpu/mean";
const SM_CLOCK: &str = "nv/cold/sm_clock_rate/mean";

/// `"1758198310.93"` -> the number; `"inf"`, `"nan"` and `""` are missing.
fn number(printed: &str) -> Result<Option<f64>, ()> {
    let t = printed.trim();
    if t.is_empty() || t.eq_ignore_ascii_case("inf") || t.eq_ignore_ascii_case("nan") {
        return Ok(None);
    }
    t.parse::<f64>()
        .map(|v| v.is_finite().then_some(v))
        .map_err(|_| ())
}

pub struct NvbenchJson;

/// nvbench's JSON of 2021 (its examples' committed outputs): `states` an object keyed
/// `Device=0`, each state's `summaries` an object keyed by the summary's long name
/// (`"Average GPU Time (Cold)": {hint, short_name, value: {type, value}}`), no tags.
/// Rewritten into today's layout (`states` a list, summaries `{tag, data}`), each long
/// name mapped to the tag of the same quantity; `None` when `text` is not that layout.
/// That layout has no median: its runs compare the cold mean (`nvbench:cold-mean`).
fn layout_2021(text: &str) -> Option<String> {
    use serde_json::{json, Value};
    if !crate::formats::support::text::has(text, "\"short_name\"") {
        return None;
    }
    let mut doc: Value = serde_json::from_str(text).ok()?;
    let benches = doc.get_mut("benchmarks")?.as_array_mut()?;
    let mut changed = false;
    for b in benches {
        let Some(states) = b.get("states").and_then(Value::as_object).cloned() else {
            continue;
        };
        let list: Vec<Value> = states
            .into_iter()
            .map(|(name, mut state)| {
                let summaries: Vec<Value> = state
                    .get("summaries")
                    .and_then(Value::as_object)
                    .map(|m| {
                        m.iter()
                            .map(|(long, sm)| {
                                let tag = TAGS_2021
                                    .iter()
                                    .find(|(n, _)| n == long)
                                    .map_or(long.as_str(), |(_, t)| t);
                                let value = sm.pointer("/value/value").cloned();
                                json!({"tag": tag, "name": long,
                                       "data": [{"name": "value", "value": value}]})
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                if let Some(o) = state.as_object_mut() {
                    o.insert("name".into(), Value::String(name));
                    o.insert("summaries".into(), Value::Array(summaries));
                }
                state
            })
            .collect();
        if let Some(o) = b.as_object_mut() {
            o.insert("states".into(), Value::Array(list));
            changed = true;
        }
    }
    changed.then(|| doc.to_string())
}

/// The 2021 layout's summary names and today's tags for the same quantities.
const TAGS_2021: &[(&str, &str)] = &[
    ("Average GPU Time (Cold)", MEAN),
    ("Average CPU Time (Cold)", "nv/cold/time/cpu/mean"),
    ("Average GPU Time (Batch)", "nv/batch/time/gpu/mean"),
    ("Element Throughput", "nv/cold/bw/item_rate"),
    (
        "Average Global Memory Throughput",
        "nv/cold/bw/global/bytes_per_second",
    ),
    (
        "GPU Relative Standard Deviation (Cold)",
        "nv/cold/time/gpu/stdev/relative",
    ),
];

impl Parser for NvbenchJson {
    fn format(&self) -> Format {
        Format::NvbenchJson
    }
    fn sniff(&self, text: &str) -> bool {
        text.trim_start().starts_with('{')
            && crate::formats::support::text::has(text, "\"benchmarks\"")
            && crate::formats::support::text::has(text, "\"axis_values\"")
            && crate::formats::support::text::has(text, "\"summaries\"")
    }
    fn parse(&self, text: &str) -> Result<Parsed, ParseError> {
        self.parse_in(text, &Context::default())
    }
    fn parse_in(&self, text: &str, cx: &Context) -> Result<Parsed, ParseError> {
        // The 2021 layout is rewritten into today's; lines are still counted in `text`.
        let upgraded = layout_2021(text);
        let doc: Doc = serde_json::from_str(upgraded.as_deref().unwrap_or(text))
            .map_err(|e| ParseError::at(e.line(), format!("not an nvbench JSON: {e}")))?;
        let mut parsed = Parsed::sized_for(text, 200);
        let devices = devices_of(&doc);
        let several = devices.len() > 1;
        let state_lines = lines_of(text, "\"axis_values\"");
        let mut used_devices: Vec<i64> = Vec::new();
        let mut any_median = false;
        let mut n_state = 0;
        for b in &doc.benchmarks {
            for s in &b.states {
                let no = state_lines.get(n_state).copied().unwrap_or(1);
                n_state += 1;
                let state_name = s.name.as_deref().unwrap_or("");
                if s.is_skipped {
                    parsed.warnings.push(Warning {
                        line: no,
                        reason: format!(
                            "{} {state_name}: skipped by nvbench ({}): no values",
                            b.name,
                            s.skip_reason.as_deref().unwrap_or("no reason given")
                        ),
                    });
                    continue;
                }
                let mut key: Vec<(String, String)> = Vec::new();
                let mut variant = crate::model::DEFAULT_VARIANT.to_string();
                for a in s.axis_values.iter().flatten() {
                    let v = a
                        .value
                        .and_then(json::text)
                        .unwrap_or_default()
                        .into_owned();
                    if cx.variant_axis == Some(a.name.as_ref()) {
                        variant = v;
                    } else {
                        key.push((a.name.to_string(), v));
                    }
                }
                if let Some(d) = s.device {
                    if !used_devices.contains(&d) {
                        used_devices.push(d);
                    }
                    if several {
                        let name = devices
                            .iter()
                            .find(|(id, _, _)| *id == d)
                            .map(|(_, n, _)| n.clone())
                            .unwrap_or_else(|| d.to_string());
                        key.insert(0, ("device".to_string(), name));
                    }
                }
                let row = Row::new(&mut parsed.keys, &b.name, &variant, &key, no);
                let summaries = s.summaries.as_deref().unwrap_or_default();
                let has_median = summaries.iter().any(|x| x.tag == MEDIAN);
                any_median |= has_median;
                for x in summaries {
                    // Without a median (nvbench before 0.2) the mean is the latency.
                    let spec = match x.tag.as_ref() {
                        MEAN if !has_median => Spec::measured(None, "sec", MEAN),
                        tag => match spec_of(tag) {
                            Some(spec) => spec,
                            None => continue,
                        },
                    };
                    let Some(printed) = x.value() else {
                        continue;
                    };
                    let value = number(&printed).map_err(|_| {
                        ParseError::at(
                            no,
                            format!(
                                "{} {state_name}: {} is '{printed}', not a number",
                                b.name, x.tag
                            ),
                        )
                    })?;
                    // The clock is printed in Hz, kept in MHz.
                    let value = match x.tag.as_ref() {
                        SM_CLOCK => value.map(|hz| hz / 1e6),
                        _ => value,
                    };
                    parsed
                        .measurements
                        .push(row.put(&mut parsed.keys, &spec, value, &printed));
                }
            }
        }
        ran_on(&mut parsed.provenance, &devices, &used_devices);
        let prov = &mut parsed.provenance;
        prov.tags.push((
            crate::model::METHOD_TAG.to_string(),
            if any_median || parsed.measurements.is_empty() {
                "nvbench:cold"
            } else {
                "nvbench:cold-mean"
            }
            .to_string(),
        ));
        Ok(parsed)
    }
}

/// The devices of a report by id: (id, name, `sm_XX` from nvbench's sm_version, which
/// is major * 100 + minor * 10: 900 is sm_90).
fn devices_of(doc: &Doc) -> Vec<(i64, String, Option<String>)> {
    doc.devices
        .iter()
        .filter_map(|d| {
            let id = d.get("id").and_then(|v| v.parse().ok())?;
            let name = d.str("name").map(Cow::into_owned).unwrap_or_default();
            // nvbench's sm_version is major * 100 + minor * 10: 900 is sm_90.
            let sm = d
                .get("sm_version")
                .and_then(|v| v.trim_matches('"').parse::<i64>().ok())
                .map(|v| format!("sm_{}", v / 10));
            Some((id, name, sm))
        })
        .collect()
}

/// The machine and arch of the devices the states ran on (every device listed when no
/// state names one).
fn ran_on(
    prov: &mut crate::model::Provenance,
    devices: &[(i64, String, Option<String>)],
    used_devices: &[i64],
) {
    let ran_on: Vec<&(i64, String, Option<String>)> = devices
        .iter()
        .filter(|(id, _, _)| used_devices.is_empty() || used_devices.contains(id))
        .collect();
    if !ran_on.is_empty() {
        prov.machine = Some(
            ran_on
                .iter()
                .map(|(_, n, _)| n.as_str())
                .collect::<Vec<_>>()
                .join(" + "),
        );
        let archs: Vec<&str> = ran_on.iter().filter_map(|(_, _, a)| a.as_deref()).collect();
        if !archs.is_empty() {
            prov.arch = Some(archs.join("+"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_strings_and_inf_is_missing() {
        assert_eq!(number("0.5"), Ok(Some(0.5)));
        assert_eq!(number("inf"), Ok(None));
        assert_eq!(number(" "), Ok(None));
        assert!(number("fast").is_err());
    }
}
