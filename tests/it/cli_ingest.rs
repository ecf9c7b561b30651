//! `perfdb ingest`, `runs`, `sql`, `compact` end to end on the real sample data.

use crate::common::*;
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;

fn measurements_of(wh: &Wh, run_id: &str) -> Vec<Value> {
    wh.sql(&format!(
        "SELECT line, column_name, raw, value, key, variant FROM measurements WHERE run_id = '{run_id}' ORDER BY line"
    ))
}

fn run_ids(wh: &Wh, label: &str) -> Vec<(String, String)> {
    wh.sql(&format!(
        "SELECT run_id, source_path FROM runs WHERE label = '{label}' ORDER BY trial"
    ))
    .into_iter()
    .map(|r| {
        (
            r["run_id"].as_str().unwrap().to_string(),
            r["source_path"].as_str().unwrap().to_string(),
        )
    })
    .collect()
}

fn parse_num(s: &str) -> Option<f64> {
    s.trim().parse::<f64>().ok().filter(|v| v.is_finite())
}

/// Every cell of every markdown table row of `text` is in the warehouse: as a value
/// (same raw text and number) or as an identity key cell, at its source line.
fn check_table_round_trip(text: &str, ms: &[Value]) -> usize {
    let mut checked = 0;
    let mut header: Vec<String> = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let no = (i + 1) as i64;
        if !line.starts_with('|') {
            continue;
        }
        let cells: Vec<String> = line
            .trim()
            .trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect();
        if lines
            .get(i + 1)
            .is_some_and(|n| n.starts_with("|-") || n.starts_with("|:"))
        {
            header = cells;
            continue;
        }
        if cells
            .iter()
            .all(|c| c.chars().all(|ch| ch == '-' || ch == ':'))
        {
            continue;
        }
        let at_line: Vec<&Value> = ms
            .iter()
            .filter(|m| m["line"].as_i64() == Some(no))
            .collect();
        assert!(!at_line.is_empty(), "line {no} not stored");
        for (h, cell) in header.iter().zip(&cells) {
            let as_value = at_line.iter().find(|m| m["column_name"] == h.as_str());
            match as_value {
                Some(m) => {
                    assert_eq!(m["raw"], cell.as_str(), "line {no} column {h}");
                    assert_eq!(m["value"].as_f64(), parse_num(cell), "line {no} column {h}");
                }
                None => {
                    let key: serde_json::Map<String, Value> =
                        serde_json::from_str(at_line[0]["key"].as_str().unwrap()).unwrap();
                    assert_eq!(
                        key.get(h.as_str()).and_then(Value::as_str),
                        Some(cell.as_str()),
                        "line {no} key {h}"
                    );
                }
            }
            checked += 1;
        }
    }
    checked
}

/// Every `<name> avg: <number>` of every `[perf]` line is stored with its line and variant.
fn check_perf_round_trip(text: &str, ms: &[Value]) -> usize {
    let mut checked = 0;
    for (i, line) in text.lines().enumerate() {
        let no = (i + 1) as i64;
        let toks: Vec<&str> = line.split_whitespace().collect();
        for w in toks.windows(3) {
            if w[1] == "avg:" {
                let want = w[2].parse::<f64>().unwrap();
                let hit = ms
                    .iter()
                    .find(|m| m["line"].as_i64() == Some(no) && m["variant"] == w[0]);
                let m = hit.unwrap_or_else(|| panic!("line {no}: {} avg not stored", w[0]));
                assert_eq!(m["value"].as_f64(), Some(want), "line {no} {}", w[0]);
                assert_eq!(m["raw"], w[2], "line {no}");
                checked += 1;
            }
        }
    }
    checked
}

/// Every numeric `key=value` field of every TS_KERNEL_METRIC line is stored.
fn check_probe_round_trip(text: &str, ms: &[Value]) -> usize {
    let mut checked = 0;
    for (i, line) in text.lines().enumerate() {
        let no = (i + 1) as i64;
        let Some(rest) = line.strip_prefix("TS_KERNEL_METRIC ") else {
            continue;
        };
        for (k, v) in rest.split_whitespace().filter_map(|f| f.split_once('=')) {
            // numerics_passed is the row's numerics verdict, checked elsewhere.
            if k == "numerics_passed" || (v != "None" && v.parse::<f64>().is_err()) {
                continue;
            }
            let m = ms
                .iter()
                .find(|m| m["line"].as_i64() == Some(no) && m["column_name"] == k)
                .unwrap_or_else(|| panic!("line {no}: {k} not stored"));
            // Bandwidth is stored in TB/s, the printed GB/s kept in raw.
            let (raw, factor) = match k {
                "bandwidth_gb_s" if v != "None" => (format!("{v} GB/s"), 1e-3),
                _ => (v.to_string(), 1.0),
            };
            assert_eq!(m["raw"], raw, "line {no} {k}");
            let want = parse_num(v).map(|x| x * factor);
            let got = m["value"].as_f64();
            assert!(
                got == want || (got.unwrap() - want.unwrap()).abs() < 1e-9,
                "line {no} {k}: {got:?} vs {want:?}"
            );
            checked += 1;
        }
    }
    checked
}

