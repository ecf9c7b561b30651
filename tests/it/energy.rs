//! A trial's GPU energy in `perfdb ab` without a GPU: NVML stood in for by a library
//! built from tests/fixtures/nvml_standin.c (perfdb loads it through
//! `PERFDB_NVML_LIBRARY`, the real crate's path), whose counter the benchmark arms move;
//! and the energy experiments recorded on an H100, replayed (sample-data/h100-energy/).

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The stand-in NVML, built once a test process with the C compiler the build uses.
pub(crate) fn standin() -> PathBuf {
    static LIB: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    LIB.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("perfdb-nvml-standin-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let lib = dir.join("libnvidia-ml-standin.so");
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/nvml_standin.c");
        let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
        let out = Command::new(&cc)
            .args(["-shared", "-fPIC", "-o"])
            .arg(&lib)
            .arg(&src)
            .output()
            .unwrap_or_else(|e| panic!("the stand-in NVML needs a C compiler ({cc}): {e}"));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        lib
    })
    .clone()
}

/// An arm that uses `J` joules (±1%) and prints an add of `US` us (±0.5%), its trial
/// number the noise's seed.
const ARM: &str = r#"#!/bin/sh
d="$STANDIN_NVML_DIR/gpu0"; mkdir -p "$d"
e=$(cat "$d/energy_mj" 2>/dev/null || echo 1000000)
n=$(cat "$STANDIN_NVML_DIR/n" 2>/dev/null || echo 0); n=$((n + 1)); echo $n > "$STANDIN_NVML_DIR/n"
awk -v e="$e" -v j="$J" -v us="$US" -v n="$n" -v f="$d/energy_mj" 'BEGIN {
  srand(n * 7919 + 3)
  printf "%.0f\n", e + 1000 * j * (1 + 0.02 * (rand() - 0.5)) > f
  printf "[perf][add] dim: (4096,), dtype: torch.float32, torch avg: %.3f us\n", us * (1 + 0.01 * (rand() - 0.5))
}'
"#;

/// `perfdb ab` over the stand-in NVML with `args` (arms and all): its output.
fn ab(wh: &Wh, nvml: &Path, args: &[&str]) -> std::process::Output {
    let state = wh.dir.path().join("nvml");
    std::fs::create_dir_all(&state).unwrap();
    wh.cmd()
        .current_dir(wh.dir.path())
        .env("PERFDB_NVML_LIBRARY", nvml)
        .env("STANDIN_NVML_DIR", &state)
        .args(["ab", "--quiet", "--energy", "--seed", "7"])
        .args(args)
        .output()
        .unwrap()
}

fn arms(wh: &Wh, base: (&str, &str), head: (&str, &str)) -> Vec<String> {
    let arm = wh.dir.path().join("arm.sh");
    executable(&arm, ARM);
    vec![
        "--base-env".into(),
        format!("J={}", base.0),
        "--base-env".into(),
        format!("US={}", base.1),
        "--head-env".into(),
        format!("J={}", head.0),
        "--head-env".into(),
        format!("US={}", head.1),
        "--".into(),
        "sh".into(),
        arm.to_string_lossy().into_owned(),
    ]
}

/// The row of `report` (ab's table) whose table column is `table`: its verdict words.
fn verdict_of(report: &str, table: &str) -> String {
    report
        .lines()
        .find(|l| !l.starts_with(' ') && l.contains(&format!("  {table}  ")))
        .map(|l| l.split("  ").next().unwrap_or("").trim().to_string())
        .unwrap_or_else(|| panic!("no {table} row in\n{report}"))
}

#[test]
fn an_energy_only_change_is_flagged_on_energy_alone_and_stored_per_trial() {
    let wh = Wh::new();
    let a = arms(&wh, ("1000", "100"), ("1150", "100"));
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let out = ab(&wh, &standin(), &a);
    let report = stdout(&out);
    assert_eq!(code(&out), 1, "{report}\n{}", stderr(&out));
    assert!(
        report.starts_with("REGRESSION: the GPU energy of a trial regressed (gpu=0 +"),
        "{report}"
    );
    assert_eq!(verdict_of(&report, "gpu"), "regression", "{report}");
    assert_eq!(
        verdict_of(&report, "perf[add]"),
        "no significant change",
        "{report}"
    );
    assert!(report.contains("(a trial's GPU energy)"), "{report}");
    assert!(report.contains("x the energy)"), "{report}");
    // Each trial's energy is a row of its run, from no line of the output, and its tags.
    let rows = wh.sql(
        "select m.value, m.unit, m.line, m.note, r.tags from measurements m join runs r using (run_id) where m.table_name = 'gpu'",
    );
    assert_eq!(rows.len(), 8, "{rows:?}");
    for r in &rows {
        assert_eq!(r["unit"], "J");
        assert_eq!(r["line"], 0);
        assert!(r["note"]
            .as_str()
            .unwrap()
            .starts_with("measured by perfdb"));
        let tags = tags_of(r);
        let j: f64 = tags["gpu_energy_j"].parse().unwrap();
        assert!((j - r["value"].as_f64().unwrap()).abs() < 1e-3, "{tags:?}");
        assert!(j > 980.0 && j < 1170.0, "{j}");
        assert_eq!(tags["gpu_index"], "0");
        // The sampler read the stand-in's constant 70 W over the trial.
        assert!(tags["gpu_power_samples"].parse::<usize>().unwrap() >= 1);
        assert!(tags.contains_key("gpu_power_integrated_j"));
    }
}

