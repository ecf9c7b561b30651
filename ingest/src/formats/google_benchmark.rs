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

use crate::formats::parser::{ParseError, Parser};
use crate::formats::support::emit::{lines_of, KeyLayout, Spec, SpecsByPlace};
use crate::formats::support::json::{self, Fields};
use crate::formats::support::json_scan;
use crate::model::Format;
use crate::model::{Direction, Measurement, Name, Parsed};
use std::borrow::Cow;

pub struct GoogleBenchmark;

/// The note of a record google-benchmark reports as failed (`error_occurred`): the
/// read checks count such a value as a failure, not as nothing.
pub(crate) const ERROR_NOTE: &str = "benchmark error";

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

/// Fields every record has that are neither counters nor the times (`real_time`,
/// `cpu_time`) and `iterations`, which are stored.
fn standard(field: &str) -> bool {
    matches!(
        field,
        "name"
            | "family_index"
            | "per_family_instance_index"
            | "run_name"
            | "run_type"
            | "repetitions"
            | "repetition_index"
            | "threads"
            | "time_unit"
            | "aggregate_name"
            | "aggregate_unit"
            | "label"
            | "error_occurred"
            | "error_message"
            | "big_o"
            | "rms"
    )
}

/// A kind of record: its aggregate name (empty for an iteration), whether its times are
/// the compared latency, whether it is a percentage, and its time unit.
type Kind<'a> = (String, bool, bool, &'a str);

/// The standard fields of one record, found in one pass over its fields (the first of
/// a repeated name, as `Fields::get` reads).
#[derive(Default)]
struct Record<'a> {
    name: Option<Cow<'a, str>>,
    run_name: Option<Cow<'a, str>>,
    run_type: Option<Cow<'a, str>>,
    aggregate_name: Option<Cow<'a, str>>,
    aggregate_unit: Option<Cow<'a, str>>,
    time_unit: Option<Cow<'a, str>>,
    error_message: Option<Cow<'a, str>>,
    error_occurred: bool,
    threads: Option<&'a str>,
    repetition_index: Option<&'a str>,
}

impl<'a> Record<'a> {
    fn of(obj: &Fields<'a>) -> Record<'a> {
        let mut r = Record::default();
        // Last to first, so the first of a repeated name is the one left.
        for (k, v) in obj.0.iter().rev() {
            match k.0.as_ref() {
                "name" => r.name = json::text(v),
                "run_name" => r.run_name = json::text(v),
                "run_type" => r.run_type = json::text(v),
                "aggregate_name" => r.aggregate_name = json::text(v),
                "aggregate_unit" => r.aggregate_unit = json::text(v),
                "time_unit" => r.time_unit = json::text(v),
                "error_message" => r.error_message = json::text(v),
                "error_occurred" => r.error_occurred = *v == "true",
                "threads" => r.threads = Some(*v),
                "repetition_index" => r.repetition_index = Some(*v),
                _ => {}
            }
        }
        r
    }
    /// The run name, else the name (a run with repetitions names each `_mean`...).
    fn run_name(&self) -> Option<&str> {
        self.run_name.as_deref().or(self.name.as_deref())
    }
    fn aggregate(&self) -> bool {
        self.run_type.as_deref() == Some("aggregate")
    }
}

/// `BM_Gemm/512/64/threads:2/real_time` -> `BM_Gemm`, with the key's names (`arg1`,
/// `arg2`, `threads`) and values (`512`, `64`, `2`) in `names` and `values` (cleared
/// first): borrowed from the name, nothing allocated for the first positional ones.
fn split_name<'r>(
    run_name: &'r str,
    names: &mut Vec<Cow<'r, str>>,
    values: &mut Vec<&'r str>,
) -> &'r str {
    const ARGS: [&str; 8] = [
        "arg1", "arg2", "arg3", "arg4", "arg5", "arg6", "arg7", "arg8",
    ];
    names.clear();
    values.clear();
    let mut parts = run_name.split('/');
    let family = parts.next().unwrap_or(run_name);
    let mut positional = 0;
    for p in parts {
        match p.split_once(':') {
            Some((k, _)) if RUN_OPTIONS.contains(&k) => {}
            Some((k, v)) => {
                names.push(Cow::Borrowed(k));
                values.push(v);
            }
            None if RUN_OPTIONS.contains(&p) => {}
            None => {
                positional += 1;
                names.push(match ARGS.get(positional - 1) {
                    Some(a) => Cow::Borrowed(a),
                    None => Cow::Owned(format!("arg{positional}")),
                });
                values.push(p);
            }
        }
    }
    family
}

