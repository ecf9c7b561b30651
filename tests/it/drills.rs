//! Crash, disk-full and concurrency drills on the real binary.
//!
//! Crash drill: `ingest`, `compact` and `detect` (alert writes) SIGKILLed at random
//! moments; after every kill the warehouse must hold: the logs read, every file they
//! admit is a readable Parquet file, no run is partial (all its measurements there) or
//! duplicated, and every run whose ingest was acknowledged (exit 0) before the kill is
//! present. Disk full: a write that runs out of space fails with a clear error and leaves
//! the previous state. Concurrency: 8 ingesting processes of overlapping and distinct
//! files, a compaction and a reader loop at once: every run present exactly once and no
//! reader error.
//!
//! `PERFDB_DRILL_ITERATIONS` sets the crash drill's kills (CI: 12; `benches/drills.sh`
//! runs 200 against the release binary and prints the figures BENCHMARKS.md records).

use crate::common::*;
use perfdb_ingest::warehouse::{read_columns, Warehouse};
// The drill's kill points, reproducible from the seed it prints.
use perfdb_reports::stats::SplitMix64;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{Duration, Instant};

fn iterations() -> usize {
    std::env::var("PERFDB_DRILL_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12)
}

fn count(db: &perfdb_reports::db::Db, sql: &str) -> i64 {
    let (_, batches) = db.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    let col = batches[0].column(0);
    col.as_any()
        .downcast_ref::<arrow::array::Int64Array>()
        .map(|a| a.value(0))
        .unwrap_or_else(|| panic!("{sql}: not a count"))
}

/// Everything that must hold after any kill. `acked`: commits whose ingest exited 0.
fn check(root: &Path, acked: &BTreeSet<String>, runs_per_commit: i64) -> Result<(), String> {
    let wh = Warehouse::new(root);
    let m = wh
        .committed()
        .map_err(|e| format!("committed state: {e}"))?;
    for rel in m
        .runs
        .iter()
        .chain(&m.measurements)
        .chain(&m.summaries)
        .chain(&m.alerts)
        .chain(&m.alert_status)
        .chain(&m.alert_delivery)
    {
        read_columns(&root.join(rel), &[]).map_err(|e| format!("listed file {rel}: {e}"))?;
    }
    let db = perfdb_reports::db::Db::open(root, &perfdb_ingest::devices::builtin())
        .map_err(|e| format!("open: {e}"))?;
    let partial = count(
        &db,
        "SELECT count(*) FROM runs r WHERE n_measurements <> \
         (SELECT count(*) FROM measurements m WHERE m.run_id = r.run_id)",
    );
    if partial > 0 {
        return Err(format!("{partial} run(s) without all their measurements"));
    }
    let orphans = count(
        &db,
        "SELECT count(*) FROM measurements WHERE run_id NOT IN (SELECT run_id FROM runs)",
    );
    if orphans > 0 {
        return Err(format!("{orphans} measurement(s) without their run"));
    }
    let dup = count(&db, "SELECT count(*) - count(DISTINCT run_id) FROM runs");
    if dup > 0 {
        return Err(format!("{dup} duplicated run(s)"));
    }
    let dup_sum = count(
        &db,
        "SELECT count(*) FROM (SELECT run_id, table_name, metric, variant, key FROM summaries \
         GROUP BY ALL HAVING count(*) > 1)",
    );
    if dup_sum > 0 {
        return Err(format!("{dup_sum} series summarised twice"));
    }
    let dangling = count(
        &db,
        "SELECT count(*) FROM alert_status WHERE alert_id NOT IN (SELECT alert_id FROM alerts)",
    );
    if dangling > 0 {
        return Err(format!("{dangling} status change(s) of no alert"));
    }
    let per_commit = db
        .query("SELECT \"commit\", count(*) FROM runs GROUP BY 1")
        .map_err(|e| e.to_string())?
        .1;
    let mut seen = BTreeMap::new();
    for b in &per_commit {
        let c = b
            .column(0)
            .as_any()
            .downcast_ref::<arrow::array::StringArray>()
            .unwrap();
        let n = b
            .column(1)
            .as_any()
            .downcast_ref::<arrow::array::Int64Array>()
            .unwrap();
        for i in 0..b.num_rows() {
            seen.insert(c.value(i).to_string(), n.value(i));
        }
    }
    for (commit, n) in &seen {
        if *n != runs_per_commit {
            return Err(format!(
                "commit {commit}: {n} runs, a commit is all or nothing"
            ));
        }
    }
    for commit in acked {
        if !seen.contains_key(commit) {
            return Err(format!("commit {commit} was acknowledged and is gone"));
        }
    }
    Ok(())
}

/// Every file every table's log lists (gated or not) is on disk and reads: nothing
/// (compaction, an interrupted command) took a live file away.
fn logs_list_only_files_that_exist(root: &Path) {
    let store =
        std::sync::Arc::new(object_store::local::LocalFileSystem::new_with_prefix(root).unwrap());
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    for t in perfdb_ingest::warehouse::tables::Table::ALL {
        let table = perfdb_ingest::delta::DeltaTable::new(store.clone(), t.dir().into());
        let snap = rt.block_on(table.snapshot()).unwrap();
        for p in snap.files.keys() {
            let rel = perfdb_ingest::warehouse::tables::rel_of(t, p);
            read_columns(&root.join(&rel), &[])
                .unwrap_or_else(|e| panic!("{rel}, live in the log of {}: {e}", t.dir()));
        }
    }
}

#[derive(Default, Debug)]
struct Tally {
    killed_mid_run: usize,
    finished_first: usize,
}

#[test]
fn crash_drill_sigkill_ingest_compact_and_alert_writes_at_random_points() {
    let wh = Wh::new();
    let seed = std::env::var("PERFDB_DRILL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed);
    let mut rng = SplitMix64::new(seed);
    let mut acked = BTreeSet::new();
    let mut tally: BTreeMap<&str, Tally> = BTreeMap::new();
    let mut typical: BTreeMap<&str, Duration> = BTreeMap::new();
    let n = iterations();
    let started = Instant::now();
    for i in 0..n {
        let c = 1 + rng.below(20);
        let commit = format!("c{c:02}");
        let dir = sample(&format!("h200-gemm/history/{commit}"));
        let time = format!("2026-07-01T{c:02}:00:00Z");
        // Every kind in turn; the moment of the kill is what is random.
        let (op, args): (&str, Vec<String>) = match i % 4 {
            0 | 1 => (
                "ingest",
                [
                    "ingest",
                    dir.to_str().unwrap(),
                    "--label",
                    "main",
                    "--commit",
                    &commit,
                    "--commit-time",
                    &time,
                ]
                .map(String::from)
                .to_vec(),
            ),
            2 => (
                "compact",
                vec!["compact".into(), "--grace".into(), "0".into()],
            ),
            _ => (
                "detect",
                vec!["detect".into(), "--label".into(), "main".into()],
            ),
        };
        let mut child = wh
            .cmd()
            .args(&args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // The kill falls uniformly within how long this kind of operation last took
        // (x1.2, so some finish first): early, mid-write and at the commit alike.
        let span = typical
            .get(op)
            .copied()
            .unwrap_or(Duration::from_millis(100));
        let delay = Duration::from_micros(rng.below(span.as_micros() as usize * 6 / 5 + 1) as u64);
        let t0 = Instant::now();
        let mut finished = None;
        while t0.elapsed() < delay {
            if let Some(status) = child.try_wait().unwrap() {
                typical.insert(op, t0.elapsed());
                finished = Some(status);
                break;
            }
            std::thread::sleep(Duration::from_micros(500));
        }
        let finished = finished.or_else(|| child.try_wait().unwrap());
        let t = tally.entry(op).or_default();
        match finished {
            Some(status) => {
                t.finished_first += 1;
                if op == "ingest" && status.success() {
                    acked.insert(commit.clone());
                }
            }
            None => {
                child.kill().unwrap();
                child.wait().unwrap();
                t.killed_mid_run += 1;
                // Not seen to finish yet: widen the window until some do.
                typical.insert(op, span.mul_f64(1.25));
            }
        }
        if let Err(e) = check(&wh.path(), &acked, 6) {
            panic!("seed {seed}, iteration {i}, after {op} {args:?}: {e}");
        }
    }
    // Finishing what the kills interrupted: every commit in, exactly once.
    for c in 1..=20 {
        let commit = format!("c{c:02}");
        let dir = sample(&format!("h200-gemm/history/{commit}"));
        let time = format!("2026-07-01T{c:02}:00:00Z");
        ingest_commit(&wh, &dir, &commit, &time, &[]);
        acked.insert(commit);
    }
    wh.ok(&["compact", "--grace", "0"]);
    check(&wh.path(), &acked, 6).unwrap();
    assert_eq!(wh.count("SELECT count(*) FROM runs"), 120);
    logs_list_only_files_that_exist(&wh.path());
    eprintln!(
        "crash drill: {n} iterations in {:.1} s (seed {seed}): {tally:?}; every check held",
        started.elapsed().as_secs_f64()
    );
}

/// Unmounts a tmpfs when dropped.
struct Mount(std::path::PathBuf);
impl Drop for Mount {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

fn small_tmpfs(at: &Path, size: &str) -> Option<Mount> {
    std::fs::create_dir_all(at).unwrap();
    let ok = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
        .arg(at)
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    ok.then(|| Mount(at.to_path_buf()))
}

/// Ingest `dir` into the warehouse at `root` through `sh`, with `limits` set first.
fn ingest_with(root: &Path, dir: &Path, shell_limits: &str) -> std::process::Output {
    std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "{shell_limits} exec \"$0\" ingest \"$1\" --label big --commit big"
        ))
        .arg(env!("CARGO_BIN_EXE_perfdb"))
        .arg(dir)
        .env("PERFDB_WAREHOUSE", root)
        .output()
        .unwrap()
}

#[test]
fn a_full_disk_fails_clearly_and_keeps_the_previous_state() {
    let wh = Wh::new();
    let big = sample("h200-gemm/history");
    // 1. A real full file system, where this machine lets the test mount one.
    let mnt = wh.dir.path().join("small");
    let mut tried = Vec::new();
    if let Some(_m) = small_tmpfs(&mnt, "200k") {
        let root = mnt.join("wh");
        let first = ingest_with(&root, &sample("h200-gemm/ab/perf/base/trial1.log"), "");
        assert!(first.status.success(), "{}", stderr(&first));
        let before = Warehouse::new(&root).committed().unwrap();
        let out = ingest_with(&root, &big, "");
        assert_eq!(code(&out), 2, "{}", stderr(&out));
        assert!(
            stderr(&out).contains("No space left on device"),
            "{}",
            stderr(&out)
        );
        assert_eq!(Warehouse::new(&root).committed().unwrap(), before);
        check(&root, &BTreeSet::new(), 1).unwrap();
        tried.push("tmpfs");
    }
    // 2. The same through the kernel's file-size limit (EFBIG on the write that passes
    //    it), which needs no privilege: always run.
    let root = wh.dir.path().join("limited");
    let first = ingest_with(&root, &sample("h200-gemm/ab/perf/base/trial1.log"), "");
    assert!(first.status.success());
    let before = Warehouse::new(&root).committed().unwrap();
    let out = ingest_with(&root, &big, "trap '' XFSZ; ulimit -f 8;");
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("File too large"), "{}", stderr(&out));
    assert_eq!(Warehouse::new(&root).committed().unwrap(), before);
    check(&root, &BTreeSet::new(), 1).unwrap();
    tried.push("file-size limit");
    eprintln!("disk full drills: {tried:?}");
}

#[test]
fn concurrency_drill_8_writers_a_compaction_and_a_reader() {
    let wh = Wh::new();
    let started = Instant::now();
    // Writers 0-3 ingest the same commits (overlapping: each run must land once);
    // writers 4-7 ingest distinct commits.
    let mut writers = Vec::new();
    for w in 0..8usize {
        let commits: Vec<usize> = if w < 4 {
            (1..=5).collect()
        } else {
            vec![
                5 + 3 * (w - 4) + 1,
                5 + 3 * (w - 4) + 2,
                5 + 3 * (w - 4) + 3,
            ]
        };
        let mut cmds = Vec::new();
        for c in commits {
            let dir = sample(&format!("h200-gemm/history/c{c:02}"));
            let commit = format!("c{c:02}");
            let time = format!("2026-07-01T{c:02}:00:00Z");
            cmds.push(vec![
                "ingest".to_string(),
                dir.to_str().unwrap().to_string(),
                "--label".into(),
                "main".into(),
                "--commit".into(),
                commit,
                "--commit-time".into(),
                time,
            ]);
        }
        let wh_path = wh.path();
        writers.push(std::thread::spawn(move || {
            for args in cmds {
                let out = std::process::Command::new(env!("CARGO_BIN_EXE_perfdb"))
                    .args(&args)
                    .env("PERFDB_WAREHOUSE", &wh_path)
                    .output()
                    .unwrap();
                assert!(out.status.success(), "{args:?}: {}", stderr(&out));
            }
        }));
    }
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let compactor = {
        let (path, stop) = (wh.path(), stop.clone());
        std::thread::spawn(move || {
            let mut n = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let out = std::process::Command::new(env!("CARGO_BIN_EXE_perfdb"))
                    .args(["compact", "--grace", "60"])
                    .env("PERFDB_WAREHOUSE", &path)
                    .output()
                    .unwrap();
                assert!(out.status.success(), "compact: {}", stderr(&out));
                n += 1;
            }
            n
        })
    };
    let reader = {
        let (path, stop) = (wh.path(), stop.clone());
        std::thread::spawn(move || {
            let mut reads = 0;
            let mut last = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                if !path.join("runs/_delta_log").exists() {
                    continue;
                }
                // A reader sees whole commits only: the runs never go back, and every
                // run it sees has all its measurements.
                let db = perfdb_reports::db::Db::open(&path, &perfdb_ingest::devices::builtin())
                    .expect("reader open");
                let runs = count(&db, "SELECT count(*) FROM runs");
                let partial = count(
                    &db,
                    "SELECT count(*) FROM runs r WHERE n_measurements <> \
                     (SELECT count(*) FROM measurements m WHERE m.run_id = r.run_id)",
                );
                assert_eq!(partial, 0, "a reader saw a partial run");
                assert!(runs >= last, "runs went from {last} to {runs}");
                assert_eq!(runs % 6, 0, "a reader saw part of a commit: {runs} runs");
                last = runs;
                reads += 1;
            }
            reads
        })
    };
    for w in writers {
        w.join().expect("a writer failed");
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let compactions = compactor.join().expect("the compactor failed");
    let reads = reader.join().expect("the reader failed");
    let secs = started.elapsed().as_secs_f64();
    // Commits 1-17, six runs each, each exactly once.
    let acked: BTreeSet<String> = (1..=17).map(|c| format!("c{c:02}")).collect();
    check(&wh.path(), &acked, 6).unwrap();
    assert_eq!(wh.count("SELECT count(*) FROM runs"), 17 * 6);
    logs_list_only_files_that_exist(&wh.path());
    eprintln!(
        "concurrency drill: 8 writers (32 ingests), {compactions} compactions, {reads} reader passes in {secs:.1} s; every run once, no reader error"
    );
}
