//! Time format detection alone over every file of a directory (the aiter logs
//! `cargo run --release --example gen_logs -- DIR 2000` writes), or with `parse` the
//! whole read (detection and parse): the fastest of R passes and the median, in ms.
//! Built in this crate only, so an older commit can run the same file (copy it over)
//! without the warehouse's build:
//! `cargo run --release -p perfdb-ingest --example detect_dir -- DIR [R] [parse]`.

use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(dir) = args.get(1) else {
        eprintln!("usage: detect_dir DIR [ROUNDS] [parse]");
        std::process::exit(2);
    };
    let rounds: usize = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(50);
    let parse = args.get(3).is_some_and(|a| a == "parse");
    let mut texts: Vec<String> = std::fs::read_dir(dir)
        .expect("a directory")
        .filter_map(|e| std::fs::read_to_string(e.ok()?.path()).ok())
        .collect();
    texts.sort();
    let bytes: usize = texts.iter().map(String::len).sum();
    let mut times: Vec<f64> = Vec::with_capacity(rounds);
    let mut detected = 0;
    for _ in 0..rounds {
        let t = Instant::now();
        detected = texts
            .iter()
            .filter(|t| {
                if parse {
                    perfdb_ingest::formats::parse(t, None).is_ok()
                } else {
                    perfdb_ingest::formats::detect(t).is_ok()
                }
            })
            .count();
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "{} files, {:.2} MB, {detected} {}: fastest {:.3} ms, median {:.3} ms over {rounds} passes",
        texts.len(),
        bytes as f64 / 1e6,
        if parse { "read" } else { "detected" },
        times[0],
        times[rounds / 2]
    );
}
