//! `perfdb detect --since C` after every commit, as docs/alerts.md tells CI to run it:
//! it raises, confirms, resolves and silences what one detect over the same data does,
//! and pages once a step.

use crate::common::*;
use serde_json::Value;
use std::collections::BTreeSet;

type Alert = (String, String, String, String, String, String, String);

/// (table, variant, shape, machine, last good, first bad, status) of every alert that
/// stands (withdrawn ones aside: a pending step at the tip that turns out a blip is
/// stored, then withdrawn).
fn standing(wh: &Wh) -> BTreeSet<Alert> {
    let listed: Vec<Value> =
        serde_json::from_str(&wh.ok(&["alerts", "list", "--format", "json"])).unwrap();
    listed
        .iter()
        .filter(|a| a["status"] != "withdrawn")
        .map(|a| {
            let s = |k: &str| a[k].as_str().unwrap().to_string();
            (
                s("table"),
                s("variant"),
                s("key_text"),
                s("machine"),
                s("last_good_commit"),
                s("first_bad_commit"),
                s("status"),
            )
        })
        .collect()
}

/// Add commits 1..=n with `add`, a `detect --since cNN` after each; then one detect over
/// a copy of the same data. Returns the alerts each way and the pages (new alerts) the
/// commit-by-commit runs sent.
fn after_each_commit(
    n: usize,
    add: impl Fn(&Wh, usize),
) -> (BTreeSet<Alert>, BTreeSet<Alert>, usize) {
    after_each_commit_with(n, "", add)
}

/// [`after_each_commit`] with `perfdb.toml` text `config` for every detect.
fn after_each_commit_with(
    n: usize,
    config: &str,
    add: impl Fn(&Wh, usize),
) -> (BTreeSet<Alert>, BTreeSet<Alert>, usize) {
    let wh = Wh::new();
    let cfg = wh.dir.path().join("perfdb.toml");
    std::fs::write(&cfg, config).unwrap();
    let cfg = cfg.to_str().unwrap();
    let data = Wh::new();
    let mut pages = 0;
    for c in 1..=n {
        add(&wh, c);
        add(&data, c);
        let since = format!("c{c:02}");
        let out = wh.run(&[
            "detect", "--label", "main", "--since", &since, "--format", "json", "--config", cfg,
        ]);
        let v: Value = serde_json::from_str(&stdout(&out))
            .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&out), stderr(&out)));
        let new = v["raised"]["new_alerts"].as_array().unwrap().len();
        assert_eq!(
            code(&out),
            if new > 0 { 1 } else { 0 },
            "after c{c}: {}",
            v["raised"]
        );
        pages += new;
    }
    let batch = Wh::new();
    copy_dir(&data.path(), &batch.path());
    batch.run(&["detect", "--label", "main", "--config", cfg]);
    (standing(&wh), standing(&batch), pages)
}

fn statuses(alerts: &BTreeSet<Alert>) -> Vec<(String, String, String)> {
    alerts
        .iter()
        .map(|a| (a.4.clone(), a.5.clone(), a.6.clone()))
        .collect()
}

#[test]
fn the_h200_history_pages_its_six_steps_once_each() {
    let (each, one, pages) = after_each_commit(20, |wh, c| ingest_history(wh, &[c]));
    assert_eq!(each, one);
    assert_eq!(one.len(), 6);
    assert!(
        one.iter()
            .all(|a| a.4 == "c12" && a.5 == "c13" && a.6 == "active"),
        "{one:?}"
    );
    assert_eq!(pages, 6);
}

#[test]
fn a_step_fixed_later_is_raised_then_resolved() {
    // +200% at c07, fixed at c14.
    let (each, one, pages) = after_each_commit(20, |wh, c| {
        perf_commit(wh, c, if (7..=13).contains(&c) { 97.2 } else { 32.4 })
    });
    assert_eq!(each, one);
    assert_eq!(
        statuses(&one),
        [("c06".into(), "c07".into(), "resolved".into())]
    );
    assert_eq!(pages, 1, "paged when it held, before the fix");
}

#[test]
fn two_steps_on_one_series_are_two_alerts_the_older_silenced() {
    // +50% at c09, +50% more at c17.
    let (each, one, pages) = after_each_commit(24, |wh, c| {
        let us = match c {
            1..=8 => 20.0,
            9..=16 => 30.0,
            _ => 45.0,
        };
        perf_commit(wh, c, us)
    });
    assert_eq!(each, one);
    assert_eq!(
        statuses(&one),
        [
            ("c08".into(), "c09".into(), "silenced".into()),
            ("c16".into(), "c17".into(), "active".into()),
        ]
    );
    assert_eq!(pages, 2);
}

#[test]
fn a_blip_at_the_tip_stays_unpaged_and_a_later_step_pages() {
    // Two commits at +60% (c06, c07), back, then a step that holds from c15.
    let (each, one, pages) = after_each_commit(20, |wh, c| {
        let us = match c {
            6 | 7 => 16.0,
            15.. => 18.0,
            _ => 10.0,
        };
        perf_commit(wh, c, us)
    });
    assert_eq!(each, one);
    assert_eq!(
        statuses(&one),
        [("c14".into(), "c15".into(), "active".into())]
    );
    assert_eq!(pages, 1);
}

#[test]
fn a_window_shorter_than_the_history_still_confirms_and_resolves() {
    // Six commits of context: the step at c07 is confirmed after `--since` passed it,
    // and its fix seven commits later resolves it though the window no longer reaches
    // back to the step's last good commit by `context` alone.
    let (each, one, pages) = after_each_commit_with(24, "[detect]\ncontext = 6\n", |wh, c| {
        perf_commit(wh, c, if (7..=13).contains(&c) { 97.2 } else { 32.4 })
    });
    assert_eq!(each, one);
    assert_eq!(
        statuses(&one),
        [("c06".into(), "c07".into(), "resolved".into())]
    );
    assert_eq!(pages, 1);
}
