//! `perfdb ab --gpus` without a GPU: four stand-in GPUs (the stand-in NVML of
//! `super::energy`, `count` 4), one of them 3% slow, and an arm that prints which GPU
//! it got and times five ops on it (±0.5%). Blocked by GPU, twenty A/A runs flag
//! nothing and name the slow GPU's offset; the naive split (A on the slow GPU, B on
//! another) flags every row; a GPU whose clock departs has its blocks dropped; one GPU
//! gives the verdicts of a run without the flag on recorded H200 and H100 trials.

use crate::common::*;
use crate::energy::standin;
use serde_json::Value;
use std::path::Path;

/// The GPU from `CUDA_VISIBLE_DEVICES` (the stand-in's UUID `GPU-standin-N`), said on
/// stderr; five ops, GPU N `slow` percent slower (`$STANDIN_NVML_DIR/gpuN/slow`), the
/// noise seeded by a checksum of the run's seed, the GPU and the GPU's trial count (independent draws: seeds next to each other start awk's generator alike).
const ARM: &str = r#"#!/bin/sh
g=${CUDA_VISIBLE_DEVICES#GPU-standin-}
d="$STANDIN_NVML_DIR/gpu$g"; mkdir -p "$d"
n=$(cat "$d/n" 2>/dev/null || echo 0); n=$((n + 1)); echo $n > "$d/n"
slow=$(cat "$d/slow" 2>/dev/null || echo 0)
echo "arm $ARM got GPU $g (its trial $n)" >&2
h=$(echo "$SEED $g $n" | cksum | cut -d' ' -f1)
awk -v h="$h" -v s="$slow" 'BEGIN {
  srand(h)
  for (i = 1; i <= 5; i++)
    printf "[perf][op%d] dim: (4096,), dtype: torch.float32, torch avg: %.3f us\n", i, 100 * i * (1 + s / 100) * (1 + 0.01 * (rand() - 0.5))
}'
"#;

/// Four stand-in GPUs, GPU 1 3% slow.
fn four_gpus(wh: &Wh) -> std::path::PathBuf {
    let state = wh.dir.path().join("nvml");
    std::fs::create_dir_all(state.join("gpu1")).unwrap();
    std::fs::write(state.join("count"), "4").unwrap();
    std::fs::write(state.join("gpu1/slow"), "3").unwrap();
    executable(&wh.dir.path().join("arm.sh"), ARM);
    state
}

/// `perfdb ab --format json` over the stand-in GPUs, an A/A run with `seed`.
fn ab(wh: &Wh, seed: u32, extra: &[&str]) -> (i32, Value, String) {
    let state = wh.dir.path().join("nvml");
    let seed = seed.to_string();
    let out = wh
        .cmd()
        .current_dir(wh.dir.path())
        .env("PERFDB_NVML_LIBRARY", standin())
        .env("STANDIN_NVML_DIR", &state)
        .env("SEED", &seed)
        .args(["ab", "--quiet", "--format", "json", "--threshold", "0.02"])
        .args(["--seed", &seed, "--label-base", &format!("b{seed}")])
        .args(["--label-head", &format!("h{seed}")])
        .args(extra)
        .args(["--base-env", "ARM=base", "--head-env", "ARM=head", "--"])
        .args(["sh", "arm.sh"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_str(&stdout(&out))
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&out), stderr(&out)));
    (code(&out), v, stderr(&out))
}

/// Rows flagged of the five: a regression or improvement, or a change whose size is not
/// yet shown (an inconclusive run).
fn flagged(v: &Value) -> usize {
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 5, "{v}");
    rows.iter()
        .filter(|r| {
            r["state"] == "regression"
                || r["state"] == "improvement"
                || r["verdict"] == "size_unknown"
        })
        .count()
}

