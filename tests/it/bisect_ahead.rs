//! `perfdb bisect --build-ahead`: the next step's candidates built while a step's trials
//! run (a build that takes longer than the trials), the same culprit named, and a build
//! never needed stopped with its process group when the bisect ends.

use crate::bisect::{repo_with, running};
use crate::common::*;
use serde_json::Value;

/// The watched row at `kernel.conf` us (about 1% noise) and its torch control.
const BENCH: &str = r#"#!/bin/sh
n=$(cat .trial 2>/dev/null || echo 0); n=$((n + 1)); echo $n > .trial
awk -v n="$n" -v base="$(cat kernel.conf)" 'BEGIN {
  srand(n * 7919 + 17)
  printf "[perf] dim: (64,) dtype: bf16, torch avg: %.3f us, ck avg: %.3f us\n", 5 * (1 + 0.004 * (rand() - 0.5)), base * (1 + 0.02 * (rand() + rand() + rand() - 1.5))
}'
"#;

#[test]
fn builds_run_ahead_of_their_steps_and_the_culprit_is_the_same() {
    let wh = Wh::new();
    let dir = wh.dir.path().join("kernels");
    // 16 commits after c00; c11 slows the kernel 30%.
    let shas = repo_with(&dir, BENCH, 16, |i| if i >= 11 { 13.0 } else { 10.0 }, &[]);
    let marker = format!("perfdb-ahead-{}", std::process::id());
    let build = format!("sleep 1 # {marker}\nsh build.sh");
    let logs = wh.dir.path().join("logs");
    let run = |ahead: bool| -> (i32, Value, String) {
        let mut args = vec!["bisect", "--format", "json", "--quiet", "--seed", "7"];
        let (d, l) = (dir.to_str().unwrap(), logs.to_str().unwrap());
        args.extend(["--repo", d, "--good", &shas[0], "--bad", &shas[16]]);
        args.extend(["--series", "(64,)", "--control", "torch", "--build", &build]);
        args.extend(["--logs", l]);
        if ahead {
            args.push("--build-ahead");
        }
        args.extend(["--", "sh", "bench.sh"]);
        let out = wh.run(&args);
        let v = serde_json::from_str(&stdout(&out))
            .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&out), stderr(&out)));
        (code(&out), v, stderr(&out))
    };
    let (exit, v, err) = run(true);
    assert_eq!(exit, 0, "{err}\n{v}");
    assert_eq!(v["parts"][0]["culprit"]["sha"], shas[11].as_str(), "{v}");
    // Every step after the first found its commit built while the step before ran.
    let steps = v["steps"].as_array().unwrap().len();
    let ahead = err.matches(" was built ahead").count();
    assert!(
        steps >= 3 && ahead >= steps - 1,
        "{steps} steps, {ahead} built ahead: {err}"
    );
    // Builds never needed were stopped: nothing of them runs after the bisect.
    assert!(
        !running(&marker),
        "a build started ahead outlived the bisect"
    );
    // Without the flag: the same culprit, every build on its step's time.
    let (exit, v2, err) = run(false);
    assert_eq!(exit, 0, "{err}");
    assert_eq!(v2["parts"][0]["culprit"]["sha"], shas[11].as_str());
    assert!(!err.contains("built ahead"), "{err}");
}

#[test]
fn build_ahead_needs_a_build() {
    let wh = Wh::new();
    let out = wh.run(&[
        "bisect",
        "--build-ahead",
        "--good",
        "a",
        "--bad",
        "b",
        "--",
        "true",
    ]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("--build <CMD>"), "{}", stderr(&out));
}
