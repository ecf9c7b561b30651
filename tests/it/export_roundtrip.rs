//! `perfdb export --format pytorch-v3` of a label with several commits, ingested back:
//! every commit (with its time), run, trial and value comes back.

use crate::common::*;
use std::collections::BTreeMap;

/// Per commit (with its commit time): each run's compared values, as sorted
/// `arch machine table variant key metric unit value` lines (the run's machine class
/// first: detect's series), the runs sorted.
fn runs_by_commit(wh: &Wh, label: &str) -> BTreeMap<String, Vec<Vec<String>>> {
    let rows = wh.sql(&format!(
        "SELECT r.\"commit\" || ' @ ' || CAST(r.commit_time AS VARCHAR) AS c, r.run_id, \
                coalesce(r.arch, '') || ' ' || \
                regexp_extract(r.tags, '\"machine\":\"([^\"]*)\"', 1) || ' ' || \
                m.table_name || ' ' || m.variant || ' ' || m.key || ' ' || m.metric || ' ' || \
                m.unit || ' ' || CAST(round(m.value, 6) AS VARCHAR) AS v \
         FROM measurements m JOIN runs r USING (run_id) \
         WHERE r.label = '{label}' AND m.direction <> 'none' AND m.value IS NOT NULL"
    ));
    let mut runs: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for r in rows {
        let s = |k: &str| r[k].as_str().unwrap().to_string();
        runs.entry((s("c"), s("run_id"))).or_default().push(s("v"));
    }
    let mut out: BTreeMap<String, Vec<Vec<String>>> = BTreeMap::new();
    for ((c, _), mut v) in runs {
        v.sort();
        out.entry(c).or_default().push(v);
    }
    for v in out.values_mut() {
        v.sort();
    }
    out
}

#[test]
fn a_label_of_five_commits_comes_back_run_for_run() {
    let wh = Wh::new();
    ingest_history(&wh, &[1, 2, 3, 4, 5]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("main.jsonl");
    wh.ok(&[
        "export",
        "main",
        "--format",
        "pytorch-v3",
        "-o",
        file.to_str().unwrap(),
    ]);
    let out = wh.ok(&["ingest", file.to_str().unwrap(), "--label", "back"]);
    assert!(out.contains("pytorch-v3"), "{out}");
    let (main, back) = (runs_by_commit(&wh, "main"), runs_by_commit(&wh, "back"));
    assert_eq!(main.len(), 5, "{:?}", main.keys());
    assert_eq!(
        main.keys().collect::<Vec<_>>(),
        back.keys().collect::<Vec<_>>()
    );
    for (c, runs) in &main {
        assert_eq!(runs.len(), back[c].len(), "{c}: runs");
        assert_eq!(runs, &back[c], "{c}: values run by run");
    }
}
