//! `perfdb run --affected` and `perfdb bisect --affected` without a GPU: stand-in
//! benchmarks that print what the launch recorder prints (the identity pass) and keep a
//! compile per kernel, whose "code" is a file of the commit; and the nightly recorded on
//! an H100, replayed (sample-data/h100-affected/).

use crate::bisect::{bisect, git};
use crate::common::*;
use std::path::Path;
use std::process::Command;

/// A benchmark of two rows (`[perf]` lines: the watched dim 64 at `kernel.conf` us with
/// about 1% noise, torch at 5 us as the control, and dim 128), whose kernel's code is
/// `code.txt`: in the identity pass it prints the recorder's lines for it and keeps its
/// compile, as the launch recorder does with a real Triton kernel.
const BENCH: &str = r#"#!/bin/sh
if [ "$PERFDB_PASS" = identity ]; then
  h=$(cksum < code.txt | cut -d' ' -f1)
  mkdir -p "$PERFDB_IDENTITY_DIR/$h"
  { echo 'module {'; cat code.txt; echo '}'; } > "$PERFDB_IDENTITY_DIR/$h/add_kernel.ttgir"
  echo '{"name": "add_kernel", "num_warps": 4, "num_stages": 3}' > "$PERFDB_IDENTITY_DIR/$h/add_kernel.json"
  echo 'perfdb-identity ready {"pid": 1}'
  echo 'perfdb-identity toolchain {"triton": "3.6.0", "driver": "580.159.04", "device": "NVIDIA H100 80GB HBM3"}'
  echo "perfdb-identity launch {\"kernel\": \"add_kernel\", \"hash\": \"$h\", \"grid\": [64], \"args\": [[\"tensor\", [64], \"torch.bfloat16\"]]}"
fi
n=$(cat .trial 2>/dev/null || echo 0); n=$((n + 1)); echo $n > .trial
awk -v n="$n" -v base="$(cat kernel.conf)" 'BEGIN {
  srand(n * 7919 + 17)
  noise = 1 + 0.02 * (rand() + rand() + rand() - 1.5)
  printf "[perf] dim: (64,) dtype: bf16, torch avg: %.3f us, ck avg: %.3f us\n", 5 * (1 + 0.004 * (rand() - 0.5)), base * noise
}'
"#;

/// A repository of `confs.len()` commits, commit `i` with `kernel.conf` and `code.txt`
/// as `confs[i]` says; each commit's sha.
fn repo(dir: &Path, confs: &[(&str, &str)]) -> Vec<String> {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q", "-b", "main"], 0);
    std::fs::write(dir.join("bench.sh"), BENCH).unwrap();
    std::fs::write(dir.join(".gitignore"), ".trial\n").unwrap();
    let mut shas = Vec::new();
    for (i, (speed, code)) in confs.iter().enumerate() {
        std::fs::write(dir.join("kernel.conf"), format!("{speed}\n")).unwrap();
        std::fs::write(dir.join("code.txt"), format!("{code}\n")).unwrap();
        std::fs::write(dir.join("notes.txt"), format!("change {i}\n")).unwrap();
        git(dir, &["add", "-A"], i);
        git(dir, &["commit", "-q", "-m", &format!("c{i:02}")], i);
        let out = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["rev-parse", "HEAD"])
            .output()
            .unwrap();
        shas.push(String::from_utf8(out.stdout).unwrap().trim().to_string());
    }
    shas
}

