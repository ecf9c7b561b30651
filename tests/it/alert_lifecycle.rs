//! The alert lifecycle as CI really runs `perfdb detect`: after every commit, commits
//! arriving shuffled (with their commit times) and late, blips at the tip, partial and
//! full fixes, a crash between the two alert commits, two detects delivering at once,
//! and slow receivers. Built on the real H200 history (20 commits x 3 trials, the
//! Triton tile config change at c13: three shapes, in two formats, so six steps).

use crate::common::*;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// `perfdb detect --format json` plus `extra`: the exit code and the whole output.
fn detect(wh: &Wh, extra: &[&str]) -> (i32, Value) {
    let mut args = vec!["detect", "--label", "main", "--format", "json"];
    args.extend_from_slice(extra);
    let out = wh.run(&args);
    let v: Value = serde_json::from_str(&stdout(&out))
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&out), stderr(&out)));
    (code(&out), v)
}

fn alerts(wh: &Wh) -> Vec<Value> {
    serde_json::from_str(&wh.ok(&["alerts", "list", "--format", "json"])).unwrap()
}

/// (table, variant, shape, machine, last good, first bad) of the alerts in `status`.
fn in_status(wh: &Wh, status: &str) -> BTreeSet<(String, String, String, String, String, String)> {
    alerts(wh)
        .iter()
        .filter(|a| a["status"] == status)
        .map(|a| {
            let s = |k: &str| a[k].as_str().unwrap().to_string();
            (
                s("table"),
                s("variant"),
                s("key_text"),
                s("machine"),
                s("last_good_commit"),
                s("first_bad_commit"),
            )
        })
        .collect()
}

fn ids(v: &Value, what: &str) -> Vec<String> {
    v["raised"][what]
        .as_array()
        .unwrap_or_else(|| panic!("raised.{what}: {v}"))
        .iter()
        .map(|i| i.as_str().unwrap().to_string())
        .collect()
}

fn history_commit(wh: &Wh, c: usize) {
    ingest_history(wh, &[c]);
}

/// A deterministic shuffle of 1..=n.
fn shuffled(n: usize, seed: u64) -> Vec<usize> {
    let mut v: Vec<usize> = (1..=n).collect();
    let mut x = seed;
    for i in (1..v.len()).rev() {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        v.swap(i, (x >> 33) as usize % (i + 1));
    }
    v
}

/// Ingest the history in `order` with a detect after every commit; after each, the
/// active alerts must be what one detect over the same data (a copy of the warehouse
/// without alerts) stores. Returns every id raised and how often.
fn incremental(order: &[usize]) -> (Wh, BTreeMap<String, usize>) {
    let wh = Wh::new();
    let data = Wh::new(); // the same ingests, never detected
    let mut raised: BTreeMap<String, usize> = BTreeMap::new();
    for (step, &c) in order.iter().enumerate() {
        history_commit(&wh, c);
        history_commit(&data, c);
        let (exit, v) = detect(&wh, &[]);
        let new = ids(&v, "new_alerts");
        assert_eq!(exit, if new.is_empty() { 0 } else { 1 }, "{}", v["raised"]);
        for id in new {
            *raised.entry(id).or_default() += 1;
        }
        let batch = Wh::new();
        copy_dir(&data.path(), &batch.path());
        detect(&batch, &[]);
        assert_eq!(
            in_status(&wh, "active"),
            in_status(&batch, "active"),
            "after commit {c} (step {step} of {order:?}): incremental and batch differ"
        );
    }
    (wh, raised)
}

/// The six steps of the history at c13, as (table, variant, M).
fn the_six(wh: &Wh, status: &str) -> Vec<(String, String, String)> {
    let mut v: Vec<(String, String, String)> = in_status(wh, status)
        .into_iter()
        .map(|(t, var, key, _, lg, fb)| {
            assert_eq!(
                (lg.as_str(), fb.as_str()),
                ("c12", "c13"),
                "{t} {var} {key}"
            );
            let m = key
                .split(' ')
                .find_map(|c| c.strip_prefix("M="))
                .unwrap()
                .to_string();
            (t, var, m)
        })
        .collect();
    v.sort();
    v
}

