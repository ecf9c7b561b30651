//! Every `--format json` and JSON-lines output parses, whatever text the warehouse holds:
//! C0 and C1 controls, bidirectional controls, a byte-order mark and a character outside
//! the Basic Multilingual Plane in a key and a tag come back as themselves. (The writer's
//! own property test, `reports::json`, covers every Unicode scalar; this checks that every
//! command goes through it.)

use crate::common::*;
use serde_json::Value;

/// The hostile text: C0 (SOH, DEL, BEL), C1 (CSI `\u{9b}`, which a terminal reads as
/// `ESC [`), bidi overrides and isolates, a BOM and an emoji.
const NAME: &str = "bf\u{1}\u{7f}\u{7}\u{9b}2J\u{202e}\u{2066}x\u{feff}\u{1f600}";

fn hostile_commit(wh: &Wh, c: usize, us: f64) {
    let dir = wh.dir.path().join(format!("perf/c{c:02}"));
    std::fs::create_dir_all(&dir).unwrap();
    for t in 0..3 {
        let v = us * (1.0 + 0.002 * t as f64);
        std::fs::write(
            dir.join(format!("t{t}.log")),
            format!("[perf] dim: (64,) dtype: {NAME}, torch avg: 5.00 us, ck avg: {v:.3} us\n"),
        )
        .unwrap();
    }
    let time = format!("2026-07-{:02}T{:02}:00:00Z", 1 + c / 24, c % 24);
    let tag = format!("host={NAME}");
    ingest_commit(wh, &dir, &format!("c{c:02}"), &time, &["--tag", &tag]);
}

/// Every JSON document in `text`: one, or one a line (JSON lines).
fn parse_all(args: &[&str], text: &str) -> Vec<Value> {
    match serde_json::from_str::<Value>(text) {
        Ok(v) => vec![v],
        Err(_) => text
            .lines()
            .map(|l| {
                serde_json::from_str(l)
                    .unwrap_or_else(|e| panic!("perfdb {args:?} printed invalid JSON ({e}): {l}"))
            })
            .collect(),
    }
}

/// Whether `v` holds the string `s` anywhere (a value or a key).
fn holds(v: &Value, s: &str) -> bool {
    match v {
        Value::String(t) => t.contains(s),
        Value::Array(a) => a.iter().any(|x| holds(x, s)),
        Value::Object(o) => o.iter().any(|(k, x)| k.contains(s) || holds(x, s)),
        _ => false,
    }
}

#[test]
fn every_json_output_parses_and_reads_back_hostile_text() {
    let wh = Wh::new();
    for c in 1..=12 {
        hostile_commit(&wh, c, if c <= 6 { 10.0 } else { 15.0 });
    }
    // The stored dtype: what every output must give back, whole.
    let stored = wh.sql("SELECT key FROM measurements LIMIT 1");
    let key: Value = serde_json::from_str(stored[0]["key"].as_str().unwrap()).unwrap();
    let dtype = key["dtype"].as_str().unwrap().to_string();
    assert_eq!(dtype, NAME, "the key is stored as the file wrote it");

    let (_, detected) = {
        let out = wh.run(&["detect", "--label", "main", "--format", "json"]);
        (code(&out), parse_all(&["detect"], &stdout(&out)))
    };
    assert!(holds(&detected[0], NAME), "{:?}", detected[0]);
    let alerts = parse_all(&["alerts"], &wh.ok(&["alerts", "list", "--format", "json"]));
    let id = alerts[0][0]["id"]
        .as_str()
        .expect("an alert was raised")
        .to_string();

    let commands: Vec<Vec<&str>> = vec![
        vec!["compare", "c01", "c12", "--format", "json"],
        vec!["alerts", "list", "--format", "json"],
        vec!["alerts", "show", &id, "--format", "json"],
        vec!["status", "--format", "json"],
        vec!["noise", "main", "--format", "json"],
        vec!["runs", "--format", "json"],
        vec![
            "sql",
            "SELECT key, tags FROM measurements JOIN runs USING (run_id)",
            "--format",
            "json",
        ],
        vec!["export", "main"],
    ];
    for args in &commands {
        let out = wh.run(args);
        let text = stdout(&out);
        assert!(
            matches!(code(&out), 0 | 1),
            "perfdb {args:?}: {}{text}",
            stderr(&out)
        );
        let docs = parse_all(args, &text);
        assert!(!docs.is_empty(), "perfdb {args:?} printed nothing");
        assert!(
            text.chars().all(|c| !c.is_control() || c == '\n'),
            "perfdb {args:?} printed a raw control character"
        );
        // The text reads back whole wherever the output names the row or the run
        // (status and noise speak of labels and series counts; sql gives the key as the
        // JSON text it is stored as, its parse holds the name).
        let found = docs.iter().any(|d| holds(d, NAME))
            || docs.iter().any(|d| {
                d.as_object().is_some_and(|o| {
                    o.values().any(|x| {
                        x.as_str()
                            .and_then(|s| serde_json::from_str::<Value>(s).ok())
                            .is_some_and(|inner| holds(&inner, NAME))
                    })
                })
            });
        if !matches!(args[0], "status" | "noise") {
            assert!(found, "perfdb {args:?} lost the name: {text}");
        }
    }
}

/// A lone surrogate (as CESU-8 or WTF-8 writes one) is no UTF-8: refused at its line.
#[test]
fn a_lone_surrogate_is_refused_at_its_line() {
    let wh = Wh::new();
    let path = wh.dir.path().join("s.log");
    let mut bytes =
        b"[perf] dim: (64,) dtype: bf16, torch avg: 5.00 us, ck avg: 6.00 us\n".to_vec();
    bytes.extend_from_slice(b"[perf] dim: (64,) dtype: bf\xed\xa0\x8016, torch avg: 5.00 us\n");
    std::fs::write(&path, bytes).unwrap();
    let out = wh.run(&["ingest", path.to_str().unwrap(), "--label", "x"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("s.log:2: not UTF-8"),
        "{}",
        stderr(&out)
    );
}
