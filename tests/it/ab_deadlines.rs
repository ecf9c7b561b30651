//! `perfdb ab` as a CI job runs it: a trial that hangs is killed at its deadline with
//! every process it started, `--max-time` stops a trial that would pass it, a
//! cancelled job (SIGTERM) leaves nothing running and the warehouse whole, and a
//! background child holding the output does not stall the trial; `perfdb run` stops its
//! command the same way.

use crate::common::*;
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

/// The command printing the arm's next recorded trial (tests/fixtures/replay.sh).
fn replay(arm: &str, wh: &Wh) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/replay.sh");
    format!(
        "sh {} {} {}",
        script.display(),
        sample(&format!("h200-gemm/ab30/aiter/{arm}")).display(),
        wh.dir.path().join(arm).display()
    )
}

/// The head arm: its first trial the recorded one, every later one a hang: a
/// background `sleep` (its pid appended to `pids`) waited for, a child of its own.
fn hang_after_first(wh: &Wh, pids: &Path) -> String {
    let once = wh.dir.path().join("once");
    format!(
        "if [ -e {once} ]; then sleep 300 & echo $! >> {pids}; wait; fi; touch {once}; {}",
        replay("head", wh),
        once = once.display(),
        pids = pids.display()
    )
}

/// Whether every pid listed in `pids` is gone (or dead, waiting to be reaped: a
/// container's first process may not reap orphans).
fn all_gone(pids: &Path) -> bool {
    let text = std::fs::read_to_string(pids).unwrap_or_default();
    assert!(!text.trim().is_empty(), "no pid was recorded");
    // The kill is sent before perfdb exits; the kernel may take a moment.
    std::thread::sleep(Duration::from_millis(200));
    text.split_whitespace().all(|p| {
        match std::fs::read_to_string(format!("/proc/{p}/stat")) {
            Err(_) => true,
            // `pid (comm) S ...`: the state after the command name.
            Ok(stat) => stat
                .rsplit_once(") ")
                .is_some_and(|(_, rest)| rest.starts_with('Z') || rest.starts_with('X')),
        }
    })
}

/// Start `cmd` (its output piped), send it `signal` (`-TERM`, `-INT`) after `after`,
/// and wait for it: a cancelled CI job.
fn cancelled(
    mut cmd: std::process::Command,
    after: Duration,
    signal: &str,
) -> std::process::Output {
    let child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    // The shell's own `kill`: no procps needed on a bare CI image.
    let kill = std::process::Command::new("sh")
        .args(["-c", &format!("kill {signal} {}", child.id())])
        .status()
        .unwrap();
    assert!(kill.success());
    child.wait_with_output().unwrap()
}

fn ab(wh: &Wh, base: &str, head: &str, extra: &[&str]) -> (i32, Value, String, Duration) {
    let mut args = vec![
        "ab",
        "--quiet",
        "--format",
        "json",
        "--no-gpu-state",
        "--warmup",
        "0",
        "--base",
        base,
        "--head",
        head,
        "--seed",
        "7",
    ];
    args.extend_from_slice(extra);
    let t = Instant::now();
    let out = wh.run(&args);
    let took = t.elapsed();
    let v: Value = serde_json::from_str(&stdout(&out))
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&out), stderr(&out)));
    (code(&out), v, stderr(&out), took)
}

#[test]
fn a_hung_trial_is_killed_at_its_deadline_with_its_children() {
    let wh = Wh::new();
    let pids = wh.dir.path().join("pids");
    let (exit, v, err, took) = ab(
        &wh,
        &replay("base", &wh),
        &hang_after_first(&wh, &pids),
        &["--trial-timeout", "2s"],
    );
    assert_eq!(
        exit, 1,
        "a head trial that hangs is the head's failure: {err}"
    );
    let seq = &v["sequential"];
    assert_eq!(seq["stopped"], "trial_timeout", "{seq}");
    assert!(
        seq["cut_trial"]
            .as_str()
            .unwrap()
            .starts_with("a head trial passed its deadline of 2s and was killed"),
        "{seq}"
    );
    assert!(took < Duration::from_secs(20), "{took:?}");
    assert!(all_gone(&pids), "the trial's background sleep outlived it");
    // Stored as a failed run, saying why.
    let runs = wh.sql("SELECT verdict, verdict_detail FROM runs WHERE verdict = 'fail'");
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert!(
        runs[0]["verdict_detail"]
            .as_str()
            .unwrap()
            .contains("killed at its deadline of 2s with every process it started"),
        "{runs:?}"
    );
}