#[test]
fn every_h200_trial_round_trips_exactly() {
    let wh = Wh::new();
    for format in ["aiter", "perf", "probe"] {
        for side in ["base", "head"] {
            let label = format!("{format}-{side}");
            let out = wh.ingest(&sample(&format!("h200-gemm/ab/{format}/{side}")), &label);
            assert!(out.contains("5 run(s) added"), "{out}");
            let runs = run_ids(&wh, &label);
            assert_eq!(runs.len(), 5);
            for (run_id, path) in runs {
                let text = std::fs::read_to_string(&path).unwrap();
                let ms = measurements_of(&wh, &run_id);
                let checked = match format {
                    "aiter" => check_table_round_trip(&text, &ms),
                    "perf" => check_perf_round_trip(&text, &ms),
                    _ => check_probe_round_trip(&text, &ms),
                };
                assert!(checked > 20, "{path}: only {checked} values checked");
            }
        }
    }
    let formats: Vec<String> = wh
        .sql("SELECT DISTINCT format FROM runs ORDER BY format")
        .iter()
        .map(|r| r["format"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(formats, ["aiter-table", "perf-lines", "ts-probe"]);
}

#[test]
fn probe_runs_keep_verdict_and_provenance() {
    let wh = Wh::new();
    wh.ingest(
        &sample("formats/14_aorta_ts_kernel_probe_stdout_emulated.txt"),
        "probe",
    );
    let r = &wh.sql("SELECT verdict, image_digest, token, arch FROM runs")[0];
    assert_eq!(r["verdict"], "pass");
    assert_eq!(r["token"], "48213-1784109600123456789");
    assert!(r["image_digest"]
        .as_str()
        .unwrap()
        .starts_with("lightseekorg/tokenspeed-amd@sha256:60c1"));
    assert_eq!(r["arch"], "amd:9.5");
    let shapes = wh.sql("SELECT DISTINCT key FROM measurements ORDER BY key");
    // The shape, then the problem fields of `TS_KERNEL_INFO`, sorted by name.
    assert_eq!(
        shapes[0]["key"],
        r#"{"K":"4096","M":"1","N":"4096","dtype":"bf16","mode":"bench","role":"a"}"#
    );
    let n = wh.sql("SELECT numerics, count(*) AS n FROM measurements WHERE metric = 'latency' GROUP BY ALL ORDER BY 1");
    assert_eq!(n[0]["numerics"], "not_checked");
    assert_eq!(n[1]["numerics"], "pass");

    // The failure path: TS_KERNEL_FAIL is the verdict, numerics_passed=False a failure.
    wh.ingest(
        &sample("formats/15_aorta_ts_kernel_probe_failure_lines.txt"),
        "fail",
    );
    let r = &wh.sql("SELECT verdict, verdict_detail FROM runs WHERE label = 'fail'")[0];
    assert_eq!(r["verdict"], "fail");
    assert!(r["verdict_detail"]
        .as_str()
        .unwrap()
        .contains("numerics_mismatch count=1"));
    assert_eq!(
        wh.count("SELECT count(*) FROM measurements WHERE label = 'fail' AND numerics = 'fail'"),
        6,
        "the numerics_passed=False record's four values and the FAILREC's two error values"
    );
}

#[test]
fn format_examples_ingest_with_the_right_rows() {
    let wh = Wh::new();
    let cases: &[(&str, &str, i64)] = &[
        // (file, detected format, number of stored values)
        ("01_aiter_perf_lines_real_log.txt", "perf-lines", 6),
        (
            "02_aiter_op_test_summary_emulated_pandas3.1.1_tabulate0.10.0.txt",
            "aiter-table",
            6 * 14 + 2 * 6,
        ),
        (
            "03_aiter_op_test_summary_emulated_pandas2.3.3_tabulate0.9.0.txt",
            "aiter-table",
            6 * 14 + 2 * 6,
        ),
        (
            "04_pandas_to_markdown_edge_cases_generated.txt",
            "aiter-table",
            12 * 5,
        ),
        (
            "06_aiter_op_test_full_log_emulated.txt",
            "aiter-table",
            2 * 4,
        ),
        ("07_vkpr_test_fixture_rowkey_base.log", "aiter-table", 3 * 3),
        (
            "09_vkpr_perf_lines_base_repeat1_emulated.log",
            "perf-lines",
            6 * 3,
        ),
        (
            "14_aorta_ts_kernel_probe_stdout_emulated.txt",
            "ts-probe",
            4 * 4,
        ),
        (
            "16_tokenspeed_kernel_bench_export_emulated.json",
            "ts-export",
            -1,
        ),
        (
            "17_aorta_test_fixture_kernel_bench_records.json",
            "ts-export",
            -1,
        ),
    ];
    for (file, format, n) in cases {
        let label = file[..2].to_string();
        wh.ingest(&sample(&format!("formats/{file}")), &format!("f{label}"));
        let r = &wh.sql(&format!(
            "SELECT format, n_measurements FROM runs WHERE label = 'f{label}'"
        ))[0];
        assert_eq!(r["format"], *format, "{file}");
        if *n >= 0 {
            assert_eq!(r["n_measurements"].as_i64(), Some(*n), "{file}");
        }
    }
    // Missing values are null, never 0 and never dropped.
    let nan =
        wh.sql("SELECT raw, value FROM measurements WHERE label = 'f02' AND raw = 'nan' LIMIT 1");
    assert_eq!(nan[0]["value"], Value::Null);
    // `None` prints empty under pandas 2 and `nan` under pandas 3: the key is the same.
    let k2 = wh.sql("SELECT DISTINCT key FROM measurements WHERE label = 'f02' AND table_name = 'gemm_a8w8_blockscale' ORDER BY key");
    let k3 = wh.sql("SELECT DISTINCT key FROM measurements WHERE label = 'f03' AND table_name = 'gemm_a8w8_blockscale' ORDER BY key");
    assert_eq!(k3, k2[..k3.len()]);
    // Derived columns are stored but never part of the identity key.
    let keys = wh.sql("SELECT DISTINCT key FROM measurements WHERE label = 'f07'");
    assert_eq!(keys.len(), 3);
    assert!(!keys[0]["key"].as_str().unwrap().contains("speedup"));
    // The to_string fallback of sample 04 is read too.
    let tables =
        wh.sql("SELECT DISTINCT table_name FROM measurements WHERE label = 'f04' ORDER BY 1");
    assert!(tables.len() >= 3, "{tables:?}");
    // checkAllclose verdicts of sample 06 attach to their variant.
    let fails = wh.count("SELECT count(*) FROM measurements WHERE label = 'f06' AND numerics = 'pass' AND variant = 'triton'");
    assert_eq!(fails, 2);
    // `torch_avg:` style [perf] lines and the checkAllclose verdict.
    let v = wh.sql("SELECT variant, numerics FROM measurements WHERE label = 'f09' AND line = 2 ORDER BY column_name");
    assert_eq!(
        v.iter()
            .map(|r| r["variant"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["B", "torch", ""]
    );
}

#[test]
fn invalid_inputs_fail_clearly_and_write_nothing() {
    let dir = sample("invalid");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.retain(|p| p.file_name().unwrap() != "README.md");
    files.sort();
    let mut messages = Vec::new();
    for f in &files {
        let wh = Wh::new();
        let out = wh.run(&["ingest", f.to_str().unwrap(), "--label", "bad"]);
        assert_eq!(code(&out), 2, "{}", f.display());
        let err = stderr(&out);
        let name = f.file_name().unwrap().to_str().unwrap();
        assert!(err.contains(name), "{err}");
        assert!(!wh.path().exists(), "a failed ingest created a warehouse");
        assert_eq!(wh.count("SELECT count(*) FROM runs"), 0);
        assert_eq!(wh.count("SELECT count(*) FROM measurements"), 0);
        messages.push(scrub(&err, &wh));
    }
    insta::assert_snapshot!("invalid_inputs", messages.join(""));
}

#[test]
fn a_bad_file_does_not_stop_the_good_ones() {
    let wh = Wh::new();
    let good = sample("h200-gemm/ab/perf/base/trial1.log");
    let bad = sample("invalid/wrong_cell_count.log");
    let out = wh.run(&[
        "ingest",
        good.to_str().unwrap(),
        bad.to_str().unwrap(),
        "--label",
        "x",
    ]);
    assert_eq!(code(&out), 2);
    assert!(
        stdout(&out).contains("1 run(s) added with label 'x', 0 already present, 1 failed"),
        "{}",
        stdout(&out)
    );
    assert!(
        stderr(&out)
            .contains("wrong_cell_count.log:5: row has 1 cells, the header at line 2 has 2"),
        "{}",
        stderr(&out)
    );
    assert_eq!(wh.count("SELECT count(*) FROM runs"), 1);
}

#[test]
fn forcing_a_format_that_does_not_fit_says_why() {
    let wh = Wh::new();
    let f = sample("h200-gemm/ab/perf/base/trial1.log");
    let out = wh.run(&["ingest", f.to_str().unwrap(), "--format", "ts-probe"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("no TS_KERNEL_METRIC record"),
        "{}",
        stderr(&out)
    );
    let out = wh.run(&["ingest", f.to_str().unwrap(), "--format", "csv"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("unknown format 'csv'"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn reingesting_adds_nothing_and_says_so() {
    let wh = Wh::new();
    let dir = sample("h200-gemm/ab/probe/base");
    wh.ingest(&dir, "base");
    let out = wh.ingest(&dir, "base");
    assert!(
        out.contains("0 run(s) added with label 'base', 5 already present"),
        "{out}"
    );
    assert!(out.contains("already in the warehouse"), "{out}");
    assert_eq!(wh.count("SELECT count(*) FROM runs"), 5);
    // The same files under another label are other runs.
    wh.ingest(&dir, "again");
    assert_eq!(wh.count("SELECT count(*) FROM runs"), 10);
}

#[test]
fn one_file_per_command_and_partition_then_compact() {
    let wh = Wh::new();
    wh.ingest(&sample("h200-gemm/history"), "hist");
    let parquet_files = |sub: &str| {
        std::fs::read_dir(wh.path().join(sub))
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .path()
                    .extension()
                    .is_some_and(|x| x == "parquet")
            })
            .count()
    };
    assert_eq!(parquet_files("measurements/label=hist"), 1);
    assert_eq!(parquet_files("runs/label=hist"), 1);
    assert_eq!(wh.count("SELECT count(*) FROM runs"), 120);
    for t in 1..=3 {
        wh.ingest(
            &sample(&format!("h200-gemm/ab/aiter/base/trial{t}.log")),
            "hist",
        );
    }
    assert_eq!(parquet_files("measurements/label=hist"), 4);
    // A file no log lists (an interrupted write) is invisible, and stays until vacuum.
    std::fs::copy(
        std::fs::read_dir(wh.path().join("measurements/label=hist"))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path(),
        wh.path()
            .join("measurements/label=hist/part-orphan.parquet"),
    )
    .unwrap();
    let before = wh.count("SELECT count(*) FROM measurements");
    let out = wh.ok(&["compact"]);
    assert!(
        out.contains("8 file(s) -> 2; 0 file(s) of interrupted commands (older than 600s) taken out of the tables; 12 replaced file(s) stay on disk until `perfdb vacuum`"),
        "{out}"
    );
    // The four ingests' summaries are replaced by one rebuilt from the merged file.
    assert!(out.ends_with("; 1 summary file(s) written\n"), "{out}");
    assert_eq!(parquet_files("summaries/label=hist"), 5);
    // The replaced files stay on disk (a reader may hold an older snapshot), unlisted.
    assert_eq!(parquet_files("measurements/label=hist"), 6);
    assert_eq!(wh.count("SELECT count(*) FROM measurements"), before);
    assert_eq!(wh.count("SELECT count(*) FROM runs"), 123);
    assert_eq!(wh.count("SELECT max(trial) FROM runs"), 123);
    // Compacting again changes nothing.
    let out = wh.ok(&["compact"]);
    assert!(out.contains("2 file(s) -> 2; 0 file(s)"), "{out}");
    // Vacuum deletes what no log lists once older than its retention: not yet...
    let out = wh.ok(&["vacuum"]);
    assert!(
        out.contains(": 0 file(s) no table lists deleted (0.0 MB); 13 younger than 168 h kept"),
        "{out}"
    );
    // Under an hour could delete an in-flight ingest's files: refused without --force.
    let out = wh.run(&["vacuum", "--retain", "0"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("--force"), "{}", stderr(&out));
    // ...and with no retention, all of it: the 12 replaced files and the orphan.
    let out = wh.ok(&["vacuum", "--retain", "0", "--force"]);
    assert!(out.contains(": 13 file(s) no table lists deleted"), "{out}");
    assert_eq!(parquet_files("measurements/label=hist"), 1);
    assert_eq!(parquet_files("summaries/label=hist"), 1);
    assert_eq!(parquet_files("runs/label=hist"), 1);
    assert_eq!(wh.count("SELECT count(*) FROM measurements"), before);
    let out = wh.run(&["vacuum", "--retain=-1"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("expected a number of hours"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn compact_file_rows_bounds_the_merged_files() {
    let wh = Wh::new();
    ingest_history(&wh, &[1, 2, 3, 4, 5, 6]);
    let per_commit = wh.count(
        "SELECT count(*) FROM measurements m JOIN runs r USING (run_id) WHERE r.\"commit\" = 'c01'",
    );
    let before = wh.count("SELECT count(*) FROM measurements");
    // Files under half the bound are merged: a commit's file (per_commit rows) is.
    let bound = (3 * per_commit - 1).to_string();
    let out = wh.ok(&["compact", "--grace", "0", "--file-rows", &bound]);
    assert!(out.contains("12 file(s) -> 4;"), "{out}");
    let c = perfdb_ingest::warehouse::Warehouse::new(wh.path())
        .committed()
        .unwrap();
    // Six ingests of a commit each, in files of fewer than three commits' rows: three
    // files of two, each with the ingest-time range of its runs.
    assert_eq!(c.measurements.len(), 3, "{:?}", c.measurements);
    for m in &c.measurements {
        let rows: usize = perfdb_ingest::warehouse::read_columns(&wh.path().join(m), &["run_id"])
            .unwrap()
            .iter()
            .map(|b| b.num_rows())
            .sum();
        assert_eq!(rows as i64, 2 * per_commit, "{m}");
        assert!(c.ingested.contains_key(m), "{m} has no range");
    }
    assert_eq!(wh.count("SELECT count(*) FROM measurements"), before);
    // Files of half the bound or more stay as they are.
    let out = wh.ok(&["compact", "--grace", "0", "--file-rows", &bound]);
    assert!(out.contains("4 file(s) -> 4;"), "{out}");
    let again = perfdb_ingest::warehouse::Warehouse::new(wh.path())
        .committed()
        .unwrap();
    assert_eq!(again.measurements, c.measurements);
    let out = wh.run(&["compact", "--file-rows", "0"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
}

#[test]
fn readers_survive_compaction() {
    // A reader loop (compare, sql) while ingests and compactions run: no reader ever
    // fails on a file the manifest it read listed. (Compactions keep replaced files for
    // their grace period; with `--grace 0` a reader slower than two compactions, which a
    // loaded CI machine produces, would lose its files: the grace is what protects it.)
    let wh = Wh::new();
    for t in 1..=3 {
        for side in ["base", "head"] {
            let f = sample(&format!("h200-gemm/ab/perf/{side}/trial{t}.log"));
            wh.ok(&["ingest", f.to_str().unwrap(), "--label", side]);
        }
    }
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let readers: Vec<_> = (0..2)
        .map(|i| {
            let (stop, path) = (stop.clone(), wh.path());
            std::thread::spawn(move || {
                let mut failures = Vec::new();
                let mut reads = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let args: &[&str] = if i == 0 {
                        &[
                            "compare",
                            "base",
                            "head",
                            "--format",
                            "json",
                            "--allow-missing",
                        ]
                    } else {
                        &["sql", "SELECT count(*) FROM measurements"]
                    };
                    let out = std::process::Command::new(env!("CARGO_BIN_EXE_perfdb"))
                        .env("PERFDB_WAREHOUSE", &path)
                        .args(args)
                        .output()
                        .unwrap();
                    reads += 1;
                    // compare exits 0/1/3 with a verdict; 2 is an error.
                    if out.status.code() == Some(2) {
                        failures.push(String::from_utf8_lossy(&out.stderr).into_owned());
                    }
                }
                (reads, failures)
            })
        })
        .collect();
    for t in 4..=5 {
        for side in ["base", "head"] {
            let f = sample(&format!("h200-gemm/ab/perf/{side}/trial{t}.log"));
            wh.ok(&["ingest", f.to_str().unwrap(), "--label", side]);
            wh.ok(&["compact"]);
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for r in readers {
        let (reads, failures) = r.join().unwrap();
        assert!(reads > 0);
        assert!(
            failures.is_empty(),
            "{} of {reads} reads failed: {}",
            failures.len(),
            failures[0]
        );
    }
    assert_consistent(&wh);
    assert_eq!(wh.count("SELECT count(*) FROM runs"), 10);
}

#[test]
fn concurrent_ingests_lose_nothing() {
    let wh = Wh::new();
    let mut children = Vec::new();
    for side in ["base", "head"] {
        for format in ["aiter", "perf", "probe"] {
            let dir = sample(&format!("h200-gemm/ab/{format}/{side}"));
            children.push(
                wh.cmd()
                    .args(["ingest", dir.to_str().unwrap(), "--label", "same"])
                    .spawn()
                    .unwrap(),
            );
        }
    }
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    assert_eq!(wh.count("SELECT count(*) FROM runs"), 30);
    assert_eq!(wh.count("SELECT count(DISTINCT trial) FROM runs"), 30);
}

#[test]
fn runs_lists_and_filters() {
    let wh = Wh::new();
    let f = sample("h200-gemm/ab/perf/base");
    wh.ok(&[
        "ingest",
        f.to_str().unwrap(),
        "--label",
        "base",
        "--commit",
        "abc1234",
        "--tag",
        "gpu=0",
    ]);
    let g = sample("h200-gemm/ab/perf/head");
    wh.ok(&[
        "ingest",
        g.to_str().unwrap(),
        "--label",
        "head",
        "--commit",
        "def5678",
    ]);
    let csv = wh.ok(&["runs", "--commit", "abc", "--format", "csv"]);
    assert_eq!(csv.lines().count(), 6, "{csv}");
    let tagged = wh.ok(&["runs", "--tag", "gpu=0", "--format", "json"]);
    assert_eq!(tagged.lines().count(), 5);
    let table = wh.ok(&["runs", "--label", "head"]);
    assert!(table.contains("(5 rows)"), "{table}");
    let none = wh.ok(&["runs", "--label", "nope"]);
    assert!(none.contains("(0 rows)"), "{none}");
    let bad = wh.run(&["sql", "SELECT nope FROM runs"]);
    assert_eq!(code(&bad), 2);
    assert!(stderr(&bad).contains("nope"), "{}", stderr(&bad));
    let counts: HashMap<String, i64> = wh
        .sql("SELECT label, count(*) AS n FROM measurements GROUP BY label")
        .iter()
        .map(|r| {
            (
                r["label"].as_str().unwrap().to_string(),
                r["n"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(counts["base"], counts["head"]);
}

#[test]
fn sql_is_read_only_unless_write() {
    let wh = Wh::new();
    wh.ingest(&sample("h200-gemm/ab/aiter/base"), "base");
    let out = wh.path().join("out.csv");
    let copy = format!(
        "COPY (SELECT count(*) AS n FROM measurements) TO '{}'",
        out.display()
    );
    for (q, says) in [
        (copy.as_str(), "Permission Error"),
        (
            "SELECT * FROM read_text('/etc/hostname')",
            "Permission Error",
        ),
        ("ATTACH '/tmp/perfdb-attach.db'", "statement 1 is ATTACH"),
        ("SELECT 1; SET threads = 1", "statement 2 is SET"),
        ("INSTALL httpfs", "is LOAD/INSTALL"),
    ] {
        let r = wh.run(&["sql", q]);
        assert_eq!(code(&r), 2, "{q}");
        let e = stderr(&r);
        assert!(
            e.contains("read-only") && e.contains(says) && e.contains("--write"),
            "{q}: {e}"
        );
    }
    assert!(!out.exists());
    assert!(!Path::new("/tmp/perfdb-attach.db").exists());
    // Queries of every read-only kind run.
    for q in [
        "DESCRIBE runs",
        "SUMMARIZE SELECT value FROM measurements",
        "EXPLAIN SELECT 1",
        "WITH a AS (SELECT 1 AS x) FROM a",
    ] {
        wh.ok(&["sql", q]);
    }
    // --write runs it, under the writer lock, and the warehouse is unchanged.
    let before = wh.count("SELECT count(*) FROM measurements");
    wh.ok(&["sql", "--write", &copy]);
    let written = std::fs::read_to_string(&out).unwrap();
    assert_eq!(written.trim(), format!("n\n{before}"));
    assert_eq!(wh.count("SELECT count(*) FROM measurements"), before);
}

#[test]
fn serve_warns_when_it_listens_beyond_loopback() {
    let wh = Wh::new();
    let mut child = wh
        .cmd()
        .args(["serve", "--bind", "0.0.0.0:0"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = child.stderr.take().unwrap();
    let mut text = String::new();
    let mut buf = [0u8; 4096];
    while !text.contains("warning") || !text.contains('\n') {
        let n = std::io::Read::read(&mut err, &mut buf).unwrap();
        if n == 0 {
            break;
        }
        text.push_str(&String::from_utf8_lossy(&buf[..n]));
        if text.matches('\n').count() >= 2 {
            break;
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        text.contains("warning: listening on 0.0.0.0:") && text.contains("beyond this machine"),
        "{text}"
    );
}

#[test]
fn help_texts() {
    let wh = Wh::new();
    let help = |args: &[&str]| {
        let out = wh
            .cmd()
            .env_remove("PERFDB_WAREHOUSE")
            // clap wraps help to $COLUMNS when output is not a terminal.
            .env("COLUMNS", "100")
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success());
        stdout(&out)
    };
    insta::assert_snapshot!("help", help(&["--help"]));
    insta::assert_snapshot!("help_ingest", help(&["ingest", "--help"]));
    insta::assert_snapshot!("help_compare", help(&["compare", "--help"]));
    insta::assert_snapshot!("help_export_site", help(&["export-site", "--help"]));
    insta::assert_snapshot!("help_export", help(&["export", "--help"]));
    insta::assert_snapshot!("help_run", help(&["run", "--help"]));
    insta::assert_snapshot!("help_ab", help(&["ab", "--help"]));
    insta::assert_snapshot!("help_noise", help(&["noise", "--help"]));
    insta::assert_snapshot!("formats", help(&["formats"]));
}

/// The README's format table holds, for every format, the line `perfdb formats` prints.
#[test]
fn the_readme_lists_every_format_as_perfdb_formats_does() {
    let wh = Wh::new();
    let out = wh.run(&["formats"]);
    assert!(out.status.success());
    let readme =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
            .unwrap();
    let listed: Vec<String> = stdout(&out)
        .lines()
        .take_while(|l| !l.is_empty())
        .map(|l| {
            let (name, summary) = l.split_once("  ").unwrap();
            format!("| `{name}` | {} |", summary.trim())
        })
        .collect();
    assert_eq!(listed.len(), perfdb_ingest::formats::Format::ALL.len());
    for row in &listed {
        assert!(readme.contains(row.as_str()), "README lacks the row\n{row}");
    }
}

#[test]
fn export_site_writes_pages_and_never_over_a_folder_of_other_files() {
    let wh = Wh::new();
    wh.ingest(&sample("h200-gemm/ab/aiter/base"), "base");
    wh.ingest(&sample("h200-gemm/ab/aiter/head"), "head");
    let site = wh.dir.path().join("site");
    let out = wh.ok(&["export-site", site.to_str().unwrap()]);
    assert!(out.starts_with("exported "), "{out}");
    let index = std::fs::read_to_string(site.join("index.html")).unwrap();
    assert!(index.contains("href=\"contents.html\""), "{index}");
    assert!(!index.contains("href=\"/"), "absolute links left: {index}");
    // Again into its own export: the pages are replaced.
    wh.ok(&["export-site", site.to_str().unwrap()]);
    // Never into a folder of other files.
    let other = wh.dir.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("notes.txt"), "mine").unwrap();
    let out = wh.run(&["export-site", other.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("not empty and not a perfdb export"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_dir(&other).unwrap().count(), 1);
}

/// Every committed run has exactly its measurements, and no run appears twice.
fn assert_consistent(wh: &Wh) {
    let broken = wh.count(
        "SELECT count(*) FROM runs r WHERE n_measurements <> (SELECT count(*) FROM measurements m WHERE m.run_id = r.run_id)",
    );
    assert_eq!(
        broken, 0,
        "a run is visible without all of its measurements"
    );
    let orphans =
        wh.count("SELECT count(*) FROM measurements WHERE run_id NOT IN (SELECT run_id FROM runs)");
    assert_eq!(orphans, 0, "measurements are visible without their run");
    assert_eq!(
        wh.count("SELECT count(*) - count(DISTINCT run_id) FROM runs"),
        0
    );
}

#[test]
fn killing_ingest_at_any_moment_leaves_a_consistent_warehouse() {
    let wh = Wh::new();
    let dir = sample("h200-gemm/history");
    for (i, delay_ms) in [0u64, 2, 5, 10, 20, 40, 80, 160].into_iter().enumerate() {
        let label = format!("k{i}");
        let mut child = wh
            .cmd()
            .args(["ingest", dir.to_str().unwrap(), "--label", &label])
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let _ = child.kill();
        let _ = child.wait();
        assert_consistent(&wh);
        // A run is either all there (120 files in one commit) or not at all.
        let n = wh.count(&format!(
            "SELECT count(*) FROM runs WHERE label = '{label}'"
        ));
        assert!(n == 0 || n == 120, "label {label}: {n} runs");
    }
    wh.ok(&["compact"]);
    assert_consistent(&wh);
    // Ingesting again completes what a kill interrupted, without duplicates.
    for i in 0..8 {
        wh.ingest(&dir, &format!("k{i}"));
    }
    assert_eq!(wh.count("SELECT count(*) FROM runs"), 8 * 120);
    assert_consistent(&wh);
}

#[test]
fn sql_prints_nested_values_as_csv_text() {
    let wh = Wh::new();
    wh.ingest(&sample("h200-gemm/ab/perf/base/trial1.log"), "x");
    let csv = wh.ok(&["sql", "SELECT variant, list(value ORDER BY line) AS v FROM measurements WHERE metric = 'latency' AND line <= 2 GROUP BY variant ORDER BY variant", "--format", "csv"]);
    assert_eq!(
        csv,
        "variant,v\ntorch,\"[18.46, 18.56]\"\ntriton,\"[23.2, 21.44]\"\n"
    );
}

#[test]
fn sql_prints_timestamps_in_every_format() {
    // `TIMESTAMPTZ` columns (`commit_time`, `ingested_at`) used to fail every format
    // ("Invalid timezone \"UTC\"").
    let wh = Wh::new();
    wh.ok(&[
        "ingest",
        sample("h200-gemm/ab/perf/base/trial1.log")
            .to_str()
            .unwrap(),
        "--label",
        "x",
        "--commit",
        "abc",
        "--commit-time",
        "2026-07-01T08:30:00Z",
    ]);
    let q = "SELECT \"commit\", commit_time FROM runs";
    assert_eq!(
        wh.ok(&["sql", q, "--format", "csv"]),
        "commit,commit_time\nabc,2026-07-01T08:30:00Z\n"
    );
    assert_eq!(
        wh.ok(&["sql", q, "--format", "json"]),
        "{\"commit\":\"abc\",\"commit_time\":\"2026-07-01T08:30:00Z\"}\n"
    );
    let table = wh.ok(&["sql", q]);
    assert!(
        table.contains("| abc    | 2026-07-01T08:30:00Z |"),
        "{table}"
    );
    // And the time of ingest, whatever it is, prints too.
    let now = wh.ok(&["sql", "SELECT ingested_at FROM runs", "--format", "csv"]);
    assert!(
        now.starts_with("ingested_at\n20") && now.trim_end().ends_with('Z'),
        "{now}"
    );
}

#[test]
fn stdin_is_one_run_named_by_name() {
    let wh = Wh::new();
    let text = std::fs::read(sample("h200-gemm/ab/perf/base/trial1.log")).unwrap();
    let feed = |args: &[&str]| {
        use std::io::Write;
        let mut child = wh
            .cmd()
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(&text).unwrap();
        child.wait_with_output().unwrap()
    };
    let out = feed(&["ingest", "-", "--label", "base"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("needs --name NAME"),
        "{}",
        stderr(&out)
    );
    let out = feed(&["ingest", "-", "--name", "t1.log", "--label", "base"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // The same output under the same name is recognised; under another name it is
    // another trial (two processes can print the same text).
    let out = feed(&["ingest", "-", "--name", "t1.log", "--label", "base"]);
    assert!(
        stdout(&out).contains("1 already present"),
        "{}",
        stdout(&out)
    );
    feed(&["ingest", "-", "--name", "t2.log", "--label", "base"]);
    let rows = wh.sql("SELECT source_path, trial FROM runs ORDER BY trial");
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["source_path"], "t1.log");
}

#[test]
fn skipped_blocks_are_warnings_with_file_and_line() {
    let wh = Wh::new();
    let f = sample("derived/stray-pipe.log");
    let out = wh.run(&["ingest", f.to_str().unwrap(), "--label", "x"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let err = scrub(&stderr(&out), &wh);
    for line in [2, 4, 11, 17] {
        assert!(
            err.contains(&format!(
                "warning: [REPO]/sample-data/derived/stray-pipe.log:{line}: "
            )),
            "{err}"
        );
    }
    assert_eq!(wh.count("SELECT count(*) FROM measurements"), 4);
}

#[test]
fn a_probe_that_failed_before_measuring_is_on_record() {
    let wh = Wh::new();
    let f = sample("derived/probe-failed-early.log");
    let out = wh.run(&["ingest", f.to_str().unwrap(), "--label", "head"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("benchmark_cli_rc=1"),
        "{}",
        stderr(&out)
    );
    let runs = wh.sql("SELECT verdict, verdict_detail, n_measurements FROM runs");
    assert_eq!(runs[0]["verdict"], "fail");
    assert_eq!(runs[0]["verdict_detail"], "benchmark_cli_rc=1");
    assert_eq!(runs[0]["n_measurements"], 0);
}

/// `perfdb run -- CMD`: the command's output reaches the terminal unchanged, is ingested
/// as one run like the same file would be, and the run records the command line, exit
/// code and duration.
#[test]
fn run_streams_and_ingests_a_benchmark_command() {
    let wh = Wh::new();
    let log = sample("h200-gemm/ab/aiter/base/trial1.log");
    let text = std::fs::read_to_string(&log).unwrap();
    let script = format!("cat '{}'; echo 'a note on stderr' >&2", log.display());
    let out = wh.run(&["run", "--label", "ci", "--", "sh", "-c", &script]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with(&text),
        "output not passed through unchanged"
    );
    assert!(stderr(&out).contains("a note on stderr"));
    assert!(
        stdout(&out).contains(": aiter-table run "),
        "{}",
        stdout(&out)
    );
    let runs = wh.sql("SELECT n_measurements, verdict, tags FROM runs");
    assert_eq!(runs.len(), 1);
    let tags = tags_of(&runs[0]);
    let command = tags["command"].as_str();
    assert!(command.starts_with("sh -c 'cat '\\''"), "{command}");
    assert!(command.ends_with("a note on stderr'\\'' >&2'"), "{command}");
    assert_eq!(tags["exit_code"], "0");
    assert!(tags["duration_s"].parse::<f64>().unwrap() >= 0.0);
    assert!(runs[0]["verdict"].is_null());
    // JSON on stdout, chatter on stderr: --stdout-only reads the JSON alone.
    let json = sample("formats/20_aorta_tokenspeed_bench_serve_export_fixture.json");
    let script = format!("echo 'warming up' >&2; cat '{}'", json.display());
    let out = wh.run(&["run", "--label", "serve", "--", "sh", "-c", &script]);
    assert_eq!(code(&out), 2, "stderr mixed into the JSON must not parse");
    let out = wh.run(&[
        "run",
        "--stdout-only",
        "--label",
        "serve",
        "--",
        "sh",
        "-c",
        &script,
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stderr(&out).contains("warming up"));
    assert!(stdout(&out).contains(": serving run "), "{}", stdout(&out));
    // The same values as ingesting the file.
    let other = Wh::new();
    other.ingest(&log, "file");
    assert_eq!(
        runs[0]["n_measurements"],
        other.sql("SELECT n_measurements FROM runs")[0]["n_measurements"]
    );
}

/// A command that exits non-zero is a failed run — with its values when it printed
/// some, with none when it printed nothing readable — and `run` exits 1.
#[test]
fn a_failing_command_is_stored_as_a_failed_run() {
    let wh = Wh::new();
    let log = sample("h200-gemm/ab/perf/base/trial1.log");
    let script = format!("cat '{}'; exit 3", log.display());
    let out = wh.run(&["run", "--label", "ci", "--", "sh", "-c", &script]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(stderr(&out).contains("command exited with code 3; stored as a failed run"));
    let out = wh.run(&[
        "run",
        "--label",
        "ci",
        "--",
        "sh",
        "-c",
        "echo segfault; exit 139",
    ]);
    assert_eq!(code(&out), 1);
    assert!(stderr(&out).contains("output not read: no recognizable benchmark data"));
    let runs = wh.sql(
        "SELECT format, verdict, verdict_detail, n_measurements, tags FROM runs ORDER BY trial",
    );
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["format"], "perf-lines");
    assert_eq!(runs[0]["verdict"], "fail");
    assert_eq!(runs[0]["verdict_detail"], "command exited with code 3");
    assert!(runs[0]["n_measurements"].as_i64().unwrap() > 0);
    assert_eq!(
        (&runs[1]["format"], &runs[1]["n_measurements"]),
        (&Value::from("none"), &Value::from(0))
    );
    assert_eq!(tags_of(&runs[1])["exit_code"], "139");
    // A command that succeeded but printed nothing perfdb reads: an input error, nothing
    // written.
    let empty = Wh::new();
    let out = empty.run(&["run", "--", "echo", "hello"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("no recognizable benchmark data"));
    assert!(!empty.path().exists());
}

/// A run's tags (stored as a JSON object) as a map.
fn tags_of(run: &Value) -> HashMap<String, String> {
    let text = run["tags"].as_str().expect("tags as JSON text");
    serde_json::from_str(text).unwrap_or_else(|e| panic!("tags {text}: {e}"))
}

/// pytest-benchmark's `commit_info` and `machine_info` fill commit and machine when the
/// command line does not give them, and yield to it when it does.
#[test]
fn pytest_benchmark_fills_commit_and_machine_unless_given() {
    let rel = "formats/26_pytest_benchmark_json_cpu_generated/base/trial1.json";
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(sample(rel)).unwrap()).unwrap();
    let wh = Wh::new();
    wh.ingest(&sample(rel), "a");
    let run = &wh.sql("SELECT \"commit\", tags FROM runs")[0];
    assert_eq!(run["commit"], doc["commit_info"]["id"]);
    let tags = tags_of(run);
    assert_eq!(
        tags["machine"],
        doc["machine_info"]["cpu"]["brand_raw"].as_str().unwrap()
    );
    assert_eq!(tags["host"], doc["machine_info"]["node"].as_str().unwrap());
    assert_eq!(tags["branch"], "master");
    let wh = Wh::new();
    let path = sample(rel);
    wh.ok(&[
        "ingest",
        path.to_str().unwrap(),
        "--commit",
        "abc123",
        "--machine",
        "ci-cpu",
    ]);
    let run = &wh.sql("SELECT \"commit\", tags FROM runs")[0];
    assert_eq!(run["commit"], "abc123");
    // --unit is for the one format that prints no unit; elsewhere it is said to be ignored.
    let other = Wh::new();
    let out = other.run(&["ingest", path.to_str().unwrap(), "--unit", "ms"]);
    assert_eq!(code(&out), 0);
    assert!(
        stderr(&out).contains("--unit ms ignored: pytest-benchmark prints its own units"),
        "{}",
        stderr(&out)
    );
    assert_eq!(tags_of(run)["machine"], "ci-cpu");
}

#[test]
fn vacuum_beside_ingests_in_flight_breaks_none_of_them() {
    let wh = Wh::new();
    let dir = sample("h200-gemm/history");
    wh.ingest(&dir, "seed");
    let ingests: Vec<_> = (0..3)
        .map(|i| {
            wh.cmd()
                .args(["ingest", dir.to_str().unwrap(), "--label", &format!("v{i}")])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    // The shortest retention allowed without --force, over and over meanwhile.
    let mut vacuums = 0;
    let mut ingests = ingests;
    while ingests.iter_mut().any(|c| c.try_wait().unwrap().is_none()) {
        let out = wh.run(&["vacuum", "--retain", "1"]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        vacuums += 1;
    }
    assert!(vacuums > 0);
    for c in ingests {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    assert_consistent(&wh);
    for i in 0..3 {
        assert_eq!(
            wh.count(&format!("SELECT count(*) FROM runs WHERE label = 'v{i}'")),
            120
        );
    }
    // Every file the logs list is there: a later command reads them all.
    wh.ok(&["compact"]);
    assert_consistent(&wh);
}
