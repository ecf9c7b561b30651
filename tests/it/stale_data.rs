//! Stale data as a nightly detect sees it: a series gone for longer than `missing`
//! commits before any detect ran, and machine classes that report at their own pace
//! (a nightly runner among per-commit ones) held to their own usual gap.

use crate::common::*;
use serde_json::Value;

/// Commit `c` of label `main`: one `[perf]` log per machine in `machines`, each with
/// the rows `dims` (three trials), commit `cNN` at hour `c` of a day in July.
fn commit(wh: &Wh, c: usize, machines: &[(&str, &[u32])]) {
    for (machine, dims) in machines {
        let dir = wh.dir.path().join(format!("logs/{machine}/c{c:02}"));
        std::fs::create_dir_all(&dir).unwrap();
        let mut text = String::new();
        for d in *dims {
            text.push_str(&format!(
                "[perf] dim: ({d},) dtype: bf16, torch avg: 5.00 us, ck avg: {:.2} us\n",
                10.0 + *d as f64 / 100.0
            ));
        }
        for t in 0..3 {
            std::fs::write(dir.join(format!("t{t}.log")), &text).unwrap();
        }
        let time = format!("2026-07-{:02}T{:02}:00:00Z", 1 + c / 24, c % 24);
        let tag = format!("machine={machine}");
        ingest_commit(wh, &dir, &format!("c{c:02}"), &time, &["--tag", &tag]);
    }
}

/// The stale lines of `detect` (table output) and its exit code.
fn stale_lines(wh: &Wh) -> (i32, Vec<String>) {
    let out = wh.run(&["detect", "--label", "main"]);
    assert_ne!(code(&out), 2, "{}", stderr(&out));
    let lines = stdout(&out)
        .lines()
        .filter(|l| l.starts_with("stale: "))
        .map(String::from)
        .collect();
    (code(&out), lines)
}

#[test]
fn a_nightly_detect_after_a_long_gap_flags_the_series_that_stopped() {
    let wh = Wh::new();
    for c in 1..=24 {
        // The 1024 row stops at c21: four commits without it when the nightly runs.
        let dims: &[u32] = if c <= 20 { &[64, 1024] } else { &[64] };
        commit(&wh, c, &[("mi300x", dims)]);
    }
    let (exit, lines) = stale_lines(&wh);
    assert_eq!(exit, 1, "a new stale alert pages");
    assert_eq!(
        lines,
        [
            "stale: perf ck dim=(1024,) dtype=bf16 on mi300x: not measured since c20 (4 commit(s) without it, from c21)",
            "stale: perf torch dim=(1024,) dtype=bf16 on mi300x: not measured since c20 (4 commit(s) without it, from c21)",
        ]
    );
    // Ten commits later, still the two alerts, never raised again.
    for c in 25..=34 {
        commit(&wh, c, &[("mi300x", &[64])]);
    }
    let (exit, lines) = stale_lines(&wh);
    assert_eq!(exit, 0, "{lines:?}");
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[0].contains("(14 commit(s) without it, from c21)"),
        "{lines:?}"
    );
    let alerts: Vec<Value> = serde_json::from_str(&wh.ok(&["alerts", "--format", "json"])).unwrap();
    assert_eq!(alerts.len(), 2, "{alerts:?}");
    assert!(alerts
        .iter()
        .all(|a| a["kind"] == "stale" && a["status"] == "active"));
}

#[test]
fn a_sparse_class_is_held_to_its_own_gap() {
    let wh = Wh::new();
    // `ci` reports at every commit; `nightly` at every fifth, until c25.
    let runs = |wh: &Wh, c: usize| {
        let mut m: Vec<(&str, &[u32])> = vec![("ci", &[64])];
        if c.is_multiple_of(5) && c <= 25 {
            m.push(("nightly", &[64, 1024]));
        }
        commit(wh, c, &m);
    };
    for c in 1..=33 {
        runs(&wh, c);
    }
    // Eight commits without it: less than two of its usual gaps (five) — quiet, as
    // between two of its runs, not stale; and nothing else is.
    let (exit, lines) = stale_lines(&wh);
    assert_eq!((exit, lines.len()), (0, 0), "{lines:?}");
    for c in 34..=36 {
        runs(&wh, c);
    }
    let (exit, lines) = stale_lines(&wh);
    assert_eq!(exit, 1);
    assert_eq!(
        lines,
        ["stale: machine class nightly: no runs since c25 (11 commit(s) without it, from c26)"]
    );
}
