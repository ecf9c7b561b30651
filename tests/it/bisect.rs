//! `perfdb bisect` on git repositories built here: a benchmark script prints an aiter
//! `summary (markdown):` table (or `[perf]` lines) whose timing comes from the commit's
//! `kernel.conf`, with noise seeded by the trial's count (each worktree counts its own),
//! a flaky row nobody watches, and a build script that fails at one commit.

use crate::common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// The benchmark: the watched row (dim 64) at `kernel.conf` us with about 1% noise, the
/// torch control at 5 us, and a flaky row (dim 128) slowed 50% in a third of the trials.
const BENCH: &str = r#"#!/bin/sh
n=$(cat .trial 2>/dev/null || echo 0); n=$((n + 1)); echo $n > .trial
awk -v n="$n" -v base="$(cat kernel.conf)" 'BEGIN {
  srand(n * 7919 + 17)
  noise = 1 + 0.02 * (rand() + rand() + rand() - 1.5)
  printf "[perf] dim: (64,) dtype: bf16, torch avg: %.3f us, ck avg: %.3f us\n", 5 * (1 + 0.004 * (rand() - 0.5)), base * noise
  slow = (rand() < 0.33) ? 1.5 : 1.0
  printf "[perf] dim: (128,) dtype: bf16, torch avg: 9.000 us, ck avg: %.3f us\n", 20 * slow
}'
"#;

/// The same benchmark printing aiter's table: the watched row n=1024 at `kernel.conf` us
/// with about 1% noise, torch (the control) at 5 us, and n=2048 slowed 50% in a third
/// of the trials.
const AITER_BENCH: &str = r#"#!/bin/sh
n=$(cat .trial 2>/dev/null || echo 0); n=$((n + 1)); echo $n > .trial
echo "[aiter] add summary (markdown):"
echo "|    n | dtype          |   torch us |   triton us |"
echo "|-----:|:---------------|-----------:|------------:|"
awk -v n="$n" -v base="$(cat kernel.conf)" 'BEGIN {
  srand(n * 7919 + 17)
  noise = 1 + 0.02 * (rand() + rand() + rand() - 1.5)
  printf "| 1024 | torch.bfloat16 | %10.3f | %11.3f |\n", 5 * (1 + 0.004 * (rand() - 0.5)), base * noise
  slow = (rand() < 0.33) ? 1.5 : 1.0
  printf "| 2048 | torch.bfloat16 | %10.3f | %11.3f |\n", 9, 20 * slow
}'
"#;

pub(crate) fn git(repo: &Path, args: &[&str], when: usize) {
    let date = format!("2026-06-01T{:02}:{:02}:00Z", 1 + when / 60, when % 60);
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .env("GIT_AUTHOR_NAME", "Ada Kernel")
        .env("GIT_AUTHOR_EMAIL", "ada@example.com")
        .env("GIT_COMMITTER_NAME", "Ada Kernel")
        .env("GIT_COMMITTER_EMAIL", "ada@example.com")
        .env("GIT_AUTHOR_DATE", &date)
        .env("GIT_COMMITTER_DATE", &date)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", stderr(&out));
}

/// A repository of `n + 1` commits (c00 .. cNN), each setting `kernel.conf` to
/// `speed(i)` us; the build fails at the commits in `broken`. Returns each commit's sha.
fn repo(dir: &Path, n: usize, speed: impl Fn(usize) -> f64, broken: &[usize]) -> Vec<String> {
    repo_with(dir, BENCH, n, speed, broken)
}

pub(crate) fn repo_with(
    dir: &Path,
    bench: &str,
    n: usize,
    speed: impl Fn(usize) -> f64,
    broken: &[usize],
) -> Vec<String> {
    repo_subjects(dir, bench, n, speed, broken, |i| {
        format!("c{i:02}: change {i}")
    })
}

/// [`repo_with`], commit `i`'s subject `subject(i)`.
fn repo_subjects(
    dir: &Path,
    bench: &str,
    n: usize,
    speed: impl Fn(usize) -> f64,
    broken: &[usize],
    subject: impl Fn(usize) -> String,
) -> Vec<String> {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q", "-b", "main"], 0);
    std::fs::write(dir.join("bench.sh"), bench).unwrap();
    std::fs::write(dir.join(".gitignore"), ".trial\n").unwrap();
    let mut shas = Vec::new();
    for i in 0..=n {
        std::fs::write(dir.join("kernel.conf"), format!("{}\n", speed(i))).unwrap();
        let build = if broken.contains(&i) {
            "echo 'error: tile config does not compile' >&2; exit 1\n"
        } else {
            "exit 0\n"
        };
        std::fs::write(dir.join("build.sh"), build).unwrap();
        std::fs::write(dir.join("notes.txt"), format!("change {i}\n")).unwrap();
        git(dir, &["add", "-A"], i);
        git(dir, &["commit", "-q", "-m", &subject(i)], i);
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

pub(crate) fn bisect(wh: &Wh, args: &[&str]) -> (i32, Value, String) {
    let mut all = vec!["bisect", "--format", "json", "--quiet", "--seed", "7"];
    all.extend_from_slice(args);
    let out = wh.run(&all);
    let v = serde_json::from_str(&stdout(&out))
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&out), stderr(&out)));
    (code(&out), v, stderr(&out))
}

