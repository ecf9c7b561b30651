//! The GPU-kernel harnesses (`sample-data/gpu-harness/`, real H200 runs): each read with
//! the values it holds, three trials against three with exactly the changed row
//! flagged, and series measured differently (`method`) never compared as one.

use crate::common::*;
use serde_json::Value;
use std::path::Path;

const NVBENCH: &str = "gpu-harness/nvbench";

/// The three real nvbench runs of the same code (two default, one `--stopping-criterion
/// entropy`) written into `dir`, with the `N=2048 Op=matmul` state made `factor` times
/// slower when `factor` is not 1 (its median, mean and rates moved together).
fn nvbench_side(dir: &Path, factor: f64) {
    std::fs::create_dir_all(dir).unwrap();
    for run in ["h200_run1", "h200_run2", "h200_run3_entropy"] {
        let text = std::fs::read_to_string(sample(&format!("{NVBENCH}/{run}.json"))).unwrap();
        let mut doc: Value = serde_json::from_str(&text).unwrap();
        for state in doc["benchmarks"][0]["states"].as_array_mut().unwrap() {
            if state["name"] != "Device=0 N=2048 Op=matmul" {
                continue;
            }
            for s in state["summaries"].as_array_mut().unwrap() {
                let scale = match s["tag"].as_str().unwrap() {
                    t if t.starts_with("nv/cold/time/gpu/") && !t.contains("/stdev/") => factor,
                    "nv/cold/bw/item_rate" | "nv/cold/bw/global/bytes_per_second" => 1.0 / factor,
                    _ => continue,
                };
                let v = &mut s["data"][0]["value"];
                let x: f64 = v.as_str().unwrap().parse().unwrap();
                *v = Value::String((x * scale).to_string());
            }
        }
        std::fs::write(dir.join(format!("{run}.json")), doc.to_string()).unwrap();
    }
}

#[test]
fn nvbench_json_reads_the_values_it_holds() {
    let wh = Wh::new();
    let out = wh.ok(&[
        "ingest",
        sample(&format!("{NVBENCH}/h200_run1.json"))
            .to_str()
            .unwrap(),
        "--label",
        "nv",
        "--variant-axis",
        "Op",
    ]);
    assert!(out.contains("nvbench-json"), "{out}");
    let rows = wh.sql(
        "SELECT variant, key, metric, unit, value, direction FROM measurements \
         WHERE metric IN ('latency', 'sm_clock', 'bandwidth') ORDER BY variant, key, metric",
    );
    let find = |variant: &str, n: &str, metric: &str| -> &Value {
        rows.iter()
            .find(|r| {
                r["variant"] == variant
                    && r["key"] == format!("{{\"N\":\"{n}\"}}")
                    && r["metric"] == metric
            })
            .unwrap_or_else(|| panic!("{variant} N={n} {metric} in {rows:?}"))
    };
    // The cold GPU median, s -> us (h200_run1.json: "0.0014226239919662475" s).
    let lat = find("matmul", "8192", "latency");
    assert!(
        (lat["value"].as_f64().unwrap() - 1422.624).abs() < 0.01,
        "{lat}"
    );
    assert_eq!(
        (lat["unit"].as_str(), lat["direction"].as_str()),
        (Some("us"), Some("lower"))
    );
    // Bytes per second -> TB/s; the mean SM clock, Hz -> MHz, kept.
    let bw = find("add", "8192", "bandwidth");
    assert!(
        (bw["value"].as_f64().unwrap() - 4.154).abs() < 0.001,
        "{bw}"
    );
    let clock = find("matmul", "2048", "sm_clock");
    assert_eq!(clock["direction"], "none");
    assert!(
        (clock["value"].as_f64().unwrap() - 1758.198).abs() < 0.001,
        "{clock}"
    );
    let runs = wh.sql("SELECT arch, tags FROM runs");
    assert_eq!(runs[0]["arch"], "sm_90");
    let tags: Value = serde_json::from_str(runs[0]["tags"].as_str().unwrap()).unwrap();
    assert_eq!(tags["machine"], "NVIDIA H200");
    assert_eq!(tags["method"], "nvbench:cold");
    // Without --variant-axis the implementation is part of the key.
    let wh = Wh::new();
    wh.ingest(&sample(&format!("{NVBENCH}/h200_run2.json")), "nv");
    let keys = wh.sql("SELECT DISTINCT variant, key FROM measurements ORDER BY key");
    assert_eq!(keys.len(), 4);
    assert!(keys.iter().all(|k| k["variant"] == "default"), "{keys:?}");
    assert_eq!(keys[0]["key"], "{\"N\":\"2048\",\"Op\":\"add\"}");
}

