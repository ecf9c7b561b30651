//! `perfdb export`: a label's compared values in another tool's format (PyTorch's
//! benchmark database v3), read back by `perfdb ingest` to the same rows.

use crate::cli::{ExportArgs, ExportFormat};
use crate::Exit;
use perfdb_reports::db::{sql_str, Db, MACHINE_TAG_SQL, METHOD_TAG_SQL};
use perfdb_reports::query::table::{render, TableFormat};
use serde_json::{json, Map, Value};
use std::io::Write;
use std::path::Path;

pub fn run(root: &Path, a: ExportArgs) -> anyhow::Result<Exit> {
    let db = Db::open(root)?;
    let records = match a.format {
        ExportFormat::PytorchV3 => pytorch_v3(&db, &a.label)?,
    };
    if records.is_empty() {
        anyhow::bail!(
            "label '{}' has no values with a direction to export (`perfdb runs --label {}` \
             lists its runs)",
            a.label,
            a.label
        );
    }
    let mut text = String::new();
    for r in &records {
        text.push_str(&serde_json::to_string(r)?);
        text.push('\n');
    }
    match &a.out {
        Some(path) => {
            // Written whole, then moved into place: a reader never sees half a file.
            let tmp = path.with_extension("partial");
            std::fs::write(&tmp, &text).map_err(|e| anyhow::anyhow!("{}: {e}", tmp.display()))?;
            std::fs::rename(&tmp, path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
            eprintln!(
                "wrote {} pytorch-v3 record(s) of label '{}' to {}",
                records.len(),
                a.label,
                path.display()
            );
        }
        None => std::io::stdout().lock().write_all(text.as_bytes())?,
    }
    Ok(Exit::Ok)
}

/// One v3 record per row, metric, machine, commit and source format of `label`, its
/// trials in order.
fn pytorch_v3(db: &Db, label: &str) -> anyhow::Result<Vec<Value>> {
    let sql = format!(
        "SELECT m.table_name, m.variant, m.key, m.key_order, m.metric, m.unit, \
                r.\"commit\", nullif(epoch_us(r.commit_time), 0) AS commit_time_us, \
                nullif({MACHINE_TAG_SQL}, '') AS machine, r.format AS source_format, r.arch, \
                nullif({METHOD_TAG_SQL}, '') AS method, \
                list(m.value ORDER BY r.trial, r.run_id) AS vals \
         FROM measurements m JOIN runs r USING (run_id) \
         WHERE r.label = {} AND m.direction IN ('lower', 'higher') AND m.value IS NOT NULL \
         GROUP BY ALL ORDER BY ALL",
        sql_str(label)
    );
    let (schema, batches) = db.query(&sql)?;
    // One JSON object a line.
    render(&schema, &batches, TableFormat::Json)?
        .lines()
        .map(|line| record(&serde_json::from_str(line)?, label))
        .collect()
}

/// A row of the query above as a v3 record.
fn record(row: &Value, label: &str) -> anyhow::Result<Value> {
    let s = |k: &str| row[k].as_str().unwrap_or_default().to_string();
    let table = s("table_name");
    let key: Map<String, Value> = serde_json::from_str(&s("key")).unwrap_or_default();
    let order: Vec<String> = serde_json::from_str(&s("key_order")).unwrap_or_default();
    let mut benchmark = json!({ "name": table });
    let mut inputs = Map::new();
    let mut settings = Map::new();
    let mut model_name = None;
    // The key's cells in the order the source printed them.
    let names = order
        .iter()
        .chain(key.keys().filter(|k| !order.contains(k)))
        .filter(|k| key.contains_key(*k));
    for name in names {
        let v = key[name].clone();
        match name.as_str() {
            "model" => model_name = Some(v),
            "mode" | "dtype" => benchmark[name] = v,
            n if n.starts_with("input.") => {
                inputs.insert(n["input.".len()..].to_string(), json!({ "dtype": v }));
            }
            _ => {
                settings.insert(name.clone(), v);
            }
        }
    }
    benchmark["extra_info"] = json!({ "perfdb_label": label });
    if let Some(m) = row["method"].as_str() {
        benchmark["extra_info"]["method"] = json!(m);
    }
    // What ingest needs to give every commit its runs back: when the commit was made,
    // which runs a value is a trial of (those of one format: a commit's aiter logs and
    // its probe logs are runs of their own), and their arch (part of the machine class).
    if let Some(t) = row["commit_time_us"].as_i64() {
        benchmark["extra_info"]["perfdb_commit_time_us"] = json!(t);
    }
    if let Some(f) = row["source_format"].as_str() {
        benchmark["extra_info"]["perfdb_format"] = json!(f);
    }
    if let Some(a) = row["arch"].as_str().filter(|a| !a.is_empty()) {
        benchmark["extra_info"]["perfdb_arch"] = json!(a);
    }
    let metric = s("metric");
    let unit = s("unit");
    // `latency(us)`: the unit inside the name, as v3 names carry it and ingest reads it.
    let metric_name = if unit.is_empty() || unit == "count" {
        metric
    } else {
        format!("{metric}({unit})")
    };
    let values = row["vals"].clone();
    let mut r = json!({
        "benchmark": benchmark,
        "model": {
            "name": model_name.unwrap_or_else(|| json!(table)),
            "backend": s("variant"),
        },
        "metric": {
            "name": metric_name,
            "benchmark_values": values,
            "target_value": 0,
            "extra_info": settings,
        },
    });
    if !inputs.is_empty() {
        r["inputs"] = Value::Object(inputs);
    }
    if let Some(machine) = row["machine"].as_str() {
        r["runners"] = json!([{ "name": machine, "gpu_info": machine }]);
    }
    if let Some(commit) = row["commit"].as_str().filter(|c| !c.is_empty()) {
        r["dependencies"] = json!({ "repo": { "sha": commit } });
    }
    Ok(r)
}
