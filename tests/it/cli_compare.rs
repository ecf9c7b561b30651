//! `perfdb compare` end to end on the real H200 data, and the validate-kernel-pr-compatible output (`--format vkpr`).

use crate::common::*;
use serde_json::Value;
use std::collections::BTreeSet;

/// The three GEMM shapes whose Triton config changed in head, as (M, N, K).
const CHANGED: [(&str, &str, &str); 3] = [
    ("512", "4096", "4096"),
    ("4096", "4096", "4096"),
    ("256", "8192", "8192"),
];

fn ingest_ab(wh: &Wh, format: &str) {
    for side in ["base", "head"] {
        wh.ingest(&sample(&format!("h200-gemm/ab/{format}/{side}")), side);
    }
}

/// `perfdb compare base head --control torch --format FORMAT`.
fn compare_base_head(wh: &Wh, format: &str) -> std::process::Output {
    wh.run(&[
        "compare",
        "base",
        "head",
        "--control",
        "torch",
        "--format",
        format,
    ])
}

/// The codes of a comparison's reasons (`reasons[].code`), in order.
fn codes(v: &Value) -> Vec<String> {
    v["reasons"]
        .as_array()
        .expect("a reasons list")
        .iter()
        .map(|r| r["code"].as_str().expect("a code").to_string())
        .collect()
}

/// The rows of a JSON report.
fn rows(v: &Value) -> &Vec<Value> {
    v["rows"].as_array().expect("rows array")
}

/// (M, N, K) of a row's key, whatever the format spells it as.
fn mnk(key: &Value) -> (String, String, String) {
    let k = key.as_object().unwrap();
    if let Some(dim) = k.get("dim").and_then(Value::as_str) {
        let p: Vec<String> = dim
            .trim_matches(|c| c == '(' || c == ')')
            .split(", ")
            .map(String::from)
            .collect();
        return (
            p[0].clone(),
            p.get(1).cloned().unwrap_or_default(),
            p.get(2).cloned().unwrap_or_default(),
        );
    }
    let g = |n: &str| k.get(n).and_then(Value::as_str).unwrap_or("").to_string();
    (g("M"), g("N"), g("K"))
}

#[test]
fn h200_ab_flags_exactly_the_three_changed_triton_rows_in_every_format() {
    for format in ["aiter", "perf", "probe"] {
        let wh = Wh::new();
        ingest_ab(&wh, format);
        let (code, v) = compare_json(&wh, &["base", "head", "--control", "torch"]);
        assert_eq!(code, 1, "{format}: {}", v["reason"]);
        assert_eq!(v["verdict"], "regression");
        let regressions: Vec<&Value> = v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["verdict"] == "regression" && r["control"] == false)
            .collect();
        let shapes: BTreeSet<(String, String, String)> =
            regressions.iter().map(|r| mnk(&r["key"])).collect();
        let want: BTreeSet<(String, String, String)> = CHANGED
            .iter()
            .map(|(m, n, k)| (m.to_string(), n.to_string(), k.to_string()))
            .collect();
        assert_eq!(shapes, want, "{format}");
        for r in &regressions {
            assert!(
                r["variant"].as_str().unwrap().starts_with("triton"),
                "{format}: {r}"
            );
        }
        // The control passes on every metric.
        for m in v["control"]["metrics"].as_array().unwrap() {
            assert_eq!(m["passed"], true, "{format}: {m}");
        }
        assert!(v["summary"]["geomean_ratio"].as_f64().unwrap() > 1.0);
    }
}

#[test]
fn comparing_unchanged_code_exits_zero() {
    let wh = Wh::new();
    ingest_ab(&wh, "aiter");
    // Two sets of trials of unchanged code: commits 1 and 2 of the history.
    for c in ["c01", "c02", "c05"] {
        for t in 1..=3 {
            wh.ingest(
                &sample(&format!("h200-gemm/history/{c}/trial{t}.aiter.log")),
                c,
            );
        }
    }
    let (code, v) = compare_json(&wh, &["c01", "c02", "--control", "torch"]);
    assert_eq!(code, 0, "{}", serde_json::to_string_pretty(&v).unwrap());
    let (code, _) = compare_json(&wh, &["c02", "c05", "--control", "torch"]);
    assert_eq!(code, 0);
}

