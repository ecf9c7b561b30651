//! The v3 writer (`perfdb export --format pytorch-v3`): one record a row, metric,
//! machine, commit and source format of a label, written so that this module's reader
//! gives every commit its runs back — the commit's time, which runs a value is a trial
//! of (those of one format), and their arch travel in `benchmark.extra_info`.

use crate::model;
use serde_json::{json, Map, Value};

/// One exported series as the warehouse holds it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExportRow {
    pub table: String,
    pub variant: String,
    /// The key's cells in the order the source printed them.
    pub key: Vec<(String, String)>,
    pub metric: String,
    pub unit: String,
    pub commit: Option<String>,
    pub commit_time_us: Option<i64>,
    pub machine: Option<String>,
    /// The format the values were read from.
    pub source_format: Option<String>,
    pub arch: Option<String>,
    pub method: Option<String>,
    /// One value a trial, in trial order.
    pub values: Vec<f64>,
}

/// `row` of `label` as a v3 record.
pub fn record(row: &ExportRow, label: &str) -> Value {
    // PyTorch's schema, whose optional fields are left out when perfdb has no value:
    // built as maps, one field at a time.
    let mut benchmark = Map::new();
    benchmark.insert("name".into(), json!(row.table));
    let mut inputs = Map::new();
    let mut settings = Map::new();
    let mut model_name = None;
    for (name, v) in &row.key {
        let v = json!(v);
        match name.as_str() {
            "model" => model_name = Some(v),
            "mode" | "dtype" => {
                benchmark.insert(name.clone(), v);
            }
            n if n.starts_with("input.") => {
                inputs.insert(n["input.".len()..].to_string(), json!({ "dtype": v }));
            }
            _ => {
                settings.insert(name.clone(), v);
            }
        }
    }
    let mut extra = Map::new();
    extra.insert("perfdb_label".into(), json!(label));
    if let Some(m) = &row.method {
        extra.insert("method".into(), json!(m));
    }
    if let Some(t) = row.commit_time_us {
        extra.insert("perfdb_commit_time_us".into(), json!(t));
    }
    if let Some(f) = &row.source_format {
        extra.insert("perfdb_format".into(), json!(f));
    }
    if let Some(a) = row.arch.as_ref().filter(|a| !a.is_empty()) {
        extra.insert("perfdb_arch".into(), json!(a));
    }
    benchmark.insert("extra_info".into(), Value::Object(extra));
    // `latency(us)`: the unit inside the name, as v3 names carry it and the reader
    // reads it.
    let metric_name = if row.unit.is_empty() || row.unit == "count" {
        row.metric.clone()
    } else {
        format!("{}({})", row.metric, row.unit)
    };
    let Value::Object(mut r) = json!({
        "benchmark": benchmark,
        "model": {
            "name": model_name.unwrap_or_else(|| json!(row.table)),
            "backend": row.variant,
        },
        "metric": {
            "name": metric_name,
            "benchmark_values": row.values,
            "target_value": 0,
            "extra_info": settings,
        },
    }) else {
        unreachable!("an object literal is an object")
    };
    if !inputs.is_empty() {
        r.insert("inputs".into(), Value::Object(inputs));
    }
    if let Some(machine) = &row.machine {
        r.insert(
            "runners".into(),
            json!([{ "name": machine, "gpu_info": machine }]),
        );
    }
    if let Some(commit) = row.commit.as_ref().filter(|c| !c.is_empty()) {
        r.insert("dependencies".into(), json!({ "repo": { "sha": commit } }));
    }
    Value::Object(r)
}

/// A key stored as canonical JSON with the names in source order, as pairs in that
/// order.
pub fn key_in_order(key_json: &str, order_json: Option<&str>) -> Vec<(String, String)> {
    let key = model::key_from_json(key_json);
    match order_json {
        Some(order) => model::in_source_order(key, order),
        None => key,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::parser::Parser;
    use crate::formats::pytorch_v3::PytorchV3;

    fn row() -> ExportRow {
        ExportRow {
            table: "gemm".into(),
            variant: "triton".into(),
            key: vec![
                ("M".into(), "512".into()),
                ("dtype".into(), "bf16".into()),
                ("input.a".into(), "bf16".into()),
            ],
            metric: "latency".into(),
            unit: "us".into(),
            commit: Some("abc1234".into()),
            commit_time_us: Some(1_700_000_000_000_000),
            machine: Some("NVIDIA H200".into()),
            source_format: Some("aiter-table".into()),
            arch: Some("sm_90".into()),
            method: None,
            values: vec![10.5, 10.75, 10.25],
        }
    }

    #[test]
    fn a_written_record_reads_back_as_the_same_row_and_trials() {
        let text = serde_json::to_string(&record(&row(), "main")).unwrap();
        let parsed = PytorchV3
            .parse(&text)
            .expect("the reader takes the writer's record");
        let mut got = Vec::new();
        for trial in std::iter::once(&parsed.measurements).chain(&parsed.repetitions) {
            for m in trial {
                got.push((
                    m.table.as_str(),
                    m.variant.as_str(),
                    parsed.key_pairs(m),
                    m.metric.as_str(),
                    m.unit.as_str(),
                    m.value,
                ));
            }
        }
        let mut key = row().key;
        key.sort();
        let mut got_keys: Vec<_> = got
            .iter()
            .map(|g| {
                let mut k = g.2.clone();
                k.sort();
                k
            })
            .collect();
        got_keys.dedup();
        assert_eq!(got_keys, vec![key]);
        let values: Vec<_> = got.iter().map(|g| (g.0, g.1, g.3, g.4, g.5)).collect();
        assert_eq!(
            values,
            [10.5, 10.75, 10.25]
                .map(|v| ("gemm", "triton", "latency", "us", Some(v)))
                .to_vec()
        );
        assert_eq!(parsed.provenance.commit.as_deref(), Some("abc1234"));
    }

    #[test]
    fn the_unit_rides_in_the_name_and_the_key_in_its_places() {
        let r = record(&row(), "main");
        assert_eq!(r["metric"]["name"], "latency(us)");
        assert_eq!(r["benchmark"]["dtype"], "bf16");
        assert_eq!(r["inputs"]["a"]["dtype"], "bf16");
        assert_eq!(r["metric"]["extra_info"]["M"], "512");
        assert_eq!(r["dependencies"]["repo"]["sha"], "abc1234");
        assert_eq!(r["benchmark"]["extra_info"]["perfdb_format"], "aiter-table");
    }
}