fn six() -> Vec<(String, String, String)> {
    [
        ("gemm.mm", "triton_mm_a16w16", "256"),
        ("gemm.mm", "triton_mm_a16w16", "4096"),
        ("gemm.mm", "triton_mm_a16w16", "512"),
        ("gemm_a16w16", "triton", "256"),
        ("gemm_a16w16", "triton", "4096"),
        ("gemm_a16w16", "triton", "512"),
    ]
    .iter()
    .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    .collect()
}

#[test]
fn detect_after_every_commit_in_order_raises_each_step_once() {
    let (wh, raised) = incremental(&(1..=20).collect::<Vec<_>>());
    assert_eq!(raised.len(), 6, "{raised:?}");
    assert!(raised.values().all(|n| *n == 1), "{raised:?}");
    assert_eq!(the_six(&wh, "active"), six());
    assert_eq!(alerts(&wh).len(), 6, "no alert but the six, in any status");
}

#[test]
fn shuffled_arrival_gives_the_same_six_alerts_raised_once() {
    for seed in [7, 2026] {
        let order = shuffled(20, seed);
        let (wh, raised) = incremental(&order);
        assert!(raised.values().all(|n| *n == 1), "{order:?}: {raised:?}");
        assert_eq!(the_six(&wh, "active"), six(), "{order:?}");
        let ever: BTreeSet<String> = raised.keys().cloned().collect();
        let now: BTreeSet<String> = alerts(&wh)
            .iter()
            .filter(|a| a["status"] == "active")
            .map(|a| a["id"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(
            ever, now,
            "{order:?}: an alert was raised that is not one of the six"
        );
    }
}

#[test]
fn a_late_commit_moves_the_step_and_keeps_the_alert_and_its_triage() {
    // c13 arrives last: the step is first seen at c14 (last good c12).
    let wh = Wh::new();
    let order: Vec<usize> = (1..=20).filter(|c| *c != 13).collect();
    ingest_history(&wh, &order);
    let (exit, v) = detect(&wh, &[]);
    assert_eq!(exit, 1);
    assert_eq!(ids(&v, "new_alerts").len(), 6);
    let before = alerts(&wh);
    assert!(
        before.iter().all(|a| a["first_bad_commit"] == "c14"),
        "{before:?}"
    );
    let dismissed = before[0]["id"].as_str().unwrap().to_string();
    wh.ok(&[
        "alerts",
        "dismiss",
        &dismissed,
        "--note",
        "known: tile change",
    ]);
    history_commit(&wh, 13);
    let (exit, v) = detect(&wh, &[]);
    assert_eq!(exit, 0, "a late commit raises nothing: {}", v["raised"]);
    assert!(ids(&v, "new_alerts").is_empty());
    assert_eq!(ids(&v, "updated").len(), 6, "{}", v["raised"]);
    let after = alerts(&wh);
    assert_eq!(after.len(), 6);
    let before_ids: BTreeSet<&str> = before.iter().map(|a| a["id"].as_str().unwrap()).collect();
    let after_ids: BTreeSet<&str> = after.iter().map(|a| a["id"].as_str().unwrap()).collect();
    assert_eq!(before_ids, after_ids, "the same alerts, revised");
    assert_eq!(the_six(&wh, "active").len(), 5);
    let d = after
        .iter()
        .find(|a| a["id"] == dismissed.as_str())
        .unwrap();
    assert_eq!(d["status"], "dismissed");
    assert_eq!(d["first_bad_commit"], "c13");
}

#[test]
fn a_step_at_the_tip_is_pending_until_it_holds_and_a_blip_is_withdrawn() {
    let (url, got) = receiver(vec![]);
    let wh = Wh::new();
    ingest_history(&wh, &(1..=14).collect::<Vec<_>>());
    let (exit, v) = detect(&wh, &["--notify", &url]);
    assert_eq!(
        exit, 0,
        "two commits at a new level page nobody: {}",
        v["raised"]
    );
    assert_eq!(ids(&v, "pending").len(), 6, "{}", v["raised"]);
    assert_eq!(in_status(&wh, "pending").len(), 6);
    assert!(got.lock().unwrap().is_empty());
    history_commit(&wh, 15);
    let (exit, v) = detect(&wh, &["--notify", &url]);
    assert_eq!(exit, 1, "{}", v["raised"]);
    assert_eq!(the_six(&wh, "active"), six());
    // One message per change: the aiter rows (no GPU named) and the probe rows of the
    // same trials (cuda:9.0) are one machine.
    assert_eq!(got.lock().unwrap().len(), 1);

    // Two commits at a new level, then the old level again: never an alert.
    let blip = Wh::new();
    ingest_history(&blip, &(1..=14).collect::<Vec<_>>());
    let mut pages = 0;
    let (exit, _) = detect(&blip, &[]);
    pages += exit;
    for (n, old) in [10, 11, 12].iter().enumerate() {
        let dir = sample(&format!("h200-gemm/history/c{old:02}"));
        let time = format!("2026-07-01T{:02}:00:00Z", 15 + n);
        ingest_commit(&blip, &dir, &format!("d{}", 15 + n), &time, &[]);
        let (exit, v) = detect(&blip, &[]);
        assert!(ids(&v, "new_alerts").is_empty(), "{}", v["raised"]);
        pages += exit;
    }
    assert_eq!(pages, 0);
    assert!(in_status(&blip, "active").is_empty());
    assert!(in_status(&blip, "pending").is_empty());
    let withdrawn = alerts(&blip);
    assert_eq!(withdrawn.len(), 6);
    for a in &withdrawn {
        assert_eq!(a["status"], "withdrawn", "{a}");
        let history = a["history"].as_array().unwrap();
        assert!(history.iter().all(|h| h["status"] != "active"), "{a}");
        let note = history.last().unwrap()["note"].as_str().unwrap();
        assert!(
            note.contains("no longer holds") || note.contains("blip"),
            "{note}"
        );
    }
}

#[test]
fn a_partial_fix_shrinks_the_alert_and_only_a_return_to_level_resolves_it() {
    let wh = Wh::new();
    let mut raised = 0;
    for c in 1..=20 {
        let us = match c {
            1..=6 => 32.4,
            7..=13 => 97.6,
            _ => 83.0, // a 15% gain: still 2.56x slower
        };
        perf_commit(&wh, c, us);
        let (_, v) = detect(&wh, &[]);
        raised += ids(&v, "new_alerts").len();
        assert!(
            ids(&v, "resolved").is_empty(),
            "commit {c}: {}",
            v["raised"]
        );
    }
    assert_eq!(raised, 1);
    let a = alerts(&wh);
    assert_eq!(a.len(), 1, "{a:?}");
    assert_eq!(a[0]["status"], "active");
    assert_eq!(a[0]["first_bad_commit"], "c07");
    let ratio = a[0]["ratio"].as_f64().unwrap();
    assert!((ratio - 83.0 / 32.4).abs() < 0.02, "the size now: {ratio}");
    for c in 21..=24 {
        perf_commit(&wh, c, 32.5);
        detect(&wh, &[]);
    }
    let a = alerts(&wh);
    assert_eq!(a[0]["status"], "resolved", "{}", a[0]);

    // A person reopens it: the same old return to level does not resolve it again...
    let id = a[0]["id"].as_str().unwrap().to_string();
    wh.ok(&[
        "alerts",
        "reopen",
        &id,
        "--note",
        "still slow on the real model",
    ]);
    let (exit, _) = detect(&wh, &[]);
    assert_eq!(exit, 0);
    assert_eq!(alerts(&wh)[0]["status"], "active");
    // ...nor does more data at that same level: it is no new change.
    for c in 25..=27 {
        perf_commit(&wh, c, 32.4);
    }
    detect(&wh, &[]);
    assert_eq!(
        alerts(&wh)[0]["status"],
        "active",
        "still the old return segment"
    );
}

#[test]
fn a_regression_and_its_fix_in_one_detect_resolve_without_paging() {
    let (url, got) = receiver(vec![]);
    let wh = Wh::new();
    for c in 1..=20 {
        perf_commit(&wh, c, if (7..=13).contains(&c) { 97.6 } else { 32.4 });
    }
    let (exit, v) = detect(&wh, &["--notify", &url]);
    assert_eq!(exit, 0, "{}", v["raised"]);
    assert_eq!(ids(&v, "resolved").len(), 1, "{}", v["raised"]);
    assert!(
        got.lock().unwrap().is_empty(),
        "a fixed regression pages nobody"
    );
    assert_eq!(alerts(&wh)[0]["status"], "resolved");
}

#[test]
fn tail_metrics_ride_with_the_median_and_never_alert_alone() {
    let wh = Wh::new();
    ingest_history(&wh, &(1..=20).collect::<Vec<_>>());
    let (_, v) = detect(&wh, &[]);
    for a in alerts(&wh) {
        let metrics: Vec<&str> = a["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_str().unwrap())
            .collect();
        assert!(
            metrics.iter().any(|m| !m.contains("p99")),
            "an alert of only tail metrics: {a}"
        );
    }
    assert_eq!(alerts(&wh).len(), 6, "{}", v["detection"]);
}

#[test]
fn a_crash_between_the_two_alert_commits_heals_on_the_next_run() {
    let (url, got) = receiver(vec![]);
    let wh = Wh::new();
    ingest_history(&wh, &(1..=20).collect::<Vec<_>>());
    let out = wh
        .cmd()
        .args(["detect", "--label", "main", "--notify", &url])
        .env("PERFDB_CRASH_AT", "alert-records-committed")
        .output()
        .unwrap();
    assert!(!out.status.success(), "{}", stderr(&out));
    assert!(got.lock().unwrap().is_empty());
    // Records without a status read as pending: shown, never delivered as active.
    assert_eq!(in_status(&wh, "pending").len(), 6);
    assert!(in_status(&wh, "active").is_empty());
    let (exit, v) = detect(&wh, &["--notify", &url]);
    assert_eq!(exit, 1, "the re-run raises them: {}", v["raised"]);
    assert_eq!(the_six(&wh, "active"), six());
    // One message per change: the aiter rows (no GPU named) and the probe rows of the
    // same trials (cuda:9.0) are one machine.
    assert_eq!(got.lock().unwrap().len(), 1);
}

#[test]
fn two_detects_at_once_deliver_each_group_once() {
    for round in 0..3 {
        let (url, got) = receiver(vec![]);
        let wh = Wh::new();
        ingest_history(&wh, &(1..=20).collect::<Vec<_>>());
        let spawn = || {
            wh.cmd()
                .args(["detect", "--label", "main", "--notify", &url])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        };
        let (a, b) = (spawn(), spawn());
        let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
        for o in [&a, &b] {
            assert_ne!(code(o), 2, "round {round}: {}", stderr(o));
        }
        // c13's six alerts are one group: sent once.
        let got = got.lock().unwrap();
        let mut ids: Vec<&str> = got
            .iter()
            .map(|v| v["group"]["id"].as_str().unwrap())
            .collect();
        ids.sort();
        let n = ids.len();
        ids.dedup();
        assert_eq!((n, ids.len()), (1, 1), "round {round}: each group once");
    }
}

#[test]
fn a_late_receiver_sees_one_key_per_alert_and_each_attempt_keeps_its_deadline() {
    use std::io::Write;
    use std::sync::{Arc, Mutex};
    // Trickles its status line a byte every 300 ms: far past a 1 s deadline.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let heads: Arc<Mutex<Vec<Vec<String>>>> = Arc::default();
    let h2 = heads.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let h2 = h2.clone();
            std::thread::spawn(move || {
                let mut stream = stream.unwrap();
                let (head, _) = read_request(&stream);
                h2.lock().unwrap().push(head);
                for b in b"HTTP/1.1 200 OK\r\n\r\n" {
                    if stream.write_all(&[*b]).is_err() {
                        return;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(300));
                }
            });
        }
    });
    let wh = Wh::new();
    for c in 1..=12 {
        perf_commit(&wh, c, if c <= 6 { 10.0 } else { 15.0 });
    }
    let t0 = std::time::Instant::now();
    let out = wh.run(&[
        "detect",
        "--label",
        "main",
        "--notify",
        &url,
        "--notify-timeout",
        "1",
    ]);
    let took = t0.elapsed().as_secs_f64();
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no answer within 1 s"),
        "{}",
        stderr(&out)
    );
    // Four attempts of 1 s and 1.4 s of waits between them, not 4 x 18 bytes x 300 ms.
    assert!(took < 9.0, "took {took} s");
    let heads = heads.lock().unwrap();
    assert_eq!(heads.len(), 4);
    let header = |h: &Vec<String>, name: &str| {
        h.iter()
            .find_map(|l| l.strip_prefix(&format!("{name}: ")).map(String::from))
            .unwrap_or_else(|| panic!("no {name} in {h:?}"))
    };
    let keys: BTreeSet<String> = heads.iter().map(|h| header(h, "Idempotency-Key")).collect();
    assert_eq!(keys.len(), 1, "one key on every retry: {keys:?}");
    let attempts: Vec<String> = heads
        .iter()
        .map(|h| header(h, "X-Perfdb-Attempt"))
        .collect();
    assert_eq!(attempts, ["1", "2", "3", "4"]);
}