#[test]
fn two_trials_a_side_is_insufficient_not_no_change() {
    let wh = Wh::new();
    for side in ["base", "head"] {
        for t in 1..=2 {
            wh.ingest(
                &sample(&format!("h200-gemm/ab/perf/{side}/trial{t}.log")),
                side,
            );
        }
    }
    let (code, v) = compare_json(&wh, &["base", "head", "--control", "torch"]);
    assert_eq!(code, 3);
    assert_eq!(v["verdict"], "inconclusive");
    let rows = v["rows"].as_array().unwrap();
    assert!(rows.iter().all(|r| r["verdict"] == "insufficient"));
    assert!(rows[0]["reason"]
        .as_str()
        .unwrap()
        .contains("needs at least 3"));
    // The U test says how many trials it would need.
    let (code, v) = compare_json(&wh, &["base", "head", "--test", "mann-whitney"]);
    assert_eq!(code, 3);
    assert!(
        v["rows"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("run at least 4 a side"),
        "{}",
        v["rows"][0]["reason"]
    );
    let out = wh.run(&["compare", "base", "head"]);
    assert!(!stdout(&out).contains("no regression"), "{}", stdout(&out));
}

#[test]
fn unknown_sides_and_bad_options_are_usage_errors() {
    let wh = Wh::new();
    ingest_ab(&wh, "perf");
    let out = wh.run(&["compare", "base", "nope"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("no runs match 'nope'"),
        "{}",
        stderr(&out)
    );
    let out = wh.run(&["compare", "base", "head", "--threshold", "5"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("--threshold must be a fraction"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_moving_control_makes_the_comparison_unreliable() {
    let wh = Wh::new();
    ingest_ab(&wh, "perf");
    // Pretend the triton kernel is the control: it moved up to 3x, so gating fails.
    let (code, v) = compare_json(&wh, &["base", "head", "--control", "triton"]);
    assert_eq!(code, 3, "{}", v["reason"]);
    assert_eq!(v["verdict"], "unreliable");
    assert!(rows(&v).iter().any(|r| r["verdict"] == "unreliable"));
}

#[test]
fn config_overrides_widen_a_family() {
    let wh = Wh::new();
    ingest_ab(&wh, "perf");
    std::fs::write(
        wh.dir.path().join("perfdb.toml"),
        "[[compare.override]]\nvariant = \"triton\"\nthreshold = 5.0\n",
    )
    .unwrap();
    // A 500% band swallows the 3x slowdown; the file is found in the working directory.
    let out = compare_base_head(&wh, "json");
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(code(&out), 0, "{}", v["reason"]);
    assert!(rows(&v).iter().any(|r| r["verdict"] == "within_threshold"));
}

#[test]
fn json_report_schema() {
    let wh = Wh::new();
    ingest_ab(&wh, "probe");
    let (_, v) = compare_json(&wh, &["base", "head", "--control", "torch"]);
    for k in ["verdict", "control", "summary", "rows"] {
        assert!(v.get(k).is_some(), "missing {k}");
    }
    assert_eq!(v["control"]["tolerance"], 0.1);
    assert!(v["summary"]["ci"].is_array());
    let r = &v["rows"][0];
    for k in [
        "table",
        "variant",
        "key",
        "metric",
        "unit",
        "direction",
        "base",
        "head",
        "ratio",
        "p",
        "q",
        "verdict",
    ] {
        assert!(r.get(k).is_some(), "row missing {k}");
    }
    for k in ["n", "best", "median"] {
        assert!(r["base"].get(k).is_some(), "side missing {k}");
    }
    assert!(r["key"].is_object());
    // tflops=None on the add kernels: not measured, not invalid.
    assert!(v["not_measured"].as_u64().unwrap() >= 6);
}

#[test]
fn markdown_report_for_a_pull_request() {
    let wh = Wh::new();
    ingest_ab(&wh, "aiter");
    let out = compare_base_head(&wh, "markdown");
    assert_eq!(code(&out), 1);
    insta::assert_snapshot!("markdown_h200_aiter", scrub(&stdout(&out), &wh));
}

#[test]
fn terminal_report() {
    let wh = Wh::new();
    ingest_ab(&wh, "perf");
    let out = wh.run(&["compare", "base", "head", "--control", "torch"]);
    assert_eq!(code(&out), 1);
    insta::assert_snapshot!("table_h200_perf", scrub(&stdout(&out), &wh));
}

/// perfdb's `--format vkpr` on two sample logs, and validate-kernel-pr's transcribed output.
fn seed_and_perfdb(base: &str, head: &str, seed_output: &str) -> (Value, Value) {
    let wh = Wh::new();
    wh.ingest(&sample(&format!("formats/{base}")), "base");
    wh.ingest(&sample(&format!("formats/{head}")), "head");
    let out = wh.run(&["compare", "base", "head", "--format", "vkpr"]);
    let got: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let text = std::fs::read_to_string(sample(&format!("formats/{seed_output}"))).unwrap();
    (got, serde_json::from_str(&text).unwrap())
}

#[test]
fn seed_perf_stage_fields_agree_with_sample_07() {
    let (got, seed) = seed_and_perfdb(
        "07_vkpr_test_fixture_rowkey_base.log",
        "07_vkpr_test_fixture_rowkey_head.log",
        "07_vkpr_compare_output_rowkey_transcribed.json",
    );
    for k in [
        "base_rows",
        "head_rows",
        "base_runs",
        "head_runs",
        "matched_rows",
        "threshold",
        "min_rows",
        "worst_column",
        "median_ratio",
        "status",
        "regressed_rows",
    ] {
        assert_eq!(got[k], seed[k], "{k}");
    }
    assert_eq!(got["columns"]["kernel us"], seed["columns"]["kernel us"]);
    // validate-kernel-pr needed its relaxed key; perfdb matched on the strict key.
    assert!(seed["row_key_basis"]
        .as_str()
        .unwrap()
        .starts_with("key columns excluding"));
    assert!(got["row_key_basis"]
        .as_str()
        .unwrap()
        .starts_with("all key columns"));
}

#[test]
fn seed_perf_stage_regression_of_sample_09() {
    let (got, seed) = seed_and_perfdb(
        "09_vkpr_perf_lines_base_repeat1_emulated.log",
        "09_vkpr_perf_lines_head_repeat1_emulated.log",
        "09_vkpr_compare_output_perf_lines_regression_transcribed.json",
    );
    // Only repeat 1 of validate-kernel-pr's 3 repeats is shipped, so the numbers differ; the
    // decision, the columns and the matching agree.
    for k in [
        "status",
        "worst_column",
        "matched_rows",
        "base_rows",
        "head_rows",
        "row_key_basis",
    ] {
        if k == "row_key_basis" {
            assert_eq!(seed[k], "all key columns");
            continue;
        }
        assert_eq!(got[k], seed[k], "{k}");
    }
    let cols: BTreeSet<&String> = got["columns"].as_object().unwrap().keys().collect();
    let seed_cols: BTreeSet<&String> = seed["columns"].as_object().unwrap().keys().collect();
    assert_eq!(cols, seed_cols);
    // Every row the seed lists as regressed is listed by perfdb too.
    let rows: BTreeSet<&str> = got["regressed_rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["row"].as_str().unwrap())
        .collect();
    for r in seed["regressed_rows"].as_array().unwrap() {
        assert!(rows.contains(r["row"].as_str().unwrap()), "{r}");
    }
}

#[test]
fn where_the_seed_says_ok_perfdb_finds_the_slow_rows() {
    let wh = Wh::new();
    ingest_ab(&wh, "aiter");
    let out = compare_base_head(&wh, "vkpr");
    let got: Value = serde_json::from_str(&stdout(&out)).unwrap();
    // validate-kernel-pr's rule: median speedup of the triton columns is ~1.0, above 0.95.
    let med = got["median_ratio"].as_f64().unwrap();
    assert!(med >= 0.95, "{med}");
    assert_eq!(got["status"], "regression");
    assert!(got["reason"]
        .as_str()
        .unwrap()
        .contains("the median hides them"));
    assert_eq!(got["perfdb_verdict"], "regression");
}

/// Write `n` trial logs of `[perf]` lines under `dir`; `check` is the checkAllclose verdict
/// of the second row.
fn perf_trials(dir: &std::path::Path, n: usize, b_us: f64, check: &str) {
    std::fs::create_dir_all(dir).unwrap();
    for t in 0..n {
        let jitter = 0.01 * t as f64;
        let text = format!(
            "[aiter] [perf] dim: (8, 1024)  dtype: torch.bfloat16, torch avg: {:.2} us, B avg: {:.2} us, uplift: 1.0%[checkAllclose atol=0.01 rtol=0.01 passed~]\n\
             [aiter] [perf] dim: (16, 1024) dtype: torch.bfloat16, torch avg: {:.2} us, B avg: {:.2} us, uplift: 1.0%[checkAllclose atol=0.01 rtol=0.01 {check}]\n",
            10.0 + jitter, b_us + jitter, 20.0 + jitter, 2.0 * b_us + jitter
        );
        std::fs::write(dir.join(format!("trial{t}.log")), text).unwrap();
    }
}

#[test]
fn a_numerics_failure_on_head_fails_whatever_the_speed() {
    let wh = Wh::new();
    let base = wh.dir.path().join("logs/base");
    let head = wh.dir.path().join("logs/head");
    perf_trials(&base, 3, 8.0, "passed~");
    // Head is as fast as base, but its check of the second row failed.
    perf_trials(&head, 3, 8.0, "failed!");
    wh.ingest(&base, "base");
    wh.ingest(&head, "head");
    let (code, v) = compare_json(&wh, &["base", "head", "--control", "torch"]);
    assert_eq!(code, 1, "{}", v["reason"]);
    assert!(
        codes(&v).contains(&"new_numerics_failure".to_string()),
        "{}",
        v["reasons"]
    );
    let failed: Vec<&Value> = rows(&v)
        .iter()
        .filter(|r| r["head_numerics"] == "fail")
        .collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0]["key"]["dim"], "(16, 1024)");
    assert_eq!(failed[0]["variant"], "B");
    let out = wh.run(&["compare", "base", "head", "--format", "markdown"]);
    assert!(stdout(&out).contains("NUMERICS FAIL"), "{}", stdout(&out));
}

#[test]
fn where_filters_rows_and_saved_comparisons_are_alerts() {
    let wh = Wh::new();
    ingest_ab(&wh, "aiter");
    // Only the add table: nothing changed there.
    let (code, v) = compare_json(
        &wh,
        &["base", "head", "--control", "torch", "--where", "table=add"],
    );
    assert_eq!(code, 0, "{}", v["reason"]);
    assert!(rows(&v).iter().all(|r| r["table"] == "add"));
    // A key cell: only M=512.
    let (code, v) = compare_json(&wh, &["base", "head", "--where", "M=512"]);
    assert_eq!(code, 1);
    assert!(rows(&v).iter().all(|r| r["key"]["M"] == "512"));
    let out = wh.run(&["compare", "base", "head", "--where", "nokey"]);
    assert_eq!(code_of(&out), 2);
    let out = wh.run(&["compare", "base", "head", "--control", "torch", "--save"]);
    assert_eq!(code_of(&out), 1);
    assert!(
        stderr(&out).contains("saved the comparison to"),
        "{}",
        stderr(&out)
    );
    let saved = std::fs::read_dir(wh.path().join("alerts")).unwrap().count();
    assert_eq!(saved, 1);
}

fn code_of(o: &std::process::Output) -> i32 {
    code(o)
}

#[test]
fn a_nonzero_err_cell_on_head_is_a_numerics_failure() {
    let wh = Wh::new();
    for (side, err) in [("base", "0"), ("head", "0.25")] {
        let dir = wh.dir.path().join(format!("tables/{side}"));
        std::fs::create_dir_all(&dir).unwrap();
        for t in 0..3 {
            let text = format!(
                "[aiter] gemm summary (markdown):\n\
                 |   M |   torch us |   triton us |   triton err |\n\
                 |----:|-----------:|------------:|-------------:|\n\
                 |   1 |      {:.2} |       {:.2} |            0 |\n\
                 |  16 |      {:.2} |       {:.2} | {err:>12} |\n",
                10.0 + 0.01 * t as f64,
                8.0 + 0.01 * t as f64,
                20.0 + 0.01 * t as f64,
                16.0 + 0.01 * t as f64
            );
            std::fs::write(dir.join(format!("trial{t}.log")), text).unwrap();
        }
        wh.ingest(&dir, side);
    }
    let (code, v) = compare_json(&wh, &["base", "head", "--control", "torch"]);
    assert_eq!(code, 1, "{}", v["reason"]);
    let failed: Vec<&Value> = rows(&v)
        .iter()
        .filter(|r| r["head_numerics"] == "fail")
        .collect();
    assert_eq!(failed.len(), 1, "{v}");
    assert_eq!(failed[0]["key"]["M"], "16");
    assert_eq!(failed[0]["variant"], "triton");
}

// ---- Rows identified right, so compare sees the same rows whatever the print.

/// Base = the real H200 base logs, head = the same logs printed differently
/// (`sample-data/derived/<variant>`): every row matched, none only on one side.
fn a_a(format: &str, variant: &str) -> (i32, Value) {
    let wh = Wh::new();
    wh.ingest(&sample(&format!("h200-gemm/ab/{format}/base")), "base");
    wh.ingest(&sample(&format!("derived/{variant}")), "head");
    compare_json(&wh, &["base", "head", "--control", "torch"])
}

#[test]
fn a_a_logs_printed_differently_compare_as_the_same_rows() {
    // 13 shapes x 2 variants x (us, TFLOPS or TB/s) in tables; us only in [perf] lines.
    for (format, variant, n_rows) in [
        ("aiter", "aa-reordered", 52),
        ("aiter", "aa-ms", 52),
        ("perf", "aa-ms-perf", 26),
        ("aiter", "aa-extra-column", 52),
    ] {
        let (code, v) = a_a(format, variant);
        assert_eq!(v["only_in_base"].as_array().unwrap().len(), 0, "{variant}");
        assert_eq!(v["only_in_head"].as_array().unwrap().len(), 0, "{variant}");
        assert_eq!(rows(&v).len(), n_rows, "{variant}");
        assert_eq!(code, 0, "{variant}: {}", v["reason"]);
        assert_eq!(v["verdict"], "ok", "{variant}");
    }
    // The extra column is named where the rows are matched.
    let (_, v) = a_a("aiter", "aa-extra-column");
    let warnings = v["warnings"].to_string();
    assert!(warnings.contains("host only on head"), "{warnings}");
}

#[test]
fn keys_read_in_the_order_the_log_printed_them() {
    let (_, v) = a_a("aiter", "aa-reordered");
    // Head's order (dtype, K, N, M) wins for display; the match is by map.
    let gemm = rows(&v)
        .iter()
        .find(|r| r["table"] == "gemm_a16w16")
        .unwrap();
    // (`key` is a JSON object, whose readers need not keep order: `key_text` keeps it.)
    let text = gemm["key_text"].as_str().unwrap();
    let names: Vec<&str> = text
        .split(' ')
        .map(|c| c.split('=').next().unwrap())
        .collect();
    assert_eq!(names, ["dtype", "K", "N", "M"], "{text}");
}

#[test]
fn bf16_and_fp8_probe_runs_are_never_one_row() {
    let wh = Wh::new();
    wh.ingest(&sample("h200-gemm/ab/probe/base"), "base");
    wh.ingest(&sample("derived/probe-fp8"), "head");
    let (code, v) = compare_json(&wh, &["base", "head", "--control", "torch"]);
    assert_eq!(rows(&v).len(), 0, "no row matched: {}", v["reason"]);
    assert_eq!(code, 3, "inconclusive, not ok: {}", v["reason"]);
    assert!(
        codes(&v).contains(&"nothing_matched".to_string()),
        "{}",
        v["reasons"]
    );
}

#[test]
fn repeated_tables_pair_by_arguments_or_say_they_cannot() {
    // With `calling` lines: layout is part of the key; head skipped NT, nothing changed.
    let wh = Wh::new();
    wh.ingest(&sample("derived/repeated-tables/calls/base"), "base");
    wh.ingest(&sample("derived/repeated-tables/calls/head"), "head");
    let (_, v) = compare_json(&wh, &["base", "head"]);
    assert!(
        rows(&v).iter().all(|r| r["verdict"] != "regression"),
        "{}",
        v["reason"]
    );
    assert_eq!(rows(&v).len(), 6, "TN and TT, 3 shapes each");
    assert_eq!(v["only_in_base"].as_array().unwrap().len(), 3, "NT");

    // Without them, copies are named by position; the counts differ, so the tables
    // cannot be paired and the comparison is inconclusive, not a +50% regression.
    let wh = Wh::new();
    wh.ingest(&sample("derived/repeated-tables/positional/base"), "base");
    wh.ingest(&sample("derived/repeated-tables/positional/head"), "head");
    let (code, v) = compare_json(&wh, &["base", "head"]);
    assert_eq!(code, 3, "{}", v["reason"]);
    assert!(rows(&v).iter().all(|r| r["verdict"] == "invalid"));
    assert!(
        v["warnings"]
            .to_string()
            .contains("printed 3 time(s) on base and 2 on head"),
        "{}",
        v["warnings"]
    );
}

/// Triton perf_report trials made from the real H200 sample: each value times `factor`
/// (1 +- 1%, by trial and row), printed as pandas did (6 decimals, right-aligned where
/// the original ended); `slow` multiplies Triton's bandwidth at the largest size.
fn triton_trial(trial: usize, slow: f64) -> String {
    let text = std::fs::read_to_string(sample(
        "formats/24_triton_perf_report_print_data_triton3.6.0_H200_verbatim.txt",
    ))
    .unwrap();
    let mut out = String::new();
    for (no, line) in text.lines().enumerate() {
        let first = line.split_whitespace().next().unwrap_or("");
        if first.is_empty() || !first.bytes().all(|b| b.is_ascii_digit()) {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        // Tokens with their end positions; values are the ones with 6 decimals.
        let mut row = line.to_string();
        let mut ends = Vec::new();
        let b = line.as_bytes();
        for j in 0..b.len() {
            if b[j] != b' ' && (j + 1 == b.len() || b[j + 1] == b' ') {
                ends.push(j + 1);
            }
        }
        let big = line.contains("134217728.0");
        for (c, &end) in ends.iter().enumerate().rev() {
            let start = line[..end].rfind(' ').map(|s| s + 1).unwrap_or(0);
            let tok = &line[start..end];
            let Ok(v) = tok.parse::<f64>() else { continue };
            if tok.split('.').nth(1).map(str::len) != Some(6) {
                continue; // the index and the x values
            }
            let noise = 1.0 + (((trial * 7 + no * 3 + c) % 5) as f64 - 2.0) / 200.0;
            let f = if big && c == 2 { slow } else { 1.0 };
            let new = format!("{:.6}", v * noise * f);
            let from = end - new.len().max(tok.len());
            row.replace_range(from..end, &format!("{new:>w$}", w = end - from));
        }
        out.push_str(&row);
        out.push('\n');
    }
    out
}

#[test]
fn triton_perf_report_compares_like_any_format() {
    let wh = Wh::new();
    for (side, slow) in [("base", 1.0), ("head", 0.8)] {
        let dir = wh.dir.path().join(side);
        std::fs::create_dir_all(&dir).unwrap();
        for t in 0..3 {
            std::fs::write(
                dir.join(format!("trial{t}.txt")),
                triton_trial(t + if side == "head" { 3 } else { 0 }, slow),
            )
            .unwrap();
        }
        wh.ingest(&dir, side);
    }
    let formats = wh.sql("SELECT DISTINCT format FROM runs");
    assert_eq!(formats[0]["format"], "triton-perf-report");
    let (code, v) = compare_json(&wh, &["base", "head"]);
    assert_eq!(code, 1, "{v}");
    let bad: Vec<String> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["verdict"] == "regression")
        .map(|r| {
            format!(
                "{} {} {} {}",
                r["table"], r["variant"], r["key_text"], r["metric"]
            )
        })
        .collect();
    assert_eq!(
        bad,
        ["\"vector-add-performance\" \"Triton\" \"size=134217728\" \"bandwidth\""],
        "{v}"
    );
    // The Broken line printed NaN everywhere: measured on neither side, not a row.
    assert_eq!(v["not_measured"], 3);
}

/// Ingest `dir/base` and `dir/head` (with `extra` ingest options) and compare them.
fn compare_dirs(dir: &str, extra: &[&str]) -> (Wh, i32, Value) {
    let wh = Wh::new();
    for side in ["base", "head"] {
        let path = sample(&format!("{dir}/{side}"));
        let mut args = vec!["ingest", path.to_str().unwrap(), "--label", side];
        args.extend_from_slice(extra);
        wh.ok(&args);
    }
    let (code, v) = compare_json(&wh, &["base", "head"]);
    (wh, code, v)
}

/// Every JSON, CSV and table format beyond aiter's, base against head: exactly the value each head
/// made worse is a regression (derived/README.md names it; for pytest-benchmark and
/// google-benchmark, real CPU runs of code made twice as slow in `test_sum`/`BM_Sum`).
#[test]
fn each_new_format_flags_exactly_the_rows_its_head_made_worse() {
    let cases: &[(&str, &[&str], &str, &[&str])] = &[
        (
            "derived/ab-torch-compare",
            &[],
            "torch-compare",
            &["Ops mm threads=1 sub_label=[1024, 1024] latency"],
        ),
        (
            "derived/ab-flydsl-bench",
            &[],
            "flydsl-bench",
            &[
                "gemm flydsl shape=5120x5120x8320_tile64x256x128 dtype=fp8 bandwidth",
                "gemm flydsl shape=5120x5120x8320_tile64x256x128 dtype=fp8 throughput",
            ],
        ),
        (
            "derived/ab-aiter-tuned-csv",
            &[],
            "aiter-tuned-csv",
            &[
                "a8w8_tuned_gemm tuned gfx=gfx942 cu_num=304 M=128 N=1280 K=8192 q_dtype_w=torch.int8 bandwidth",
                "a8w8_tuned_gemm tuned gfx=gfx942 cu_num=304 M=128 N=1280 K=8192 q_dtype_w=torch.int8 latency",
                "a8w8_tuned_gemm tuned gfx=gfx942 cu_num=304 M=128 N=1280 K=8192 q_dtype_w=torch.int8 throughput",
            ],
        ),
        (
            "derived/ab-triton-csv",
            &["--unit", "GB/s"],
            "triton-csv",
            &["vector-add-performance Triton size=134217728 bandwidth"],
        ),
        (
            "derived/ab-serving",
            &[],
            "serving",
            &["serving openai model_id=Qwen/Qwen3-0.6B label=step1 request_rate=inf max_concurrency=8 burstiness=1 num_prompts=32 ttft_p99"],
        ),
        (
            "derived/ab-sglang",
            &[],
            "serving",
            &["serving sglang request_rate=8 max_concurrency=64 dataset_name=random random_input_len=1024 random_output_len=128 random_range_ratio=1 output_throughput"],
        ),
        (
            "derived/ab-ts-bench",
            &[],
            "ts-probe",
            &["ts_bench serve step=2 ttft_median"],
        ),
        (
            "derived/ab-aorta-matrix",
            &[],
            "aorta-matrix",
            &["triage:_subprocess ts_gemm_gluon_bf16-hip_launch_blocking environment=local step_time"],
        ),
        (
            "formats/26_pytest_benchmark_json_cpu_generated",
            &[],
            "pytest-benchmark",
            &["sum test_sum n=1000 latency", "sum test_sum n=10000 latency"],
        ),
        (
            "formats/27_google_benchmark_json_cpu_generated",
            &[],
            "google-benchmark",
            &[
                "bench_vec BM_Sum arg1=4096 threads=1 bandwidth",
                "bench_vec BM_Sum arg1=4096 threads=1 latency",
                "bench_vec BM_Sum arg1=4096 threads=1 latency_cpu",
                "bench_vec BM_Sum arg1=65536 threads=1 bandwidth",
                "bench_vec BM_Sum arg1=65536 threads=1 latency",
                "bench_vec BM_Sum arg1=65536 threads=1 latency_cpu",
            ],
        ),
    ];
    for (dir, extra, format, want) in cases {
        let (wh, code, v) = compare_dirs(dir, extra);
        let formats = wh.sql("SELECT DISTINCT format FROM runs");
        assert_eq!(formats.len(), 1, "{dir}");
        assert_eq!(formats[0]["format"], *format, "{dir}");
        assert_eq!(code, 1, "{dir}: {}", v["reason"]);
        assert_eq!(v["verdict"], "regression", "{dir}");
        let want: BTreeSet<String> = want.iter().map(|s| s.to_string()).collect();
        assert_eq!(regressed(&v), want, "{dir}");
        // Every other compared row was compared and did not move.
        let others = rows(&v)
            .iter()
            .filter(|r| r["verdict"] != "regression")
            .count();
        assert!(others > 0, "{dir}: no unchanged rows to hold the others to");
        for r in rows(&v).iter().filter(|r| r["verdict"] != "regression") {
            assert_eq!(r["verdict"], "no_significant_change", "{dir}: {r}");
        }
    }
}

/// ROCm bench CSVs: the slowed hipBLASLt problem regresses on its three metrics, the
/// rocBLAS line in the same log does not move.
#[test]
fn rocm_bench_csv_compares_per_problem_and_tool() {
    let (_wh, code, v) = compare_dirs("derived/ab-rocm-bench-csv", &[]);
    assert_eq!(code, 1, "{}", v["reason"]);
    let bad = regressed(&v);
    assert_eq!(bad.len(), 3, "{bad:?}");
    for b in &bad {
        assert!(
            b.starts_with("gemm hipblaslt transA=N transB=T ")
                && b.contains(" m=4096 n=4096 k=4096 "),
            "{b}"
        );
    }
    let metrics: BTreeSet<&str> = bad.iter().map(|b| b.rsplit(' ').next().unwrap()).collect();
    assert_eq!(
        metrics,
        BTreeSet::from(["bandwidth", "latency", "throughput"])
    );
    assert!(rows(&v)
        .iter()
        .any(|r| r["variant"] == "rocblas" && r["verdict"] == "no_significant_change"));
}

/// aorta result.json: a head trial whose verdict is fail makes the comparison a
/// regression for a failed run, whatever its values say.
#[test]
fn an_aorta_trial_that_failed_fails_the_comparison() {
    let (_wh, code, v) = compare_dirs("derived/ab-aorta-result", &[]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(codes(&v), ["head_run_failed"]);
    let reason = v["reason"].as_str().unwrap();
    assert!(
        reason.contains("failed: verdict fail; exit code 137; detectors fired: tier1:exit_nonzero, tier4:hip_error"),
        "{reason}"
    );
}

/// A non-zero `err` value fails a row's numerics on whichever side prints it: on both
/// sides it is no new failure of head; on head alone it is.
#[test]
fn a_nonzero_error_on_both_sides_is_no_new_numerics_failure() {
    let with_err = |side: &str, t: usize, err: bool| {
        let text =
            std::fs::read_to_string(sample(&format!("h200-gemm/ab/aiter/{side}/trial{t}.log")))
                .unwrap();
        if !err {
            return text;
        }
        // The M=1 row of the GEMM table: `triton err` 0 -> 0.01, same width.
        let row = text
            .lines()
            .find(|l| l.starts_with("|    1 |  4096 | 4096 |"))
            .unwrap()
            .to_string();
        let cells: Vec<&str> = row.split('|').collect();
        let mut cells: Vec<String> = cells.iter().map(|c| c.to_string()).collect();
        cells[9] = format!("{:>w$} ", "0.01", w = cells[9].len() - 1);
        text.replace(&row, &cells.join("|"))
    };
    for (base_err, want_new_failure) in [(true, false), (false, true)] {
        let wh = Wh::new();
        for (side, err) in [("base", base_err), ("head", true)] {
            let dir = wh.dir.path().join(side);
            std::fs::create_dir_all(&dir).unwrap();
            for t in 1..=3 {
                std::fs::write(dir.join(format!("trial{t}.log")), with_err(side, t, err)).unwrap();
            }
            wh.ingest(&dir, side);
        }
        let (code, v) = compare_json(&wh, &["base", "head", "--control", "torch"]);
        let reason = v["reason"].as_str().unwrap_or("").to_string();
        let says_new = codes(&v).contains(&"new_numerics_failure".to_string());
        assert_eq!(says_new, want_new_failure, "base err {base_err}: {reason}");
        if want_new_failure {
            assert_eq!(code, 1, "{reason}");
        }
    }
}

/// An aiter `add` table of one trial: (torch us, triton us) for the 1M-element add, and
/// an unchanged 16M row.
fn add_log(torch: f64, triton: f64) -> String {
    format!(
        "[aiter] add summary (markdown):\n\
         |        n | dtype          |   torch us |   triton us |\n\
         |---------:|:---------------|-----------:|------------:|\n\
         |  1048576 | torch.bfloat16 | {torch:10.3} | {triton:11.3} |\n\
         | 16777216 | torch.bfloat16 |     29.696 |      28.896 |\n"
    )
}

/// On the H200 the 1M-element add runs at ~6.2 or ~6.8 us whatever the code (the trials
/// below are real ones of each mode, ab30's). A head that sat in the slow mode moves the
/// torch control +9.7% — significant, yet under the 10% tolerance — and triton with it:
/// triton's +9.7% is no regression of its own. It is withheld, saying how far its control
/// moved, and the comparison is inconclusive, not failed.
#[test]
fn a_row_whose_own_control_moved_with_it_is_no_regression() {
    let wh = Wh::new();
    let fast = [
        (6.176, 6.112),
        (6.208, 6.08),
        (6.24, 6.144),
        (6.208, 6.08),
        (6.176, 6.112),
        (6.272, 6.048),
    ];
    let slow = [
        (6.816, 6.656),
        (6.88, 6.688),
        (6.752, 6.72),
        (6.784, 6.752),
        (6.848, 6.624),
        (6.72, 6.656),
    ];
    for (side, trials) in [("base", fast), ("head", slow)] {
        let dir = wh.dir.path().join(side);
        std::fs::create_dir_all(&dir).unwrap();
        for (t, (torch, triton)) in trials.iter().enumerate() {
            std::fs::write(dir.join(format!("trial{t}.log")), add_log(*torch, *triton)).unwrap();
        }
        wh.ingest(&dir, side);
    }
    let (code, v) = compare_json(&wh, &["base", "head", "--control", "torch"]);
    let triton = rows(&v)
        .iter()
        .find(|r| {
            r["variant"] == "triton" && r["key_text"].as_str().unwrap().starts_with("n=1048576")
        })
        .expect("the 1M add row");
    assert_eq!(triton["verdict"], "withheld", "{triton}");
    let reason = triton["reason"].as_str().unwrap();
    assert!(
        reason.contains("this row's control moved +9.")
            && reason.contains("relative to its control the row moved"),
        "{reason}"
    );
    assert_eq!(code, 3, "{}", v["reason"]);
    assert_eq!(v["verdict"], "inconclusive");
}

/// The real 30 trials a side: torch's 1M add splits into its two speeds, and says so.
#[test]
fn a_row_whose_trials_split_into_two_modes_says_so() {
    let wh = Wh::new();
    for side in ["base", "head"] {
        wh.ingest(&sample(&format!("h200-gemm/ab30/aiter/{side}")), side);
    }
    let (_, v) = compare_json(&wh, &["base", "head", "--control", "torch"]);
    let torch = rows(&v)
        .iter()
        .find(|r| {
            r["variant"] == "torch"
                && r["metric"] == "latency"
                && r["key_text"].as_str().unwrap().starts_with("n=1048576")
        })
        .expect("the 1M add row");
    let (lo, hi) = (
        torch["modes"][0].as_f64().unwrap(),
        torch["modes"][1].as_f64().unwrap(),
    );
    assert!(
        (6.1..6.3).contains(&lo) && (6.7..6.9).contains(&hi),
        "{torch}"
    );
    assert!(
        torch["reason"]
            .as_str()
            .unwrap()
            .contains("split into two modes (~6.208 and ~6.816 us)"),
        "{torch}"
    );
    // Four GEMM shapes really changed beyond the threshold (the fifth by 2.5%).
    let regressed = rows(&v)
        .iter()
        .filter(|r| r["verdict"] == "regression" && r["metric"] == "latency")
        .count();
    assert_eq!(regressed, 4, "{}", v["reason"]);
}

/// Five trials a side reach p = 0.0079 at best under the U test; over the report's rows
/// Benjamini-Hochberg cannot bring that under 0.05, so the 2.97x row is insufficient,
/// with the trials it would need, and the comparison inconclusive, never ok.
#[test]
fn a_row_that_cannot_reach_alpha_after_the_correction_is_insufficient() {
    let wh = Wh::new();
    ingest_ab(&wh, "aiter");
    let (code, v) = compare_json(&wh, &["base", "head", "--test", "mann-whitney"]);
    assert_eq!(code, 3, "{}", v["reason"]);
    assert_eq!(v["verdict"], "inconclusive");
    let row = rows(&v)
        .iter()
        .find(|r| {
            r["key_text"]
                .as_str()
                .unwrap()
                .starts_with("M=512 N=4096 K=4096")
                && r["metric"] == "latency"
                && r["variant"] == "triton"
        })
        .unwrap();
    assert_eq!(row["verdict"], "insufficient", "{row}");
    assert!(row["reason"].as_str().unwrap().contains("a side"), "{row}");
    assert!(!rows(&v)
        .iter()
        .any(|r| r["verdict"] == "no_significant_change"
            && r["control"] == false
            && r["variant"] == "triton"
            && r["key_text"].as_str().unwrap().starts_with("M=512 ")));
}

#[test]
fn alpha_must_be_a_level_in_the_open_interval() {
    let wh = Wh::new();
    ingest_ab(&wh, "perf");
    for bad in ["0", "1", "-0.1"] {
        let bad = format!("--alpha={bad}");
        let out = wh.run(&["compare", "base", "head", &bad]);
        assert_eq!(code(&out), 2, "{bad}: {}", stdout(&out));
        assert!(
            stderr(&out).contains("alpha must be a significance level in (0, 1)"),
            "{}",
            stderr(&out)
        );
    }
}
