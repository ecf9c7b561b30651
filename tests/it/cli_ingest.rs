//! `perfdb ingest` end to end on the real sample data: every value round-trips, bad
//! inputs are refused and write nothing, provenance is kept.

use crate::common::*;
use serde_json::Value;

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
fn a_warehouse_path_that_is_a_file_is_refused_saying_so() {
    let wh = Wh::new();
    std::fs::write(wh.path(), "not a warehouse\n").unwrap();
    let log = sample("formats/01_aiter_perf_lines_real_log.txt");
    for args in [
        vec!["ingest", log.to_str().unwrap(), "--label", "x"],
        vec!["runs"],
    ] {
        let out = wh.run(&args);
        assert_eq!(code(&out), 2, "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("the warehouse must be a directory, and this is a file"),
            "{args:?}: {}",
            stderr(&out)
        );
        assert!(!stderr(&out).contains("os error 17"), "{}", stderr(&out));
    }
    assert_eq!(
        std::fs::read_to_string(wh.path()).unwrap(),
        "not a warehouse\n"
    );
}

#[test]
fn what_a_file_says_reaches_stderr_with_its_control_characters_visible() {
    let wh = Wh::new();
    let f = wh.dir.path().join("evil.log");
    std::fs::write(
        &f,
        "[perf] dim: (64,) dtype: bf16, torch avg: 5.00 us, ck avg: 1\x1b]0;owned\x07 us\n",
    )
    .unwrap();
    let out = wh.run(&["ingest", f.to_str().unwrap(), "--label", "x"]);
    assert_eq!(code(&out), 2);
    let err = stderr(&out);
    assert!(!err.contains('\x1b') && !err.contains('\x07'), "{err:?}");
    assert!(err.contains("1\\u{1b}]0;owned\\u{7}"), "{err}");
}
