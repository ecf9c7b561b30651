//! `perfdb compare` with sides read straight from files: the same verdict, exit code
//! and JSON (but for the sides' descriptions) as the same files ingested and compared in
//! the warehouse; a side of files against a side of the warehouse; a path told from a
//! label; `--keep`; bad input refused at its line with nothing written.

use crate::common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// `compare BASE HEAD --format json EXTRA` as run: exit code and the JSON without the
/// sides' descriptions (`base`, `head`: their selectors and how they matched).
fn judged(wh: &Wh, base: &str, head: &str, extra: &[&str]) -> (i32, String, Value) {
    let mut args = vec!["compare", base, head, "--format", "json"];
    args.extend_from_slice(extra);
    let out = wh.run(&args);
    let mut v: Value = serde_json::from_str(&stdout(&out))
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&out), stderr(&out)));
    let obj = v.as_object_mut().unwrap();
    obj.remove("base");
    obj.remove("head");
    let text = serde_json::to_string_pretty(&v).unwrap();
    (code(&out), text, v)
}

/// The files of `base` and `head` compared straight and, in a second warehouse, ingested
/// under `base` and `head` then compared: the same exit code and the same JSON.
fn both_ways(base: &Path, head: &Path, ingest_extra: &[&str], extra: &[&str]) -> (i32, Value) {
    let files = Wh::new();
    let (code_f, text_f, v) = judged(
        &files,
        base.to_str().unwrap(),
        head.to_str().unwrap(),
        &[ingest_extra, extra].concat(),
    );
    assert!(
        !files.path().join("runs").exists(),
        "comparing files wrote a warehouse"
    );
    let stored = Wh::new();
    for (dir, label) in [(base, "base"), (head, "head")] {
        let mut args = vec!["ingest", dir.to_str().unwrap(), "--label", label];
        args.extend_from_slice(ingest_extra);
        let out = stored.run(&args);
        assert!(matches!(code(&out), 0 | 1), "{}", stderr(&out));
    }
    let (code_w, text_w, _) = judged(&stored, "base", "head", extra);
    assert_eq!(code_f, code_w, "exit codes differ\n{text_f}\n{text_w}");
    if let Some((n, (f, w))) = text_f
        .lines()
        .zip(text_w.lines())
        .enumerate()
        .find(|(_, (f, w))| f != w)
    {
        panic!(
            "the JSON differs at line {}: files {f:?}, warehouse {w:?}",
            n + 1
        );
    }
    assert_eq!(
        text_f.lines().count(),
        text_w.lines().count(),
        "the JSON differs in length"
    );
    (code_f, v)
}

fn copy(from: &Path, to: &Path) -> PathBuf {
    copy_dir(from, to);
    to.to_path_buf()
}

#[test]
fn the_h200_ab_reads_the_same_from_files_as_from_the_warehouse() {
    let (exit, v) = both_ways(
        &sample("h200-gemm/ab/aiter/base"),
        &sample("h200-gemm/ab/aiter/head"),
        &[],
        &["--control", "torch"],
    );
    assert_eq!(exit, 1);
    assert_eq!(v["verdict"], "regression", "{v}");
    let (exit, _) = both_ways(
        &sample("h200-gemm/ab/perf/base"),
        &sample("h200-gemm/ab/perf/head"),
        &[],
        &[],
    );
    assert!(matches!(exit, 0 | 1 | 3));
}

#[test]
fn missing_failed_repeated_and_impossible_runs_judge_as_ingested() {
    let tmp = tempfile::tempdir().unwrap();
    let base = copy(&sample("h200-gemm/ab/aiter/base"), &tmp.path().join("base"));
    // A row missing on head: one shape's line taken out of every head trial.
    let head = copy(
        &sample("h200-gemm/ab/aiter/head"),
        &tmp.path().join("missing"),
    );
    for e in std::fs::read_dir(&head).unwrap() {
        let p = e.unwrap().path();
        let text = std::fs::read_to_string(&p).unwrap();
        let mut lines: Vec<&str> = text.lines().collect();
        let at = lines
            .iter()
            .rposition(|l| l.starts_with('|') && l.chars().any(|c| c.is_ascii_digit()))
            .unwrap();
        lines.remove(at);
        std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    }
    let (exit, v) = both_ways(&base, &head, &[], &["--control", "torch"]);
    assert_ne!(exit, 0, "{v}");
    assert!(
        v["only_in_base"].as_array().is_some_and(|a| !a.is_empty()),
        "{v}"
    );
    // A failed run on head: a probe that ran out of memory.
    let failed = copy(
        &sample("h200-gemm/ab/aiter/head"),
        &tmp.path().join("failed"),
    );
    std::fs::copy(
        sample("derived/probe-failed-early.log"),
        failed.join("trial9.log"),
    )
    .unwrap();
    let (exit, v) = both_ways(&base, &failed, &[], &["--control", "torch"]);
    assert_eq!(exit, 1, "a failed head run is a regression: {v}");
    assert!(v.to_string().contains("head_run_failed"), "{v}");
    // A row printed twice by each head run (its first `[perf]` line again at the end).
    let repeated = copy(
        &sample("h200-gemm/ab/perf/head"),
        &tmp.path().join("repeated"),
    );
    for e in std::fs::read_dir(&repeated).unwrap() {
        let p = e.unwrap().path();
        let text = std::fs::read_to_string(&p).unwrap();
        let first = text.lines().next().unwrap().to_string();
        std::fs::write(&p, format!("{text}{first}\n")).unwrap();
    }
    let (_, v) = both_ways(&sample("h200-gemm/ab/perf/base"), &repeated, &[], &[]);
    assert!(
        v["warnings"].to_string().contains("more than once"),
        "{}",
        v["warnings"]
    );
    // Values the device cannot produce: held against the H200's peaks.
    let impossible = copy(
        &sample("h200-gemm/ab/aiter/head"),
        &tmp.path().join("impossible"),
    );
    for e in std::fs::read_dir(&impossible).unwrap() {
        let p = e.unwrap().path();
        let text = std::fs::read_to_string(&p).unwrap();
        std::fs::write(&p, text.replace("779.769", "9779.769")).unwrap();
    }
    let (_, v) = both_ways(
        &base,
        &impossible,
        &["--device", "h200"],
        &["--control", "torch"],
    );
    assert!(
        v["rows"].to_string().contains("\"invalid\""),
        "{}",
        v["rows"]
    );
}