/// A bisect step whose commit compiles to what a measured commit compiled to takes that
/// commit's verdict with no trials; one whose code differs is measured. The culprit is
/// found as without `--affected`, on fewer trials.
#[test]
fn bisect_steps_with_a_measured_commits_identity_inherit_its_verdict() {
    let wh = Wh::new();
    let dir = wh.dir.path().join("kernels");
    // c00-c05: the good code; c06-c09 change the code, not its speed; c10 slows it 30%
    // and its code stays so to c16.
    let confs: Vec<(&str, &str)> = (0..=16)
        .map(|i| match i {
            0..=5 => ("10", "%0 = tt.add %a, %b"),
            6..=9 => ("10", "%0 = tt.add %b, %a"),
            _ => ("13", "%0 = tt.add %a, %b; tt.barrier"),
        })
        .collect();
    let shas = repo(&dir, &confs);
    let args = |affected: bool| {
        let mut v = vec![
            "--repo".to_string(),
            dir.to_str().unwrap().to_string(),
            "--good".to_string(),
            shas[0].clone(),
            "--bad".to_string(),
            shas[16].clone(),
            "--series".to_string(),
            "ck dim=(64,)".to_string(),
            "--control".to_string(),
            "torch".to_string(),
        ];
        if affected {
            v.push("--affected".to_string());
        }
        v.extend(["--", "sh", "bench.sh"].map(String::from));
        v
    };
    let run = |affected: bool| {
        let a = args(affected);
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        bisect(&wh, &refs)
    };
    let (exit, v, err) = run(true);
    assert_eq!(exit, 0, "{err}\n{v}");
    let culprit = &v["parts"][0]["culprit"];
    assert_eq!(culprit["sha"], shas[10].as_str(), "{v}");
    let steps = v["steps"].as_array().unwrap();
    let inherited: Vec<&serde_json::Value> = steps
        .iter()
        .filter(|s| {
            s["why"]
                .as_str()
                .is_some_and(|w| w.contains("identity equal to"))
        })
        .collect();
    assert!(!inherited.is_empty(), "no step inherited: {v}");
    for s in &inherited {
        assert_eq!(s["trials_a_side"], 0, "{s}");
        let sha = s["commit"].as_str().unwrap();
        let i = shas.iter().position(|c| c == sha).unwrap();
        let want = if i >= 10 { "bad" } else { "good" };
        assert_eq!(s["found"], want, "c{i:02} inherited the wrong verdict: {s}");
    }
    // A step whose code is new (c06-c09) was measured, not inherited.
    assert!(
        steps.iter().any(|s| {
            let i = shas
                .iter()
                .position(|c| c == s["commit"].as_str().unwrap())
                .unwrap();
            (6..=9).contains(&i) && s["trials_a_side"].as_u64().unwrap() > 0
        }),
        "{v}"
    );
    // The same culprit without --affected, with more trials.
    let trials = |v: &serde_json::Value| -> u64 {
        v["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["trials_a_side"].as_u64().unwrap())
            .sum()
    };
    let (exit, plain, err) = run(false);
    assert_eq!(exit, 0, "{err}");
    assert_eq!(plain["parts"][0]["culprit"]["sha"], shas[10].as_str());
    assert!(
        trials(&v) < trials(&plain),
        "{} vs {}",
        trials(&v),
        trials(&plain)
    );
}

/// One recorded night: its commit, and its report from the header on (what the binary
/// printed after the benchmark's own output and ingest lines).
struct Night {
    commit: String,
    report: String,
    exit: i32,
}

fn recorded_nights(dir: &Path) -> Vec<Night> {
    let wall = std::fs::read_to_string(dir.join("wall.txt")).unwrap();
    wall.lines()
        .filter(|l| l.split(' ').count() == 4 && !l.starts_with("full"))
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let i: usize = f[0].parse().unwrap();
            let report = std::fs::read_to_string(dir.join(format!("c{i}/report.txt"))).unwrap();
            Night {
                commit: f[1].to_string(),
                report,
                exit: f[3].trim_start_matches("exit=").parse().unwrap(),
            }
        })
        .collect()
}

/// How many of `timed` (table, why) are `op`'s rows timed as changed.
fn changed(timed: &[(String, String)], op: &str) -> usize {
    timed
        .iter()
        .filter(|(t, why)| t == op && why.starts_with("changed"))
        .count()
}

/// The `IDENTITY LEAK` lines of a report, up to the first colon after the row.
fn leaks(report: &str) -> Vec<String> {
    report
        .lines()
        .filter_map(|l| l.strip_prefix("IDENTITY LEAK: "))
        .map(|l| l.split(" with identity").next().unwrap_or(l).to_string())
        .collect()
}

/// The rows a report says were timed, each with its reason, by table.
fn timed_rows(report: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in report.lines() {
        if line == "timed:" {
            inside = true;
            continue;
        }
        if line.is_empty() || !line.starts_with("  ") {
            inside = false;
        }
        if inside {
            let table = line.split_whitespace().next().unwrap_or("").to_string();
            let why = line
                .split_once("  [")
                .and_then(|(_, r)| r.split_once("]  "))
                .map_or(String::new(), |(w, _)| w.to_string());
            out.push((table, why));
        }
    }
    out
}

