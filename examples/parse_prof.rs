//! Parse each of the parse benchmarks' generated inputs (`benches/gen.rs`) N times and
//! print the best time and MB/s: a quick loop for work on one parser, and a process
//! for `perf record` or callgrind (`benches/parse_callgrind.sh` counts instructions,
//! which unlike seconds stay put on a busy machine). The figures of record are
//! criterion's (`cargo bench --bench ingest -- parse/`).
//!
//! Beside each time it prints the cost per value, the cost per value that 300 MB/s
//! would allow on that input (issue 2's target, held for every format by issue 11), and
//! the floor: storing the parse's `Measurement`s alone (each copied from the parse's
//! own output into a list sized up front; a value's texts are in its parse's `Keys`, so
//! nothing else is copied or dropped), which every parser pays on top of reading its
//! text; and how long detection alone takes (part of the parse time: the
//! formats tried before the one that fits each read the text).
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
        ..Default::default()
    };
    for (name, files) in inputs {
        if !want.is_empty() && !want.iter().any(|w| name.contains(w.as_str())) {
            continue;
        }
        // The aiter benchmark parses without a context, as `perfdb ingest` does.
        let cx = if name.starts_with("aiter_2000") {
            &Context::default()
        } else {
            &cx
        };
        let (mut best, mut values) = (f64::MAX, 0);
        for _ in 0..iters {
            let t = std::time::Instant::now();
            values = files
                .iter()
                .map(|text| {
                    parse_in(text, None, cx)
                        .map(|(_, p)| p.measurements.len())
                        .unwrap_or(0)
                })
                .sum();
            best = best.min(t.elapsed().as_secs_f64());
        }
        // Detection alone: every format tried before the one that fits reads the text.
        let mut detect = f64::MAX;
        for _ in 0..iters {
            let t = std::time::Instant::now();
            for text in &files {
                std::hint::black_box(perfdb_ingest::formats::detect(text).ok());
            }
            detect = detect.min(t.elapsed().as_secs_f64());
        }
        let parsed: Vec<_> = files
            .iter()
            .filter_map(|text| parse_in(text, None, cx).ok())
            .map(|(_, p)| p.measurements)
            .collect();
        let mut floor = f64::MAX;
        for _ in 0..iters {
            let t = std::time::Instant::now();
            for ms in &parsed {
                let mut copy = Vec::with_capacity(ms.len());
                copy.extend(ms.iter().map(|m| *std::hint::black_box(m)));
                drop(std::hint::black_box(copy));
            }
            floor = floor.min(t.elapsed().as_secs_f64());
        }
        let bytes = files.iter().map(String::len).sum::<usize>() as f64;
        let per_value = |s: f64| s * 1e9 / values.max(1) as f64;
        println!(
            "{name:36} {:8.2} ms {:7.1} MB/s {values:>8} values (best of {iters}) \
             {:6.1} ns/value, {:6.1} at 300 MB/s, floor {:5.1}, detection {:5.2} ms",
            best * 1e3,
            bytes / best / 1e6,
            per_value(best),
            per_value(bytes / 300e6),
            per_value(floor),
            detect * 1e3,
        );
    }
}