#[test]
fn bisect_names_the_commit_in_log2_steps_and_skips_a_broken_build() {
    let wh = Wh::new();
    let dir = wh.dir.path().join("kernels");
    // 32 commits after c00; c19 slows the kernel 30%; c16 does not build.
    let shas = repo_with(
        &dir,
        AITER_BENCH,
        32,
        |i| if i >= 19 { 13.0 } else { 10.0 },
        &[16],
    );
    let logs = wh.dir.path().join("bisect-logs");
    let (exit, v, err) = bisect(
        &wh,
        &[
            "--repo",
            dir.to_str().unwrap(),
            "--good",
            &shas[0],
            "--bad",
            &shas[32],
            "--series",
            "triton n=1024",
            "--build",
            "sh build.sh",
            "--control",
            "torch",
            "--logs",
            logs.to_str().unwrap(),
            "--",
            "sh",
            "bench.sh",
        ],
    );
    assert_eq!(exit, 0, "{err}\n{v}");
    let parts = v["parts"].as_array().unwrap();
    assert_eq!(parts.len(), 1, "{v}");
    let c = &parts[0]["culprit"];
    assert_eq!(c["sha"], shas[19].as_str(), "{v}");
    assert_eq!(c["subject"], "c19: change 19");
    assert_eq!(c["author"], "Ada Kernel <ada@example.com>");
    // Its evidence: the watched row about 1.3x the good end's.
    let ev = parts[0]["evidence"].as_array().unwrap();
    assert!(!ev.is_empty(), "{v}");
    let ratio = ev[0]["ratio"].as_f64().unwrap();
    assert!((1.2..1.4).contains(&ratio), "{ratio}");
    assert_eq!(ev[0]["state"], "regression");
    // Steps: at most ceil(log2 32) + the skips; the broken commit, if tried, skipped.
    let steps = v["steps"].as_array().unwrap();
    let skipped = v["skipped"].as_array().unwrap();
    assert!(
        steps.len() <= 5 + skipped.len(),
        "{} steps, {} skipped: {v}",
        steps.len(),
        skipped.len()
    );
    for s in skipped {
        assert_eq!(s, shas[16].as_str());
    }
    assert_eq!(
        skipped.len(),
        1,
        "the first step's middle is c16, which does not build"
    );
    let broken = steps
        .iter()
        .find(|s| s["commit"] == shas[16].as_str())
        .unwrap();
    assert!(
        broken["why"].as_str().unwrap().contains("the build exited"),
        "{broken}"
    );
    assert!(v["gpu_seconds"].as_f64().unwrap() > 0.0);
    // Every trial is stored under the bisect's label with its commit.
    let label = v["label"].as_str().unwrap();
    let stored = wh.count(&format!(
        "SELECT count(*) FROM runs WHERE label = '{label}' AND \"commit\" = '{}'",
        shas[19]
    ));
    assert!(stored >= 4, "{stored} runs of the culprit");
    // The good end's trials are stored once a step and compared in every later step.
    let good_runs = wh.count(&format!(
        "SELECT count(*) FROM runs WHERE label = '{label}' AND \"commit\" = '{}'",
        shas[0]
    ));
    let head_steps = steps.iter().filter(|s| s["found"] != "skipped").count() as i64;
    assert!(good_runs >= 4 * head_steps, "{good_runs}");
    // The worktrees are gone.
    let trees = Command::new("git")
        .arg("-C")
        .arg(&dir)
        .args(["worktree", "list"])
        .output()
        .unwrap();
    assert_eq!(stdout(&trees).lines().count(), 1, "{}", stdout(&trees));

    // The terminal form.
    let out = wh.run(&[
        "bisect",
        "--quiet",
        "--seed",
        "7",
        "--repo",
        dir.to_str().unwrap(),
        "--good",
        &shas[17],
        "--bad",
        &shas[20],
        "--series",
        "triton n=1024",
        "--",
        "sh",
        "bench.sh",
    ]);
    let text = stdout(&out);
    assert_eq!(code(&out), 0, "{text}{}", stderr(&out));
    assert!(
        text.contains(&format!("culprit {}: c19: change 19", &shas[19][..12])),
        "{text}"
    );
    assert!(text.contains("Ada Kernel <ada@example.com>"), "{text}");
}