/// Replays every recorded night of `dir` through the binary (the benchmark stood in for
/// by tests/fixtures/affected_pass.sh) with the flags the device ran (the default audit,
/// drift not timed): a night may ask for fewer rows than on the device, never for one
/// the device did not time (the stand-in refuses it).
fn replay(dir: &Path) -> Vec<Night> {
    let nights = recorded_nights(dir);
    let runs = std::fs::read_dir(dir.join("c0"))
        .unwrap()
        .filter(|e| {
            let n = e.as_ref().unwrap().file_name();
            let n = n.to_string_lossy();
            n.starts_with("timed-") && n.ends_with(".out")
        })
        .count();
    let wh = Wh::new();
    let pass = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/affected_pass.sh");
    let mut replayed = Vec::new();
    for (i, night) in nights.iter().enumerate() {
        let state = wh.dir.path().join(format!("state-{i}"));
        std::fs::create_dir_all(&state).unwrap();
        let night_dir = dir.join(format!("c{i}"));
        let runs_s = runs.to_string();
        let mut args = vec![
            "run",
            "--label",
            "nightly",
            "--commit",
            &night.commit,
            "--name",
            "bench",
            "--trials",
            &runs_s,
        ];
        if i == 0 {
            args.push("--identity");
        } else {
            // The audit's draw is a hash of the commit and the row: the device's draws.
            args.extend(["--affected", "nightly@latest"]);
        }
        let (p, n, s) = (
            pass.to_str().unwrap().to_string(),
            night_dir.to_str().unwrap().to_string(),
            state.to_str().unwrap().to_string(),
        );
        args.extend(["--", "sh", &p, &n, &s]);
        let out = wh.run(&args);
        assert!(
            !stderr(&out).contains("replay:"),
            "night {i}: {}",
            stderr(&out)
        );
        replayed.push(Night {
            commit: night.commit.clone(),
            report: stdout(&out),
            exit: code(&out),
        });
    }
    replayed
}

/// The nightly of examples/h200/affected/ recorded on an H100 (31 commits, seven real
/// Triton kernels), replayed under today's rules: each timed pass prints the recorded
/// lines of the rows asked for, and the stand-in refuses a row the device did not time
/// that night. Every commit that changed a compiled kernel or its launch times all its
/// rows as changed (0 missed, on the device and in the replay); no row is timed as
/// changed whose kernel did not change (the comments inside kernels included); the
/// autotuned add's near tie is said as config drift, same code, never a regression.
#[test]
fn the_recorded_h100_nightly_replays_and_misses_no_change() {
    let dir = sample("h100-affected");
    let recorded = recorded_nights(&dir);
    assert_eq!(recorded.len(), 31, "31 nights");
    let expect: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expect.json")).unwrap()).unwrap();
    let want = |i: usize| -> Vec<String> {
        expect[i]["expect"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|o| format!("perf[{}]", o.as_str().unwrap()))
                    .collect()
            })
            .unwrap_or_default()
    };
    // On the device: every change timed as changed, all its rows.
    for (i, night) in recorded.iter().enumerate().skip(1) {
        let timed = timed_rows(&night.report);
        for op in want(i) {
            let n = changed(&timed, &op);
            assert_eq!(
                n, 8,
                "device night {i}: {op} changed, {n} of its 8 rows timed as changed"
            );
        }
        // Exit 1 only for an audited row that moved (the 8192^3 matmul's spread between
        // processes, docs/affected.md), never for a change judged a regression.
        let leak = night.report.contains("\nIDENTITY LEAK: ");
        assert_eq!(night.exit, i32::from(leak), "device night {i}");
    }
    let replayed = replay(&dir);
    let mut drifts = 0;
    for (i, night) in replayed.iter().enumerate().skip(1) {
        let message = expect[i]["message"].as_str().unwrap();
        let timed = timed_rows(&night.report);
        for op in want(i) {
            let n = changed(&timed, &op);
            assert_eq!(
                n, 8,
                "night {i} ({message}): {op} changed, {n} of its 8 rows timed as changed\n{}",
                night.report
            );
        }
        for (t, why) in &timed {
            assert!(
                !why.starts_with("changed") || want(i).contains(t),
                "night {i} ({message}): {t} timed as changed, its kernel did not change\n{}",
                night.report
            );
        }
        // A drift is filled from its base, not timed (`--time-drift` times it).
        assert!(
            timed
                .iter()
                .all(|(_, why)| !why.starts_with("config drift")),
            "night {i}: a drift timed"
        );
        for line in night
            .report
            .lines()
            .filter(|l| l.contains("  config drift: "))
        {
            assert!(
                line.starts_with("  perf[tuned_add] ")
                    && line.contains(", same code (filled from "),
                "night {i}: {line}"
            );
            drifts += 1;
        }
        // The replay reaches the device's verdicts, its audits' included.
        assert_eq!(
            (night.exit, leaks(&night.report)),
            (recorded[i].exit, leaks(&recorded[i].report)),
            "night {i} ({message})\n{}",
            night.report
        );
    }
    assert!(drifts > 0, "the near tie drifted on no night");
    // Nights that timed nothing but an audit drawn together: a whole benchmark process.
    let audited_whole = recorded
        .iter()
        .filter(|n| {
            let t = timed_rows(&n.report);
            t.len() > 8 && t.iter().all(|(_, why)| why.starts_with("audit"))
        })
        .count();
    assert!(
        audited_whole < 5,
        "{audited_whole} of 30 nights audited whole"
    );
    // Beside a drift, the winners over the recent identity passes: both configs won.
    let spread = replayed
        .iter()
        .rev()
        .find_map(|n| {
            n.report
                .lines()
                .find(|l| l.starts_with("the autotuner's winners for tuned_add_kernel"))
        })
        .expect("no winners' spread beside a drift");
    assert!(
        spread.contains("num_warps: 4") && spread.contains("num_warps: 8"),
        "{spread}"
    );
}

