//! PyTorch's benchmark database records, schema v3 (what the PyTorch HUD dashboards
//! read; pytorch/test-infra's `upload_benchmark_results`): a JSON array of records, one
//! record, or JSON lines (each line a record or an array of them).
//!
//! A record is `{benchmark: {name, mode, dtype, extra_info}, model: {name, type,
//! backend}, inputs: {NAME: {dtype}}, metric: {name, benchmark_values, target_value,
//! extra_info}, runners: [{name, type, gpu_info, ...}], dependencies: {REPO: {sha}}}`.
//! Table = `benchmark.name`; variant = `model.backend` (`default` without one); key =
//! `model.name` (unless it is the benchmark's name), `mode` and `dtype`, each input's dtype (`input.NAME`) and the scalar
//! fields of `metric.extra_info` that name a setting (strings, booleans, integers).
//!
//! `metric.name` is free text with its unit inside it; the rule ([`classify`]):
//! a `(unit)` suffix (`peak_inference_mem_usage(mb)`, `latency(us)`) or a `_unit`
//! suffix (`median_ttft_ms`, `avg_us`) names the unit, and the metric is the name
//! without it; `instruction_count` is a count, lower is better; `tflops`, `gbps`,
//! `*_per_sec` are rates (`tokens/s` for tokens), higher is better; `speedup`,
//! `accuracy`, `compression_ratio` are derived. Anything else is kept `unclassified`
//! and reported once per name. Each of `benchmark_values` is a trial (the first this
//! run, the others runs `#2`...); `target_value` 0 is none, any other is kept as
//! `<metric>_target`. `runners[0]` is the machine (its `gpu_info`, else its `name`);
//! each `dependencies.REPO.sha` a tag `REPO_sha`, and the commit when there is one;
//! `benchmark.extra_info.method`, when every record names the same, the run's method.
//!
//! A `metric.unit` field (`"unit": "us"`, `"TB/s"`, `"TFLOPS/s"`, `"%"`), where a record
//! has one, decides unit and direction before the name rule ([`classify_with_unit`]).
//!
//! Records of several commits or machines (`perfdb export` of a whole label) are read
//! as runs of their own: each (commit, machine) group's `benchmark_values` are its
//! trials, with its commit (and `benchmark.extra_info.perfdb_commit_time_us`) and
//! machine ([`Groups`]).

pub mod write;

use crate::formats::parser::{ParseError, Parser};
use crate::formats::support::emit::{lines_of, Row, Spec};
use crate::formats::support::text::has;
use crate::formats::support::units;
use crate::model::Format;
use crate::model::{metric, Direction, Parsed, Warning};
use serde_json::Value;

pub struct PytorchV3;

/// How a `metric.name` is stored: (metric, spec) from the rule above.
pub(crate) fn classify(name: &str) -> (String, Option<Spec>) {
    let lower = name.trim().to_ascii_lowercase();
    // Rates first: `tokens_per_sec` is no time in seconds.
    if lower.contains("_per_sec") || lower.contains("_per_s") || lower.contains("tokens/s") {
        let unit = if lower.contains("token") {
            "tokens/s"
        } else {
            "1/s"
        };
        return (
            lower.clone(),
            Some(Spec::directed(&lower, unit, Direction::Higher, name)),
        );
    }
    // `name(unit)`
    if let Some((base, unit)) = lower
        .strip_suffix(')')
        .and_then(|l| l.rsplit_once('('))
        .map(|(b, u)| (b.trim_end_matches(['_', ' ']), u))
    {
        if let Some(spec) = unit_spec(base, unit, name) {
            return (base.to_string(), Some(spec));
        }
    }
    // `name_unit`
    if let Some((base, unit)) = lower.rsplit_once('_') {
        if let Some(spec) = unit_spec(base, unit, name) {
            return (base.to_string(), Some(spec));
        }
    }
    let has_word = |w: &str| lower.split(['_', ' ', '-']).any(|x| x == w);
    let spec = if lower.ends_with("instruction_count") {
        Some(Spec::directed(&lower, "count", Direction::Lower, name))
    } else if has_word("tflops") {
        Some(Spec::measured(Some(&lower), "TFLOPS", name))
    } else if has_word("gbps") {
        Some(Spec::measured(Some(&lower), "GB/s", name))
    } else if has_word("speedup") || has_word("accuracy") || lower.contains("compression_ratio") {
        Some(Spec::derived(&lower, "", name, None))
    } else {
        None
    };
    (lower, spec)
}

