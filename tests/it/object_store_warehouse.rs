//! The warehouse on real object stores on loopback, which `scripts/test` starts (plain
//! `cargo test` lists these tests as ignored): SeaweedFS
//! (`weed mini`, S3) and Azurite (Azure Blob). For each, the real binary ingests into
//! the store, compare, compact, vacuum and serve read from it and agree with the same
//! work on a local directory; 8 writer processes lose nothing and store each run once;
//! writers killed mid-commit leave no partial state. S3 is configured by
//! `AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and
//! `PERFDB_S3_BUCKET`; Azure by `AZURE_STORAGE_USE_EMULATOR=true` (or an account's
//! `AZURE_STORAGE_ACCOUNT_NAME` and key) and `PERFDB_AZ_CONTAINER`. Run without its
//! store, a test fails saying so. (`gs://` has no test: the one GCS emulator installable here,
//! `gcp-storage-emulator` from PyPI, answers 501 to the XML API's listing that
//! object_store uses.)

use crate::common::*;
use perfdb_reports::stats::SplitMix64;
use std::io::{Read, Write};
use std::time::{Duration, Instant};

use perfdb_ingest::testing::stores::TestStore as Store;

/// A fresh prefix of the store's test bucket or container.
fn warehouse(store: Store, name: &str) -> Wh {
    let root = store.url();
    Wh::remote(format!("{root}/{}", Store::fresh_prefix(name)))
}

/// What must hold whatever was killed: no run without all its values, no value
/// without its run, no run twice, every commit whole (`per_commit` runs each).
fn consistent(wh: &Wh, per_commit: i64) -> Result<i64, String> {
    let n = |q: &str| wh.count(q);
    let partial = n("SELECT count(*) FROM runs r WHERE n_measurements <> \
                     (SELECT count(*) FROM measurements m WHERE m.run_id = r.run_id)");
    if partial > 0 {
        return Err(format!("{partial} run(s) without all their values"));
    }
    let orphans =
        n("SELECT count(*) FROM measurements WHERE run_id NOT IN (SELECT run_id FROM runs)");
    if orphans > 0 {
        return Err(format!("{orphans} value(s) without their run"));
    }
    let dup = n("SELECT count(*) - count(DISTINCT run_id) FROM runs");
    if dup > 0 {
        return Err(format!("{dup} run(s) stored twice"));
    }
    let torn = n(&format!(
        "SELECT count(*) FROM (SELECT \"commit\" FROM runs GROUP BY 1 HAVING count(*) <> {per_commit})"
    ));
    if torn > 0 {
        return Err(format!("{torn} commit(s) not whole"));
    }
    Ok(n("SELECT count(*) FROM runs"))
}

fn history_args(c: usize) -> Vec<String> {
    vec![
        "ingest".into(),
        sample(&format!("h200-gemm/history/c{c:02}"))
            .to_str()
            .unwrap()
            .into(),
        "--label".into(),
        "main".into(),
        "--commit".into(),
        format!("c{c:02}"),
        "--commit-time".into(),
        format!("2026-07-01T{c:02}:00:00Z"),
    ]
}

/// `GET path` on `addr`: the status line and the body.
fn get(addr: &str, path: &str) -> std::io::Result<(String, String)> {
    let mut s = std::net::TcpStream::connect(addr)?;
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )?;
    let mut out = String::new();
    s.read_to_string(&mut out)?;
    let (head, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
    Ok((
        head.lines().next().unwrap_or("").to_string(),
        body.to_string(),
    ))
}