/// Two rows, each launching its own kernel whose code is `code<dim>.txt`; in a timed pass
/// only the rows PERFDB_AFFECTED names (all without it), as `perfdb_affected.wanted`
/// selects.
const TWO_ROWS: &str = r#"#!/bin/sh
n=$(cat "$TRIALS_AT/.trial" 2>/dev/null || echo 0); n=$((n + 1)); echo $n > "$TRIALS_AT/.trial"
[ "$PERFDB_PASS" = identity ] && echo 'perfdb-identity ready {"pid": 1}' && echo 'perfdb-identity toolchain {"triton": "3.6.0"}'
for dim in 64 128; do
  if [ "$PERFDB_PASS" = identity ]; then
    h=$(cksum < code$dim.txt | cut -d' ' -f1)
    mkdir -p "$PERFDB_IDENTITY_DIR/$h"
    cp code$dim.txt "$PERFDB_IDENTITY_DIR/$h/k$dim.ttgir"
    echo "{\"name\": \"k$dim\", \"num_warps\": 4}" > "$PERFDB_IDENTITY_DIR/$h/k$dim.json"
    echo "perfdb-identity launch {\"kernel\": \"k$dim\", \"hash\": \"$h\", \"grid\": [$dim]}"
  elif [ -n "$PERFDB_AFFECTED" ] && ! grep -q "dim=($dim,)" "$PERFDB_AFFECTED"; then
    continue
  fi
  awk -v n="$n" -v dim="$dim" -v base="$(cat speed$dim.txt)" 'BEGIN {
    srand(n * 7919 + dim)
    printf "[perf] dim: (%d,) dtype: bf16, torch avg: %.3f us, ck avg: %.3f us\n", dim, 5 * (1 + 0.004 * (rand() - 0.5)), base * (1 + 0.01 * (rand() - 0.5))
  }'
done
"#;

fn arm(dir: &Path, code64: &str, code128: &str, speed128: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("bench.sh"), TWO_ROWS).unwrap();
    for (f, t) in [
        ("code64.txt", "%0 = tt.add %a, %b"),
        ("speed64.txt", "10"),
        ("code128.txt", code128),
        ("speed128.txt", speed128),
    ] {
        std::fs::write(dir.join(f), format!("{t}\n")).unwrap();
    }
    let _ = code64;
}

