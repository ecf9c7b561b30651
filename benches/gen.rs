//! Synthetic inputs for the benchmarks, made by perturbing the real H200 logs.
#![allow(dead_code)]

use perfdb_ingest::model::{Direction, Measurement, Numerics, Parsed, RunMeta};
use perfdb_ingest::warehouse::{prepare, Warehouse};
use perfdb_reports::stats::SplitMix64;
use std::path::{Path, PathBuf};

pub fn sample(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sample-data")
        .join(rel)
}

/// The 10 real aiter trial logs (base and head).
pub fn real_aiter_logs() -> Vec<String> {
    let mut out = Vec::new();
    for side in ["base", "head"] {
        for t in 1..=5 {
            out.push(
                std::fs::read_to_string(sample(&format!("h200-gemm/ab/aiter/{side}/trial{t}.log")))
                    .unwrap(),
            );
        }
    }
    out
}

/// Multiply every number in the table rows (after the key columns) by 1 +- 2%, printed
/// with 6 significant digits like pandas.
pub fn perturb(log: &str, rng: &mut SplitMix64) -> String {
    let mut out = String::with_capacity(log.len());
    for line in log.split_inclusive('\n') {
        if !line.starts_with('|')
            || line.starts_with("|--")
            || line.contains(" M ")
            || line.contains(" n ")
        {
            out.push_str(line);
            continue;
        }
        let cells: Vec<&str> = line.trim_end().trim_matches('|').split('|').collect();
        let keys = if cells.len() == 10 { 4 } else { 2 };
        out.push('|');
        for (i, c) in cells.iter().enumerate() {
            let t = c.trim();
            match t.parse::<f64>() {
                Ok(v) if i >= keys => {
                    let f = 1.0 + ((rng.next_u64() % 4001) as f64 / 100_000.0 - 0.02);
                    out.push_str(&format!(
                        " {:>w$} |",
                        format!("{:.6}", v * f)
                            .trim_end_matches('0')
                            .trim_end_matches('.'),
                        w = c.len().saturating_sub(2)
                    ));
                }
                _ => {
                    out.push_str(c);
                    out.push('|');
                }
            }
        }
        out.push('\n');
    }
    out
}

/// `n` perturbed aiter trial logs.
pub fn aiter_logs(n: usize, seed: u64) -> Vec<String> {
    let real = real_aiter_logs();
    let mut rng = SplitMix64::new(seed);
    (0..n)
        .map(|i| perturb(&real[i % real.len()], &mut rng))
        .collect()
}

/// Write `logs` as `dir/trialNNNN.log`.
pub fn write_logs(dir: &Path, logs: &[String]) -> Vec<PathBuf> {
    std::fs::create_dir_all(dir).unwrap();
    logs.iter()
        .enumerate()
        .map(|(i, l)| {
            let p = dir.join(format!("trial{i:04}.log"));
            std::fs::write(&p, l).unwrap();
            p
        })
        .collect()
}

pub const ROWS_PER_RUN: usize = 100;

pub fn synthetic_run(label: &str, i: usize, slow: f64) -> (RunMeta, Parsed, Vec<u8>) {
    synthetic_run_rows(label, i, slow, ROWS_PER_RUN)
}

/// A run of `rows` measurements (`rows / 2` shapes, variants torch and triton) of
/// table `gemm`, metric `latency`; row 7 is `slow` times slower.
pub fn synthetic_run_rows(
    label: &str,
    i: usize,
    slow: f64,
    rows: usize,
) -> (RunMeta, Parsed, Vec<u8>) {
    let mut ms = Vec::with_capacity(rows);
    for r in 0..rows {
        let variant = if r % 2 == 0 { "torch" } else { "triton" };
        let base = 10.0 + (r / 2) as f64;
        let noise = 1.0 + ((i * 31 + r * 17) % 13) as f64 / 1000.0;
        let f = if r == 7 { slow } else { 1.0 };
        let v = base * noise * f;
        let (key, key_order) = perfdb_ingest::model::key_of(&[
            ("M".to_string(), ((r / 2) * 64).to_string()),
            ("N".to_string(), "4096".to_string()),
        ]);
        ms.push(Measurement {
            table: "gemm".into(),
            variant: variant.into(),
            key,
            key_order,
            metric: "latency".into(),
            unit: "us".into(),
            direction: Direction::Lower,
            value: Some(v),
            raw: perfdb_ingest::model::Raw::new(&format!("{v}")),
            column: format!("{variant} us").into(),
            numerics: Numerics::NotChecked,
            line: r as u32 + 1,
            note: None,
        });
    }
    let meta = RunMeta {
        label: label.into(),
        ..Default::default()
    };
    (
        meta,
        Parsed {
            measurements: ms,
            ..Default::default()
        },
        format!("{label}-{i}").into_bytes(),
    )
}

