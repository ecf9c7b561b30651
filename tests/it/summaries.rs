//! Per-run summaries written at commit time agree with the same numbers computed from
//! the raw values, and `perfdb compact` writes them for warehouses that have none.

use crate::common::*;
use perfdb_ingest::warehouse::tables::Table;
use perfdb_ingest::warehouse::Warehouse;

const Q: &str = "SELECT label, table_name, metric, variant, key, run_id, n, median, min, max, \
                 log_mean, log_var FROM summaries ORDER BY ALL";

/// A `[perf]` log measuring each shape three times in one run, one value zero and the
/// uplift column negative: medians of several values and series without logs.
fn repeated_log(dir: &std::path::Path) -> std::path::PathBuf {
    let mut s = String::new();
    for (i, b) in ["7.80", "7.95", "0"].iter().enumerate() {
        s.push_str(&format!(
            "[aiter] [perf] dim: (4, 32, 8192)        dtype: torch.float16, torch avg: 10.{i}3    us, B avg: {b}     us, uplift: -1{i}.9%\n"
        ));
        s.push_str(&format!(
            "[aiter] [perf] dim: (8, 1280, 8192)      dtype: torch.float16, torch avg: 11.{i}8    us, B avg: 8.6{i}     us, uplift: 3{i}.6%\n"
        ));
    }
    let p = dir.join("repeated.log");
    std::fs::write(&p, s).unwrap();
    p
}

fn close(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0),
        _ => a == b,
    }
}

fn same(a: &[serde_json::Value], b: &[serde_json::Value]) {
    assert_eq!(a.len(), b.len(), "row counts differ");
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (x.as_object().unwrap(), y.as_object().unwrap());
        for (k, v) in x {
            assert!(close(v, &y[k]), "{k}: {v} vs {}\n{x:?}\n{y:?}", y[k]);
        }
    }
}

#[test]
fn summaries_match_raw_values_and_compact_backfills_them() {
    let wh = Wh::new();
    let log = repeated_log(wh.dir.path());
    wh.ingest(&log, "rep");
    wh.ingest(&sample("formats/01_aiter_perf_lines_real_log.txt"), "real");
    wh.ingest(&sample("h200-gemm/ab/aiter/base/trial1.log"), "real");
    let written = wh.sql(Q);
    assert!(!written.is_empty());
    // The cases that make a summary more than a copy of one value.
    assert!(written.iter().any(|r| r["n"].as_i64() == Some(3)));
    assert!(written.iter().any(|r| r["log_mean"].is_null()));
    assert!(written.iter().any(|r| !r["log_var"].is_null()));
    let medians: Vec<f64> = written
        .iter()
        .filter(|r| r["label"] == "rep" && r["variant"] == "B" && r["metric"] == "latency")
        .filter_map(|r| r["median"].as_f64())
        .collect();
    assert!(
        medians.contains(&7.8),
        "median of 7.80, 7.95, 0: {medians:?}"
    );
    // Rows the summaries must match: every run and series with a finite value.
    let series = wh.count(
        "SELECT count(*) FROM (SELECT DISTINCT run_id, table_name, metric, variant, key \
         FROM measurements WHERE isfinite(value))",
    );
    assert_eq!(series as usize, written.len());

    // A warehouse from before summaries, and from before the Delta log was the commit
    // point: a manifest that lists no summaries, and no logs.
    let c = Warehouse::new(wh.path()).committed().unwrap();
    assert_eq!(
        c.summaries.len(),
        3,
        "one summary file per measurements file"
    );
    for t in Table::ALL {
        let _ = std::fs::remove_dir_all(wh.path().join(t.dir()).join("_delta_log"));
    }
    let manifest = serde_json::json!({
        "format_version": 1, "version": 7, "runs": c.runs, "measurements": c.measurements,
    });
    std::fs::write(wh.path().join("_manifest.json"), manifest.to_string()).unwrap();
    // Until it is migrated, perfdb says what to do instead of reading half a state.
    let out = wh.run(&["sql", "SELECT count(*) FROM runs"]);
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    assert!(stderr(&out).contains("migrate` once"), "{}", stderr(&out));
    let out = wh.ok(&["migrate"]);
    assert!(out.contains("in 2 log commit(s)"), "{out}");
    assert!(wh.ok(&["migrate"]).contains("nothing to migrate"));
    // Measurements without summaries are summarised as they are read.
    same(&written, &wh.sql(Q));

    let out = wh.ok(&["compact"]);
    assert!(out.contains("summary file(s) written"), "{out}");
    let c = Warehouse::new(wh.path()).committed().unwrap();
    assert_eq!(c.summaries.len(), 2, "one per label");
    same(&written, &wh.sql(Q));
}
