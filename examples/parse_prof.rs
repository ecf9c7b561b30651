//! Parse each of the parse benchmarks' generated inputs (`benches/gen.rs`) N times and
//! print the best time and MB/s: a quick loop for work on one parser, and a process
//! for `perf record` or callgrind (`benches/parse_callgrind.sh` counts instructions,
//! which unlike seconds stay put on a busy machine). The figures of record are
//! criterion's (`cargo bench --bench ingest -- parse/`).
//!
//! `cargo run --release --example parse_prof -- [NAME...]` (a name matches any part
//! of a benchmark's name; none: all); `PERFDB_PARSE_ITERS=N` (default 30).

#[path = "../benches/gen.rs"]
mod gen;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use perfdb_ingest::formats::{parse_in, Context};

fn main() {
    let want: Vec<String> = std::env::args().skip(1).collect();
    let iters: usize = std::env::var("PERFDB_PARSE_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    // Each input as its files (the aiter logs are 2,000 files, parsed one by one).
    let mut inputs: Vec<(&str, Vec<String>)> = gen::format_inputs(11)
        .into_iter()
        .map(|(name, _, text)| (name, vec![text]))
        .collect();
    inputs.push((
        "triton_perf_report_2000_plots",
        vec![gen::triton_log(2000, 7)],
    ));
    inputs.push(("aiter_2000_logs_one_core", gen::aiter_logs(2000, 7)));
    // The same context as the criterion benchmarks.
    let cx = Context {
        source: "bench/input.csv",
        unit: Some("TFLOPS"),
    };
    for (name, files) in inputs {
        if !want.is_empty() && !want.iter().any(|w| name.contains(w.as_str())) {
            continue;
        }
        let (mut best, mut values) = (f64::MAX, 0);
        for _ in 0..iters {
            let t = std::time::Instant::now();
            values = files
                .iter()
                .map(|text| {
                    // The aiter benchmark parses without a context, as `perfdb ingest` does.
                    let cx = if name.starts_with("aiter_2000") {
                        &Context::default()
                    } else {
                        &cx
                    };
                    parse_in(text, None, cx)
                        .map(|(_, p)| p.measurements.len())
                        .unwrap_or(0)
                })
                .sum();
            best = best.min(t.elapsed().as_secs_f64());
        }
        println!(
            "{name:36} {:8.2} ms {:7.1} MB/s {values:>8} values (best of {iters})",
            best * 1e3,
            files.iter().map(String::len).sum::<usize>() as f64 / best / 1e6
        );
    }
}