/// A warehouse with `rows` background measurement rows plus 5 base and 5 head trials.
pub fn build_warehouse(dir: &std::path::Path, rows: usize) -> Warehouse {
    let wh = Warehouse::new(dir);
    let runs = rows / ROWS_PER_RUN;
    let chunk = 2000;
    let mut i = 0;
    while i < runs {
        let n = chunk.min(runs - i);
        let prepared: Vec<_> = (i..i + n)
            .map(|k| {
                let (meta, parsed, bytes) = synthetic_run("history", k, 1.0);
                prepare("gen", &bytes, "aiter-table", parsed, &meta)
            })
            .collect();
        wh.commit(prepared).unwrap();
        i += n;
    }
    let sides: Vec<_> = (0..10)
        .map(|k| {
            let (label, slow) = if k < 5 { ("base", 1.0) } else { ("head", 1.5) };
            let (meta, parsed, bytes) = synthetic_run(label, k, slow);
            prepare("gen", &bytes, "aiter-table", parsed, &meta)
        })
        .collect();
    wh.commit(sides).unwrap();
    wh.compact(perfdb_ingest::warehouse::DEFAULT_GRACE).unwrap();
    wh
}

/// Rows per run of the team-scale warehouse (`build_history`).
pub const HISTORY_ROWS_PER_RUN: usize = 1000;

/// A team-scale warehouse: about `rows` measurement rows as CI would leave them, one
/// ingest per commit on label `main` (`c0000`, `c0001`, ... with increasing commit
/// times, `runs_per_commit` trials each, 1,000 rows a run), row 7 20% slower from the
/// middle commit on; plus labels `base` and `head` (5 trials each, head's row 7 1.5x).
pub fn build_history(dir: &std::path::Path, rows: usize, runs_per_commit: usize) -> Warehouse {
    let wh = Warehouse::new(dir);
    let runs = (rows / HISTORY_ROWS_PER_RUN).max(1);
    let commits = runs.div_ceil(runs_per_commit);
    for c in 0..commits {
        let slow = if c >= commits / 2 { 1.2 } else { 1.0 };
        let n = runs_per_commit.min(runs - c * runs_per_commit);
        let prepared: Vec<_> = (0..n)
            .map(|t| {
                let (mut meta, parsed, mut bytes) =
                    synthetic_run_rows("main", c * runs_per_commit + t, slow, HISTORY_ROWS_PER_RUN);
                meta.commit = Some(format!("c{c:04}"));
                meta.commit_time_us = Some(1_700_000_000_000_000 + c as i64 * 3_600_000_000);
                bytes.extend_from_slice(format!("-c{c}").as_bytes());
                prepare("gen", &bytes, "aiter-table", parsed, &meta)
            })
            .collect();
        wh.commit(prepared).unwrap();
    }
    let sides: Vec<_> = (0..10)
        .map(|k| {
            let (label, slow) = if k < 5 { ("base", 1.0) } else { ("head", 1.5) };
            let (meta, parsed, bytes) = synthetic_run_rows(label, k, slow, HISTORY_ROWS_PER_RUN);
            prepare("gen", &bytes, "aiter-table", parsed, &meta)
        })
        .collect();
    wh.commit(sides).unwrap();
    wh
}

/// A Triton `perf_report(print_data=True)` log of `plots` benchmarks, 50 sizes each, two
/// lines (as pandas `to_string()` prints them: left-aligned index, right-aligned values).
pub fn triton_log(plots: usize, seed: u64) -> String {
    let mut rng = SplitMix64::new(seed);
    let mut out = String::new();
    for p in 0..plots {
        out.push_str(&format!(
            "matmul-performance-{p}:\n        M       N       K  cuBLAS (TFLOPS)  Triton (TFLOPS)\n"
        ));
        for i in 0..50 {
            let mut v = || 100.0 + (rng.next_u64() % 800_000) as f64 / 1000.0;
            out.push_str(&format!(
                "{i:<2} {:>7.1} {:>7.1} {:>7.1}  {:>15.6}  {:>15.6}\n",
                (256 * (i + 1)) as f64,
                4096.0,
                4096.0,
                v(),
                v()
            ));
        }
    }
    out
}