fn ingest_compare_compact_vacuum_and_serve_agree_with_a_local_warehouse(store: Store) {
    let remote = warehouse(store, "agree");
    let local = Wh::new();
    for wh in [&remote, &local] {
        wh.ingest(&sample("h200-gemm/ab/aiter/base"), "base");
        wh.ingest(&sample("h200-gemm/ab/aiter/head"), "head");
    }
    let compare = |wh: &Wh| {
        let out = wh.run(&["compare", "base", "head", "--control", "torch"]);
        (code(&out), stdout(&out))
    };
    let (code_remote, text_remote) = compare(&remote);
    assert_eq!((code_remote, text_remote.clone()), compare(&local));
    assert!(text_remote.contains("torch"), "{text_remote}");
    let medians =
        "SELECT r.label, m.variant, m.metric, round(median(m.value), 9) AS med, count(*) AS n \
                   FROM measurements m JOIN runs r USING (run_id) GROUP BY ALL ORDER BY ALL";
    assert_eq!(remote.sql(medians), local.sql(medians));
    // A second ingest of the same files adds nothing.
    let out = remote.ingest(&sample("h200-gemm/ab/aiter/base"), "base");
    assert!(
        out.contains("0 run(s) added with label 'base', 5 already present"),
        "{out}"
    );

    // Compaction and vacuum through the store: the same answers after each.
    let out = remote.ok(&["compact"]);
    assert!(out.contains("4 file(s) -> 4"), "{out}");
    let out = remote.ok(&["vacuum", "--retain", "0", "--force"]);
    assert!(out.contains(": 0 file(s) no table lists deleted"), "{out}");
    remote.ingest(&sample("h200-gemm/ab/aiter/head/trial1.log"), "extra");
    remote.ingest(&sample("h200-gemm/ab/aiter/head/trial2.log"), "extra");
    let out = remote.ok(&["compact"]);
    assert!(out.contains("6 replaced file(s)"), "{out}");
    let out = remote.ok(&["vacuum", "--retain", "0", "--force"]);
    assert!(out.contains(": 6 file(s) no table lists deleted"), "{out}");
    assert_eq!(compare(&remote), (code_remote, text_remote));
    assert_eq!(
        remote.count("SELECT count(*) FROM runs WHERE label = 'extra'"),
        2
    );

    // perfdb serve over the bucket.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let mut serve = remote
        .cmd()
        .args(["serve", "--bind", &addr])
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    let page = loop {
        match get(&addr, "/compare?base=base&head=head&control=torch") {
            Ok(page) => break page,
            Err(_) if t0.elapsed() < Duration::from_secs(60) => {
                std::thread::sleep(Duration::from_millis(200))
            }
            Err(e) => panic!(
                "perfdb serve on {} did not answer: {e}",
                remote.path().display()
            ),
        }
    };
    let _ = serve.kill();
    let _ = serve.wait();
    assert!(page.0.contains("200"), "{}", page.0);
    assert!(page.1.contains("gemm_a16w16"), "{}", page.1);
}

fn eight_writer_processes_store_every_run_once(store: Store) {
    let wh = warehouse(store, "writers");
    let t0 = Instant::now();
    // Writers 0-3 ingest the same three commits; 4-7 two distinct commits each.
    let mut writers = Vec::new();
    for w in 0..8usize {
        let commits: Vec<usize> = if w < 4 {
            vec![1, 2, 3]
        } else {
            vec![4 + 2 * (w - 4), 5 + 2 * (w - 4)]
        };
        let cmds: Vec<std::process::Command> = commits
            .into_iter()
            .map(|c| {
                let mut cmd = wh.cmd();
                cmd.args(history_args(c));
                cmd
            })
            .collect();
        writers.push(std::thread::spawn(move || {
            for mut cmd in cmds {
                let out = cmd.output().unwrap();
                assert!(out.status.success(), "{}", stderr(&out));
            }
        }));
    }
    for w in writers {
        w.join().unwrap();
    }
    // 11 commits of 6 runs, each once.
    assert_eq!(consistent(&wh, 6), Ok(66));
    assert_eq!(wh.count("SELECT count(DISTINCT trial) FROM runs"), 66);
    eprintln!(
        "8 writer processes, 20 ingests of 11 commits into {}: {:.1} s",
        wh.path().display(),
        t0.elapsed().as_secs_f64()
    );
}