#[test]
fn a_truncated_nvbench_json_is_refused_with_its_line() {
    let wh = Wh::new();
    let out = wh.run(&[
        "ingest",
        sample(&format!("{NVBENCH}/repo_test_ref_json_head260.txt"))
            .to_str()
            .unwrap(),
        "--label",
        "ref",
    ]);
    assert_eq!(code(&out), 2);
    let err = stderr(&out);
    assert!(
        err.contains("repo_test_ref_json_head260.txt:261: not an nvbench JSON: EOF"),
        "{err}"
    );
    assert_eq!(wh.count("SELECT count(*) FROM runs"), 0);
}

#[test]
fn nvbench_three_against_three_flags_exactly_the_changed_row() {
    let wh = Wh::new();
    let dir = tempfile::tempdir().unwrap();
    nvbench_side(&dir.path().join("base"), 1.0);
    nvbench_side(&dir.path().join("head"), 1.3);
    for side in ["base", "head"] {
        wh.ok(&[
            "ingest",
            dir.path().join(side).to_str().unwrap(),
            "--label",
            side,
            "--variant-axis",
            "Op",
        ]);
    }
    let (code, v) = compare_json(&wh, &["base", "head", "--control", "add"]);
    assert_eq!(code, 1, "{}", v["reason"]);
    assert_eq!(
        regressed(&v).into_iter().collect::<Vec<_>>(),
        [
            "torch_bf16 matmul N=2048 bandwidth",
            "torch_bf16 matmul N=2048 item_rate",
            "torch_bf16 matmul N=2048 latency"
        ]
    );
    assert_eq!(v["reasons"][0]["code"], "regressed");
    assert_eq!(v["reasons"][0]["rows"], 1);
}