/// `base` measured in `unit`, when `unit` is one this rule reads.
fn unit_spec(base: &str, unit: &str, column: &str) -> Option<Spec> {
    if base.is_empty() {
        return None;
    }
    match unit {
        "mb" | "gb" | "kb" => {
            let unit = unit.to_ascii_uppercase();
            Some(Spec::directed(base, &unit, Direction::Lower, column))
        }
        "s" | "sec" | "secs" | "seconds" => Some(Spec::measured(Some(base), "sec", column)),
        _ => match units::unit_of(unit) {
            Some(_) => Some(Spec::measured(Some(base), unit, column)),
            // `item_rate(items/s)`: a rate of its own, higher is better.
            None if unit.ends_with("/s") && !unit.contains(' ') => {
                Some(Spec::directed(base, unit, Direction::Higher, column))
            }
            None => None,
        },
    }
}

/// How a record whose `metric.unit` names its unit is stored: the unit field decides
/// unit and direction before any rule on the name (`forward_latency` in `us` is a
/// latency however it is named). `None` for a unit perfdb does not read, which leaves
/// the name rule to decide.
pub(crate) fn classify_with_unit(name: &str, unit: &str) -> Option<(String, Spec)> {
    let metric = name.trim().to_ascii_lowercase();
    let lower = unit.trim().to_ascii_lowercase();
    // `TFLOPS/s` (a rate of a rate, as the attention dashboard writes it): TFLOPS.
    let lower = match lower.strip_suffix("/s") {
        Some(rate) if units::unit_of(rate).is_some_and(|u| u.direction == Direction::Higher) => {
            rate.to_string()
        }
        _ => lower,
    };
    let spec = match lower.as_str() {
        "" => return None,
        "%" | "percent" => Spec::derived(&metric, "%", name, None),
        "x" | "ratio" => Spec::derived(&metric, "", name, None),
        "mib" | "gib" | "bytes" | "b" => Spec::directed(
            &metric,
            &unit.trim().to_ascii_uppercase(),
            Direction::Lower,
            name,
        ),
        "count" | "instructions" => Spec::directed(&metric, "count", Direction::Lower, name),
        // What a unit in a metric's name would say (`(mb)`, `_ms`, `items/s`).
        u => unit_spec(&metric, u, name)?,
    };
    Some((metric, spec))
}

impl Parser for PytorchV3 {
    fn format(&self) -> Format {
        Format::PytorchV3
    }
    fn sniff(&self, text: &str) -> bool {
        let t = text.trim_start();
        (t.starts_with('{') || t.starts_with('['))
            && has(text, "\"benchmark_values\"")
            && has(text, "\"metric\"")
            && has(text, "\"benchmark\"")
    }
    fn parse(&self, text: &str) -> Result<Parsed, ParseError> {
        let records = records(text)?;
        let mut parsed = Parsed::sized_for(text, 200);
        let mut unclassified: Vec<String> = Vec::new();
        let mut runner: Option<(String, Option<String>)> = None;
        let mut deps: Vec<(String, String)> = Vec::new();
        // `benchmark.extra_info.method` (as `perfdb export` writes it), when every record
        // names the same: the run's method.
        let methods: Vec<Option<&str>> = records
            .iter()
            .map(|(_, r)| str_at(r, &["benchmark", "extra_info", "method"]))
            .collect();
        let method = match methods.first() {
            Some(Some(m)) if methods.iter().all(|x| *x == Some(*m)) => Some(m.to_string()),
            _ => None,
        };
        // Records of several commits or machines (a whole label exported): each
        // (commit, machine) group's trials are runs of their own, after the previous
        // group's.
        let groups = Groups::of(&records);
        for (k, (line, r)) in records.iter().enumerate() {
            read_record(
                r,
                *line,
                groups.first_trial(k),
                &mut parsed,
                &mut unclassified,
                &mut runner,
                &mut deps,
            )?;
        }
        if records.is_empty() {
            return Err(ParseError::at(0, "no PyTorch benchmark records"));
        }
        let prov = &mut parsed.provenance;
        if let Some((machine, kind)) = runner {
            prov.machine = Some(machine);
            if let Some(k) = kind {
                prov.tags.push(("runner_type".to_string(), k));
            }
        }
        if let Some(m) = method {
            prov.tags.push((crate::model::METHOD_TAG.to_string(), m));
        }
        if deps.len() == 1 {
            prov.commit = Some(deps[0].1.clone());
        }
        for (repo, sha) in deps {
            prov.tags.push((format!("{repo}_sha"), sha));
        }
        if groups.several() {
            parsed.trial_provenance = groups.provenance(&parsed.provenance);
        }
        Ok(parsed)
    }
}

