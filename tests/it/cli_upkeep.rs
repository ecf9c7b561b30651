//! `perfdb compact` and `perfdb vacuum` beside ingests: files bounded, readers and
//! writers in flight unharmed, a killed ingest leaves a consistent warehouse.

use crate::common::*;

#[test]
fn one_file_per_command_and_partition_then_compact() {
    let wh = Wh::new();
    wh.ingest(&sample("h200-gemm/history"), "hist");
    let parquet_files = |sub: &str| {
        std::fs::read_dir(wh.path().join(sub))
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .path()
                    .extension()
                    .is_some_and(|x| x == "parquet")
            })
            .count()
    };
    assert_eq!(parquet_files("measurements/label=hist"), 1);
    assert_eq!(parquet_files("runs/label=hist"), 1);
    assert_eq!(wh.count("SELECT count(*) FROM runs"), 120);
    for t in 1..=3 {
        wh.ingest(
            &sample(&format!("h200-gemm/ab/aiter/base/trial{t}.log")),
            "hist",
        );
    }
    assert_eq!(parquet_files("measurements/label=hist"), 4);
    // A file no log lists (an interrupted write) is invisible, and stays until vacuum.
    std::fs::copy(
        std::fs::read_dir(wh.path().join("measurements/label=hist"))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path(),
        wh.path()
            .join("measurements/label=hist/part-orphan.parquet"),
    )
    .unwrap();
    let before = wh.count("SELECT count(*) FROM measurements");
    let out = wh.ok(&["compact"]);
    assert!(
        out.contains("8 file(s) -> 2; 0 file(s) of interrupted commands (older than 600s) taken out of the tables; 12 replaced file(s) stay on disk until `perfdb vacuum`"),
        "{out}"
    );
    // The four ingests' summaries are replaced by one rebuilt from the merged file.
    assert!(out.ends_with("; 1 summary file(s) written\n"), "{out}");
    assert_eq!(parquet_files("summaries/label=hist"), 5);
    // The replaced files stay on disk (a reader may hold an older snapshot), unlisted.
    assert_eq!(parquet_files("measurements/label=hist"), 6);
    assert_eq!(wh.count("SELECT count(*) FROM measurements"), before);
    assert_eq!(wh.count("SELECT count(*) FROM runs"), 123);
    assert_eq!(wh.count("SELECT max(trial) FROM runs"), 123);
    // Compacting again changes nothing.
    let out = wh.ok(&["compact"]);
    assert!(out.contains("2 file(s) -> 2; 0 file(s)"), "{out}");
    // Vacuum deletes what no log lists once older than its retention: not yet...
    let out = wh.ok(&["vacuum"]);
    assert!(
        out.contains(": 0 file(s) no table lists deleted (0.0 MB); 13 younger than 168 h kept"),
        "{out}"
    );
    // Under an hour could delete an in-flight ingest's files: refused without --force.
    let out = wh.run(&["vacuum", "--retain", "0"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("--force"), "{}", stderr(&out));
    // ...and with no retention, all of it: the 12 replaced files and the orphan.
    let out = wh.ok(&["vacuum", "--retain", "0", "--force"]);
    assert!(out.contains(": 13 file(s) no table lists deleted"), "{out}");
    assert_eq!(parquet_files("measurements/label=hist"), 1);
    assert_eq!(parquet_files("summaries/label=hist"), 1);
    assert_eq!(parquet_files("runs/label=hist"), 1);
    assert_eq!(wh.count("SELECT count(*) FROM measurements"), before);
    let out = wh.run(&["vacuum", "--retain=-1"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("expected a number of hours"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn compact_file_rows_bounds_the_merged_files() {
    let wh = Wh::new();
    ingest_history(&wh, &[1, 2, 3, 4, 5, 6]);
    let per_commit = wh.count(
        "SELECT count(*) FROM measurements m JOIN runs r USING (run_id) WHERE r.\"commit\" = 'c01'",
    );
    let before = wh.count("SELECT count(*) FROM measurements");
    // Files under half the bound are merged: a commit's file (per_commit rows) is.
    let bound = (3 * per_commit - 1).to_string();
    let out = wh.ok(&["compact", "--grace", "0", "--file-rows", &bound]);
    assert!(out.contains("12 file(s) -> 4;"), "{out}");
    let c = perfdb_ingest::warehouse::Warehouse::new(wh.path())
        .committed()
        .unwrap();
    // Six ingests of a commit each, in files of fewer than three commits' rows: three
    // files of two, each with the ingest-time range of its runs.
    assert_eq!(c.measurements.len(), 3, "{:?}", c.measurements);
    for m in &c.measurements {
        let rows: usize = perfdb_ingest::warehouse::read_columns(&wh.path().join(m), &["run_id"])
            .unwrap()
            .iter()
            .map(|b| b.num_rows())
            .sum();
        assert_eq!(rows as i64, 2 * per_commit, "{m}");
        assert!(c.ingested.contains_key(m), "{m} has no range");
    }
    assert_eq!(wh.count("SELECT count(*) FROM measurements"), before);
    // Files of half the bound or more stay as they are.
    let out = wh.ok(&["compact", "--grace", "0", "--file-rows", &bound]);
    assert!(out.contains("4 file(s) -> 4;"), "{out}");
    let again = perfdb_ingest::warehouse::Warehouse::new(wh.path())
        .committed()
        .unwrap();
    assert_eq!(again.measurements, c.measurements);
    let out = wh.run(&["compact", "--file-rows", "0"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
}

#[test]
fn readers_survive_compaction() {
    // A reader loop (compare, sql) while ingests and compactions run: no reader ever
    // fails on a file the manifest it read listed. (Compactions keep replaced files for
    // their grace period; with `--grace 0` a reader slower than two compactions, which a
    // loaded CI machine produces, would lose its files: the grace is what protects it.)
    let wh = Wh::new();
    for t in 1..=3 {
        for side in ["base", "head"] {
            let f = sample(&format!("h200-gemm/ab/perf/{side}/trial{t}.log"));
            wh.ok(&["ingest", f.to_str().unwrap(), "--label", side]);
        }
    }
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let readers: Vec<_> = (0..2)
        .map(|i| {
            let (stop, path) = (stop.clone(), wh.path());
            std::thread::spawn(move || {
                let mut failures = Vec::new();
                let mut reads = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let args: &[&str] = if i == 0 {
                        &[
                            "compare",
                            "base",
                            "head",
                            "--format",
                            "json",
                            "--allow-missing",
                        ]
                    } else {
                        &["sql", "SELECT count(*) FROM measurements"]
                    };
                    let out = std::process::Command::new(env!("CARGO_BIN_EXE_perfdb"))
                        .env("PERFDB_WAREHOUSE", &path)
                        .args(args)
                        .output()
                        .unwrap();
                    reads += 1;
                    // compare exits 0/1/3 with a verdict; 2 is an error.
                    if out.status.code() == Some(2) {
                        failures.push(String::from_utf8_lossy(&out.stderr).into_owned());
                    }
                }
                (reads, failures)
            })
        })
        .collect();
    for t in 4..=5 {
        for side in ["base", "head"] {
            let f = sample(&format!("h200-gemm/ab/perf/{side}/trial{t}.log"));
            wh.ok(&["ingest", f.to_str().unwrap(), "--label", side]);
            wh.ok(&["compact"]);
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for r in readers {
        let (reads, failures) = r.join().unwrap();
        assert!(reads > 0);
        assert!(
            failures.is_empty(),
            "{} of {reads} reads failed: {}",
            failures.len(),
            failures[0]
        );
    }
    assert_consistent(&wh);
    assert_eq!(wh.count("SELECT count(*) FROM runs"), 10);
}

#[test]
fn concurrent_ingests_lose_nothing() {
    let wh = Wh::new();
    let mut children = Vec::new();
    for side in ["base", "head"] {
        for format in ["aiter", "perf", "probe"] {
            let dir = sample(&format!("h200-gemm/ab/{format}/{side}"));
            children.push(
                wh.cmd()
                    .args(["ingest", dir.to_str().unwrap(), "--label", "same"])
                    .spawn()
                    .unwrap(),
            );
        }
    }
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    assert_eq!(wh.count("SELECT count(*) FROM runs"), 30);
    assert_eq!(wh.count("SELECT count(DISTINCT trial) FROM runs"), 30);
}

/// Every committed run has exactly its measurements, and no run appears twice.
fn assert_consistent(wh: &Wh) {
    let broken = wh.count(
        "SELECT count(*) FROM runs r WHERE n_measurements <> (SELECT count(*) FROM measurements m WHERE m.run_id = r.run_id)",
    );
    assert_eq!(
        broken, 0,
        "a run is visible without all of its measurements"
    );
    let orphans =
        wh.count("SELECT count(*) FROM measurements WHERE run_id NOT IN (SELECT run_id FROM runs)");
    assert_eq!(orphans, 0, "measurements are visible without their run");
    assert_eq!(
        wh.count("SELECT count(*) - count(DISTINCT run_id) FROM runs"),
        0
    );
}

#[test]
fn killing_ingest_at_any_moment_leaves_a_consistent_warehouse() {
    let wh = Wh::new();
    let dir = sample("h200-gemm/history");
    for (i, delay_ms) in [0u64, 2, 5, 10, 20, 40, 80, 160].into_iter().enumerate() {
        let label = format!("k{i}");
        let mut child = wh
            .cmd()
            .args(["ingest", dir.to_str().unwrap(), "--label", &label])
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let _ = child.kill();
        let _ = child.wait();
        assert_consistent(&wh);
        // A run is either all there (120 files in one commit) or not at all.
        let n = wh.count(&format!(
            "SELECT count(*) FROM runs WHERE label = '{label}'"
        ));
        assert!(n == 0 || n == 120, "label {label}: {n} runs");
    }
    wh.ok(&["compact"]);
    assert_consistent(&wh);
    // Ingesting again completes what a kill interrupted, without duplicates.
    for i in 0..8 {
        wh.ingest(&dir, &format!("k{i}"));
    }
    assert_eq!(wh.count("SELECT count(*) FROM runs"), 8 * 120);
    assert_consistent(&wh);
}

#[test]
fn vacuum_beside_ingests_in_flight_breaks_none_of_them() {
    let wh = Wh::new();
    let dir = sample("h200-gemm/history");
    wh.ingest(&dir, "seed");
    let ingests: Vec<_> = (0..3)
        .map(|i| {
            wh.cmd()
                .args(["ingest", dir.to_str().unwrap(), "--label", &format!("v{i}")])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    // The shortest retention allowed without --force, over and over meanwhile.
    let mut vacuums = 0;
    let mut ingests = ingests;
    while ingests.iter_mut().any(|c| c.try_wait().unwrap().is_none()) {
        let out = wh.run(&["vacuum", "--retain", "1"]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        vacuums += 1;
    }
    assert!(vacuums > 0);
    for c in ingests {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    assert_consistent(&wh);
    for i in 0..3 {
        assert_eq!(
            wh.count(&format!("SELECT count(*) FROM runs WHERE label = 'v{i}'")),
            120
        );
    }
    // Every file the logs list is there: a later command reads them all.
    wh.ok(&["compact"]);
    assert_consistent(&wh);
}
