//! Compare time against warehouse size, and ingest + compare of 1,000 trials an arm.
//! Figures: BENCHMARKS.md.
//!
//! Run: `cargo bench --bench compare` (PERFDB_BENCH_ROWS=10000000 sets the largest size).

#[path = "gen.rs"]
mod gen;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use perfdb_ingest::model::RunMeta;
use perfdb_ingest::warehouse::Warehouse;
use perfdb_reports::compare::{compare, Options};
use perfdb_reports::db::Db;

fn bench(c: &mut Criterion) {
    let max: usize = std::env::var("PERFDB_BENCH_ROWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000_000);
    let opt = Options {
        control: vec!["torch".into()],
        ..Options::default()
    };
    let mut g = c.benchmark_group("compare_vs_warehouse_rows");
    g.sample_size(10);
    let tmp = tempfile::tempdir().unwrap();
    let mut sizes: Vec<usize> = [100_000, 1_000_000, max]
        .into_iter()
        .filter(|r| *r <= max)
        .collect();
    sizes.dedup();
    for rows in sizes {
        let t = std::time::Instant::now();
        let wh = gen::build_warehouse(&tmp.path().join(format!("wh{rows}")), rows);
        eprintln!("built {rows} rows in {:.1} s", t.elapsed().as_secs_f64());
        g.bench_with_input(BenchmarkId::new("compare", rows), &rows, |b, _| {
            b.iter(|| {
                let db = Db::open(wh.root(), &perfdb_ingest::devices::builtin()).unwrap();
                let r = compare(&db, "base", "head", &opt).unwrap();
                assert_eq!(r.verdict, perfdb_reports::compare::Overall::Regression);
                r.rows.len()
            })
        });
        g.bench_with_input(
            BenchmarkId::new("duckdb_count_star", rows),
            &rows,
            |b, _| {
                b.iter(|| {
                    let db = Db::open(wh.root(), &perfdb_ingest::devices::builtin()).unwrap();
                    let n: i64 = db
                        .conn
                        .query_row("SELECT count(*) FROM measurements", [], |r| r.get(0))
                        .unwrap();
                    n
                })
            },
        );
    }
    g.finish();

    // 1,000 aiter trial logs per arm: ingest both arms, then compare.
    let logs = gen::aiter_logs(2000, 11);
    let base = gen::write_logs(&tmp.path().join("arm/base"), &logs[..1000]);
    let head = gen::write_logs(&tmp.path().join("arm/head"), &logs[1000..]);
    let mut g = c.benchmark_group("ingest_and_compare");
    g.sample_size(10);
    let mut round = 0;
    g.bench_function("aiter_1000_trials_per_arm", |b| {
        b.iter(|| {
            round += 1;
            let wh = Warehouse::new(tmp.path().join(format!("arm-wh{round}")));
            for (label, files) in [("base", &base), ("head", &head)] {
                let meta = RunMeta {
                    label: label.into(),
                    ..Default::default()
                };
                perfdb_ingest::ingest_files(
                    &wh,
                    files,
                    None,
                    &meta,
                    &perfdb_ingest::devices::builtin(),
                    &|_| {},
                )
                .unwrap();
            }
            let db = Db::open(wh.root(), &perfdb_ingest::devices::builtin()).unwrap();
            compare(&db, "base", "head", &opt).unwrap().rows.len()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