/// Every record with the line it starts on: the text is a stream of JSON values (one
/// array, one record, JSON lines, or pretty-printed records one after another), each a
/// record or an array of records.
fn records(text: &str) -> Result<Vec<(usize, Value)>, ParseError> {
    let starts = lines_of(text, "\"benchmark\"");
    let line_at =
        |offset: usize| 1 + memchr::memchr_iter(b'\n', &text.as_bytes()[..offset]).count();
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    let mut out = Vec::new();
    let mut at = 0;
    loop {
        let start = stream.byte_offset();
        let v = match stream.next() {
            None => break,
            Some(Ok(v)) => v,
            Some(Err(e)) => {
                return Err(ParseError::at(
                    e.line(),
                    format!("not a PyTorch benchmark record: {e}"),
                ))
            }
        };
        let first = text[start..]
            .find(|c: char| !c.is_whitespace())
            .map_or(start, |i| start + i);
        let list = match v {
            Value::Array(items) => items,
            other => vec![other],
        };
        for r in list {
            let line = starts.get(at).copied().unwrap_or_else(|| line_at(first));
            at += 1;
            out.push((line, r));
        }
    }
    Ok(out)
}

/// A scalar as key text (`true`, `16`, `bf16`); `None` for a float, an object, a list.
fn setting(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(n.to_string()),
        _ => None,
    }
}

/// The (commit, machine, part) groups of a file's records, in order of first
/// appearance: a record's commit is its one dependency's `sha` (with `benchmark.
/// extra_info.perfdb_commit_time_us`, as `perfdb export` writes it), its machine
/// `runners[0]`'s, its part `benchmark.extra_info.perfdb_format` (the format of the runs
/// perfdb exported it from: a commit's runs of two formats are two sets of runs) and
/// `perfdb_arch`.
struct Groups {
    /// (commit, commit time, machine, part, trials: the most values of its records).
    groups: Vec<Group>,
    /// Record -> its group.
    of_record: Vec<usize>,
}

struct Group {
    commit: Option<String>,
    time: Option<i64>,
    machine: Option<String>,
    part: Option<String>,
    arch: Option<String>,
    trials: usize,
}

impl Groups {
    fn of(records: &[(usize, Value)]) -> Groups {
        let mut groups: Vec<Group> = Vec::new();
        let mut of_record = Vec::with_capacity(records.len());
        for (_, r) in records {
            let deps = r.get("dependencies").and_then(Value::as_object);
            let commit = deps
                .filter(|d| d.len() == 1)
                .and_then(|d| d.values().next())
                .and_then(|info| info.get("sha"))
                .and_then(Value::as_str)
                .map(str::to_string);
            let extra = r["benchmark"].get("extra_info");
            let time = extra
                .and_then(|e| e.get("perfdb_commit_time_us"))
                .and_then(Value::as_i64);
            let field = |name: &str| {
                extra
                    .and_then(|e| e.get(name))
                    .and_then(Value::as_str)
                    .map(str::to_string)
            };
            let (part, arch) = (field("perfdb_format"), field("perfdb_arch"));
            let machine = r
                .get("runners")
                .and_then(|x| x.get(0))
                .and_then(|first| {
                    str_at(first, &["gpu_info"])
                        .filter(|s| !s.is_empty())
                        .or_else(|| str_at(first, &["name"]))
                })
                .map(str::to_string);
            let n = r["metric"]
                .get("benchmark_values")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            let at = match groups.iter().position(|g| {
                g.commit == commit && g.machine == machine && g.part == part && g.arch == arch
            }) {
                Some(i) => i,
                None => {
                    groups.push(Group {
                        commit,
                        time: None,
                        machine,
                        part,
                        arch,
                        trials: 0,
                    });
                    groups.len() - 1
                }
            };
            let g = &mut groups[at];
            g.trials = g.trials.max(n);
            g.time = g.time.or(time);
            of_record.push(at);
        }
        Groups { groups, of_record }
    }