#[test]
fn basic_auth_from_the_url_is_sent_and_never_shown_or_stored() {
    use std::io::Write;
    use std::sync::{Arc, Mutex};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let auth: Arc<Mutex<Vec<String>>> = Arc::default();
    let a2 = auth.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let mut stream = stream.unwrap();
            let (head, _) = read_request(&stream);
            for line in head {
                if let Some(v) = line.strip_prefix("Authorization: ") {
                    a2.lock().unwrap().push(v.to_string());
                }
            }
            let _ = write!(stream, "HTTP/1.1 204 No Content\r\n\r\n");
        }
    });
    let url = format!("http://ci:hunter2@{addr}/hook/abcdef0123456789");
    let wh = Wh::new();
    for c in 1..=12 {
        perf_commit(&wh, c, if c <= 6 { 10.0 } else { 15.0 });
    }
    let out = wh.run(&[
        "detect", "--label", "main", "--notify", &url, "--format", "json",
    ]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    // base64("ci:hunter2")
    assert_eq!(*auth.lock().unwrap(), ["Basic Y2k6aHVudGVyMg=="]);
    for text in [stdout(&out), stderr(&out)] {
        assert!(!text.contains("hunter2"), "{text}");
        assert!(!text.contains("abcdef0123456789"), "{text}");
    }
    let stored = wh.sql("SELECT target FROM alert_delivery_log");
    assert!(!stored.is_empty());
    for row in stored {
        let t = row["target"].as_str().unwrap();
        assert!(
            t.starts_with(&format!("http://ci:***@{addr}/hook/*** #")),
            "{t}"
        );
    }
}