/// `ab --affected`: arms that compile to the same kernels run no trial and say so; arms
/// that differ in one row's kernel time that row alone, the other said as not timed.
#[test]
fn ab_times_only_the_rows_whose_kernels_differ_between_the_arms() {
    let wh = Wh::new();
    let (base, head) = (wh.dir.path().join("base"), wh.dir.path().join("head"));
    arm(&base, "", "%0 = tt.mul %a, %b", "20");
    arm(&head, "", "%0 = tt.mul %a, %b", "20");
    let ab = |extra: &[&str]| {
        let mut args = vec![
            "ab",
            "--affected",
            "--seed",
            "3",
            "--quiet",
            "--control",
            "torch",
            "--max-trials",
            "8",
            "--base-dir",
            base.to_str().unwrap(),
            "--head-dir",
            head.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        args.extend(["--", "sh", "bench.sh"]);
        let mut cmd = wh.cmd();
        cmd.args(&args).env("TRIALS_AT", wh.dir.path());
        cmd.output().unwrap()
    };
    let out = ab(&[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).contains("not timed: all 4 row(s) are unchanged"),
        "{}",
        stdout(&out)
    );
    assert_eq!(wh.count("SELECT count(*) FROM runs"), 0, "no trial ran");
    // The head's dim-128 kernel changes (and slows): that row alone is timed.
    arm(&head, "", "%0 = tt.mul %b, %a; tt.barrier", "26");
    let out = ab(&[]);
    let text = stdout(&out);
    assert_eq!(code(&out), 1, "{text}{}", stderr(&out));
    assert!(text.contains("regression"), "{text}");
    assert!(
        text.contains("not timed: perf ck dim=(64,) dtype=bf16: identity equal in both arms"),
        "{text}"
    );
    let keys = wh.sql("SELECT DISTINCT key FROM measurements");
    assert_eq!(keys.len(), 1, "only the changed row was timed: {keys:?}");
    assert!(keys[0]["key"].as_str().unwrap().contains("128"), "{keys:?}");
}

/// `run --affected` night after night: a night that changes one row's kernel times that
/// row alone and fills the other from the night that timed it; `compare` of the two
/// nights says the other row was not timed (its identity equal to that night), never
/// missing; a night that changes nothing stores nothing.
#[test]
fn run_affected_times_the_changed_row_and_compare_says_the_other_was_not_timed() {
    let wh = Wh::new();
    let dir = wh.dir.path().join("bench");
    arm(&dir, "", "%0 = tt.mul %a, %b", "20");
    let night = |commit: &str, mode: &[&str]| {
        let mut args = vec![
            "run", "--label", "nightly", "--commit", commit, "--trials", "3",
        ];
        args.extend_from_slice(mode);
        args.extend(["--", "sh", "bench.sh"]);
        let mut cmd = wh.cmd();
        cmd.args(&args)
            .current_dir(&dir)
            .env("TRIALS_AT", wh.dir.path());
        cmd.output().unwrap()
    };
    let out = night("c1", &["--identity"]);
    assert_eq!(code(&out), 0, "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("every row timed: the base has no identity record"),
        "{}",
        stdout(&out)
    );
    // Nothing changed: nothing timed, nothing stored, each row filled from c1.
    let out = night("c2", &["--affected", "nightly@latest"]);
    let text = stdout(&out);
    assert_eq!(code(&out), 0, "{text}{}", stderr(&out));
    assert!(text.contains("4 row(s), 0 timed, 4 not timed"), "{text}");
    assert!(
        text.contains("unchanged: identity ") && text.contains("equal to nightly@c1"),
        "{text}"
    );
    assert_eq!(
        wh.count("SELECT count(*) FROM runs WHERE \"commit\" = 'c2'"),
        0
    );
    // The dim-128 kernel changes and slows: its rows alone are timed, and judged.
    arm(&dir, "", "%0 = tt.mul %b, %a; tt.barrier", "26");
    let out = night("c3", &["--affected", "nightly@latest"]);
    let text = stdout(&out);
    assert_eq!(code(&out), 1, "{text}{}", stderr(&out));
    assert!(text.contains("4 row(s), 2 timed, 2 not timed"), "{text}");
    assert!(
        text.contains("perf ck dim=(128,) dtype=bf16  [changed: k128]  regression"),
        "{text}"
    );
    assert!(text.contains("GPU-seconds:"), "{text}");
    let keys = wh.sql("SELECT DISTINCT key FROM measurements m JOIN runs r USING (run_id) WHERE r.\"commit\" = 'c3'");
    assert_eq!(keys.len(), 1, "{keys:?}");
    // compare of the two nights: the dim-64 rows were not timed, not missing.
    let out = wh.run(&["compare", "nightly@c1", "nightly@c3", "--control", "torch"]);
    let text = stdout(&out);
    assert!(!text.contains("missing on head"), "{text}");
    assert!(
        text.contains(
            "not timed on head: perf ck dim=(64,) dtype=bf16 latency: identity equal to nightly@c1"
        ),
        "{text}"
    );
    assert!(text.contains("2 row(s) not timed on head"), "{text}");
    assert_eq!(code(&out), 1, "the dim-128 regression decides: {text}");
}