/// Two runs of one benchmark, one with nvbench's default stopping criterion and one with
/// `entropy`, are one method (`nvbench:cold`); the same values said to be a do_bench
/// mean are not compared with them.
#[test]
fn a_method_is_part_of_the_series() {
    let wh = Wh::new();
    let ingest = |file: &str, label: &str, extra: &[&str]| {
        let path = sample(&format!("{NVBENCH}/{file}"));
        let mut args = vec![
            "ingest",
            path.to_str().unwrap(),
            "--label",
            label,
            "--variant-axis",
            "Op",
        ];
        args.extend_from_slice(extra);
        wh.ok(&args);
    };
    ingest("h200_run1.json", "default", &[]);
    ingest("h200_run3_entropy.json", "entropy", &[]);
    ingest("h200_run2.json", "do-bench", &["--method", "do_bench:mean"]);
    let (_, v) = compare_json(&wh, &["default", "entropy", "--control", "add"]);
    let codes: Vec<&str> = v["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["code"].as_str().unwrap())
        .collect();
    assert!(!codes.contains(&"mixed_methods"), "{codes:?}");
    assert!(v["rows"].as_array().unwrap().len() >= 10);
    let (exit, v) = compare_json(&wh, &["default", "do-bench", "--control", "add"]);
    assert_eq!(exit, 3);
    assert_eq!(v["reasons"][0]["code"], "mixed_methods", "{}", v["reason"]);
    assert_eq!(v["head"]["methods"], serde_json::json!(["do_bench:mean"]));
    // --method and a --tag that says otherwise disagree.
    let out = wh.run(&[
        "ingest",
        sample(&format!("{NVBENCH}/h200_run2.json"))
            .to_str()
            .unwrap(),
        "--method",
        "a",
        "--tag",
        "method=b",
    ]);
    assert_eq!(code(&out), 2);
}

/// `26.763 us` times `factor`, printed as nvbench prints it (three decimals, unit kept).
fn scale_cell(cell: &str, factor: f64) -> String {
    let t = cell.trim();
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let x: f64 = t[..end].parse().unwrap();
    format!("{:.3}{}", x * factor, &t[end..])
}

/// Three printed nvbench tables per side (the two real H200 prints, and the first again
/// 0.5% slower throughout), the `N=2048 Op=matmul` row `factor` times slower when
/// `factor` is not 1: its GPU time up, its element rate and bandwidth down.
fn nvbench_markdown_side(dir: &Path, factor: f64) {
    std::fs::create_dir_all(dir).unwrap();
    let runs = [
        ("h200_run1", 1.0),
        ("h200_run3_entropy", 1.0),
        ("h200_run1", 1.005),
    ];
    for (i, (run, jitter)) in runs.into_iter().enumerate() {
        let text = std::fs::read_to_string(sample(&format!("{NVBENCH}/{run}.md"))).unwrap();
        let mut out = String::new();
        for line in text.lines() {
            let cells: Vec<&str> = line.split('|').collect();
            // `| N | Op | FLOP | Bytes | Samples | CPU Time | Noise | GPU Time | Noise |
            // Elem/s | GlobalMem BW | ...`: split on '|', cell c is at c + 1.
            if cells.len() < 12 || cells[2].trim() == "Op" || cells[1].starts_with('-') {
                out.push_str(line);
            } else {
                let f = jitter
                    * if cells[1].trim() == "2048" && cells[2].trim() == "matmul" {
                        factor
                    } else {
                        1.0
                    };
                let mut new: Vec<String> = cells.iter().map(|c| c.to_string()).collect();
                new[8] = format!(" {} ", scale_cell(cells[8], f));
                for c in [10, 11] {
                    if !cells[c].trim().is_empty() {
                        new[c] = format!(" {} ", scale_cell(cells[c], 1.0 / f));
                    }
                }
                out.push_str(&new.join("|"));
            }
            out.push('\n');
        }
        std::fs::write(dir.join(format!("{run}-{i}.md")), out).unwrap();
    }
}

#[test]
fn nvbench_markdown_three_against_three_flags_exactly_the_changed_row() {
    let wh = Wh::new();
    let dir = tempfile::tempdir().unwrap();
    nvbench_markdown_side(&dir.path().join("base"), 1.0);
    nvbench_markdown_side(&dir.path().join("head"), 1.3);
    for side in ["base", "head"] {
        let out = wh.ok(&[
            "ingest",
            dir.path().join(side).to_str().unwrap(),
            "--label",
            side,
            "--variant-axis",
            "Op",
        ]);
        assert!(out.contains("nvbench-markdown"), "{out}");
    }
    let (code, v) = compare_json(&wh, &["base", "head", "--control", "add"]);
    assert_eq!(code, 1, "{}", v["reason"]);
    assert_eq!(
        regressed(&v).into_iter().collect::<Vec<_>>(),
        [
            "torch_bf16 matmul N=2048 bandwidth",
            "torch_bf16 matmul N=2048 item_rate",
            "torch_bf16 matmul N=2048 latency"
        ]
    );
    assert_eq!(
        v["base"]["methods"],
        serde_json::json!(["nvbench:cold-mean"])
    );
    // The printed GPU Time is a mean, the JSON's latency a median: never one series.
    wh.ingest(&sample(&format!("{NVBENCH}/h200_run2.json")), "json");
    let (exit, v) = compare_json(&wh, &["base", "json", "--control", "add"]);
    assert_eq!(exit, 3);
    assert_eq!(v["reasons"][0]["code"], "mixed_methods", "{}", v["reason"]);
}

/// Three tritonbench CSVs per side from the H200 run (its values times 1, 1.004 and
/// 0.996), the `triton_add` row at `x_val=16777216` `factor` times slower: its latency
/// up and its bandwidth tuple down.
fn tritonbench_side(dir: &Path, factor: f64) {
    std::fs::create_dir_all(dir).unwrap();
    let text =
        std::fs::read_to_string(sample("gpu-harness/tritonbench/h200_vector_add_output.csv"))
            .unwrap();
    for (i, jitter) in [1.0, 1.004, 0.996].into_iter().enumerate() {
        let mut out = String::new();
        for (n, line) in text.lines().enumerate() {
            let mut cells: Vec<String> = line.split(';').map(str::to_string).collect();
            if n > 0 && cells[0] != "average" {
                let changed = cells[0] == "16777216";
                for (c, backend_changes) in [(1, false), (2, false), (3, true), (4, true)] {
                    let f = jitter
                        * if changed && backend_changes {
                            factor
                        } else {
                            1.0
                        };
                    let scale = if c % 2 == 1 { f } else { 1.0 / f };
                    let first = cells[c].trim_start_matches('(').split(',').next().unwrap();
                    let v: f64 = first.parse::<f64>().unwrap() * scale;
                    cells[c] = if c % 2 == 1 {
                        v.to_string()
                    } else {
                        format!("({v}, 0.0, 0.0)")
                    };
                }
            }
            out.push_str(&cells.join(";"));
            out.push('\n');
        }
        // The file's name is the table (the CSV does not name its operator): one
        // folder per trial.
        std::fs::create_dir_all(dir.join(i.to_string())).unwrap();
        std::fs::write(dir.join(format!("{i}/vector_add.csv")), out).unwrap();
    }
}

#[test]
fn tritonbench_three_against_three_flags_exactly_the_changed_row() {
    let wh = Wh::new();
    let dir = tempfile::tempdir().unwrap();
    tritonbench_side(&dir.path().join("base"), 1.0);
    tritonbench_side(&dir.path().join("head"), 1.3);
    for side in ["base", "head"] {
        let out = wh.ok(&[
            "ingest",
            dir.path().join(side).to_str().unwrap(),
            "--label",
            side,
        ]);
        assert!(out.contains("tritonbench"), "{out}");
    }
    let (code, v) = compare_json(&wh, &["base", "head"]);
    assert_eq!(code, 1, "{}", v["reason"]);
    assert_eq!(
        regressed(&v).into_iter().collect::<Vec<_>>(),
        [
            "vector_add triton_add x_val=16777216 bandwidth",
            "vector_add triton_add x_val=16777216 latency"
        ]
    );
    assert_eq!(v["head"]["methods"], serde_json::json!(["tritonbench:p50"]));
}

/// A FlashInfer-Bench trace of workload definitions holds no measurement: refused,
/// named as what it is, with nothing written.
#[test]
fn a_trace_of_workload_definitions_is_refused_as_what_it_is() {
    let wh = Wh::new();
    let path = sample("gpu-harness/flashinfer-bench/repo_example_workloads_head5.jsonl");
    let out = wh.run(&["ingest", path.to_str().unwrap(), "--label", "fi"]);
    assert_eq!(code(&out), 2);
    let err = stderr(&out);
    assert!(
        err.contains(
            "repo_example_workloads_head5.jsonl:1: a FlashInfer-Bench trace of 5 workload \
             definitions (every `evaluation` is null): no measured values to store"
        ),
        "{err}"
    );
    assert_eq!(wh.count("SELECT count(*) FROM runs"), 0);
}

/// v3 records of three models, each metric's three trials in `benchmark_values`, the
/// `bert` latency `factor` times slower.
fn pytorch_v3_records(factor: f64) -> String {
    let mut out = String::new();
    for (model, ms) in [("resnet50", 10.0), ("bert", 20.0), ("llama", 30.0)] {
        let f = if model == "bert" { factor } else { 1.0 };
        let trials: Vec<f64> = [1.0, 1.004, 0.996].iter().map(|j| ms * f * j).collect();
        for (name, values) in [
            ("median_latency_ms", trials.clone()),
            ("peak_memory(mb)", vec![512.0, 512.0, 512.0]),
        ] {
            let r = serde_json::json!({
                "benchmark": {"name": "torchao", "mode": "inference", "dtype": "bfloat16"},
                "model": {"name": model, "type": "OSS model", "backend": "inductor"},
                "metric": {"name": name, "benchmark_values": values, "target_value": 0},
                "runners": [{"name": "linux.aws.h200", "gpu_info": "NVIDIA H200"}],
                "dependencies": {"pytorch": {"sha": "0123abc"}}
            });
            out.push_str(&r.to_string());
            out.push('\n');
        }
    }
    out
}

#[test]
fn pytorch_v3_three_against_three_flags_exactly_the_changed_row_and_exports_back() {
    let wh = Wh::new();
    let dir = tempfile::tempdir().unwrap();
    for (side, factor) in [("base", 1.0), ("head", 1.3)] {
        let path = dir.path().join(format!("{side}.json"));
        std::fs::write(&path, pytorch_v3_records(factor)).unwrap();
        let out = wh.ok(&["ingest", path.to_str().unwrap(), "--label", side]);
        assert!(out.contains("pytorch-v3"), "{out}");
    }
    // One file, three trials: the runs of each side.
    assert_eq!(
        wh.count("SELECT count(*) FROM runs WHERE label = 'base'"),
        3
    );
    let (code, v) = compare_json(&wh, &["base", "head"]);
    assert_eq!(code, 1, "{}", v["reason"]);
    assert_eq!(
        regressed(&v).into_iter().collect::<Vec<_>>(),
        ["torchao inductor model=bert mode=inference dtype=bfloat16 median_latency"]
    );
    let runs = wh.sql("SELECT \"commit\", tags FROM runs WHERE label = 'base' LIMIT 1");
    assert_eq!(runs[0]["commit"], "0123abc");
    let tags: Value = serde_json::from_str(runs[0]["tags"].as_str().unwrap()).unwrap();
    assert_eq!(tags["machine"], "NVIDIA H200");
    // Written back as v3 and read again: the same rows and values.
    let file = dir.path().join("export.jsonl");
    wh.ok(&[
        "export",
        "base",
        "--format",
        "pytorch-v3",
        "-o",
        file.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&file).unwrap();
    let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(first["metric"]["name"], "median_latency(us)", "{first}");
    assert_eq!(
        first["metric"]["benchmark_values"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    wh.ok(&["ingest", file.to_str().unwrap(), "--label", "back"]);
    let rows = |label: &str| {
        wh.sql(&format!(
            "SELECT table_name, variant, key, metric, unit, direction, round(value, 9) AS v \
             FROM measurements WHERE label = '{label}' AND direction <> 'none' \
             ORDER BY ALL"
        ))
    };
    assert_eq!(rows("base"), rows("back"));
    assert_eq!(rows("base").len(), 18);
    let (code, v) = compare_json(&wh, &["base", "back"]);
    assert_eq!(code, 0, "{}", v["reason"]);
    // A label with nothing to export says so.
    let out = wh.run(&["export", "nope"]);
    assert_eq!(crate::common::code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("label 'nope' has no values"),
        "{}",
        stderr(&out)
    );
}
