//! Malformed inputs too large or too many to store in `sample-data/invalid/`, generated
//! here and ingested by the real binary under an address-space limit (`prlimit --as`),
//! so "bounded memory" is a limit the process cannot pass, not a hope. Each is rejected
//! with file:line and the warehouse left as it was, or ingested as documented
//! (sample-data/invalid/README.md). The short forms run here; `benches/malformed.sh`
//! runs the full sizes (a 100 MB line, 10^6 rows) against the release binary.

use crate::common::*;
use std::io::Write;
use std::path::Path;
use std::process::Output;

/// The address space each ingest may use (1 GiB): what a CI runner spares many times.
const LIMIT_BYTES: u64 = 1 << 30;

fn ingest_limited(wh: &Wh, file: &Path) -> Output {
    std::process::Command::new("prlimit")
        .arg(format!("--as={LIMIT_BYTES}"))
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_perfdb"))
        .args(["ingest", file.to_str().unwrap(), "--label", "m"])
        .env("PERFDB_WAREHOUSE", wh.path())
        .output()
        .expect("prlimit (util-linux) runs perfdb")
}

fn write(wh: &Wh, name: &str, body: impl FnOnce(&mut dyn Write)) -> std::path::PathBuf {
    let p = wh.dir.path().join(name);
    let mut f = std::io::BufWriter::new(std::fs::File::create(&p).unwrap());
    body(&mut f);
    f.flush().unwrap();
    p
}

/// A warehouse with one good run in it, to show a rejection leaves it unchanged.
fn with_one_run() -> (Wh, String) {
    let wh = Wh::new();
    wh.ingest(&sample("h200-gemm/ab/aiter/base/trial1.log"), "base");
    let state = committed(&wh);
    (wh, state)
}

fn committed(wh: &Wh) -> String {
    let c = perfdb_ingest::warehouse::Warehouse::new(wh.path())
        .committed()
        .unwrap();
    format!("{c:?}")
}

fn assert_unchanged(wh: &Wh, state: &str) {
    assert_eq!(
        committed(wh),
        state,
        "a rejected input changed the warehouse"
    );
    assert_eq!(wh.count("SELECT count(*) FROM runs"), 1);
}

#[test]
fn a_10_mb_single_line_is_rejected_within_the_memory_limit() {
    let (wh, manifest) = with_one_run();
    let f = write(&wh, "one_line.log", |w| {
        for _ in 0..10 << 10 {
            w.write_all(&[b'x'; 1024]).unwrap();
        }
    });
    let out = ingest_limited(&wh, &f);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("one_line.log: no recognizable benchmark data"),
        "{}",
        stderr(&out)
    );
    assert_unchanged(&wh, &manifest);
}

#[test]
fn a_table_of_100k_columns_is_ingested_within_the_memory_limit() {
    let wh = Wh::new();
    let n = 100_000;
    let f = write(&wh, "wide.log", |w| {
        writeln!(w, "[aiter] wide summary (markdown):").unwrap();
        write!(w, "| M |").unwrap();
        for i in 0..n {
            write!(w, " k{i} us |").unwrap();
        }
        write!(w, "\n|---:|").unwrap();
        for _ in 0..n {
            write!(w, "---:|").unwrap();
        }
        write!(w, "\n| 1 |").unwrap();
        for i in 0..n {
            write!(w, " {}.5 |", i % 97).unwrap();
        }
        writeln!(w).unwrap();
    });
    let out = ingest_limited(&wh, &f);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        wh.count("SELECT count(*) FROM measurements"),
        n as i64,
        "one value per column"
    );
    assert_eq!(
        wh.count("SELECT count(DISTINCT variant) FROM measurements"),
        n as i64
    );
}

#[test]
fn a_table_of_100k_rows_is_ingested_and_a_cut_one_rejected() {
    let rows = 100_000;
    let table = |w: &mut dyn Write, cut: bool| {
        writeln!(
            w,
            "[aiter] long summary (markdown):\n| M | N | ck us |\n|---:|---:|---:|"
        )
        .unwrap();
        for i in 0..rows {
            writeln!(w, "| {i} | 4096 | {}.25 |", 10 + i % 7).unwrap();
        }
        if cut {
            write!(w, "| {rows} | 40").unwrap();
        }
    };
    let wh = Wh::new();
    let f = write(&wh, "long.log", |w| table(w, false));
    let out = ingest_limited(&wh, &f);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(wh.count("SELECT count(*) FROM measurements"), rows as i64);

    let (wh, manifest) = with_one_run();
    let f = write(&wh, "long_cut.log", |w| table(w, true));
    let out = ingest_limited(&wh, &f);
    assert_eq!(code(&out), 2);
    let line = rows + 4;
    assert!(
        stderr(&out).contains(&format!("long_cut.log:{line}:")),
        "names the cut line {line}: {}",
        stderr(&out)
    );
    assert_unchanged(&wh, &manifest);
}

#[test]
fn crlf_line_ends_read_as_lf() {
    let src = sample("h200-gemm/ab/aiter/base/trial1.log");
    let lf = std::fs::read_to_string(&src).unwrap();
    let (a, b) = (Wh::new(), Wh::new());
    let crlf = write(&b, "trial1_crlf.log", |w| {
        w.write_all(lf.replace('\n', "\r\n").as_bytes()).unwrap()
    });
    a.ingest(&src, "x");
    b.ingest(&crlf, "x");
    let q =
        "SELECT table_name, variant, key, metric, value, raw, line FROM measurements ORDER BY ALL";
    let (va, vb) = (a.sql(q), b.sql(q));
    assert!(!va.is_empty());
    assert_eq!(va, vb, "CRLF changed what was read");
}

#[test]
fn a_symlink_loop_in_a_directory_is_walked_once() {
    let wh = Wh::new();
    let dir = wh.dir.path().join("logs");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::copy(
        sample("h200-gemm/ab/aiter/base/trial1.log"),
        dir.join("sub/trial1.log"),
    )
    .unwrap();
    std::os::unix::fs::symlink("..", dir.join("sub/up")).unwrap();
    std::os::unix::fs::symlink(".", dir.join("self")).unwrap();
    let out = ingest_limited(&wh, &dir);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stdout(&out).contains("1 run(s) added"), "{}", stdout(&out));
}
