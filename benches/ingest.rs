//! Ingest throughput: parsing in-process (MB/s of log text) and a whole ingest command
//! of 2,000 aiter trial logs into a fresh warehouse. Figures: BENCHMARKS.md.
//!
//! Run: `cargo bench --bench ingest`

#[path = "gen.rs"]
mod gen;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use perfdb_ingest::model::RunMeta;
use perfdb_ingest::warehouse::Warehouse;

const TRIALS: usize = 2000;

fn bench(c: &mut Criterion) {
    let logs = gen::aiter_logs(TRIALS, 7);
    let bytes: usize = logs.iter().map(String::len).sum();
    eprintln!("{TRIALS} aiter logs, {:.2} MB", bytes as f64 / 1e6);

    let mut g = c.benchmark_group("parse");
    g.throughput(Throughput::Bytes(bytes as u64));
    g.bench_function("aiter_2000_logs_one_core", |b| {
        b.iter(|| {
            let mut n = 0;
            for l in &logs {
                n += perfdb_ingest::formats::parse(l, None)
                    .unwrap()
                    .1
                    .measurements
                    .len();
            }
            n
        })
    });
    // A long log of plain text with one table at its end: every line is looked at a
    // bounded number of times (a block that is no `to_string` table is skipped whole).
    let mut long = String::new();
    for i in 0..100_000 {
        long.push_str(&format!("step {i:>6}   loss 0.{i:04}   lr 1e-4\n"));
    }
    long.push_str(&logs[0]);
    g.throughput(Throughput::Bytes(long.len() as u64));
    g.bench_function("plain_text_100k_lines_then_a_table", |b| {
        b.iter(|| {
            perfdb_ingest::formats::parse(&long, None)
                .unwrap()
                .1
                .measurements
                .len()
        })
    });
    // Triton perf_report stdout (issue 11): one large log of 2,000 plots.
    let triton = gen::triton_log(2000, 7);
    g.throughput(Throughput::Bytes(triton.len() as u64));
    g.bench_function("triton_perf_report_2000_plots", |b| {
        b.iter(|| {
            perfdb_ingest::formats::parse(&triton, None)
                .unwrap()
                .1
                .measurements
                .len()
        })
    });
    // Detection alone over the same logs: every format's sniff runs on every log until
    // one matches (the aiter tables are tried after the more specific formats).
    g.throughput(Throughput::Bytes(bytes as u64));
    g.bench_function("detect_aiter_2000_logs", |b| {
        b.iter(|| {
            logs.iter()
                .filter(|l| perfdb_ingest::formats::detect(l).is_ok())
                .count()
        })
    });
    // Every other format added for issue 11, each on its own large generated input.
    for (name, format, text) in gen::format_inputs(11) {
        let format: perfdb_ingest::formats::Format = format.parse().unwrap();
        let cx = perfdb_ingest::formats::Context {
            source: "bench/input.csv",
            unit: Some("TFLOPS"),
            ..Default::default()
        };
        assert_eq!(
            perfdb_ingest::formats::detect(&text).unwrap(),
            format,
            "{name}"
        );
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_function(name, |b| {
            b.iter(|| {
                perfdb_ingest::formats::parse_in(&text, None, &cx)
                    .unwrap()
                    .1
                    .measurements
                    .len()
            })
        });
    }
    g.finish();

    let dir = tempfile::tempdir().unwrap();
    let files = gen::write_logs(&dir.path().join("logs"), &logs);
    let meta = RunMeta {
        label: "bench".into(),
        ..Default::default()
    };
    let mut g = c.benchmark_group("ingest_command");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(bytes as u64));
    let mut round = 0;
    g.bench_with_input(
        BenchmarkId::new("aiter_files_to_parquet", TRIALS),
        &files,
        |b, files| {
            b.iter(|| {
                round += 1;
                let wh = Warehouse::new(dir.path().join(format!("wh{round}")));
                let r = perfdb_ingest::ingest_files(
                    &wh,
                    files,
                    None,
                    &meta,
                    &perfdb_ingest::devices::builtin(),
                    &|_| {},
                )
                .unwrap();
                assert!(r.iter().all(|f| f.result.is_ok()));
                r.len()
            })
        },
    );
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