#[test]
fn blocked_by_gpu_twenty_aa_runs_flag_nothing_and_name_the_slow_gpu() {
    let wh = Wh::new();
    four_gpus(&wh);
    for seed in 1..=20 {
        let (rc, v, err) = ab(&wh, seed, &["--gpus", "0-3"]);
        assert_eq!((rc, flagged(&v)), (0, 0), "seed {seed}: {v}\n{err}");
        let gpus = v["sequential"]["gpus"].as_array().unwrap();
        assert_eq!(gpus.len(), 4);
        for g in gpus {
            let offset = g["median_offset"].as_f64().unwrap();
            let expect = if g["gpu"] == 1 { 0.0225 } else { -0.0075 };
            assert!((offset - expect).abs() < 0.004, "seed {seed}: {g}");
            assert!(g["blocks"].as_u64().unwrap() >= 1, "{g}");
            assert!(g.get("dropped").is_none(), "{g}");
        }
        // Each trial ran on the GPU its block was given, and said so.
        if seed == 1 {
            let logs = wh
                .dir
                .path()
                .join(v["sequential"]["logs"].as_str().unwrap());
            let mut seen = 0;
            for e in std::fs::read_dir(&logs).unwrap() {
                let name = e.unwrap().file_name().to_string_lossy().into_owned();
                let Some(g) = name
                    .strip_suffix(".log")
                    .and_then(|n| n.rsplit_once("-gpu"))
                else {
                    continue;
                };
                let log = std::fs::read_to_string(logs.join(&name)).unwrap();
                assert!(log.contains(&format!("got GPU {} ", g.1)), "{name}: {log}");
                seen += 1;
            }
            assert!(seen >= 16, "{seen} trial logs");
        }
    }
    // The text report names each GPU's offset.
    let out = wh
        .cmd()
        .current_dir(wh.dir.path())
        .env("PERFDB_NVML_LIBRARY", standin())
        .env("STANDIN_NVML_DIR", wh.dir.path().join("nvml"))
        .env("SEED", "21")
        .args([
            "ab",
            "--quiet",
            "--threshold",
            "0.02",
            "--seed",
            "21",
            "--gpus",
            "all",
        ])
        .args([
            "--base-env",
            "ARM=base",
            "--head-env",
            "ARM=head",
            "--",
            "sh",
            "arm.sh",
        ])
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(
        text.contains("ab: GPU 1 (GPU-standin-1): 1 block(s), offset +2."),
        "{text}"
    );
}

#[test]
fn the_naive_split_reads_the_slow_gpu_as_a_change() {
    let wh = Wh::new();
    four_gpus(&wh);
    let mut rows = 0;
    for seed in 1..=3 {
        let (rc, v, err) = ab(
            &wh,
            seed,
            &[
                "--base-env",
                "CUDA_VISIBLE_DEVICES=GPU-standin-1",
                "--head-env",
                "CUDA_VISIBLE_DEVICES=GPU-standin-0",
            ],
        );
        // Improvements (exit 0), or a change not yet sized (exit 3): never "no change".
        assert!(rc == 0 || rc == 3, "{rc}: {err}");
        rows += flagged(&v);
        assert!(v["sequential"].get("gpus").is_none());
    }
    // Head reads 3% faster: at least 20% of the A/A rows are flagged (here every one).
    assert!(rows * 5 >= 15, "{rows} of 15 rows flagged");
    assert_eq!(rows, 15);
}

#[test]
fn a_gpu_whose_clock_departs_has_its_blocks_dropped_and_said() {
    let wh = Wh::new();
    let state = four_gpus(&wh);
    std::fs::create_dir_all(state.join("gpu2")).unwrap();
    std::fs::write(state.join("gpu2/clock_mhz"), "1700").unwrap();
    let (rc, v, err) = ab(&wh, 5, &["--gpus", "all"]);
    assert_eq!((rc, flagged(&v)), (0, 0), "{v}\n{err}");
    assert!(
        err.contains("ab: GPU 2 dropped: its clock 1700 MHz against 1980 MHz on the others"),
        "{err}"
    );
    let gpus = v["sequential"]["gpus"].as_array().unwrap();
    let g2 = gpus.iter().find(|g| g["gpu"] == 2).unwrap();
    assert!(g2["dropped"].as_str().unwrap().contains("1700 MHz"), "{g2}");
    // Its trials are in no row: no row names GPU 2's offset.
    for r in v["rows"].as_array().unwrap() {
        let offsets = r["gpu_offsets"].as_array().unwrap();
        assert_eq!(offsets.len(), 3, "{r}");
        assert!(offsets.iter().all(|o| o["gpu"] != 2), "{r}");
    }
    // It ran no block after the first round.
    assert_eq!(g2["blocks"], 1, "{g2}");
    // The text report counts its two trials a side as run, and says they were not compared.
    let out = wh
        .cmd()
        .current_dir(wh.dir.path())
        .env("PERFDB_NVML_LIBRARY", standin())
        .env("STANDIN_NVML_DIR", &state)
        .env("SEED", "5")
        .args([
            "ab",
            "--quiet",
            "--threshold",
            "0.02",
            "--seed",
            "5",
            "--gpus",
            "all",
        ])
        .args(["--label-base", "tb", "--label-head", "th"])
        .args(["--base-env", "ARM=base", "--head-env", "ARM=head", "--"])
        .args(["sh", "arm.sh"])
        .output()
        .unwrap();
    let text = stdout(&out);
    let line = text
        .lines()
        .find(|l| l.starts_with("ab: stopped at "))
        .unwrap_or_else(|| panic!("{text}"));
    let n: usize = line["ab: stopped at ".len()..]
        .split(' ')
        .next()
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert!(
        line.contains(&format!(
            "trial(s) a side ({} compared, 2 of dropped GPUs not): ",
            n - 2
        )),
        "{line}"
    );
}