#[test]
fn a_time_change_is_judged_on_time_and_energy_has_its_own_threshold() {
    let wh = Wh::new();
    let a = arms(&wh, ("1000", "100"), ("1000", "130"));
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let out = ab(&wh, &standin(), &a);
    let report = stdout(&out);
    assert_eq!(code(&out), 1, "{report}");
    assert!(
        report.starts_with("REGRESSION: 1 kernel/shape row(s) regressed"),
        "{report}"
    );
    assert_eq!(verdict_of(&report, "perf[add]"), "regression", "{report}");
    assert_ne!(verdict_of(&report, "gpu"), "regression", "{report}");
    // 15% more energy under a 30% energy threshold: within it, time at its 5%.
    let wh = Wh::new();
    let a = arms(&wh, ("1000", "100"), ("1150", "100"));
    let mut args = vec!["--energy-threshold", "0.3"];
    args.extend(a.iter().map(String::as_str));
    let out = ab(&wh, &standin(), &args);
    let report = stdout(&out);
    assert_eq!(code(&out), 0, "{report}");
    assert_eq!(verdict_of(&report, "gpu"), "within threshold", "{report}");
    assert!(
        report.contains(", nor in the GPU energy of a trial (1 GPU(s))"),
        "{report}"
    );
}

/// Without `--energy` the energy is stored with each trial and `ab` judges time alone
/// (its verdicts as before); `compare` of the same labels judges it.
#[test]
fn without_energy_ab_judges_time_alone_and_compare_judges_the_stored_energy() {
    let wh = Wh::new();
    let a = arms(&wh, ("1000", "100"), ("1150", "100"));
    let mut args = vec!["--label-base", "b", "--label-head", "h"];
    args.extend(a.iter().map(String::as_str));
    let nvml = standin();
    let out = wh
        .cmd()
        .current_dir(wh.dir.path())
        .env("PERFDB_NVML_LIBRARY", &nvml)
        .env("STANDIN_NVML_DIR", wh.dir.path().join("nvml"))
        .args(["ab", "--quiet", "--seed", "7"])
        .args(&args)
        .output()
        .unwrap();
    let report = stdout(&out);
    assert_eq!(code(&out), 0, "{report}\n{}", stderr(&out));
    assert!(!report.contains("energy"), "{report}");
    assert_eq!(
        wh.count("select count(*) from measurements where table_name = 'gpu'"),
        8
    );
    let out = wh.run(&["compare", "b", "h"]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    assert!(
        stdout(&out).starts_with("REGRESSION: the GPU energy of a trial regressed"),
        "{}",
        stdout(&out)
    );
    // The row's reason (what the web page shows) words energy as energy.
    let (_, json) = compare_json(&wh, &["b", "h"]);
    let row = json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["table"] == "gpu")
        .expect("an energy row");
    let reason = row["reason"].as_str().unwrap();
    assert!(
        reason.contains("x the energy, beyond the 5% threshold"),
        "{reason}"
    );
}

#[test]
fn without_nvml_a_trial_has_no_energy_and_ab_is_as_before() {
    let wh = Wh::new();
    let a = arms(&wh, ("1000", "100"), ("1150", "100"));
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let missing = wh.dir.path().join("no-such-libnvidia-ml.so");
    let out = ab(&wh, &missing, &a);
    let report = stdout(&out);
    assert_eq!(code(&out), 0, "{report}\n{}", stderr(&out));
    assert!(!report.contains("energy"), "{report}");
    assert_eq!(
        wh.count("select count(*) from measurements where table_name = 'gpu'"),
        0
    );
}

/// The recorded H100 trials of one experiment, replayed through `ab` with the arms'
/// recorded order (no warm-up: the device's warm-ups were not stored).
fn replay(experiment: &str, seed: &str) -> (i32, String) {
    replay_from("h100-energy/trials.csv", experiment, seed, &[])
}

