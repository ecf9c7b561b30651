//! Independent readers prove the Delta tables: the warehouse's `runs`, `measurements`,
//! `summaries` and alert tables are read by delta-rs (the `deltalake` Python package)
//! and by Spark (pyspark in local mode, over the Parquet files the log lists), and give
//! the same row counts and the same per-row medians as `perfdb sql`.
//!
//! Needs python3 with `deltalake[pyarrow]` and `pyspark` (and Java 17), so plain
//! `cargo test` lists these tests as ignored with that reason; `scripts/test` installs
//! them and runs them. Run without them, a test fails saying what is missing.

use crate::common::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

fn python_has(module: &str) -> bool {
    std::process::Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Without its reader a test fails: it never passes for want of one.
fn require(modules: &[&str]) {
    let missing: Vec<&str> = modules.iter().copied().filter(|m| !python_has(m)).collect();
    assert!(
        missing.is_empty(),
        "python3 lacks {}: run scripts/test (it installs them), or \
         pip install 'deltalake[pyarrow]' 'pyspark>=4,<5' (and Java 17 for Spark)",
        missing.join(", ")
    );
}

/// A warehouse with every table in use: A/B runs, a 20-commit history, a compaction
/// that replaced files, and the alerts detect stored.
fn warehouse() -> Wh {
    let wh = Wh::new();
    wh.ingest(&sample("h200-gemm/ab/aiter/base"), "base");
    wh.ingest(&sample("h200-gemm/ab/perf/head"), "head");
    ingest_history(&wh, &(1..=20).collect::<Vec<_>>());
    wh.ok(&["compact", "--grace", "0"]);
    wh.run(&["detect", "--label", "main"]);
    wh
}

/// What perfdb says: rows per table and the median of every row's values.
fn perfdb_view(wh: &Wh) -> (BTreeMap<String, i64>, BTreeMap<String, f64>) {
    let mut counts = BTreeMap::new();
    for (table, view) in [
        ("runs", "runs"),
        ("measurements", "measurements"),
        ("summaries", "summaries"),
        ("alert_records", "alerts"),
        ("alert_status", "alert_status"),
    ] {
        counts.insert(
            table.to_string(),
            wh.count(&format!("SELECT count(*) FROM {view}")),
        );
    }
    let medians = wh
        .sql(
            "SELECT run_id || '|' || table_name || '|' || metric || '|' || variant || '|' || key AS row, \
             median(value) AS median FROM measurements WHERE value IS NOT NULL GROUP BY ALL",
        )
        .into_iter()
        .map(|r| {
            (
                r["row"].as_str().unwrap().to_string(),
                r["median"].as_f64().unwrap(),
            )
        })
        .collect();
    (counts, medians)
}

/// Run `script` (Python) with the warehouse path; it prints one JSON object.
fn python(script: &str, root: &Path) -> Value {
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(root)
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.lines().last().unwrap_or("")).expect("the script's JSON")
}

fn assert_same(
    what: &str,
    got: &Value,
    counts: &BTreeMap<String, i64>,
    medians: &BTreeMap<String, f64>,
) {
    for (table, n) in counts {
        assert_eq!(
            got["counts"][table].as_i64(),
            Some(*n),
            "{what}: rows of {table}"
        );
    }
    let theirs = got["medians"].as_object().unwrap();
    assert_eq!(
        theirs.len(),
        medians.len(),
        "{what}: number of rows with values"
    );
    for (row, m) in medians {
        let t = theirs[row]
            .as_f64()
            .unwrap_or_else(|| panic!("{what}: no row {row}"));
        assert!(
            (t - m).abs() <= 1e-12 * m.abs().max(1.0),
            "{what}: {row}: {t} vs {m}"
        );
    }
}

/// The per-row median in Python, shared by both readers' scripts.
const MEDIANS_PY: &str = r#"
import json, statistics, sys
def medians(rows):
    groups = {}
    for r in rows:
        if r["value"] is None:
            continue
        k = "|".join([r["run_id"], r["table_name"], r["metric"], r["variant"], r["key"]])
        groups.setdefault(k, []).append(r["value"])
    return {k: statistics.median(v) for k, v in groups.items()}
"#;

#[test]
#[ignore = "needs python3 with deltalake[pyarrow]: run scripts/test"]
fn delta_rs_reads_the_same_rows_and_medians_as_perfdb() {
    require(&["deltalake", "pyarrow"]);
    let wh = warehouse();
    let (counts, medians) = perfdb_view(&wh);
    assert!(
        counts["alert_records"] > 0,
        "detect stored no alert: the test covers less"
    );
    let script = format!(
        "{MEDIANS_PY}\nfrom deltalake import DeltaTable\nroot = sys.argv[1]\n\
         counts = {{t: DeltaTable(f'{{root}}/{{t}}').to_pyarrow_table().num_rows \
                    for t in ['runs', 'measurements', 'summaries', 'alert_records', 'alert_status']}}\n\
         rows = DeltaTable(f'{{root}}/measurements').to_pyarrow_table().to_pylist()\n\
         print(json.dumps({{'counts': counts, 'medians': medians(rows)}}))\n"
    );
    let got = python(&script, &wh.path());
    assert_same("delta-rs", &got, &counts, &medians);
}

#[test]
#[ignore = "needs python3 with pyspark and deltalake, and Java 17: run scripts/test"]
fn spark_reads_the_files_the_log_lists_with_the_same_rows_and_medians() {
    require(&["pyspark", "deltalake"]);
    let wh = warehouse();
    let (counts, medians) = perfdb_view(&wh);
    // Spark without the Delta jars (no Maven here): the live file list from the log
    // (replayed in Python, independently of perfdb), read as Parquet.
    let script = format!(
        "{MEDIANS_PY}\nimport os\nroot = sys.argv[1]\n\
         def live(table):\n\
         \x20   files = {{}}\n\
         \x20   log = os.path.join(root, table, '_delta_log')\n\
         \x20   for name in sorted(n for n in os.listdir(log) if n.endswith('.json')):\n\
         \x20       for line in open(os.path.join(log, name)):\n\
         \x20           a = json.loads(line)\n\
         \x20           if 'add' in a: files[a['add']['path']] = a['add']['partitionValues']\n\
         \x20           if 'remove' in a: files.pop(a['remove']['path'], None)\n\
         \x20   return files\n\
         from pyspark.sql import SparkSession, functions as F\n\
         spark = SparkSession.builder.master('local[1]').config('spark.ui.enabled', 'false')\
         .config('spark.sql.session.timeZone', 'UTC').getOrCreate()\n\
         def read(table):\n\
         \x20   files = live(table)\n\
         \x20   df = None\n\
         \x20   for path, parts in files.items():\n\
         \x20       d = spark.read.parquet(os.path.join(root, table, path))\n\
         \x20       for k, v in parts.items(): d = d.withColumn(k, F.lit(v))\n\
         \x20       df = d if df is None else df.unionByName(d, allowMissingColumns=True)\n\
         \x20   return df\n\
         counts = {{t: read(t).count() for t in ['runs', 'measurements', 'summaries', 'alert_records', 'alert_status']}}\n\
         rows = [r.asDict() for r in read('measurements').select('run_id', 'table_name', 'metric', 'variant', 'key', 'value').collect()]\n\
         print(json.dumps({{'counts': counts, 'medians': medians(rows)}}))\n"
    );
    let got = python(&script, &wh.path());
    assert_same("Spark", &got, &counts, &medians);
}
