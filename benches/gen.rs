//! Synthetic inputs for the benchmarks, made by perturbing the real H200 logs.
#![allow(dead_code)]

use perfdb_ingest::model::{Direction, Format, Measurement, Numerics, Parsed, RunMeta};
use perfdb_ingest::pipeline::prepare;
use perfdb_ingest::warehouse::Warehouse;
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
    let mut keys = perfdb_ingest::model::Keys::default();
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
            key: keys.push(&key),
            key_order,
            metric: "latency".into(),
            unit: "us".into(),
            direction: Direction::Lower,
            value: Some(v),
            raw: keys.raw(&format!("{v}")),
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
            keys,
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
                prepare(
                    "gen",
                    &bytes,
                    Some(Format::AiterTable),
                    parsed,
                    &meta,
                    &perfdb_ingest::devices::builtin(),
                )
            })
            .collect();
        wh.commit(prepared).unwrap();
        i += n;
    }
    let sides: Vec<_> = (0..10)
        .map(|k| {
            let (label, slow) = if k < 5 { ("base", 1.0) } else { ("head", 1.5) };
            let (meta, parsed, bytes) = synthetic_run(label, k, slow);
            prepare(
                "gen",
                &bytes,
                Some(Format::AiterTable),
                parsed,
                &meta,
                &perfdb_ingest::devices::builtin(),
            )
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
                prepare(
                    "gen",
                    &bytes,
                    Some(Format::AiterTable),
                    parsed,
                    &meta,
                    &perfdb_ingest::devices::builtin(),
                )
            })
            .collect();
        wh.commit(prepared).unwrap();
    }
    let sides: Vec<_> = (0..10)
        .map(|k| {
            let (label, slow) = if k < 5 { ("base", 1.0) } else { ("head", 1.5) };
            let (meta, parsed, bytes) = synthetic_run_rows(label, k, slow, HISTORY_ROWS_PER_RUN);
            prepare(
                "gen",
                &bytes,
                Some(Format::AiterTable),
                parsed,
                &meta,
                &perfdb_ingest::devices::builtin(),
            )
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

/// One large generated input per format added for issue 11 (name, format, source name,
/// text), each in that format's real layout, ~2-8 MB, for the parse benchmarks.
pub fn format_inputs(seed: u64) -> Vec<(&'static str, &'static str, String)> {
    let mut rng = SplitMix64::new(seed);
    let mut v = move |lo: f64, span: f64| lo + (rng.next_u64() % 1_000_000) as f64 * span / 1e6;
    let n = 50_000;
    let mut triton = String::from("M,N,K,cuBLAS,Triton\n");
    for i in 0..n {
        triton.push_str(&format!(
            "{:.6},{:.6},{:.6},{:.6},{:.6}\n",
            (64 * (i % 128 + 1)) as f64,
            (64 * (i / 128 + 1)) as f64,
            4096.0,
            v(100.0, 800.0),
            v(100.0, 800.0)
        ));
    }
    let mut torch = String::new();
    for t in 0..2_000 {
        torch.push_str(&format!(
            "[------------- op{t} -------------]\n                    |   mm   |  add   |  bmm\n"
        ));
        for th in [1, 4] {
            torch.push_str(&format!(
                "{th} threads: ----------------------------------\n"
            ));
            for s in 0..10 {
                torch.push_str(&format!(
                    "      [{}, {}]  |  {:.1}  |  {:.1}  |  {:.1}\n",
                    64 << s,
                    64 << s,
                    v(1.0, 100.0),
                    v(1.0, 100.0),
                    v(1.0, 100.0)
                ));
            }
        }
        torch.push_str("\nTimes are in microseconds (us).\n\n");
    }
    let stats = |v: &mut dyn FnMut(f64, f64) -> f64| {
        let m = v(1e-5, 1e-3);
        format!(
            "{{\"min\": {}, \"max\": {}, \"mean\": {}, \"stddev\": {}, \"rounds\": 1000, \"median\": {m}, \"iqr\": {}, \"q1\": {}, \"q3\": {}, \"iqr_outliers\": 3, \"stddev_outliers\": 2, \"outliers\": \"2;3\", \"ld15iqr\": {}, \"hd15iqr\": {}, \"ops\": {}, \"total\": {}, \"iterations\": 1}}",
            m * 0.9, m * 1.5, m * 1.01, m * 0.05, m * 0.04, m * 0.98, m * 1.02, m * 0.95, m * 1.05, 1.0 / m, m * 1000.0
        )
    };
    let mut pytest = String::from("{\"machine_info\": {\"node\": \"ci-1\", \"machine\": \"x86_64\", \"cpu\": {\"brand_raw\": \"AMD EPYC\"}}, \"commit_info\": {\"id\": \"0123abcd\", \"branch\": \"main\", \"dirty\": false}, \"benchmarks\": [\n");
    for i in 0..15_000 {
        if i > 0 {
            pytest.push_str(",\n");
        }
        pytest.push_str(&format!(
            "{{\"group\": \"g{}\", \"name\": \"test_op[{i}]\", \"fullname\": \"tests/test_ops.py::test_op[{i}]\", \"params\": {{\"n\": {i}, \"dtype\": \"bf16\"}}, \"param\": \"{i}\", \"extra_info\": {{}}, \"options\": {{\"disable_gc\": false, \"timer\": \"perf_counter\", \"min_rounds\": 5}}, \"stats\": {}}}",
            i % 20,
            stats(&mut v)
        ));
    }
    pytest.push_str("\n], \"datetime\": \"2026-12-01T00:00:00\", \"version\": \"5.2.3\"}\n");
    let mut gbench = String::from("{\"context\": {\"date\": \"2026-12-01\", \"host_name\": \"ci-1\", \"executable\": \"./bench\", \"num_cpus\": 2, \"library_version\": \"v1.8.3\"}, \"benchmarks\": [\n");
    let mut first = true;
    for b in 0..4_000 {
        for rep in 0..3 {
            let t = v(1000.0, 50_000.0);
            if !first {
                gbench.push_str(",\n");
            }
            first = false;
            gbench.push_str(&format!(
                "{{\"name\": \"BM_Op/{b}/64\", \"family_index\": 0, \"per_family_instance_index\": {b}, \"run_name\": \"BM_Op/{b}/64\", \"run_type\": \"iteration\", \"repetitions\": 3, \"repetition_index\": {rep}, \"threads\": 1, \"iterations\": 1000, \"real_time\": {t}, \"cpu_time\": {}, \"time_unit\": \"ns\", \"bytes_per_second\": {}}}",
                t * 1.001,
                4e9 / t
            ));
        }
        for agg in ["mean", "median", "stddev"] {
            gbench.push_str(&format!(
                ",\n{{\"name\": \"BM_Op/{b}/64_{agg}\", \"family_index\": 0, \"per_family_instance_index\": {b}, \"run_name\": \"BM_Op/{b}/64\", \"run_type\": \"aggregate\", \"repetitions\": 3, \"threads\": 1, \"aggregate_name\": \"{agg}\", \"aggregate_unit\": \"time\", \"iterations\": 3, \"real_time\": {}, \"cpu_time\": {}, \"time_unit\": \"ns\"}}",
                v(1000.0, 50_000.0),
                v(1000.0, 50_000.0)
            ));
        }
    }
    gbench.push_str("\n]}\n");
    let mut rocm = String::new();
    let header = "[0]:transA,transB,grouped_gemm,batch_count,m,n,k,alpha,lda,stride_a,beta,ldb,stride_b,ldc,stride_c,ldd,stride_d,a_type,b_type,c_type,d_type,compute_type,scaleA,scaleB,scaleC,scaleD,amaxD,activation_type,bias_vector,bias_type,hipblaslt-Gflops,hipblaslt-GB/s,us\n";
    for i in 0..12_000 {
        let (m, n) = (64 * (i % 100 + 1), 64 * (i / 100 + 1));
        rocm.push_str("Is supported 1 / Total solutions: 1\n");
        rocm.push_str(header);
        rocm.push_str(&format!(
            "    N,T,0,1,{m},{n},4096,1,{m},{},0,4096,{},{m},{},{m},{},f16_r,f16_r,f16_r,f16_r,f32_r,0,0,0,0,0,none,0,f16_r, {:.1}, {:.1}, {:.1}\n",
            m * 4096, n * 4096, m * n, m * n,
            v(1e4, 6e5), v(10.0, 500.0), v(5.0, 300.0)
        ));
    }
    let mut tuned = String::from(
        "gfx,cu_num,M,N,K,q_dtype_w,kernelId,splitK,us,kernelName,tflops,bw,errRatio\n",
    );
    for i in 0..40_000 {
        tuned.push_str(&format!(
            "gfx942,304,{},{},8192,torch.int8,{},{},{:.4},a8w8_rowwise_256x{}x64x256_16x16_16x16_1x1_intrawave_v1,{:.2},{:.2},0.0\n",
            i % 400 + 1,
            128 * (i / 400 + 1),
            i % 50,
            i % 4,
            v(5.0, 200.0),
            16 << (i % 4),
            v(1.0, 600.0),
            v(0.1, 2.0)
        ));
    }
    let mut flydsl = String::new();
    for t in 0..2_000 {
        flydsl.push_str("op                     shape                              dtype            TB/s     TFLOPS\n---------------------- ---------------------------------- ---------- ---------- ----------\n");
        for r in 0..20 {
            flydsl.push_str(&format!(
                "gemm{t:<18} {:<34} {:<10} {:>10.3} {:>10.3}\n",
                format!("{}x8192x8192_tile64x256x128", 64 * (r + 1)),
                "fp8",
                v(0.1, 5.0),
                v(100.0, 1500.0)
            ));
        }
    }
    let mut serving = String::new();
    for i in 0..6_000 {
        serving.push_str(&format!(
            "{{\"backend\": \"sglang\", \"dataset_name\": \"random\", \"request_rate\": {}.0, \"max_concurrency\": {}, \"random_input_len\": 1024, \"random_output_len\": 128, \"duration\": {:.2}, \"completed\": 256, \"total_input_tokens\": 262144, \"total_output_tokens\": 32768, \"request_throughput\": {:.2}, \"input_throughput\": {:.1}, \"output_throughput\": {:.1}, \"mean_e2e_latency_ms\": {:.1}, \"median_e2e_latency_ms\": {:.1}, \"std_e2e_latency_ms\": {:.1}, \"p99_e2e_latency_ms\": {:.1}, \"mean_ttft_ms\": {:.1}, \"median_ttft_ms\": {:.1}, \"std_ttft_ms\": {:.1}, \"p99_ttft_ms\": {:.1}, \"mean_tpot_ms\": {:.2}, \"median_tpot_ms\": {:.2}, \"std_tpot_ms\": {:.2}, \"p99_tpot_ms\": {:.2}, \"mean_itl_ms\": {:.2}, \"median_itl_ms\": {:.2}, \"std_itl_ms\": {:.2}, \"p95_itl_ms\": {:.2}, \"p99_itl_ms\": {:.2}, \"concurrency\": {:.1}, \"accept_length\": null}}\n",
            i % 64 + 1, 16 << (i % 4),
            v(10.0, 60.0), v(1.0, 10.0), v(1000.0, 8000.0), v(100.0, 900.0),
            v(1000.0, 2000.0), v(1000.0, 2000.0), v(100.0, 300.0), v(2000.0, 3000.0),
            v(50.0, 50.0), v(50.0, 50.0), v(10.0, 30.0), v(100.0, 200.0),
            v(10.0, 5.0), v(10.0, 5.0), v(1.0, 2.0), v(15.0, 5.0),
            v(10.0, 5.0), v(10.0, 5.0), v(3.0, 3.0), v(18.0, 5.0), v(30.0, 10.0), v(5.0, 10.0)
        ));
    }
    // 2,000 sweeps' triage matrices of 20 cells each (an aorta sweep's matrix has tens
    // of cells; the same cell names recur from sweep to sweep).
    let mut matrix = String::new();
    for sweep in 0..2_000 {
        matrix.push_str(&format!("# Triage Matrix - sweep{sweep}\n\n**Ticket**: X\n\n## Reproduction Summary\n\n| Cell | Mitigations | Environment | Failure rate | Failures | Iters | Mean step (ms) | Confound |\n|---|---|---|---|---|---|---|---|\n"));
        for i in 0..20 {
            matrix.push_str(&format!(
                "| cell{i}-none | m{} | local | {}% | {} / 3 | 3/3 | {:.1} | no effect |\n",
                i % 7,
                (i % 4) * 33,
                i % 4,
                v(10_000.0, 8_000.0)
            ));
        }
        matrix.push('\n');
    }
    vec![
        ("triton_csv_50k_rows", "triton-csv", triton),
        ("torch_compare_2000_tables", "torch-compare", torch),
        (
            "pytest_benchmark_15k_benchmarks",
            "pytest-benchmark",
            pytest,
        ),
        ("google_benchmark_4000x3_reps", "google-benchmark", gbench),
        ("rocm_bench_csv_12k_problems", "rocm-bench-csv", rocm),
        ("aiter_tuned_csv_40k_rows", "aiter-tuned-csv", tuned),
        ("flydsl_bench_2000_tables", "flydsl-bench", flydsl),
        ("serving_jsonl_6000_results", "serving", serving),
        ("aorta_matrix_2000x20_cells", "aorta-matrix", matrix),
    ]
}

/// The ten GEMM shapes of the H200 aiter logs (`sample-data/h200-gemm`), with their
/// median latencies in us there (torch, triton): the year's shapes are these, their M
/// scaled, so values keep the real ratios between shapes and variants.
const H200_SHAPES: [(usize, usize, usize, f64, f64); 10] = [
    (1, 4096, 4096, 18.4, 22.5),
    (16, 4096, 4096, 18.6, 21.4),
    (128, 4096, 4096, 18.5, 27.6),
    (512, 4096, 4096, 28.2, 32.1),
    (4096, 4096, 4096, 177.0, 200.9),
    (16, 8192, 8192, 43.6, 45.5),
    (256, 8192, 8192, 55.0, 60.9),
    (2048, 8192, 8192, 351.9, 390.2),
    (8192, 8192, 8192, 1570.2, 1659.5),
    (4096, 14336, 4096, 699.7, 740.4),
];

/// Shapes, variants and metrics of one CI run of the year: 46 shapes x 10 variants x 4
/// metrics = 1,840 rows.
pub const YEAR_SHAPES: usize = 46;
pub const YEAR_VARIANTS: usize = 10;
pub const YEAR_ROWS_PER_RUN: usize = YEAR_SHAPES * YEAR_VARIANTS * 4;
/// The machine classes of the year.
pub const YEAR_MACHINES: [&str; 3] = ["h200-a", "h200-b", "h200-c"];

/// One CI run of the year: every shape, variant and metric (latency, p99, TFLOPS,
/// TB/s) at commit `c` on machine class `m`, trial `t`; variant 3 is `slow` times slower
/// from the commit `step_at` on.
pub fn year_run(
    label: &str,
    c: usize,
    m: usize,
    t: usize,
    slow: f64,
    step_at: usize,
) -> (RunMeta, Parsed, Vec<u8>) {
    let mut rng = SplitMix64::new((c * 131 + m * 17 + t) as u64 + 1);
    let mut ms = Vec::with_capacity(YEAR_ROWS_PER_RUN);
    let mut keys = perfdb_ingest::model::Keys::default();
    for s in 0..YEAR_SHAPES {
        let (m0, n, k, torch, triton) = H200_SHAPES[s % H200_SHAPES.len()];
        let scale = 1 + s / H200_SHAPES.len();
        let (key, key_order) = perfdb_ingest::model::key_of(&[
            ("M".to_string(), (m0 * scale).to_string()),
            ("N".to_string(), n.to_string()),
            ("K".to_string(), k.to_string()),
            ("dtype".to_string(), "bf16".to_string()),
        ]);
        let key = keys.push(&key);
        let flop = 2.0 * (m0 * scale) as f64 * n as f64 * k as f64;
        let bytes = 2.0 * ((m0 * scale) * k + k * n + (m0 * scale) * n) as f64;
        for v in 0..YEAR_VARIANTS {
            let variant = format!("v{v}");
            let base = if v == 0 {
                torch
            } else {
                triton * (1.0 + v as f64 * 0.01)
            } * scale as f64;
            let noise = 1.0 + (rng.next_u64() % 2000) as f64 / 100_000.0;
            let f = if v == 3 && c >= step_at { slow } else { 1.0 };
            let us = base * noise * f;
            for (metric, unit, direction, value) in [
                ("latency", "us", Direction::Lower, us),
                ("latency_p99", "us", Direction::Lower, us * 1.03),
                ("throughput", "TFLOPS", Direction::Higher, flop / us / 1e6),
                ("bandwidth", "TB/s", Direction::Higher, bytes / us / 1e6),
            ] {
                ms.push(Measurement {
                    table: "gemm_a16w16".into(),
                    variant: variant.as_str().into(),
                    key,
                    key_order,
                    metric: metric.into(),
                    unit: unit.into(),
                    direction,
                    value: Some(value),
                    raw: keys.raw(&format!("{value:.4}")),
                    column: format!("{variant} {unit}").as_str().into(),
                    numerics: Numerics::NotChecked,
                    line: (ms.len() + 1) as u32,
                    note: None,
                });
            }
        }
    }
    let meta = RunMeta {
        label: label.into(),
        commit: Some(format!("y{c:05}")),
        commit_time_us: Some(1_700_000_000_000_000 + c as i64 * 2_400_000_000),
        arch: Some("sm_90".into()),
        tags: vec![("machine".into(), YEAR_MACHINES[m].into())],
        ..Default::default()
    };
    (
        meta,
        Parsed {
            measurements: ms,
            keys,
            ..Default::default()
        },
        format!("{label}-y{c}-{m}-{t}").into_bytes(),
    )
}

/// A year of a team's CI as it lands: `commits` commits (each 40 minutes after the last),
/// on each of the three machine classes 5 trials of [`YEAR_ROWS_PER_RUN`] rows, one
/// Delta commit per commit and class; variant `v3` steps 1.15x at the last 50th of the
/// commits. 3,625 commits hold 100M rows. With `compact_every`, a `compact` after every
/// that many commits (a day is 36), as a team's nightly job would. Only commits
/// `from..commits` are built: 0 for a year, more for a further day onto one.
pub fn build_year(
    dir: &std::path::Path,
    from: usize,
    commits: usize,
    compact_every: Option<usize>,
) -> Warehouse {
    let wh = Warehouse::new(dir);
    let step_at = commits - commits / 50;
    for c in from..commits {
        for m in 0..YEAR_MACHINES.len() {
            let prepared: Vec<_> = (0..5)
                .map(|t| {
                    let (meta, parsed, bytes) = year_run("main", c, m, t, 1.15, step_at);
                    prepare(
                        "year",
                        &bytes,
                        Some(Format::AiterTable),
                        parsed,
                        &meta,
                        &perfdb_ingest::devices::builtin(),
                    )
                })
                .collect();
            wh.commit(prepared).unwrap();
        }
        if compact_every.is_some_and(|n| (c + 1) % n == 0) {
            wh.compact(std::time::Duration::ZERO).unwrap();
        }
        if c % 250 == 0 {
            eprintln!("commit {c} of {commits}");
        }
    }
    wh
}
