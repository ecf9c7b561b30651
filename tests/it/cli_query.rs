//! `perfdb runs` and `perfdb sql`: listing and filtering runs, read-only SQL, and how
//! nested values and timestamps print.

use crate::common::*;
use std::collections::HashMap;
use std::path::Path;

#[test]
fn runs_lists_and_filters() {
    let wh = Wh::new();
    let f = sample("h200-gemm/ab/perf/base");
    wh.ok(&[
        "ingest",
        f.to_str().unwrap(),
        "--label",
        "base",
        "--commit",
        "abc1234",
        "--tag",
        "gpu=0",
    ]);
    let g = sample("h200-gemm/ab/perf/head");
    wh.ok(&[
        "ingest",
        g.to_str().unwrap(),
        "--label",
        "head",
        "--commit",
        "def5678",
    ]);
    let csv = wh.ok(&["runs", "--commit", "abc", "--format", "csv"]);
    assert_eq!(csv.lines().count(), 6, "{csv}");
    let tagged = wh.ok(&["runs", "--tag", "gpu=0", "--format", "json"]);
    assert_eq!(tagged.lines().count(), 5);
    let table = wh.ok(&["runs", "--label", "head"]);
    assert!(table.contains("(5 rows)"), "{table}");
    let none = wh.ok(&["runs", "--label", "nope"]);
    assert!(none.contains("(0 rows)"), "{none}");
    let bad = wh.run(&["sql", "SELECT nope FROM runs"]);
    assert_eq!(code(&bad), 2);
    assert!(stderr(&bad).contains("nope"), "{}", stderr(&bad));
    let counts: HashMap<String, i64> = wh
        .sql("SELECT label, count(*) AS n FROM measurements GROUP BY label")
        .iter()
        .map(|r| {
            (
                r["label"].as_str().unwrap().to_string(),
                r["n"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(counts["base"], counts["head"]);
}

#[test]
fn sql_is_read_only_unless_write() {
    let wh = Wh::new();
    wh.ingest(&sample("h200-gemm/ab/aiter/base"), "base");
    let out = wh.path().join("out.csv");
    let copy = format!(
        "COPY (SELECT count(*) AS n FROM measurements) TO '{}'",
        out.display()
    );
    for (q, says) in [
        (copy.as_str(), "Permission Error"),
        (
            "SELECT * FROM read_text('/etc/hostname')",
            "Permission Error",
        ),
        ("ATTACH '/tmp/perfdb-attach.db'", "statement 1 is ATTACH"),
        ("SELECT 1; SET threads = 1", "statement 2 is SET"),
        ("INSTALL httpfs", "is LOAD/INSTALL"),
    ] {
        let r = wh.run(&["sql", q]);
        assert_eq!(code(&r), 2, "{q}");
        let e = stderr(&r);
        assert!(
            e.contains("read-only") && e.contains(says) && e.contains("--write"),
            "{q}: {e}"
        );
    }
    assert!(!out.exists());
    assert!(!Path::new("/tmp/perfdb-attach.db").exists());
    // Queries of every read-only kind run.
    for q in [
        "DESCRIBE runs",
        "SUMMARIZE SELECT value FROM measurements",
        "EXPLAIN SELECT 1",
        "WITH a AS (SELECT 1 AS x) FROM a",
    ] {
        wh.ok(&["sql", q]);
    }
    // --write runs it, under the writer lock, and the warehouse is unchanged.
    let before = wh.count("SELECT count(*) FROM measurements");
    wh.ok(&["sql", "--write", &copy]);
    let written = std::fs::read_to_string(&out).unwrap();
    assert_eq!(written.trim(), format!("n\n{before}"));
    assert_eq!(wh.count("SELECT count(*) FROM measurements"), before);
}

#[test]
fn sql_prints_nested_values_as_csv_text() {
    let wh = Wh::new();
    wh.ingest(&sample("h200-gemm/ab/perf/base/trial1.log"), "x");
    let csv = wh.ok(&["sql", "SELECT variant, list(value ORDER BY line) AS v FROM measurements WHERE metric = 'latency' AND line <= 2 GROUP BY variant ORDER BY variant", "--format", "csv"]);
    assert_eq!(
        csv,
        "variant,v\ntorch,\"[18.46, 18.56]\"\ntriton,\"[23.2, 21.44]\"\n"
    );
}

#[test]
fn sql_prints_timestamps_in_every_format() {
    // `TIMESTAMPTZ` columns (`commit_time`, `ingested_at`) used to fail every format
    // ("Invalid timezone \"UTC\"").
    let wh = Wh::new();
    wh.ok(&[
        "ingest",
        sample("h200-gemm/ab/perf/base/trial1.log")
            .to_str()
            .unwrap(),
        "--label",
        "x",
        "--commit",
        "abc",
        "--commit-time",
        "2026-07-01T08:30:00Z",
    ]);
    let q = "SELECT \"commit\", commit_time FROM runs";
    assert_eq!(
        wh.ok(&["sql", q, "--format", "csv"]),
        "commit,commit_time\nabc,2026-07-01T08:30:00Z\n"
    );
    assert_eq!(
        wh.ok(&["sql", q, "--format", "json"]),
        "{\"commit\":\"abc\",\"commit_time\":\"2026-07-01T08:30:00Z\"}\n"
    );
    let table = wh.ok(&["sql", q]);
    assert!(
        table.contains("| abc    | 2026-07-01T08:30:00Z |"),
        "{table}"
    );
    // And the time of ingest, whatever it is, prints too.
    let now = wh.ok(&["sql", "SELECT ingested_at FROM runs", "--format", "csv"]);
    assert!(
        now.starts_with("ingested_at\n20") && now.trim_end().ends_with('Z'),
        "{now}"
    );
}