/// A 30-commit repository at `speed`, measured nightly at c00-c08 and c28-c30 (three
/// trials each) and `detect`ed: the alert says "between c08 and c28". Its commits and
/// the watched row's alert id.
pub(crate) fn nightly_alert(
    wh: &Wh,
    dir: &Path,
    speed: impl Fn(usize) -> f64,
) -> (Vec<String>, String) {
    let shas = repo(dir, 30, speed, &[]);
    for (k, i) in [0, 2, 4, 6, 8, 28, 29, 30].into_iter().enumerate() {
        git(dir, &["checkout", "-q", &shas[i]], 0);
        let time = format!("2026-06-02T{:02}:00:00Z", k + 1);
        for _ in 0..3 {
            let out = wh
                .cmd()
                .current_dir(dir)
                .args([
                    "run",
                    "--label",
                    "main",
                    "--commit",
                    &shas[i],
                    "--commit-time",
                    &time,
                    "--",
                    "sh",
                    "bench.sh",
                ])
                .output()
                .unwrap();
            assert_eq!(code(&out), 0, "{}", stderr(&out));
        }
    }
    git(dir, &["checkout", "-q", "main"], 0);
    let out = wh.run(&["detect", "--label", "main"]);
    assert_eq!(code(&out), 1, "{}{}", stdout(&out), stderr(&out));
    let alerts: Vec<Value> = serde_json::from_str(&wh.ok(&["alerts", "--format", "json"])).unwrap();
    let alert = alerts
        .iter()
        .find(|a| a["key_text"].as_str().unwrap().contains("(64,)") && a["variant"] == "ck")
        .unwrap_or_else(|| panic!("{alerts:?}"));
    assert_eq!(alert["last_good_commit"], shas[8].as_str());
    assert_eq!(alert["first_bad_commit"], shas[28].as_str());
    let id = alert["id"].as_str().unwrap().to_string();
    (shas, id)
}

