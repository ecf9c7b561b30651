//! `perfdb detect` on the real H200 history: 20 commits x 3 trials, the Triton tile
//! config change lands at c13 (sample-data/README.md).

use crate::common::*;
use serde_json::Value;

fn history(wh: &Wh, order: &[usize]) {
    ingest_history(wh, order);
}

fn detect_json(wh: &Wh, extra: &[&str]) -> (i32, Value) {
    let mut args = vec!["detect", "--label", "main", "--format", "json"];
    args.extend_from_slice(extra);
    let out = wh.run(&args);
    let v: Value = serde_json::from_str(&stdout(&out))
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&out), stderr(&out)));
    (code(&out), v["detection"].clone())
}

/// (format's table, variant, M) of every regression, sorted.
fn regressions(v: &Value) -> Vec<(String, String, String)> {
    let mut out: Vec<(String, String, String)> = v["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "regression")
        .map(|e| {
            assert_eq!(e["first_bad_commit"], "c13", "{e}");
            assert_eq!(e["last_good_commit"], "c12", "{e}");
            let key = e["key"].as_str().unwrap();
            let m = key
                .split(' ')
                .find_map(|c| c.strip_prefix("M="))
                .unwrap()
                .to_string();
            (
                e["table"].as_str().unwrap().to_string(),
                e["variant"].as_str().unwrap().to_string(),
                m,
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn detect_finds_the_three_changed_shapes_at_c13_in_each_format() {
    let wh = Wh::new();
    history(&wh, &(1..=20).collect::<Vec<_>>());
    let (exit, v) = detect_json(&wh, &[]);
    assert_eq!(exit, 1);
    let want: Vec<(String, String, String)> = [
        ("gemm.mm", "triton_mm_a16w16", "256"),
        ("gemm.mm", "triton_mm_a16w16", "4096"),
        ("gemm.mm", "triton_mm_a16w16", "512"),
        ("gemm_a16w16", "triton", "256"),
        ("gemm_a16w16", "triton", "4096"),
        ("gemm_a16w16", "triton", "512"),
    ]
    .iter()
    .map(|(t, v, m)| (t.to_string(), v.to_string(), m.to_string()))
    .collect();
    assert_eq!(regressions(&v), want);
    // `us` and `TFLOPS` of one shape moving together are one event.
    let aiter = v["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["table"] == "gemm_a16w16" && e["kind"] == "regression")
        .unwrap();
    let metrics: Vec<&str> = aiter["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["metric"].as_str().unwrap())
        .collect();
    assert_eq!(metrics, ["latency", "throughput"]);
    // Stored as alerts: re-running raises nothing new (exit 0), the list is unchanged.
    let (exit, _) = detect_json(&wh, &[]);
    assert_eq!(exit, 0, "re-running raises nothing new");
    let listed: Vec<Value> =
        serde_json::from_str(&wh.ok(&["alerts", "list", "--format", "json"])).unwrap();
    assert_eq!(listed.len(), 6);
    for a in &listed {
        assert_eq!(a["status"], "active");
        assert_eq!(a["first_bad_commit"], "c13");
        assert_eq!(a["last_good_commit"], "c12");
        assert!(a["key"].is_object() && a["id"].is_string() && a["p"].is_number());
        assert!(a["metrics"].as_array().unwrap().len() >= 2, "{a}");
        assert!(a["ratio"].as_f64().unwrap() > 1.3, "{a}");
    }
    let md = wh.ok(&["detect", "--label", "main", "--format", "markdown"]);
    assert!(
        md.starts_with("## perfdb detect: 0 new alert(s) on `main`"),
        "{md}"
    );
    assert!(md.contains(" active | regression | environment not recorded | gemm_a16w16 triton | M=512 N=4096 K=4096 dtype=torch.bfloat16 | default | c13 | c12 | latency 32.51 -> 97.12 us (+198.7%, p 9.0e-53); throughput 528.4 -> 176.9 TFLOPS (-66.5%, p 9.0e-53) |  |"), "{md}");
    // Nothing is a regression from c14 on.
    let (exit, v) = detect_json(&wh, &["--since", "c14"]);
    assert_eq!(exit, 0);
    assert!(regressions(&v).is_empty());
    let out = wh.run(&["detect", "--label", "main", "--since", "c99"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("no commit of label 'main' starts with it"));
    // --since reads `context` commits before its commit: with three, c10..c20 are read
    // for --since c13, and the c13 step is the one the whole history shows.
    let cfg = wh.path().join("context.toml");
    std::fs::write(&cfg, "[detect]\ncontext = 3\n").unwrap();
    let cfg = cfg.to_str().unwrap();
    let (_, windowed) = detect_json(&wh, &["--since", "c13", "--config", cfg]);
    assert_eq!(windowed["commits"], 11, "c10..c20");
    assert_eq!(regressions(&windowed), want);
    let (_, whole) = detect_json(&wh, &["--since", "c13"]);
    assert_eq!(whole["commits"], 20);
    assert_eq!(regressions(&whole), want);
}

#[test]
fn commit_time_orders_history_whatever_the_ingest_order() {
    let wh = Wh::new();
    history(
        &wh,
        &[
            13, 2, 20, 7, 1, 16, 9, 12, 4, 18, 3, 11, 15, 5, 19, 8, 14, 10, 6, 17,
        ],
    );
    let (exit, v) = detect_json(&wh, &[]);
    assert_eq!(exit, 1);
    assert_eq!(regressions(&v).len(), 6);
}

#[test]
fn triage_round_trip_survives_reingest_and_compaction() {
    let wh = Wh::new();
    history(&wh, &(1..=20).collect::<Vec<_>>());
    wh.run(&["detect", "--label", "main"]);
    let listed: Vec<Value> = serde_json::from_str(&wh.ok(&["alerts", "--format", "json"])).unwrap();
    let id = listed[0]["id"].as_str().unwrap().to_string();
    let short = &id[..8];
    let acked: Value = serde_json::from_str(&wh.ok(&[
        "alerts", "ack", short, "--note", "looking", "--who", "ana", "--format", "json",
    ]))
    .unwrap();
    assert_eq!(acked["status"], "acknowledged");
    assert_eq!(acked["history"][1]["who"], "ana");
    // Dismissing needs a reason; acknowledging twice is refused, saying why.
    let out = wh.run(&["alerts", "dismiss", short, "--note", ""]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("needs a reason"), "{}", stderr(&out));
    let out = wh.run(&["alerts", "ack", short]);
    assert!(
        stderr(&out).contains("is acknowledged: it cannot be acknowledged"),
        "{}",
        stderr(&out)
    );
    wh.ok(&[
        "alerts",
        "dismiss",
        short,
        "--note",
        "tile config trade-off, accepted",
    ]);
    // Re-ingest, compaction and a new detect keep the status and add nothing.
    history(&wh, &[1, 2]);
    wh.ok(&["compact"]);
    let committed = perfdb_ingest::warehouse::Warehouse::new(wh.path())
        .committed()
        .unwrap();
    assert_eq!(committed.alerts.len(), 1, "merged");
    assert_eq!(committed.alert_status.len(), 1, "merged");
    let out = wh.run(&["detect", "--label", "main"]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    let shown: Value =
        serde_json::from_str(&wh.ok(&["alerts", "show", short, "--format", "json"])).unwrap();
    assert_eq!(shown["status"], "dismissed");
    assert_eq!(shown["history"].as_array().unwrap().len(), 3);
    let dismissed: Vec<Value> = serde_json::from_str(&wh.ok(&[
        "alerts",
        "list",
        "--status",
        "dismissed",
        "--format",
        "json",
    ]))
    .unwrap();
    assert_eq!(dismissed.len(), 1);
    wh.ok(&["alerts", "reopen", short]);
    let md = wh.ok(&["alerts", "--format", "markdown"]);
    assert!(md.contains("| active |"), "{md}");
    // The tables are in the warehouse for SQL too.
    assert_eq!(wh.count("SELECT count(*) FROM alerts"), 6);
    assert_eq!(wh.count("SELECT count(*) FROM alert_status"), 9);
}

#[test]
fn a_fixed_regression_resolves_its_alert() {
    // Commits 1-12 then 13-20 of the history, then 1-8 again as commits 21-28: the
    // series steps up at 13 and back down at 21.
    let wh = Wh::new();
    history(&wh, &(1..=20).collect::<Vec<_>>());
    wh.run(&["detect", "--label", "main"]);
    for c in 1..=8 {
        let dir = sample(&format!("h200-gemm/history/c{c:02}"));
        let time = format!("2026-07-02T{c:02}:00:00Z");
        ingest_commit(&wh, &dir, &format!("fix{c:02}"), &time, &[]);
    }
    let out = wh.run(&["detect", "--label", "main", "--format", "json"]);
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        v["raised"]["resolved"].as_array().unwrap().len(),
        6,
        "{}",
        v["raised"]
    );
    let resolved: Vec<Value> = serde_json::from_str(
        &wh.ok(&["alerts", "list", "--status", "resolved", "--format", "json"]),
    )
    .unwrap();
    assert_eq!(resolved.len(), 6);
}

#[test]
fn history_is_a_baseline_and_machines_are_classes() {
    let wh = Wh::new();
    for c in 1..=12 {
        let dir = sample(&format!("h200-gemm/history/c{c:02}"));
        let (commit, time) = (format!("c{c:02}"), format!("2026-07-01T{c:02}:00:00Z"));
        ingest_commit(&wh, &dir, &commit, &time, &["--machine", "h200"]);
    }
    let dir = sample("h200-gemm/history/c13");
    wh.ok(&[
        "ingest",
        dir.to_str().unwrap(),
        "--label",
        "head",
        "--commit",
        "c13",
        "--machine",
        "h200",
    ]);
    // The last five commits of main, pooled, against the head commit.
    let (exit, v) = compare_json(
        &wh,
        &[
            "main",
            "head@c13",
            "--baseline-window",
            "5",
            "--control",
            "torch",
        ],
    );
    assert_eq!(exit, 1, "{}", v["reason"]);
    assert_eq!(
        v["base"]["commits"],
        serde_json::json!(["c08", "c09", "c10", "c11", "c12"])
    );
    assert_eq!(v["base"]["matched_by"], "label@last-5");
    assert!(
        v["reason"]
            .as_str()
            .unwrap()
            .starts_with("6 kernel/shape row(s) regressed"),
        "{}",
        v["reason"]
    );
    // A head on another machine class is not compared with this history.
    let other = sample("h200-gemm/history/c14");
    wh.ok(&[
        "ingest",
        other.to_str().unwrap(),
        "--label",
        "elsewhere",
        "--commit",
        "c14",
        "--machine",
        "mi300x",
    ]);
    let (exit, v) = compare_json(&wh, &["main", "elsewhere", "--baseline-window", "5"]);
    assert_eq!(exit, 3, "{}", v["reason"]);
    assert!(
        v["reason"]
            .as_str()
            .unwrap()
            .contains("machine base h200, head mi300x"),
        "{}",
        v["reason"]
    );
    // --machine and a disagreeing tag are refused.
    let out = wh.run(&[
        "ingest",
        dir.to_str().unwrap(),
        "--machine",
        "a",
        "--tag",
        "machine=b",
    ]);
    assert_eq!(code(&out), 2);
}

#[test]
fn new_alerts_are_delivered_once_with_retries() {
    let wh = Wh::new();
    history(&wh, &(1..=20).collect::<Vec<_>>());
    // The receiver fails twice, then accepts: the first alert gets through on retry.
    let (url, got) = receiver(vec![500, 500]);
    let out = wh.run(&["detect", "--label", "main", "--notify", &url]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    {
        // Six alerts at c13: the aiter tables carry no GPU, the probe lines of the same
        // trials name cuda:9.0; one machine to the team, so one message listing all six.
        let got = got.lock().unwrap();
        assert_eq!(got.len(), 1, "each group once: {got:?}");
        let g = &got[0];
        assert_eq!(g["group"]["alerts"], 6, "{g}");
        assert_eq!(g["group"]["series"].as_array().unwrap().len(), 6);
        assert_eq!(g["group"]["first_bad_commit"], "c13");
        let text = g["text"].as_str().unwrap();
        assert!(
            text.starts_with("perfdb: ")
                && text.contains("and 5 more series on cuda:9.0/default regressed at c13"),
            "{text}"
        );
        assert_eq!(got[0]["status"], "active");
    }
    assert_eq!(wh.count("SELECT count(*) FROM alert_delivery"), 1);
    assert_eq!(
        wh.count("SELECT count(*) FROM alert_delivery WHERE attempts = 3"),
        1,
        "it took three attempts"
    );
    // Re-running sends nothing already delivered.
    let out = wh.run(&["detect", "--label", "main", "--notify", &url]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(got.lock().unwrap().len(), 1);
    // A receiver that never accepts: an error (exit 2), nothing recorded, retried later.
    let (down, none) = receiver(vec![503; 64]);
    let wh2 = Wh::new();
    history(&wh2, &(1..=20).collect::<Vec<_>>());
    let out = wh2.run(&["detect", "--label", "main", "--notify", &down]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("HTTP 503 after 4 attempts"),
        "{}",
        stderr(&out)
    );
    assert!(none.lock().unwrap().is_empty());
    assert_eq!(wh2.count("SELECT count(*) FROM alert_delivery"), 0);
    let (up, later) = receiver(vec![]);
    wh2.run(&["detect", "--label", "main", "--notify", &up]);
    assert_eq!(later.lock().unwrap().len(), 1, "nothing lost");
    // http:// and https:// only (https: tests/it/notify_https.rs).
    let out = wh2.run(&[
        "detect",
        "--label",
        "main",
        "--notify",
        "mailto:perf@example.com",
    ]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("expected http:// or https://"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_second_step_supersedes_the_first_alert_and_thresholds_come_from_config() {
    let wh = Wh::new();
    for c in 1..=12 {
        perf_commit(&wh, c, if c <= 6 { 10.0 } else { 15.0 });
    }
    wh.run(&["detect", "--label", "main"]);
    for c in 13..=18 {
        perf_commit(&wh, c, 25.0);
    }
    let out = wh.run(&["detect", "--label", "main"]);
    assert_eq!(code(&out), 1, "{}", stdout(&out));
    let all: Vec<Value> = serde_json::from_str(&wh.ok(&["alerts", "--format", "json"])).unwrap();
    let status_at = |commit: &str| {
        all.iter()
            .find(|a| a["first_bad_commit"] == commit)
            .map(|a| a["status"].as_str().unwrap().to_string())
    };
    assert_eq!(status_at("c07").as_deref(), Some("silenced"));
    assert_eq!(status_at("c13").as_deref(), Some("active"));
    let ci = &all[0]["metric_detail"][0]["before_ci"];
    assert!(
        ci[0].is_number() && ci[1].is_number(),
        "medians come with intervals: {ci}"
    );

    // A per-variant minimum step from perfdb.toml keeps this kernel quiet.
    let quiet = Wh::new();
    for c in 1..=12 {
        perf_commit(&quiet, c, if c <= 6 { 10.0 } else { 15.0 });
    }
    let cfg = quiet.dir.path().join("perfdb.toml");
    std::fs::write(
        &cfg,
        "[detect]\n[[detect.override]]\nvariant = \"ck\"\nmin_step = 0.6\n",
    )
    .unwrap();
    let out = quiet.run(&[
        "detect",
        "--label",
        "main",
        "--config",
        cfg.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
}

#[test]
fn a_detect_killed_mid_delivery_resends_nothing_acknowledged() {
    use std::io::Write;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};
    let wh = Wh::new();
    history(&wh, &(1..=20).collect::<Vec<_>>());
    wh.run(&["detect", "--label", "main"]);
    // Acknowledges the first three at once, holds the fourth request unanswered (the
    // process is killed while it waits), then acknowledges everything. c13's alerts are
    // one group; six targets make six (group, target) pairs.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let targets: Vec<String> = (1..=6).map(|k| format!("http://{addr}/hook{k}")).collect();
    let notify: Vec<&str> = targets
        .iter()
        .flat_map(|t| ["--notify", t.as_str()])
        .collect();
    let seen = Arc::new(AtomicUsize::new(0));
    let acked: Arc<Mutex<Vec<String>>> = Arc::default();
    let (s2, a2) = (seen.clone(), acked.clone());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let (seen, acked) = (s2.clone(), a2.clone());
            std::thread::spawn(move || {
                let mut stream = stream.unwrap();
                let (head, v) = read_request(&stream);
                if seen.fetch_add(1, Ordering::SeqCst) == 3 {
                    // Never answered: the client is gone by then.
                    std::thread::sleep(std::time::Duration::from_secs(30));
                    return;
                }
                let _ = write!(stream, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
                acked.lock().unwrap().push(format!(
                    "{} {}",
                    v["group"]["id"].as_str().unwrap(),
                    head[0]
                ));
            });
        }
    });
    let args: Vec<&str> = ["detect", "--label", "main", "--notify-timeout", "1"]
        .into_iter()
        .chain(notify.iter().copied())
        .collect();
    let mut child = wh
        .cmd()
        .args(&args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while seen.load(Ordering::SeqCst) < 4 {
        assert!(
            std::time::Instant::now() < deadline,
            "detect sent {} request(s) in 60 s, not 4",
            seen.load(Ordering::SeqCst)
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(acked.lock().unwrap().len(), 3);
    assert_eq!(wh.count("SELECT count(*) FROM alert_delivery"), 3);
    // The killed run's claim on the fourth holds for its lease (5 deadlines of 1 s and
    // the waits between attempts); a run within it leaves the fourth alone and says so.
    let out = wh.run(&args);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("another detect is delivering it"),
        "{}",
        stderr(&out)
    );
    std::thread::sleep(std::time::Duration::from_millis(6500));
    // After it, the next run sends the other three; none of the acknowledged ones again.
    let out = wh.run(&args);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let mut ids = acked.lock().unwrap().clone();
    assert_eq!(ids.len(), 6, "{ids:?}");
    ids.sort();
    ids.dedup();
    assert_eq!(
        ids.len(),
        6,
        "an acknowledged group was sent twice to a target"
    );
}

#[test]
fn git_dir_gives_the_commit_time() {
    let wh = Wh::new();
    let repo = wh.dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(&repo)
            .args(args)
            .env("GIT_AUTHOR_NAME", "a")
            .env("GIT_AUTHOR_EMAIL", "a@example.com")
            .env("GIT_COMMITTER_NAME", "a")
            .env("GIT_COMMITTER_EMAIL", "a@example.com")
            .env("GIT_COMMITTER_DATE", "2026-07-01T09:30:00+00:00")
            .output()
            .expect("git");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    git(&["init", "-q"]);
    git(&["commit", "-q", "--allow-empty", "-m", "x"]);
    let sha = git(&["rev-parse", "HEAD"]);
    let f = sample("h200-gemm/history/c01/trial1.aiter.log");
    wh.ok(&[
        "ingest",
        f.to_str().unwrap(),
        "--label",
        "main",
        "--commit",
        &sha,
        "--git-dir",
        repo.to_str().unwrap(),
    ]);
    let rows = wh.sql("SELECT epoch_us(commit_time) // 1000000 AS t FROM runs");
    assert_eq!(rows[0]["t"], 1782898200);
    let out = wh.run(&[
        "ingest",
        f.to_str().unwrap(),
        "--commit",
        "nope",
        "--git-dir",
        repo.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("git cannot show commit nope"),
        "{}",
        stderr(&out)
    );
}

/// `perfdb status`: the overview in the terminal, worst first: the three shapes whose
/// Triton kernel stepped at c13 lead, each with its open alert; a shape that stopped
/// reporting says since when.
#[test]
fn status_lists_what_moved_first() {
    let wh = Wh::new();
    ingest_history(&wh, &(1..=20).collect::<Vec<_>>());
    wh.run(&["detect", "--label", "main"]);
    let out = wh.ok(&[
        "status",
        "--commits",
        "10",
        "--metric",
        "latency",
        "--variant",
        "triton_mm_a16w16",
        "--limit",
        "4",
    ]);
    // Alert ids are hashes of the step: the same on every run.
    insta::assert_snapshot!(out, @r"
        label main on cuda:9.0/default: 10 series over the newest 10 commit(s) (c11 .. c20), worst first

        table    variant           key                                                metric        trend       latest step             alerts            last measured
        gemm.mm  triton_mm_a16w16  K=4096 M=512 N=4096 mode=bench dtype=bf16 role=a   latency (us)  ▁▁████████  +197.0% at c13 (worse)  6cd0c80549b8f26d  c20
        gemm.mm  triton_mm_a16w16  K=4096 M=4096 N=4096 mode=bench dtype=bf16 role=a  latency (us)  ▁▁████████  +120.0% at c13 (worse)  c649f73c8d0e61b2  c20
        gemm.mm  triton_mm_a16w16  K=8192 M=256 N=8192 mode=bench dtype=bf16 role=a   latency (us)  ▁▁████████  +40.0% at c13 (worse)   48b945bd5f5c8ba2  c20
        gemm.mm  triton_mm_a16w16  K=4096 M=1 N=4096 mode=bench dtype=bf16 role=a     latency (us)  ▁▁▁█▂▁▂▁▁▂  none                                      c20
        ... 6 more (--limit 0 shows all)
        ");
    let json: serde_json::Value =
        serde_json::from_str(&wh.ok(&["status", "--format", "json", "--limit", "0"])).unwrap();
    let rows = json["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 98);
    let stepped = rows.iter().filter(|r| r["step"]["worse"] == true).count();
    let alerted = rows
        .iter()
        .take_while(|r| !r["open_alerts"].as_array().unwrap().is_empty())
        .count();
    assert_eq!((stepped, alerted), (12, 12));
    let out = wh.run(&["status", "--label", "nope"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("unknown label 'nope'; known: main"),
        "{}",
        stderr(&out)
    );
}

/// From an alert to its confirmation: with a checkout, the range lists the commits
/// nobody measured, `git bisect` hints name them, and the `perfdb ab` command runs the
/// last good and the first bad commit's builds interleaved, with the command the runs
/// were made with.
#[test]
fn an_alert_says_how_to_confirm_it() {
    let wh = Wh::new();
    let repo = wh.dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(&repo)
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    git(&["init", "-q"]);
    let mut shas = Vec::new();
    for i in 0..12 {
        std::fs::write(repo.join("f"), i.to_string()).unwrap();
        git(&["add", "f"]);
        git(&["commit", "-q", "-m", &format!("c{i}")]);
        shas.push(git(&["rev-parse", "HEAD"]));
    }
    // Commits 6 and 7 were never measured; the kernel got 30% slower at commit 8.
    for (i, sha) in shas.iter().enumerate() {
        if i == 6 || i == 7 {
            continue;
        }
        let us = if i >= 8 { 13.0 } else { 10.0 };
        for t in 0..3 {
            let v = us * (1.0 + 0.002 * t as f64);
            wh.ok(&[
                "run",
                "--label",
                "main",
                "--commit",
                sha,
                "--commit-time",
                &format!("2026-07-01T{i:02}:00:00Z"),
                "--",
                "echo",
                &format!("[perf] dim: (64,) dtype: bf16, torch avg: 5.00 us, ck avg: {v:.3} us"),
            ]);
        }
    }
    wh.run(&["detect", "--label", "main"]);
    let alerts: Vec<Value> = serde_json::from_str(&wh.ok(&["alerts", "--format", "json"])).unwrap();
    let id = alerts[0]["id"].as_str().unwrap();
    assert_eq!(alerts[0]["first_bad_commit"], shas[8].as_str());
    let shown: Value = serde_json::from_str(&wh.ok(&[
        "alerts",
        "show",
        id,
        "--git-dir",
        repo.to_str().unwrap(),
        "--format",
        "json",
    ]))
    .unwrap();
    let c = &shown["confirm"];
    let range: Vec<(&str, bool)> = c["range"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["commit"].as_str().unwrap(),
                r["measured"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        range,
        [
            (shas[5].as_str(), true),
            (shas[6].as_str(), false),
            (shas[7].as_str(), false),
            (shas[8].as_str(), true)
        ]
    );
    assert_eq!(c["unmeasured"], 2);
    let ab = c["ab_command"].as_str().unwrap();
    assert!(ab.starts_with(&format!(
        "perfdb ab --base-dir ../perfdb-base-{} --head-dir ../perfdb-head-{} --commit-base {} --commit-head {}",
        &shas[5][..12], &shas[8][..12], shas[5], shas[8]
    )), "{ab}");
    // The command the runs were made with (`perfdb run` stored it).
    // (One of the alert's runs: here the last good commit's, whose echo said 10 us.)
    let bench = "echo '[perf] dim: (64,) dtype: bf16, torch avg: 5.00 us, ck avg: 10.000 us'";
    assert_eq!(c["bench_command"], bench);
    assert!(ab.ends_with(&format!("--max-trials 20 -- {bench}")), "{ab}");
    assert_eq!(
        c["bisect"][1],
        format!("git bisect start {} {}", shas[8], shas[5]).as_str()
    );
    // The terminal form says the same, and without a checkout says what it cannot know.
    let text = wh.ok(&["alerts", "show", id]);
    assert!(
        text.contains("(measured commits; --git-dir lists every commit between)"),
        "{text}"
    );
    assert!(text.contains("perfdb ab --base-dir"), "{text}");
}