/// [`replay`] from the trials in `csv` (under sample-data), with `extra` flags.
fn replay_from(csv: &str, experiment: &str, seed: &str, extra: &[&str]) -> (i32, String) {
    let wh = Wh::new();
    let csv = sample(csv);
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/energy_replay.sh");
    let state = wh.dir.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    let out = wh
        .cmd()
        .env("PERFDB_NVML_LIBRARY", standin())
        .env("STANDIN_NVML_DIR", wh.dir.path().join("nvml"))
        .args(["ab", "--quiet", "--energy", "--warmup", "0", "--seed", seed])
        .args(extra)
        .args([
            "--base-env",
            "ARM=base",
            "--head-env",
            "ARM=head",
            "--",
            "sh",
        ])
        .arg(&fixture)
        .arg(&csv)
        .arg(experiment)
        .arg(&state)
        .output()
        .unwrap();
    assert!(!stderr(&out).contains("replay:"), "{}", stderr(&out));
    (code(&out), stdout(&out))
}

/// On the H100 (examples/h200/energy/bench.py, a memory-bound add of 2^27 floats below
/// the power limit): zeros instead of random inputs used 15% less energy at the same
/// speed, flagged on energy alone; twice the adds per call was judged on time; the ten
/// A/A runs flagged nothing. Each trial's counter and integrated power agreed within 5%.
#[test]
fn the_recorded_h100_energy_experiments_replay_to_the_devices_verdicts() {
    let csv = std::fs::read_to_string(sample("h100-energy/trials.csv")).unwrap();
    let mut n = 0;
    for line in csv.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let (counter, integrated): (f64, f64) = (f[7].parse().unwrap(), f[8].parse().unwrap());
        assert!(
            (counter / integrated - 1.0).abs() < 0.05,
            "counter {counter} J, power integrated {integrated} J: {line}"
        );
        n += 1;
    }
    assert_eq!(n, 128);
    let (rc, report) = replay("planted", "1");
    assert_eq!(rc, 0, "{report}");
    assert_eq!(verdict_of(&report, "gpu"), "improvement", "{report}");
    assert_eq!(
        verdict_of(&report, "perf[add]"),
        "no significant change",
        "{report}"
    );
    let (rc, report) = replay("time", "2");
    assert_eq!(rc, 1, "{report}");
    assert!(
        report.starts_with("REGRESSION: 1 kernel/shape row(s) regressed"),
        "{report}"
    );
    assert_eq!(verdict_of(&report, "perf[add]"), "regression", "{report}");
    for i in 1..=10 {
        let (aa, seed) = (format!("aa{i}"), format!("{}", 100 + i));
        let (rc, report) = replay(&aa, &seed);
        assert_eq!(rc, 0, "{aa}: {report}");
        assert!(
            report.contains(", nor in the GPU energy of a trial (1 GPU(s))"),
            "{aa}: {report}"
        );
        // What the device's own run said.
        let device = std::fs::read_to_string(sample(&format!("h100-energy/{aa}.txt"))).unwrap();
        assert_eq!(verdict_of(&device, "gpu"), verdict_of(&report, "gpu"));
    }
}

/// `--gpus 0` and `--gpus all` on the H100's one GPU (sample-data/h100-gpus/): the planted
/// energy-only change, replayed with each run's flags, reaches what each run said on the
/// device, the same as without the flag; every probe trial saw the GPU by its UUID.
#[test]
fn the_recorded_one_gpu_runs_reach_the_devices_verdicts_with_and_without_gpus() {
    for (mode, extra) in [
        ("none", vec![]),
        ("0", vec!["--gpus", "0"]),
        ("all", vec!["--gpus", "all"]),
    ] {
        let (rc, report) = replay_from("h100-gpus/trials.csv", &format!("p-{mode}"), "11", &extra);
        let device =
            std::fs::read_to_string(sample(&format!("h100-gpus/planted-{mode}.txt"))).unwrap();
        assert_eq!(rc, 0, "{mode}: {report}");
        for table in ["gpu", "perf[add]"] {
            assert_eq!(
                verdict_of(&report, table),
                verdict_of(&device, table),
                "{mode}"
            );
        }
        assert_eq!(
            verdict_of(&report, "gpu"),
            "improvement",
            "{mode}: {report}"
        );
    }
    let uuid = std::fs::read_to_string(sample("h100-gpus/gpu.txt")).unwrap();
    let uuid = uuid
        .split("UUID: ")
        .nth(1)
        .unwrap()
        .trim_end()
        .trim_end_matches(')');
    let pins = std::fs::read_to_string(sample("h100-gpus/pin-trials.txt")).unwrap();
    assert_eq!(pins.lines().count(), 10);
    for line in pins.lines() {
        assert!(
            line.starts_with(&format!(
                "CUDA_VISIBLE_DEVICES={uuid} CUDA_DEVICE_ORDER=PCI_BUS_ID devices=1 "
            )),
            "{line}"
        );
        assert!(
            line.ends_with(&format!("uuid={}", uuid.trim_start_matches("GPU-"))),
            "{line}"
        );
    }
    let refused = std::fs::read_to_string(sample("h100-gpus/refuse.txt")).unwrap();
    assert!(
        refused.contains("--gpus: GPU 1 is not there (NVML sees 1: 0-0)"),
        "{refused}"
    );
}