/// The key layouts of a file's records, by their names: a file has a few shapes of
/// run name, so each record's key is written behind a layout, not sorted and encoded
/// from pairs.
#[derive(Default)]
struct Layouts(Vec<(Vec<String>, KeyLayout)>);

impl Layouts {
    fn of<S: AsRef<str>>(&mut self, names: &[S]) -> &KeyLayout {
        let same = |known: &[String]| {
            known.len() == names.len() && known.iter().zip(names).all(|(k, n)| k == n.as_ref())
        };
        let at = match self.0.iter().position(|(known, _)| same(known)) {
            Some(at) => at,
            None => {
                let owned: Vec<String> = names.iter().map(|n| n.as_ref().to_string()).collect();
                self.0.push((owned, KeyLayout::new(names)));
                self.0.len() - 1
            }
        };
        &self.0[at].1
    }
}

/// The table a file's values go under: the benchmark executable's file name.
fn table_name(doc: &Doc) -> String {
    let exe = doc.context.as_ref().and_then(|c| c.str("executable"));
    exe.as_deref()
        .and_then(|e| e.rsplit(['/', '\\']).next())
        .filter(|e| !e.is_empty())
        .unwrap_or("google-benchmark")
        .to_string()
}

/// A record's time unit as perfdb spells it (`s` is `sec`); another unit is refused.
fn time_unit<'r>(rec: &'r Record, run_name: &str, no: usize) -> Result<&'r str, ParseError> {
    let unit = rec.time_unit.as_deref().unwrap_or("ns");
    if crate::formats::support::units::unit_of(unit).is_none() && unit != "s" {
        return Err(ParseError::at(
            no,
            format!("`{run_name}`: time_unit `{unit}` is not ns, us, ms or s"),
        ));
    }
    Ok(if unit == "s" { "sec" } else { unit })
}