fn writers_killed_mid_commit_leave_no_partial_state(store: Store) {
    let wh = warehouse(store, "killed");
    let mut rng = SplitMix64::new(0x53);
    let mut span = Duration::from_millis(400);
    let mut killed = 0;
    for i in 0..8 {
        let c = 1 + i % 4;
        let mut child = wh.cmd().args(history_args(c)).spawn().unwrap();
        let delay = Duration::from_micros(rng.below(span.as_micros() as usize + 1) as u64);
        let t0 = Instant::now();
        let mut done = false;
        while t0.elapsed() < delay {
            if child.try_wait().unwrap().is_some() {
                done = true;
                span = t0.elapsed().mul_f64(1.2);
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        if !done {
            child.kill().unwrap();
            killed += 1;
        }
        child.wait().unwrap();
        if let Err(e) = consistent(&wh, 6) {
            panic!("after ingest {i} (killed: {}): {e}", !done);
        }
    }
    // Finishing what the kills interrupted.
    for c in 1..=4 {
        let out = wh.cmd().args(history_args(c)).output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    assert_eq!(consistent(&wh, 6), Ok(24));
    wh.ok(&["compact", "--grace", "0"]);
    assert_eq!(consistent(&wh, 6), Ok(24));
    eprintln!("killed {killed} of 8 writers mid-run; every check held");
}

/// A bisect run against the store's warehouse is kept there: `alerts show` from a
/// second checkout (its own cache, nothing of the first machine's) lists it with the
/// alert.
fn a_bisect_is_read_by_a_second_checkout(store: Store) {
    let wh = warehouse(store, "bisect");
    let dir = wh.dir.path().join("kernels");
    let (shas, id) = crate::bisect::nightly_alert(&wh, &dir, |i| if i >= 13 { 13.0 } else { 10.0 });
    let (exit, v, err) = crate::bisect::bisect(&wh, &[&id[..8], "--repo", dir.to_str().unwrap()]);
    assert_eq!(exit, 0, "{err}\n{v}");
    assert_eq!(v["parts"][0]["culprit"]["sha"], shas[13].as_str(), "{v}");

    let other = Wh::remote(wh.url.clone().unwrap());
    let shown: serde_json::Value =
        serde_json::from_str(&other.ok(&["alerts", "show", &id, "--format", "json"])).unwrap();
    assert_eq!(
        shown["bisect"]["parts"][0]["culprit"]["sha"],
        shas[13].as_str(),
        "{shown}"
    );
    let text = other.ok(&["alerts", "show", &id]);
    assert!(
        text.contains(&format!("bisect: culprit {}", &shas[13][..12])),
        "{text}"
    );
    // Nothing of it on the first machine's cache: the record lives in the store.
    assert!(
        !wh.dir.path().join("cache").join("bisect").exists()
            && std::fs::read_dir(wh.dir.path().join("cache"))
                .map(|d| d.flatten().all(|e| !e.path().join("bisect").exists()))
                .unwrap_or(true),
        "the record was kept in this machine's cache"
    );
}

/// The tests above for one store, as tests of their own.
macro_rules! on_store {
    ($module:ident, $store:expr, $ignored_because:literal) => {
        mod $module {
            #[test]
            #[ignore = $ignored_because]
            fn ingest_compare_compact_vacuum_and_serve_agree_with_a_local_warehouse() {
                super::ingest_compare_compact_vacuum_and_serve_agree_with_a_local_warehouse($store)
            }
            #[test]
            #[ignore = $ignored_because]
            fn eight_writer_processes_store_every_run_once() {
                super::eight_writer_processes_store_every_run_once($store)
            }
            #[test]
            #[ignore = $ignored_because]
            fn writers_killed_mid_commit_leave_no_partial_state() {
                super::writers_killed_mid_commit_leave_no_partial_state($store)
            }
            #[test]
            #[ignore = $ignored_because]
            fn a_bisect_is_read_by_a_second_checkout() {
                super::a_bisect_is_read_by_a_second_checkout($store)
            }
        }
    };
}

on_store!(
    s3,
    super::Store::S3,
    "needs an S3 store on loopback: run scripts/test"
);
on_store!(
    azure,
    super::Store::Azure,
    "needs Azurite on loopback: run scripts/test"
);