#[test]
fn max_time_stops_a_trial_that_would_pass_it_and_stores_none_of_it() {
    let wh = Wh::new();
    let pids = wh.dir.path().join("pids");
    let (_, v, err, took) = ab(
        &wh,
        &replay("base", &wh),
        &hang_after_first(&wh, &pids),
        &["--max-time", "4s"],
    );
    let seq = &v["sequential"];
    assert_eq!(seq["stopped"], "max_time", "{err}");
    assert!(
        seq["cut_trial"].as_str().unwrap().contains("not stored"),
        "{seq}"
    );
    assert!(took < Duration::from_secs(20), "{took:?}");
    assert!(all_gone(&pids));
    // The trials before it are stored, each whole; the one cut was never written.
    let head = wh.count("SELECT count(*) FROM runs WHERE label LIKE 'ab-head-%'");
    assert_eq!(head, 1, "the first head trial only");
    assert_eq!(
        wh.count("SELECT count(*) FROM runs"),
        seq["trials_stored"].as_i64().unwrap()
    );
    let failed = wh.sql("SELECT label, verdict_detail FROM runs WHERE verdict = 'fail'");
    assert!(failed.is_empty(), "{failed:?}");
}

#[test]
fn sigterm_stops_the_running_trial_and_keeps_the_stored_ones() {
    let wh = Wh::new();
    let pids = wh.dir.path().join("pids");
    // Every trial takes 0.4 s in a child of its own; the job is cancelled after 3 s.
    let slow = |arm: &str| {
        format!(
            "sleep 0.4 & echo $! >> {}; wait; {}",
            pids.display(),
            replay(arm, &wh)
        )
    };
    let mut cmd = wh.cmd();
    cmd.args([
        "ab",
        "--quiet",
        "--format",
        "json",
        "--no-gpu-state",
        "--warmup",
        "0",
        "--max-trials",
        "30",
        "--seed",
        "7",
        "--threshold",
        "0.0001",
        "--base",
    ])
    .arg(slow("base"))
    .arg("--head")
    .arg(slow("head"));
    let out = cancelled(cmd, Duration::from_secs(3), "-TERM");
    assert_eq!(code(&out), 130, "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out))
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&out), stderr(&out)));
    let seq = &v["sequential"];
    assert_eq!(seq["stopped"], "interrupted", "{seq}");
    assert!(
        seq["cut_trial"]
            .as_str()
            .unwrap()
            .starts_with("SIGTERM received"),
        "{seq}"
    );
    // What was stored is whole: every stored trial ran to its end, and nothing of
    // the interrupted one is there.
    let stored = seq["trials_stored"].as_u64().unwrap() as i64;
    assert!(stored >= 2, "{seq}");
    assert_eq!(wh.count("SELECT count(*) FROM runs"), stored);
    assert_eq!(
        wh.count("SELECT count(*) FROM runs WHERE verdict = 'fail'"),
        0
    );
    assert!(
        all_gone(&pids),
        "a trial's child outlived the cancelled job"
    );
}

#[test]
fn a_background_child_holding_the_output_does_not_stall_the_trial() {
    let wh = Wh::new();
    let pids = wh.dir.path().join("pids");
    // A monitor left running in the background, writing to the trial's stdout.
    let with_monitor = |arm: &str| {
        format!(
            "(sleep 60; echo late) & echo $! >> {}; {}",
            pids.display(),
            replay(arm, &wh)
        )
    };
    let (_, v, err, took) = ab(
        &wh,
        &with_monitor("base"),
        &with_monitor("head"),
        &["--max-trials", "4"],
    );
    assert_eq!(v["sequential"]["trials_per_arm"], 4, "{err}");
    // Eight trials, each waiting at most the drain (2 s) for its monitor, not 60 s.
    assert!(took < Duration::from_secs(40), "{took:?}");
    assert!(all_gone(&pids));
    assert!(
        err.contains("its output stayed open after the command exited"),
        "{err}"
    );
    // The trial's time is its command's, not the wait for the monitor.
    let tags = wh.sql("SELECT tags FROM runs");
    assert_eq!(tags.len(), 8);
    for t in tags {
        let t: Value = serde_json::from_str(t["tags"].as_str().unwrap()).unwrap();
        let secs: f64 = t["duration_s"].as_str().unwrap().parse().unwrap();
        assert!(secs < 1.5, "duration_s {secs}: {t}");
        assert!(t["output_after_exit"].is_string(), "{t}");
    }
}

#[test]
fn perfdb_run_interrupted_stops_the_command_with_its_children_and_stores_nothing() {
    let wh = Wh::new();
    let pids = wh.dir.path().join("pids");
    let mut cmd = wh.cmd();
    cmd.args(["run", "--label", "x", "--", "sh", "-c"])
        .arg(format!(
            "echo '[perf] dim: (64,) dtype: bf16, torch avg: 5.00 us, ck avg: 9.0 us'; \
             sleep 300 & echo $! >> {}; wait",
            pids.display()
        ));
    let out = cancelled(cmd, Duration::from_secs(1), "-INT");
    assert_eq!(code(&out), 130, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("SIGINT received") && stderr(&out).contains("nothing was stored"),
        "{}",
        stderr(&out)
    );
    assert!(all_gone(&pids));
    assert_eq!(wh.count("SELECT count(*) FROM runs"), 0);
}