#[test]
fn a_bad_target_is_refused_before_anything_is_stored() {
    let wh = Wh::new();
    for c in 1..=12 {
        perf_commit(&wh, c, if c <= 6 { 10.0 } else { 15.0 });
    }
    let out = wh.run(&[
        "detect",
        "--label",
        "main",
        "--notify",
        "htps://hooks.example/x",
    ]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("expected http:// or https://"),
        "{}",
        stderr(&out)
    );
    assert_eq!(wh.count("SELECT count(*) FROM alerts"), 0);
    // The corrected run still pages.
    let (url, got) = receiver(vec![]);
    let out = wh.run(&["detect", "--label", "main", "--notify", &url]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert_eq!(got.lock().unwrap().len(), 1);
}

#[test]
fn alerts_list_refuses_an_unknown_status() {
    let wh = Wh::new();
    let out = wh.run(&["alerts", "list", "--status", "bogus"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("possible values: pending, active"),
        "{}",
        stderr(&out)
    );
    let out = wh.run(&["alerts", "list", "--status", "withdrawn"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}

/// docs/alerts.md lists every status in its table, in `AlertStatus::ALL`'s order, and
/// its reopen line names exactly the statuses `alerts reopen` is allowed from.
#[test]
fn the_docs_list_the_statuses_and_transitions_the_code_has() {
    use perfdb_ingest::model::{AlertAction, AlertStatus};
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/alerts.md"))
        .unwrap();
    let in_table: Vec<&str> = doc
        .lines()
        .filter_map(|l| l.strip_prefix("| `")?.split_once('`').map(|(s, _)| s))
        .filter(|s| AlertStatus::parse(s).is_ok())
        .collect();
    let all: Vec<&str> = AlertStatus::ALL.iter().map(|s| s.as_str()).collect();
    assert_eq!(in_table, all, "the status table of docs/alerts.md");
    let reopen = doc
        .lines()
        .find_map(|l| l.strip_prefix("alerts reopen: "))
        .and_then(|l| l.split_once(" ──"))
        .map(|(from, _)| from.split(", ").collect::<Vec<_>>())
        .expect("the reopen line");
    let allowed: Vec<&str> = AlertStatus::ALL
        .iter()
        .filter(|s| AlertAction::Reopen.allowed_from(**s))
        .map(|s| s.as_str())
        .collect();
    assert_eq!(reopen, allowed);
}

/// Commit `c` of the H200 history, its aiter logs without the `M=4096 N=14336` GEMM row
/// (the shape stopped being measured), written under `dir`.
fn history_without_a_shape(dir: &std::path::Path, c: usize) -> std::path::PathBuf {
    let out = dir.join(format!("c{c:02}"));
    std::fs::create_dir_all(&out).unwrap();
    let from = sample(&format!("h200-gemm/history/c{c:02}"));
    for f in std::fs::read_dir(&from).unwrap() {
        let f = f.unwrap().path();
        let text = std::fs::read_to_string(&f).unwrap();
        let kept: String = text
            .lines()
            .filter(|l| !l.starts_with("| 4096 | 14336 |"))
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(out.join(f.file_name().unwrap()), kept).unwrap();
    }
    out
}

/// A shape that reported at every commit and then stopped: a `stale` alert, delivered
/// once, shown on the overview, and resolved when the shape is measured again.
#[test]
fn a_shape_that_stops_reporting_raises_a_stale_alert_until_it_returns() {
    let wh = Wh::new();
    ingest_history(&wh, &(1..=16).collect::<Vec<_>>());
    let (url, got) = receiver(vec![]);
    let first = wh.run(&["detect", "--label", "main", "--notify", &url]);
    assert!(
        !stdout(&first).contains("stale"),
        "nothing is missing yet: {}",
        stdout(&first)
    );
    let delivered_before = got.lock().unwrap().len();
    // c17 without the shape: one commit is not yet "stopped" (missing = 2).
    let tmp = tempfile::tempdir().unwrap();
    for c in [17, 18] {
        let dir = history_without_a_shape(tmp.path(), c);
        let time = format!("2026-07-01T{c:02}:00:00Z");
        ingest_commit(&wh, &dir, &format!("c{c:02}"), &time, &[]);
        let out = wh.run(&["detect", "--label", "main", "--notify", &url]);
        let text = stdout(&out);
        if c == 17 {
            assert!(!text.contains("stale:"), "{text}");
            continue;
        }
        assert_eq!(code(&out), 1, "a new stale alert pages: {text}");
        assert!(
            text.contains(
                "stale: gemm_a16w16 torch M=4096 N=14336 K=4096 dtype=torch.bfloat16 on default: \
                 not measured since c16 (2 commit(s) without it, from c17)"
            ),
            "{text}"
        );
    }
    let alerts: Vec<Value> = serde_json::from_str(&wh.ok(&["alerts", "--format", "json"])).unwrap();
    let stale: Vec<&Value> = alerts.iter().filter(|a| a["kind"] == "stale").collect();
    // Both variants of the shape (torch and triton), on the aiter logs' machine class.
    assert_eq!(stale.len(), 2, "{alerts:?}");
    assert!(stale.iter().all(|a| a["status"] == "active"));
    // Delivered once, as one group (one label, machine class and range), with a text
    // that says what stopped.
    let sent: Vec<Value> = got.lock().unwrap()[delivered_before..].to_vec();
    let stale_sent: Vec<&Value> = sent.iter().filter(|p| p["kind"] == "stale").collect();
    assert_eq!(stale_sent.len(), 1, "{sent:?}");
    assert_eq!(stale_sent[0]["group"]["alerts"], 2, "{sent:?}");
    assert!(
        stale_sent[0]["text"]
            .as_str()
            .unwrap()
            .contains("stopped reporting after c16 (no data (2 commit(s)))"),
        "{}",
        stale_sent[0]["text"]
    );
    // Another detect: nothing new, nothing sent again.
    let out = wh.run(&["detect", "--label", "main", "--notify", &url]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    assert_eq!(got.lock().unwrap().len(), delivered_before + sent.len());
    // The overview shows the series as quiet, with its open alert.
    let status: Value = serde_json::from_str(&wh.ok(&[
        "status",
        "--format",
        "json",
        "--limit",
        "0",
        "--machine",
        "default",
    ]))
    .unwrap();
    let quiet = status["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["key"].as_str().unwrap().contains("14336"))
        .expect("the quiet series is listed");
    assert_eq!(quiet["commits_since"], 2);
    assert_eq!(quiet["open_alerts"].as_array().unwrap().len(), 1);
    // The shape is measured again at c19: resolved, and the regressions untouched.
    ingest_history(&wh, &[19]);
    let out = wh.run(&["detect", "--label", "main"]);
    assert!(
        stdout(&out).contains("stale data: 0 alert(s) raised, 2 resolved (data back)"),
        "{}",
        stdout(&out)
    );
    let alerts: Vec<Value> = serde_json::from_str(&wh.ok(&["alerts", "--format", "json"])).unwrap();
    assert!(alerts
        .iter()
        .filter(|a| a["kind"] == "stale")
        .all(|a| a["status"] == "resolved"));
    assert!(alerts
        .iter()
        .filter(|a| a["kind"] == "regression")
        .all(|a| a["status"] != "withdrawn"));
}

/// A machine class whose runs stop while the label's other class keeps reporting: one
/// stale alert for the whole class, named on the overview of that class.
#[test]
fn a_machine_class_that_stops_reporting_is_one_stale_alert() {
    let wh = Wh::new();
    ingest_history(&wh, &(1..=16).collect::<Vec<_>>());
    // c17 and c18: only the aiter logs (class `default`); the probe's class is quiet.
    let tmp = tempfile::tempdir().unwrap();
    for c in [17, 18] {
        let dir = tmp.path().join(format!("c{c}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in std::fs::read_dir(sample(&format!("h200-gemm/history/c{c:02}"))).unwrap() {
            let f = f.unwrap().path();
            if f.to_string_lossy().ends_with(".aiter.log") {
                std::fs::copy(&f, dir.join(f.file_name().unwrap())).unwrap();
            }
        }
        let time = format!("2026-07-01T{c:02}:00:00Z");
        ingest_commit(&wh, &dir, &format!("c{c:02}"), &time, &[]);
    }
    let out = wh.run(&["detect", "--label", "main"]);
    let text = stdout(&out);
    assert!(
        text.contains(
            "stale: machine class cuda:9.0/default: no runs since c16 (2 commit(s) without it, from c17)"
        ),
        "{text}"
    );
    // Its series are not alerted one by one besides.
    assert_eq!(text.matches("stale: ").count(), 1, "{text}");
    let alerts: Vec<Value> = serde_json::from_str(&wh.ok(&["alerts", "--format", "json"])).unwrap();
    let stale: Vec<&Value> = alerts.iter().filter(|a| a["kind"] == "stale").collect();
    assert_eq!(stale.len(), 1);
    assert_eq!(stale[0]["key_text"], "(every series of the machine class)");
    let id = stale[0]["id"].as_str().unwrap();
    let status = wh.ok(&["status", "--machine", "cuda:9.0/default", "--limit", "1"]);
    assert!(
        status.contains(&format!(
            "cuda:9.0/default stopped reporting: stale alert {id}"
        )),
        "{status}"
    );
}
