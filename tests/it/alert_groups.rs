//! Alerts grouped as a team triages them: one bad commit that moves twelve series is one
//! group, one notification and one triage action; a step at another commit is another.

use crate::common::*;
use serde_json::Value;

/// Twelve `[perf]` rows (dims 64 .. 704), three trials each, as commit `c` of `main`;
/// every row 30% slower from `step` on, and the dim 1024 row slower from `other` on.
fn commit(wh: &Wh, c: usize, step: usize, other: usize) {
    let dir = wh.dir.path().join(format!("groups/c{c:02}"));
    std::fs::create_dir_all(&dir).unwrap();
    for t in 0..3 {
        let mut text = String::new();
        for d in 1..=12 {
            let base = 10.0 + d as f64;
            let us = if c >= step { base * 1.3 } else { base } * (1.0 + 0.002 * t as f64);
            text.push_str(&format!(
                "[perf] dim: ({},) dtype: bf16, torch avg: 5.00 us, ck avg: {us:.3} us\n",
                64 * d
            ));
        }
        let lone = if c >= other { 40.0 } else { 30.0 } * (1.0 + 0.002 * t as f64);
        text.push_str(&format!(
            "[perf] dim: (1024,) dtype: bf16, torch avg: 5.00 us, ck avg: {lone:.3} us\n"
        ));
        std::fs::write(dir.join(format!("t{t}.log")), text).unwrap();
    }
    let time = format!("2026-07-01T{c:02}:00:00Z");
    ingest_commit(wh, &dir, &format!("c{c:02}"), &time, &[]);
}

fn grouped(wh: &Wh) -> Vec<Value> {
    let out = wh.ok(&["alerts", "list", "--grouped", "--format", "json"]);
    serde_json::from_str::<Value>(&out)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn one_bad_commit_is_one_group_one_message_and_one_triage() {
    let wh = Wh::new();
    for c in 1..=16 {
        commit(&wh, c, 9, 4);
    }
    let (url, got) = receiver(vec![]);
    let out = wh.run(&["detect", "--label", "main", "--notify", &url]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));

    let groups = grouped(&wh);
    assert_eq!(groups.len(), 2, "{groups:?}");
    let big = groups
        .iter()
        .find(|g| g["alerts"].as_array().unwrap().len() == 12);
    let big = big.unwrap_or_else(|| panic!("a group of twelve: {groups:?}"));
    assert_eq!(
        (
            big["last_good_commit"].as_str(),
            big["first_bad_commit"].as_str()
        ),
        (Some("c08"), Some("c09"))
    );
    // Worst first: the +30% steps are equal up to the trials' rounding; the lone row's
    // group is apart, at c04.
    let lone = groups.iter().find(|g| g["id"] != big["id"]).unwrap();
    assert_eq!(lone["alerts"].as_array().unwrap().len(), 1);
    assert_eq!(lone["first_bad_commit"], "c04");

    // One message a group, the twelve series listed in the big one.
    let got = got.lock().unwrap().clone();
    assert_eq!(got.len(), 2, "{got:?}");
    let msg = got.iter().find(|m| m["group"]["id"] == big["id"]).unwrap();
    assert_eq!(msg["group"]["series"].as_array().unwrap().len(), 12);
    assert!(
        msg["text"].as_str().unwrap().contains("and 11 more series"),
        "{}",
        msg["text"]
    );
    assert_eq!(wh.count("SELECT count(*) FROM alert_delivery"), 2);

    // The table a person reads.
    let table = wh.ok(&["alerts", "list", "--grouped"]);
    assert!(table.starts_with("group "), "{table}");
    assert!(
        table.contains(&format!(
            "group {} (12 alerts):",
            big["id"].as_str().unwrap()
        )),
        "{table}"
    );

    // Triage acts on the group: any member's id names it.
    let member = big["alerts"][5]["id"].as_str().unwrap();
    let out = wh.ok(&["alerts", "ack", member, "--group", "--note", "on it"]);
    assert_eq!(out.matches("acknowledged").count(), 12, "{out}");
    let groups = grouped(&wh);
    let big = groups.iter().find(|g| g["id"] == big["id"]).unwrap();
    assert_eq!(big["status"], "acknowledged");
    assert!(big["alerts"]
        .as_array()
        .unwrap()
        .iter()
        .all(|a| a["status"] == "acknowledged"));
    let lone = groups.iter().find(|g| g["id"] != big["id"]).unwrap();
    assert_eq!(lone["status"], "active", "the other change is untouched");
    // Acknowledging it again: nothing to do, said as the alert's transition error.
    let out = wh.run(&["alerts", "ack", member, "--group"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cannot be acknowledged"),
        "{}",
        stderr(&out)
    );

    // A second detect sends nothing more.
    wh.run(&["detect", "--label", "main", "--notify", &url]);
    assert_eq!(wh.count("SELECT count(*) FROM alert_delivery"), 2);
}