#[test]
fn gpus_lists_that_cannot_be_run_are_refused() {
    let wh = Wh::new();
    four_gpus(&wh);
    let run = |list: &str, nvml: bool| {
        let mut c = wh.cmd();
        c.current_dir(wh.dir.path())
            .env("STANDIN_NVML_DIR", wh.dir.path().join("nvml"));
        if nvml {
            c.env("PERFDB_NVML_LIBRARY", standin());
        } else {
            c.env("PERFDB_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so")
                .env("PATH", "/usr/bin:/bin");
        }
        let out = c
            .args([
                "ab",
                "--quiet",
                "--gpus",
                list,
                "--base-env",
                "A=1",
                "--head-env",
                "A=2",
            ])
            .args(["--", "sh", "arm.sh"])
            .output()
            .unwrap();
        (code(&out), stderr(&out))
    };
    let (rc, err) = run("0-5", true);
    assert_eq!(rc, 2, "{err}");
    assert!(
        err.contains("--gpus: GPU 4 is not there (NVML sees 4: 0-3)"),
        "{err}"
    );
    let (rc, err) = run("all", false);
    assert_eq!(rc, 2, "{err}");
    assert!(
        err.contains("--gpus all: NVML did not load to count the GPUs"),
        "{err}"
    );
    let (rc, err) = run("1-0", true);
    assert_eq!(rc, 2, "{err}");
    assert!(err.contains("a range goes up"), "{err}");
    // Refused before anything: no logs folder, no run.
    assert!(!wh.dir.path().join("perfdb-ab").exists());
}

/// What a report decided, row by row: (row, metric, state, verdict).
fn decided(v: &Value) -> Vec<(String, String, String, String)> {
    let mut out: Vec<_> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                format!("{} {} {}", r["table"], r["variant"], r["key_text"]),
                r["metric"].to_string(),
                r["state"].to_string(),
                r["verdict"].to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

/// One GPU is today's `ab`: the recorded H200 A/B (30 trials a side of the GEMM sweep,
/// replayed) gives the same verdicts, trials and looks with `--gpus 0` as without.
#[test]
fn one_gpu_gives_the_verdicts_of_a_run_without_the_flag() {
    let runs: Vec<(i32, Value)> = ["", "0"]
        .iter()
        .map(|gpus| {
            let wh = Wh::new();
            let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/replay.sh");
            let arm = |side: &str| {
                format!(
                    "sh {} {} {}",
                    script.display(),
                    sample(&format!("h200-gemm/ab30/aiter/{side}")).display(),
                    wh.dir.path().join(side).display()
                )
            };
            let mut c = wh.cmd();
            c.env("PERFDB_NVML_LIBRARY", standin())
                .env("STANDIN_NVML_DIR", wh.dir.path().join("nvml"))
                .args([
                    "ab",
                    "--quiet",
                    "--format",
                    "json",
                    "--control",
                    "torch",
                    "--seed",
                    "7",
                ])
                .args(["--base", &arm("base"), "--head", &arm("head")]);
            if !gpus.is_empty() {
                c.args(["--gpus", gpus]);
            }
            let out = c.output().unwrap();
            let v: Value = serde_json::from_str(&stdout(&out))
                .unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)));
            (code(&out), v)
        })
        .collect();
    let (without, with) = (&runs[0], &runs[1]);
    assert_eq!(without.0, 1);
    assert_eq!(with.0, without.0);
    assert_eq!(decided(&with.1), decided(&without.1));
    for k in ["trials_per_arm", "looks", "blocks", "stopped"] {
        assert_eq!(with.1["sequential"][k], without.1["sequential"][k], "{k}");
    }
    assert_eq!(with.1["sequential"]["gpus"].as_array().unwrap().len(), 1);
    assert!(without.1["sequential"].get("gpus").is_none());
    // The same p to the last digits a sum's order can move.
    let ps = |v: &Value| -> Vec<f64> {
        v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["p"].as_f64().unwrap_or(-1.0))
            .collect()
    };
    for (a, b) in ps(&with.1).into_iter().zip(ps(&without.1)) {
        assert!((a - b).abs() <= 1e-9 * a.abs().max(b.abs()), "{a} vs {b}");
    }
}