#[test]
fn a_step_in_two_parts_from_an_alert_says_each_share() {
    let wh = Wh::new();
    let dir = wh.dir.path().join("kernels");
    // +15% at c10 and +15% more at c25.
    let speed = |i: usize| match i {
        0..=9 => 10.0,
        10..=24 => 11.5,
        _ => 13.225,
    };
    let (shas, id) = nightly_alert(&wh, &dir, speed);
    let id = id.as_str();

    // No command after `--`: the alert's runs say how they were made.
    let (url, told) = receiver(vec![]);
    let (exit, v, err) = bisect(
        &wh,
        &[&id[..8], "--repo", dir.to_str().unwrap(), "--notify", &url],
    );
    assert_eq!(exit, 0, "{err}\n{v}");
    let parts = v["parts"].as_array().unwrap();
    assert_eq!(parts.len(), 2, "{v}");
    assert_eq!(parts[0]["culprit"]["sha"], shas[10].as_str(), "{v}");
    assert_eq!(parts[1]["culprit"]["sha"], shas[25].as_str(), "{v}");
    for p in parts {
        let share = p["share"].as_f64().unwrap();
        assert!((0.35..0.65).contains(&share), "{share}: {v}");
    }
    // The second part was searched against the first culprit.
    let later = v["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["against"] == shas[10].as_str())
        .count();
    assert!(later >= 1, "{v}");

    // The alert's watchers are told, once, with the result.
    let told = told.lock().unwrap().clone();
    assert_eq!(told.len(), 1, "{told:?}");
    assert_eq!(
        told[0]["bisect"]["parts"][1]["culprit"]["sha"],
        shas[25].as_str()
    );
    let text = told[0]["text"].as_str().unwrap();
    assert!(
        text.contains(&format!("bisect: culprit {}", &shas[10][..12])) && text.contains("then"),
        "{text}"
    );
    // Stored with every alert of the alert's group (a group has one bisect).
    let groups: Vec<Value> =
        serde_json::from_str(&wh.ok(&["alerts", "list", "--grouped", "--format", "json"])).unwrap();
    let group = groups
        .iter()
        .find(|g| {
            g["alerts"]
                .as_array()
                .unwrap()
                .iter()
                .any(|a| a["id"] == id)
        })
        .unwrap();
    for m in group["alerts"].as_array().unwrap() {
        let shown: Value = serde_json::from_str(&wh.ok(&[
            "alerts",
            "show",
            m["id"].as_str().unwrap(),
            "--format",
            "json",
        ]))
        .unwrap();
        assert_eq!(shown["bisect"]["label"], v["label"], "{m}");
    }
    assert_eq!(
        v["label"],
        format!("bisect-{}", group["id"].as_str().unwrap()).as_str()
    );
    // Its JSON and its terminal form name the culprits.
    let shown: Value =
        serde_json::from_str(&wh.ok(&["alerts", "show", id, "--format", "json"])).unwrap();
    assert_eq!(
        shown["bisect"]["parts"][0]["culprit"]["sha"],
        shas[10].as_str()
    );
    let text = wh.ok(&["alerts", "show", id]);
    assert!(
        text.contains(&format!("bisect: culprit {}", &shas[10][..12])),
        "{text}"
    );
    assert!(text.contains("then"), "{text}");
    // And its page.
    let page = alert_page(&wh, id);
    assert!(
        page.contains("<h2>Bisected</h2>")
            && page.contains(&format!("bisect: culprit {}", &shas[10][..12])),
        "{page}"
    );
    // Its steps, the ends first, as the record holds them.
    let steps = page.split("id=\"bisect-steps\"").nth(1).unwrap_or("");
    assert_eq!(
        steps.matches("<tr><td>").count(),
        v["steps"].as_array().unwrap().len() + 1,
        "{page}"
    );
    assert!(steps.contains("(the ends)"), "{page}");
    // A record cut short is said, never shown as "not bisected".
    let stored = wh.path().join("bisect").join(format!("{id}.json"));
    std::fs::write(&stored, "{\"label\": ").unwrap();
    let out = wh.run(&["alerts", "show", id]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(
        stderr(&out).contains(&format!("{} is not a bisect result", stored.display())),
        "{}",
        stderr(&out)
    );
    let page = alert_page(&wh, id);
    assert!(page.contains("is not a bisect result"), "{page}");
}

/// `/alerts/ID` from `perfdb serve` on a free loopback port.
pub(crate) fn alert_page(wh: &Wh, id: &str) -> String {
    use std::io::{BufRead, BufReader, Read, Write};
    let mut child = wh
        .cmd()
        .args(["serve", "--bind", "127.0.0.1:0"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .split("http://")
        .last()
        .unwrap()
        .trim()
        .trim_end_matches('/');
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "GET /alerts/{id} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut page = String::new();
    stream.read_to_string(&mut page).unwrap();
    let _ = child.kill();
    let _ = child.wait();
    page
}

/// The bisect `perfdb bisect` made on an H200 (sample-data/h200-bisect/PROVENANCE.md):
/// its record names c11 in ceil(log2 15) = 4 steps, each step's verdict is the one its
/// commit's config gives, and each step's recorded trials compare to that verdict again.
#[test]
fn the_recorded_h200_bisect_holds() {
    let dir = sample("h200-bisect");
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("bisect.json")).unwrap()).unwrap();
    let subjects: std::collections::HashMap<String, String> =
        std::fs::read_to_string(dir.join("commits.txt"))
            .unwrap()
            .lines()
            .map(|l| {
                let (sha, subject) = l.split_once(' ').unwrap();
                (sha.to_string(), subject.to_string())
            })
            .collect();
    let number = |sha: &str| -> usize {
        subjects[sha]
            .strip_prefix('c')
            .unwrap()
            .split(':')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    assert_eq!(v["commits"], 15);
    assert_eq!(v["parts"][0]["culprit"]["subject"], "c11: change 11");
    let steps = v["steps"].as_array().unwrap();
    assert!(steps.len() <= 4, "{}", steps.len());
    for s in steps {
        let sha = s["commit"].as_str().unwrap();
        let want = if number(sha) >= 11 { "bad" } else { "good" };
        assert_eq!(s["found"], want, "{}", subjects[sha]);
        // The step's trials (warm-up first) compared again, one-shot.
        let wh = Wh::new();
        let step = dir.join("steps").join(&sha[..12]);
        for (arm, label) in [("base", "good"), ("head", "step")] {
            let n = std::fs::read_dir(step.join(arm)).unwrap().count();
            for t in 2..=n {
                let f = step.join(arm).join(format!("trial{t}.log"));
                wh.ok(&["ingest", f.to_str().unwrap(), "--label", label]);
            }
        }
        let (rc, c) = compare_json(&wh, &["good", "step", "--control", "torch"]);
        let triton = c["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["variant"] == "triton")
            .unwrap();
        if want == "bad" {
            assert_eq!(rc, 1, "{}", subjects[sha]);
            let ratio = triton["ratio"].as_f64().unwrap();
            assert!(
                (5.0..6.0).contains(&ratio),
                "{ratio}: block 64 against 1024"
            );
        } else {
            assert_ne!(triton["verdict"], "regression", "{}", subjects[sha]);
        }
    }
}

#[test]
fn bisect_errors_name_what_is_wrong() {
    let wh = Wh::new();
    let dir = wh.dir.path().join("kernels");
    let shas = repo(&dir, 3, |_| 10.0, &[0]);
    let repo_arg = dir.to_str().unwrap();
    let run = |args: &[&str]| {
        let out = wh.run(args);
        assert_eq!(code(&out), 2, "{args:?}: {}", stderr(&out));
        stderr(&out)
    };
    // Reversed ends.
    let err = run(&[
        "bisect", "--repo", repo_arg, "--good", &shas[3], "--bad", &shas[0], "--", "sh", "bench.sh",
    ]);
    assert!(
        err.contains("is not an ancestor of the bad commit"),
        "{err}"
    );
    // An unknown commit.
    let err = run(&[
        "bisect", "--repo", repo_arg, "--good", "nope", "--bad", &shas[3], "--", "sh", "bench.sh",
    ]);
    assert!(err.contains("no commit 'nope'"), "{err}");
    // A good end that does not build.
    let err = run(&[
        "bisect",
        "--repo",
        repo_arg,
        "--good",
        &shas[0],
        "--bad",
        &shas[3],
        "--build",
        "sh build.sh",
        "--",
        "sh",
        "bench.sh",
    ]);
    assert!(
        err.contains("the good end") && err.contains("cannot be built"),
        "{err}"
    );
    // Neither an alert nor both ends; no command and no alert to take one from.
    let err = run(&["bisect", "--repo", repo_arg, "--good", &shas[0]]);
    assert!(
        err.contains("give an alert id, or both --good and --bad"),
        "{err}"
    );
    let err = run(&[
        "bisect", "--repo", repo_arg, "--good", &shas[0], "--bad", &shas[3],
    ]);
    assert!(
        err.contains("give the benchmark command after `--`"),
        "{err}"
    );
    // An alert whose commits this repository does not have: which end, and the flag.
    let alerts = Wh::new();
    ingest_history(&alerts, &(1..=20).collect::<Vec<_>>());
    alerts.run(&["detect", "--label", "main"]);
    let listed: Vec<Value> =
        serde_json::from_str(&alerts.ok(&["alerts", "--format", "json"])).unwrap();
    let out = alerts.run(&[
        "bisect",
        listed[0]["id"].as_str().unwrap(),
        "--repo",
        repo_arg,
    ]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("no commit 'c12' in")
            && stderr(&out).contains("(the alert's last good commit; --good names another)"),
        "{}",
        stderr(&out)
    );
    // An alert id nothing has.
    let err = run(&["bisect", "ffff", "--repo", repo_arg]);
    assert!(err.contains("no alert id starts with 'ffff'"), "{err}");
    // The same commit at both ends.
    let err = run(&[
        "bisect", "--repo", repo_arg, "--good", &shas[2], "--bad", &shas[2], "--", "sh", "bench.sh",
    ]);
    assert!(err.contains("are the same commit"), "{err}");
}

#[test]
fn a_culprits_subject_is_printed_with_its_control_characters_visible() {
    let wh = Wh::new();
    let dir = wh.dir.path().join("kernels");
    // c02 slows the kernel 30%; its subject retitles the window and clears the screen.
    let evil = "tiles\x1b]0;owned\x07 \x1b[2J";
    let shas = repo_subjects(
        &dir,
        BENCH,
        3,
        |i| if i >= 2 { 13.0 } else { 10.0 },
        &[],
        |i| {
            if i == 2 {
                evil.to_string()
            } else {
                format!("c{i:02}")
            }
        },
    );
    let out = wh.run(&[
        "bisect",
        "--quiet",
        "--seed",
        "7",
        "--repo",
        dir.to_str().unwrap(),
        "--good",
        &shas[0],
        "--bad",
        &shas[3],
        "--series",
        "(64,)",
        "--",
        "sh",
        "bench.sh",
    ]);
    let text = stdout(&out);
    assert_eq!(code(&out), 0, "{text}{}", stderr(&out));
    assert!(
        !text.contains('\x1b') && !text.contains('\x07'),
        "raw control characters reached the terminal: {text:?}"
    );
    assert!(
        text.contains(&format!(
            "culprit {}: tiles\\u{{1b}}]0;owned\\u{{7}} \\u{{1b}}[2J",
            &shas[2][..12]
        )),
        "{text}"
    );
}

#[test]
fn a_range_with_no_change_names_no_culprit() {
    let wh = Wh::new();
    let dir = wh.dir.path().join("kernels");
    // Eight commits, the kernel never changes: the bad end is no worse than the good.
    let shas = repo(&dir, 8, |_| 10.0, &[]);
    let (exit, v, err) = bisect(
        &wh,
        &[
            "--repo",
            dir.to_str().unwrap(),
            "--good",
            &shas[0],
            "--bad",
            &shas[8],
            "--series",
            "(64,)",
            "--",
            "sh",
            "bench.sh",
        ],
    );
    assert_eq!(exit, 3, "{err}\n{v}");
    assert_eq!(v["parts"], serde_json::json!([]), "{v}");
    assert_ne!(v["ends"]["found"], "bad", "{v}");
    assert_eq!(
        v["steps"],
        serde_json::json!([]),
        "no search without a step: {v}"
    );
    let out = wh.run(&[
        "bisect",
        "--quiet",
        "--seed",
        "7",
        "--repo",
        dir.to_str().unwrap(),
        "--good",
        &shas[0],
        "--bad",
        &shas[8],
        "--series",
        "(64,)",
        "--",
        "sh",
        "bench.sh",
    ]);
    assert_eq!(code(&out), 3);
    let text = stdout(&out);
    assert!(
        text.contains("the step does not reproduce here")
            || text.contains("the ends could not be verified"),
        "{text}"
    );
    assert!(!text.contains("culprit "), "{text}");
}

/// [`BENCH`], but a negative `kernel.conf` (`-13`) runs at 13 us and crashes its third
/// trial (exit 1, no output): a flaky commit.
const FLAKY_BENCH: &str = r#"#!/bin/sh
n=$(cat .trial 2>/dev/null || echo 0); n=$((n + 1)); echo $n > .trial
base=$(cat kernel.conf)
case "$base" in -*) base=${base#-}; [ "$n" -eq 3 ] && exit 1 ;; esac
awk -v n="$n" -v base="$base" 'BEGIN {
  srand(n * 7919 + 17)
  noise = 1 + 0.02 * (rand() + rand() + rand() - 1.5)
  printf "[perf] dim: (64,) dtype: bf16, torch avg: %.3f us, ck avg: %.3f us\n", 5 * (1 + 0.004 * (rand() - 0.5)), base * noise
}'
"#;

#[test]
fn a_trial_that_fails_inside_a_step_skips_it() {
    let wh = Wh::new();
    let dir = wh.dir.path().join("kernels");
    // c02 slows the kernel 30% and crashes one trial in its worktree.
    let shas = repo_with(
        &dir,
        FLAKY_BENCH,
        4,
        |i| match i {
            0 | 1 => 10.0,
            2 => -13.0,
            _ => 13.0,
        },
        &[],
    );
    let (exit, v, err) = bisect(
        &wh,
        &[
            "--repo",
            dir.to_str().unwrap(),
            "--good",
            &shas[0],
            "--bad",
            &shas[4],
            "--series",
            "(64,)",
            "--",
            "sh",
            "bench.sh",
        ],
    );
    let steps = v["steps"].as_array().unwrap();
    let c2 = steps
        .iter()
        .find(|s| s["commit"] == shas[2].as_str())
        .unwrap_or_else(|| panic!("c02 was not tried: {v}\n{err}"));
    assert_eq!(c2["found"], "skipped", "{c2}");
    let why = c2["why"].as_str().unwrap();
    assert!(why.contains("trial(s) failed"), "{why}");
    // Never a culprit named past a skipped commit next to it.
    assert_eq!(exit, 3, "{v}");
    assert_eq!(v["parts"], serde_json::json!([]), "{v}");
}

/// Whether a process whose command line holds `marker` is running.
pub(crate) fn running(marker: &str) -> bool {
    Command::new("pgrep")
        .args(["-f", marker])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn a_cancelled_build_leaves_no_process_and_no_worktree() {
    let wh = Wh::new();
    let dir = wh.dir.path().join("kernels");
    let shas = repo(&dir, 4, |i| if i >= 2 { 13.0 } else { 10.0 }, &[]);
    let child = wh
        .cmd()
        .args([
            "bisect",
            "--quiet",
            "--repo",
            dir.to_str().unwrap(),
            "--good",
            &shas[0],
            "--bad",
            &shas[4],
            "--series",
            "(64,)",
            "--build",
            // The build's process reads `sleep 127`; perfdb's own command line does not.
            "exec sleep $((127))",
            "--",
            "sh",
            "bench.sh",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while !running("sleep 127") && started.elapsed() < std::time::Duration::from_secs(30) {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(running("sleep 127"), "the build never started");
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(!running("sleep 127"), "the build outlived the bisect");
    let trees = Command::new("git")
        .arg("-C")
        .arg(&dir)
        .args(["worktree", "list"])
        .output()
        .unwrap();
    assert_eq!(stdout(&trees).lines().count(), 1, "{}", stdout(&trees));
}

#[test]
fn a_hung_build_is_stopped_at_its_deadline_and_a_background_child_holds_nothing() {
    let wh = Wh::new();
    let dir = wh.dir.path().join("kernels");
    let shas = repo(&dir, 2, |i| if i >= 2 { 13.0 } else { 10.0 }, &[]);
    // The good end's build leaves `sleep` running with the output open: the bisect goes
    // on; every later build hangs past its deadline: skipped.
    let build =
        "if [ \"$(cat notes.txt)\" = 'change 0' ]; then sleep $((61)) & exit 0; else exec sleep $((62)); fi";
    let t0 = std::time::Instant::now();
    let (exit, v, err) = bisect(
        &wh,
        &[
            "--repo",
            dir.to_str().unwrap(),
            "--good",
            &shas[0],
            "--bad",
            &shas[2],
            "--series",
            "(64,)",
            "--build",
            build,
            "--build-timeout",
            "2",
            "--",
            "sh",
            "bench.sh",
        ],
    );
    assert!(t0.elapsed() < std::time::Duration::from_secs(50), "{err}");
    assert_eq!(exit, 3, "{err}\n{v}");
    let why = v["ends"]["why"].as_str().unwrap_or_default();
    assert!(why.contains("--build-timeout"), "{v}");
    assert!(!running("sleep 62"), "the hung build outlived its deadline");
}

#[test]
fn a_later_part_at_the_bad_end_is_measured_before_it_is_named() {
    let wh = Wh::new();
    let dir = wh.dir.path().join("kernels");
    // +15% at c10 and +15% more at c28, the alert's first bad commit: the second part's
    // culprit is the bad end, which no step of that part tries.
    let speed = |i: usize| match i {
        0..=9 => 10.0,
        10..=27 => 11.5,
        _ => 13.225,
    };
    let (shas, id) = nightly_alert(&wh, &dir, speed);
    let (exit, v, err) = bisect(&wh, &[&id[..8], "--repo", dir.to_str().unwrap()]);
    assert_eq!(exit, 0, "{err}\n{v}");
    let parts = v["parts"].as_array().unwrap();
    assert_eq!(parts.len(), 2, "{v}");
    assert_eq!(parts[1]["culprit"]["sha"], shas[28].as_str(), "{v}");
    // Its evidence is its own trials against the first culprit, never the alert's word.
    let ev = parts[1]["evidence"].as_array().unwrap();
    assert!(!ev.is_empty(), "{v}");
    assert_eq!(ev[0]["state"], "regression", "{v}");
    let text = stdout(&wh.run(&[
        "bisect",
        "--quiet",
        "--seed",
        "7",
        &id[..8],
        "--repo",
        dir.to_str().unwrap(),
    ]));
    assert!(!text.contains("its evidence is the alert's step"), "{text}");
}

/// The two bisects `examples/h200/bisect_ends.sh` made on an H200
/// (sample-data/h200-bisect-ends/PROVENANCE.md): a range with no change ends at its ends'
/// check with no culprit; a real step is verified, then found.
#[test]
fn the_recorded_h200_bisects_verify_their_ends() {
    let dir = sample("h200-bisect-ends");
    let read = |case: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join(format!("{case}.json"))).unwrap())
            .unwrap()
    };
    let exit_of = |case: &str| -> String {
        let err = std::fs::read_to_string(dir.join(format!("{case}.stderr"))).unwrap();
        err.lines().last().unwrap().to_string()
    };
    let none = read("false-alarm");
    assert_eq!(none["ends"]["found"], "good", "{none}");
    assert_eq!(none["parts"], serde_json::json!([]));
    assert_eq!(none["steps"], serde_json::json!([]));
    let ratio = none["ends"]["evidence"][0]["ratio"].as_f64().unwrap();
    assert!((0.95..1.05).contains(&ratio), "{ratio}");
    assert!(exit_of("false-alarm").starts_with("exit 3 "));

    let step = read("step");
    assert_eq!(step["ends"]["found"], "bad", "{step}");
    let ratio = step["ends"]["evidence"][0]["ratio"].as_f64().unwrap();
    assert!(
        (5.0..6.0).contains(&ratio),
        "block 64 against 1024: {ratio}"
    );
    assert_eq!(step["parts"][0]["culprit"]["subject"], "c6: change 6");
    let subjects: std::collections::HashMap<String, usize> =
        std::fs::read_to_string(dir.join("step.commits.txt"))
            .unwrap()
            .lines()
            .map(|l| {
                let (sha, subject) = l.split_once(' ').unwrap();
                let n = subject[1..].split(':').next().unwrap().parse().unwrap();
                (sha.to_string(), n)
            })
            .collect();
    for s in step["steps"].as_array().unwrap() {
        let n = subjects[s["commit"].as_str().unwrap()];
        assert_eq!(s["found"], if n >= 6 { "bad" } else { "good" }, "c{n}: {s}");
    }
    assert!(exit_of("step").starts_with("exit 0 "));
}

/// Commit the tree with `kernel.conf` at `us` under `subject` at time `when`; its sha.
fn commit_at(dir: &Path, us: f64, subject: &str, when: usize) -> String {
    std::fs::write(dir.join("kernel.conf"), format!("{us}\n")).unwrap();
    std::fs::write(dir.join("notes.txt"), format!("{subject}\n")).unwrap();
    git(dir, &["add", "-A"], when);
    git(dir, &["commit", "-q", "-m", subject], when);
    rev(dir, "HEAD")
}

fn rev(dir: &Path, name: &str) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["rev-parse", name])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// Main c0, c1; a side branch s1, s2 (the slowdown, its subject holding a 0x1f byte),
/// s3; main's m2 dated between s2 and s3; the merge; c8. As a line by date m2 sits
/// between s2 and s3 and, measured fast, would clear s2: git bisect names s2, and so
/// must perfdb, with the subject as git stores it.
#[test]
fn a_side_branch_culprit_is_found_across_a_merge() {
    let wh = Wh::new();
    let dir = wh.dir.path().join("kernels");
    std::fs::create_dir_all(&dir).unwrap();
    git(&dir, &["init", "-q", "-b", "main"], 0);
    std::fs::write(dir.join("bench.sh"), BENCH).unwrap();
    std::fs::write(dir.join(".gitignore"), ".trial\n").unwrap();
    let c0 = commit_at(&dir, 10.0, "c0", 0);
    commit_at(&dir, 10.0, "c1", 1);
    git(&dir, &["checkout", "-q", "-b", "side"], 2);
    std::fs::write(dir.join("side.txt"), "1\n").unwrap();
    commit_at(&dir, 10.0, "s1: side start", 2);
    let subject = "s2: wider tiles\u{1f}(for the big shapes)";
    let s2 = commit_at(&dir, 13.0, subject, 3);
    git(&dir, &["checkout", "-q", "main"], 4);
    std::fs::write(dir.join("main.txt"), "m2\n").unwrap();
    commit_at(&dir, 10.0, "m2: main docs", 4);
    git(&dir, &["checkout", "-q", "side"], 5);
    std::fs::write(dir.join("side.txt"), "3\n").unwrap();
    commit_at(&dir, 13.0, "s3: side cleanup", 5);
    git(&dir, &["checkout", "-q", "main"], 6);
    git(
        &dir,
        &[
            "merge",
            "-q",
            "--no-ff",
            "-X",
            "theirs",
            "-m",
            "merge side",
            "side",
        ],
        6,
    );
    commit_at(&dir, 13.0, "c8", 8);
    let (exit, v, err) = bisect(
        &wh,
        &[
            "--repo",
            dir.to_str().unwrap(),
            "--good",
            &c0,
            "--bad",
            "main",
            "--series",
            "(64,)",
            "--",
            "sh",
            "bench.sh",
        ],
    );
    assert_eq!(exit, 0, "{err}\n{v}");
    let parts = v["parts"].as_array().unwrap();
    assert_eq!(parts.len(), 1, "{v}");
    assert_eq!(parts[0]["culprit"]["sha"], s2.as_str(), "{v}");
    assert_eq!(parts[0]["culprit"]["subject"], subject, "{v}");
    // Its one parent, s1, is known good.
    let parents = parts[0]["parents"].as_array().unwrap();
    assert_eq!(parents.len(), 1, "{v}");
    assert_ne!(parents[0]["known"], "not known good", "{v}");
    // The range is the graph's seven commits, merge and side branch included.
    assert_eq!(v["commits"], 7, "{v}");
}