#[test]
fn a_file_side_against_a_warehouse_side_and_kept_after_the_verdict() {
    let wh = Wh::new();
    let base = sample("h200-gemm/ab/aiter/base");
    wh.ok(&[
        "ingest",
        base.to_str().unwrap(),
        "--label",
        "main",
        "--commit",
        "c01",
    ]);
    let head = sample("h200-gemm/ab/aiter/head");
    let glob = format!("{}/trial*.log", head.display());
    let out = wh.run(&[
        "compare",
        "main@latest",
        &glob,
        "--control",
        "torch",
        "--keep",
        "pr-42",
        "--commit",
        "c02",
    ]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(stdout(&out).contains("REGRESSION"), "{}", stdout(&out));
    assert!(stderr(&out).contains("kept the head side's 5 run(s) under label 'pr-42'"));
    // Kept as ingest keeps them: the warehouse now compares them by label.
    let (exit, _) = compare_json(&wh, &["main", "pr-42", "--control", "torch"]);
    assert_eq!(exit, 1);
    let rows =
        wh.sql("SELECT count(*) AS n FROM runs WHERE label = 'pr-42' AND \"commit\" = 'c02'");
    assert_eq!(rows[0]["n"], 5);
}

/// A name that is both a folder here and a label of the warehouse: one side when the
/// label's runs were read from exactly those files (`ingest base --label base` then
/// `compare base head`, the common way), refused when they hold different runs.
#[test]
fn a_name_that_is_both_a_folder_and_a_label_is_one_side_or_refused() {
    let wh = Wh::new();
    let here = wh.dir.path().join("base");
    copy_dir(&sample("h200-gemm/ab/aiter/base"), &here);
    wh.ok(&["ingest", here.to_str().unwrap(), "--label", "base"]);
    let head = sample("h200-gemm/ab/aiter/head");
    let out = wh.run(&[
        "compare",
        "base",
        head.to_str().unwrap(),
        "--control",
        "torch",
    ]);
    assert_eq!(code(&out), 1, "the same files: one side: {}", stderr(&out));
    // A trial more in the folder than in the warehouse: both could be meant, and differ.
    std::fs::copy(
        sample("h200-gemm/ab/aiter/head/trial1.log"),
        here.join("trial9.log"),
    )
    .unwrap();
    let out = wh.run(&["compare", "base", head.to_str().unwrap()]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("is both a file or folder here and a side of the warehouse"),
        "{}",
        stderr(&out)
    );
    // `./base` is the folder; `base@latest` the label's runs.
    for side in ["./base", "base@latest"] {
        let out = wh.run(&[
            "compare",
            side,
            head.to_str().unwrap(),
            "--control",
            "torch",
        ]);
        assert!(matches!(code(&out), 1 | 3), "{side}: {}", stderr(&out));
    }
}

#[test]
fn a_bad_file_refuses_the_comparison_at_its_line_and_nothing_is_written() {
    let wh = Wh::new();
    let tmp = tempfile::tempdir().unwrap();
    let head = copy(&sample("h200-gemm/ab/perf/head"), &tmp.path().join("head"));
    std::fs::write(
        head.join("trial3.log"),
        "[perf] dim: (64,) dtype: bf16, torch avg: 5.00 us, ck avg: 12.5x us\n",
    )
    .unwrap();
    let out = wh.run(&[
        "compare",
        sample("h200-gemm/ab/perf/base").to_str().unwrap(),
        head.to_str().unwrap(),
        "--keep",
        "pr",
    ]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("trial3.log:1:"), "{}", stderr(&out));
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    assert!(!wh.path().join("runs").exists());
}