/// A bisect benchmark for stand-in GPUs: the watched row (dim 64) at `kernel.conf` us
/// (about 1% noise) and its torch control at 5 us, both `slow` percent slower on a slow
/// GPU; each GPU counts its own trials in the worktree.
const GPU_BENCH: &str = r#"#!/bin/sh
g=${CUDA_VISIBLE_DEVICES#GPU-standin-}
n=$(cat .trial-$g 2>/dev/null || echo 0); n=$((n + 1)); echo $n > .trial-$g
slow=$(cat "$STANDIN_NVML_DIR/gpu$g/slow" 2>/dev/null || echo 0)
h=$(echo "$g $n" | cksum | cut -d' ' -f1)
awk -v h="$h" -v s="$slow" -v base="$(cat kernel.conf)" 'BEGIN {
  srand(h)
  noise = 1 + 0.02 * (rand() + rand() + rand() - 1.5)
  printf "[perf] dim: (64,) dtype: bf16, torch avg: %.3f us, ck avg: %.3f us\n", 5 * (1 + s / 100) * (1 + 0.004 * (rand() - 0.5)), base * (1 + s / 100) * noise
}'
"#;

/// `perfdb bisect --gpus 0-3` over the stand-in GPUs (GPU 1 3% slow) on a repository.
fn bisect_on_gpus(wh: &Wh, dir: &Path, good: &str, bad: &str) -> (i32, Value, String) {
    let out = wh
        .cmd()
        .env("PERFDB_NVML_LIBRARY", standin())
        .env("STANDIN_NVML_DIR", wh.dir.path().join("nvml"))
        .args([
            "bisect", "--format", "json", "--quiet", "--seed", "7", "--gpus", "0-3",
        ])
        .args([
            "--repo",
            dir.to_str().unwrap(),
            "--good",
            good,
            "--bad",
            bad,
        ])
        .args([
            "--series",
            "(64,)",
            "--control",
            "torch",
            "--",
            "sh",
            "bench.sh",
        ])
        .output()
        .unwrap();
    let v = serde_json::from_str(&stdout(&out))
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&out), stderr(&out)));
    (code(&out), v, stderr(&out))
}

#[test]
fn bisect_over_four_gpus_names_the_culprit_and_no_culprit_where_nothing_changed() {
    let wh = Wh::new();
    four_gpus(&wh);
    let dir = wh.dir.path().join("kernels");
    // 32 commits after c00; c19 slows the kernel 30%.
    let shas = crate::bisect::repo_with(
        &dir,
        GPU_BENCH,
        32,
        |i| if i >= 19 { 13.0 } else { 10.0 },
        &[],
    );
    let (exit, v, err) = bisect_on_gpus(&wh, &dir, &shas[0], &shas[32]);
    assert_eq!(exit, 0, "{err}\n{v}");
    let parts = v["parts"].as_array().unwrap();
    assert_eq!(parts.len(), 1, "{v}");
    assert_eq!(parts[0]["culprit"]["sha"], shas[19].as_str(), "{v}");
    // Every step's trials ran on the four GPUs at once.
    assert!(
        err.contains("ab: blocks on GPUs 0, 1, 2, 3 at once"),
        "{err}"
    );
    // The same range with nothing changed: no culprit.
    let still = wh.dir.path().join("still");
    let shas = crate::bisect::repo_with(&still, GPU_BENCH, 8, |_| 10.0, &[]);
    let (exit, v, err) = bisect_on_gpus(&wh, &still, &shas[0], &shas[8]);
    assert_eq!(exit, 3, "{err}\n{v}");
    assert_eq!(v["parts"], serde_json::json!([]), "{v}");
}