impl Parser for GoogleBenchmark {
    fn format(&self) -> Format {
        Format::GoogleBenchmark
    }
    fn sniff(&self, text: &str) -> bool {
        text.trim_start().starts_with('{')
            && crate::formats::support::text::has(text, "\"context\"")
            && crate::formats::support::text::has(text, "\"benchmarks\"")
            && crate::formats::support::text::has(text, "\"time_unit\"")
    }
    fn parse(&self, text: &str) -> Result<Parsed, ParseError> {
        let doc = Doc::read(text)
            .map_err(|e| ParseError::at(e.line(), format!("not a google-benchmark JSON: {e}")))?;
        let table = table_name(&doc);
        let mut parsed = Parsed::sized_for(text, 150);
        if let Some(h) = doc.context.as_ref().and_then(|c| c.str("host_name")) {
            parsed
                .provenance
                .tags
                .push(("host".to_string(), h.into_owned()));
        }
        let record_lines = lines_of(text, "\"run_type\"");
        // Each record's standard fields, found in one pass over its fields.
        let records: Vec<Record> = doc.benchmarks.iter().map(Record::of).collect();
        // Run names that reported iterations: their aggregates are derived.
        let iterated: std::collections::HashSet<&str, crate::hash::Fx> = records
            .iter()
            .filter(|r| !r.aggregate())
            .filter_map(|r| r.run_name())
            .collect();
        // Specs by record kind (aggregate, primary, percentage, time unit), then by
        // field: a file has a handful of kinds, so a list.
        let mut specs: Vec<(Kind, SpecsByPlace<Option<Spec>>)> = Vec::new();
        let table = Name::new(&table);
        let mut layouts = Layouts::default();
        let (mut names, mut values) = (Vec::new(), Vec::new());
        let mut last_family: Option<(&str, Name)> = None;
        for (i, (obj, rec)) in doc.benchmarks.iter().zip(&records).enumerate() {
            let no = record_lines.get(i).copied().unwrap_or(1);
            let run_name = rec
                .run_name()
                .ok_or_else(|| ParseError::at(no, format!("benchmark {i} has no name")))?;
            let family = split_name(run_name, &mut names, &mut values);
            if !names.iter().any(|k| k == "threads") {
                if let Some(t) = rec.threads {
                    names.push(Cow::Borrowed("threads"));
                    values.push(t);
                }
            }
            let variant = match last_family {
                Some((f, name)) if f == family => name,
                _ => {
                    let name = Name::new(family);
                    last_family = Some((family, name));
                    name
                }
            };
            let row = layouts
                .of(&names)
                .row(&mut parsed.keys, table, variant, &values, no);
            let unit = time_unit(rec, run_name, no)?;
            let aggregate = rec.aggregate();
            let rep = if aggregate {
                0
            } else {
                repetition(rec, records.len(), run_name, no)?
            };
            let out: &mut Vec<Measurement> = if rep == 0 {
                &mut parsed.measurements
            } else {
                if parsed.repetitions.len() < rep {
                    parsed.repetitions.resize_with(rep, Vec::new);
                }
                &mut parsed.repetitions[rep - 1]
            };
            if rec.error_occurred {
                out.push(errored(&row, &mut parsed.keys, rec, unit));
                continue;
            }
            let (agg, primary) = if aggregate {
                let agg = rec.aggregate_name.as_deref().unwrap_or("aggregate");
                (agg, agg == "median" && !iterated.contains(run_name))
            } else {
                ("", true)
            };
            let percent = rec.aggregate_unit.as_deref() == Some("percentage");
            let kind = kind_specs(&mut specs, (agg.to_string(), primary, percent, unit));
            for (place, (k, v)) in obj.0.iter().enumerate() {
                let k = k.0.as_ref();
                // One spec per field and record kind a file uses; none for the standard
                // fields, skipped by name before their value is read.
                let Some(spec) = kind.get(place, k, || {
                    (!standard(k) && (k != "iterations" || agg.is_empty()))
                        .then(|| field_spec(k, agg, primary, percent, unit))
                }) else {
                    continue;
                };
                let Some(value) = field_value(v, &spec, k, run_name, no)? else {
                    continue;
                };
                out.push(row.put(&mut parsed.keys, &spec, value, v));
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

/// A record whose benchmark reported an error: a missing time with the error's words.
fn errored(
    row: &crate::formats::support::emit::Row,
    keys: &mut crate::model::Keys,
    rec: &Record,
    unit: &str,
) -> Measurement {
    let mut m = row.value(keys, None, unit, None, "error", "real_time");
    let why = rec.error_message.as_deref().unwrap_or("error");
    m.note = Some(format!("{ERROR_NOTE}: {why}").into());
    m
}

/// The repetition a record is a trial of (0: this run): each repetition is a run with at
/// least one record of its own, so an index past the number of records is no
/// repetition this file holds (and would size the list of runs by a number from it).
fn repetition(
    rec: &Record,
    records: usize,
    run_name: &str,
    no: usize,
) -> Result<usize, ParseError> {
    let rep = rec
        .repetition_index
        .and_then(|r| r.parse::<usize>().ok())
        .unwrap_or(0);
    if rep > 0 && rep >= records {
        return Err(ParseError::at(
            no,
            format!(
                "`{run_name}`: repetition_index {rep}, but the file has only {records} \
                 benchmark records"
            ),
        ));
    }
    Ok(rep)
}

/// A field's value: `None` for a field that holds no measurement (a string, an array);
/// bytes per second kept in MB/s.
fn field_value(
    v: &str,
    spec: &Spec,
    k: &str,
    run_name: &str,
    no: usize,
) -> Result<Option<Option<f64>>, ParseError> {
    let value = match json::scalar(v) {
        json::Scalar::Number(x, _) => x.is_finite().then_some(x),
        json::Scalar::Null => None,
        // A time or rate the format writes as a number, written as text.
        json::Scalar::String(t) if spec.direction != Direction::None => {
            return Err(ParseError::at(
                no,
                format!("`{run_name}`: {k} is \"{t}\", not a number"),
            ))
        }
        _ => return Ok(None),
    };
    Ok(Some(if k == "bytes_per_second" {
        value.map(|b| b / 1e6)
    } else {
        value
    }))
}

/// The specs of one record kind, made on first use.
fn kind_specs<'s, 'k>(
    specs: &'s mut Vec<(Kind<'k>, SpecsByPlace<Option<Spec>>)>,
    kind: Kind<'k>,
) -> &'s mut SpecsByPlace<Option<Spec>> {
    let at = match specs.iter().position(|(k, _)| *k == kind) {
        Some(at) => at,
        None => {
            specs.push((kind, SpecsByPlace::default()));
            specs.len() - 1
        }
    };
    &mut specs[at].1
}

/// The parts of the output perfdb reads.
#[derive(serde::Deserialize)]
struct Doc<'a> {
    #[serde(borrow, default)]
    context: Option<Fields<'a>>,
    #[serde(borrow)]
    benchmarks: Vec<Fields<'a>>,
}

impl<'a> Doc<'a> {
    /// The document, read by the fast reader, else by serde_json (for the error).
    fn read(text: &'a str) -> Result<Doc<'a>, serde_json::Error> {
        Doc::scan(text).map_or_else(|| serde_json::from_str(text), Ok)
    }
    /// The document as the derived reader takes it (each field at most once,
    /// `benchmarks` required, `context` an object or null), or `None` to leave it to
    /// serde_json.
    fn scan(text: &'a str) -> Option<Doc<'a>> {
        let (top, benchmarks) = json_scan::object_and_items(text, "benchmarks").ok()?;
        let mut context = None;
        let mut seen = false;
        for (k, v) in &top.0 {
            match k.0.as_ref() {
                "context" if context.is_none() => {
                    context = Some(match *v {
                        "null" => None,
                        v => Some(json_scan::object(v).ok()?),
                    })
                }
                "benchmarks" if !seen => seen = true,
                "context" | "benchmarks" => return None,
                _ => {}
            }
        }
        Some(Doc {
            context: context.flatten(),
            benchmarks: benchmarks?,
        })
    }
}

/// How field `k` of a record is stored. `agg` is the aggregate name (empty for an
/// iteration); `primary` says its times are the compared latency; `percent` that the
/// aggregate is a percentage (`_cv`).
fn field_spec(k: &str, agg: &str, primary: bool, percent: bool, unit: &str) -> Spec {
    let suffix = if agg.is_empty() {
        String::new()
    } else {
        format!("_{agg}")
    };
    match k {
        "real_time" | "cpu_time" => {
            let base = if k == "real_time" {
                "latency"
            } else {
                "latency_cpu"
            };
            if percent {
                return Spec::derived(&format!("{base}{suffix}"), "%", k, None);
            }
            let metric = if primary && k == "real_time" {
                base.to_string()
            } else {
                format!("{base}{suffix}")
            };
            let spec = Spec::measured(Some(&metric), unit, k);
            if !primary || (k == "cpu_time" && !agg.is_empty()) {
                spec.kept()
            } else {
                spec
            }
        }
        // Values arrive divided by 1e6: bytes/s as MB/s, printed as the file's B/s.
        "bytes_per_second" => {
            let spec =
                Spec::measured(Some(&format!("bandwidth{suffix}")), "mb/s", k).printed_in("B/s");
            if primary {
                spec
            } else {
                spec.kept()
            }
        }
        "items_per_second" => Spec::directed(
            &format!("items_per_second{suffix}"),
            "items/s",
            if primary {
                Direction::Higher
            } else {
                Direction::None
            },
            k,
        ),
        "iterations" => Spec::derived("iterations", "", k, None),
        counter => Spec::derived(
            &format!("{counter}{suffix}"),
            "",
            counter,
            Some("user counter"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_into_family_and_arguments() {
        let (mut names, mut values) = (Vec::new(), Vec::new());
        let f = split_name(
            "BM_Gemm/512/64/threads:2/real_time",
            &mut names,
            &mut values,
        );
        assert_eq!(f, "BM_Gemm");
        assert_eq!(names, ["arg1", "arg2", "threads"]);
        assert_eq!(values, ["512", "64", "2"]);
        let f = split_name("BM_Copy/size:4096/min_time:0.500", &mut names, &mut values);
        assert_eq!(
            (f, &names[..], &values[..]),
            ("BM_Copy", &["size".into()][..], &["4096"][..])
        );
        let many = format!(
            "BM_X/{}",
            (1..=10)
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join("/")
        );
        split_name(&many, &mut names, &mut values);
        assert_eq!((&*names[7], &*names[9], values[9]), ("arg8", "arg10", "10"));
    }

    #[test]
    fn a_repetition_index_no_record_can_fill_is_refused() {
        let record = |rep: u64| {
            format!(
                r#"{{"name": "BM_Sum/64", "run_name": "BM_Sum/64", "run_type": "iteration",
                "repetitions": 2, "repetition_index": {rep}, "iterations": 10,
                "real_time": 1.5, "cpu_time": 1.5, "time_unit": "ns"}}"#
            )
        };
        let doc = |reps: &[u64]| {
            let records: Vec<String> = reps.iter().map(|r| record(*r)).collect();
            format!(
                "{{\"context\": {{}},\n\"benchmarks\": [\n{}]}}",
                records.join(",\n")
            )
        };
        let ok = GoogleBenchmark.parse(&doc(&[0, 1])).unwrap();
        assert_eq!(ok.repetitions.len(), 1);
        assert_eq!(ok.measurements.len(), ok.repetitions[0].len());
        // Found by fuzzing: an index of 86 billion sized the list of runs by it.
        let e = GoogleBenchmark
            .parse(&doc(&[0, 86_133_930_793]))
            .unwrap_err();
        assert_eq!(e.line, 6, "the second record's line: {e:?}");
        assert!(e.reason.contains("repetition_index 86133930793"), "{e:?}");
    }
}