    fn several(&self) -> bool {
        self.groups.len() > 1
    }

    /// The trial record `k`'s first value is.
    fn first_trial(&self, k: usize) -> usize {
        if !self.several() {
            return 0;
        }
        self.groups[..self.of_record[k]]
            .iter()
            .map(|g| g.trials)
            .sum()
    }

    /// Every trial's provenance: `base`, with its group's commit, time and machine.
    fn provenance(&self, base: &crate::model::Provenance) -> Vec<crate::model::Provenance> {
        let mut out = Vec::new();
        for g in &self.groups {
            let mut p = base.clone();
            p.commit = g.commit.clone();
            p.commit_time_us = g.time;
            if g.machine.is_some() {
                p.machine = g.machine.clone();
            }
            if g.arch.is_some() {
                p.arch = g.arch.clone();
            }
            out.extend(std::iter::repeat_n(p, g.trials));
        }
        out
    }
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    path.iter().try_fold(v, |v, p| v.get(p))?.as_str()
}

/// A record's key cells: the model (unless it is the benchmark), mode and dtype, each
/// input's dtype, and the settings in `metric.extra_info`.
fn record_key(r: &Value, table: &str) -> Vec<(String, String)> {
    let mut key: Vec<(String, String)> = Vec::new();
    // A model named as the benchmark is the benchmark itself (`perfdb export` writes
    // that for rows without a model): no key cell.
    if let Some(m) = str_at(r, &["model", "name"]).filter(|m| *m != table) {
        key.push(("model".to_string(), m.to_string()));
    }
    for field in ["mode", "dtype"] {
        if let Some(v) = r["benchmark"].get(field).and_then(setting) {
            key.push((field.to_string(), v));
        }
    }
    if let Some(inputs) = r.get("inputs").and_then(Value::as_object) {
        for (name, input) in inputs {
            let dtype = input.get("dtype").and_then(setting).unwrap_or_default();
            key.push((format!("input.{name}"), dtype));
        }
    }
    if let Some(extra) = r["metric"].get("extra_info").and_then(Value::as_object) {
        for (name, v) in extra {
            if let Some(v) = setting(v) {
                key.push((name.clone(), v));
            }
        }
    }
    key
}

fn read_record(
    r: &Value,
    line: usize,
    first_trial: usize,
    parsed: &mut Parsed,
    unclassified: &mut Vec<String>,
    runner: &mut Option<(String, Option<String>)>,
    deps: &mut Vec<(String, String)>,
) -> Result<(), ParseError> {
    let missing = |what: &str| ParseError::at(line, format!("a record without `{what}`"));
    if !r.is_object() {
        return Err(ParseError::at(line, "a record that is not a JSON object"));
    }
    let table = str_at(r, &["benchmark", "name"]).ok_or_else(|| missing("benchmark.name"))?;
    let metric_name = str_at(r, &["metric", "name"]).ok_or_else(|| missing("metric.name"))?;
    let variant = str_at(r, &["model", "backend"])
        .filter(|b| !b.is_empty())
        .unwrap_or(crate::model::DEFAULT_VARIANT);
    let key = record_key(r, table);
    let by_unit = str_at(r, &["metric", "unit"]).and_then(|u| classify_with_unit(metric_name, u));
    let (metric_id, spec) = match by_unit {
        Some((m, spec)) => (m, Some(spec)),
        None => classify(metric_name),
    };
    let spec = spec.unwrap_or_else(|| {
        if !unclassified.iter().any(|u| u == metric_name) {
            unclassified.push(metric_name.to_string());
            parsed.warnings.push(Warning {
                line,
                reason: format!(
                    "metric '{metric_name}': no unit or known quantity in its name (`_ms`, \
                     `(mb)`, `_us`, `instruction_count`, `tflops`, `gbps`...): kept \
                     unclassified, not compared"
                ),
            });
        }
        Spec::derived(
            metric::UNCLASSIFIED,
            "",
            metric_name,
            Some("unclassified metric"),
        )
    });
    let mut spec = spec;
    if spec.metric.as_ref() != metric::UNCLASSIFIED {
        spec.metric = metric_id.as_str().into();
    }
    let values = r["metric"]
        .get("benchmark_values")
        .and_then(Value::as_array)
        .ok_or_else(|| missing("metric.benchmark_values"))?;
    let row = Row::new(&mut parsed.keys, table, variant, &key, line);
    for (i, v) in values.iter().enumerate() {
        let (value, printed) = match v {
            Value::Number(n) => (n.as_f64().filter(|x| x.is_finite()), n.to_string()),
            Value::Null => (None, "null".to_string()),
            Value::String(s) => match crate::formats::support::text::parse_value(s) {
                Ok(x) => (x, s.clone()),
                Err(_) => {
                    return Err(ParseError::at(
                        line,
                        format!("{metric_name}: benchmark value '{s}' is not a number"),
                    ))
                }
            },
            other => {
                return Err(ParseError::at(
                    line,
                    format!("{metric_name}: benchmark value {other} is not a number"),
                ))
            }
        };
        let m = row.put(&mut parsed.keys, &spec, value, &printed);
        parsed.push_trial(first_trial + i, m);
    }
    if let Some(t) = r["metric"].get("target_value").and_then(Value::as_f64) {
        if t != 0.0 {
            let mut target = spec.kept();
            target.metric = format!("{metric_id}_target").as_str().into();
            let m = row.put(&mut parsed.keys, &target, Some(t), &t.to_string());
            parsed.push_trial(first_trial, m);
        }
    }
    if runner.is_none() {
        if let Some(first) = r.get("runners").and_then(|x| x.get(0)) {
            let name = str_at(first, &["gpu_info"])
                .filter(|s| !s.is_empty())
                .or_else(|| str_at(first, &["name"]));
            if let Some(n) = name {
                let kind = str_at(first, &["type"]).map(str::to_string);
                *runner = Some((n.to_string(), kind));
            }
        }
    }
    if let Some(d) = r.get("dependencies").and_then(Value::as_object) {
        for (repo, info) in d {
            if let Some(sha) = info.get("sha").and_then(Value::as_str) {
                if !deps.iter().any(|(r, _)| r == repo) {
                    deps.push((repo.clone(), sha.to_string()));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_names_carry_their_units() {
        let c = |n: &str| {
            let (m, s) = classify(n);
            s.map(|s| (m, s.unit.to_string(), s.direction))
        };
        assert_eq!(
            c("peak_inference_mem_usage(mb)"),
            Some((
                "peak_inference_mem_usage".into(),
                "MB".into(),
                Direction::Lower
            ))
        );
        assert_eq!(
            c("median_ttft_ms"),
            Some(("median_ttft".into(), "us".into(), Direction::Lower))
        );
        assert_eq!(
            c("compile_time_instruction_count"),
            Some((
                "compile_time_instruction_count".into(),
                "count".into(),
                Direction::Lower
            ))
        );
        assert_eq!(
            c("latency(us)"),
            Some(("latency".into(), "us".into(), Direction::Lower))
        );
        assert_eq!(
            c("bandwidth(TB/s)"),
            Some(("bandwidth".into(), "TB/s".into(), Direction::Higher))
        );
        assert_eq!(
            c("token_per_sec"),
            Some(("token_per_sec".into(), "tokens/s".into(), Direction::Higher))
        );
        assert_eq!(c("speedup").map(|x| x.2), Some(Direction::None));
        assert_eq!(c("avg_inference_latency"), None);
        assert_eq!(c("load_status"), None);
    }
}
