//! Build a synthetic warehouse for load tests.
//!
//! `gen_warehouse DIR ROWS`: ROWS background rows under label `history` (100 a run) plus
//! labels `base` and `head`, compacted.
//! `gen_warehouse DIR ROWS --commits RUNS_PER_COMMIT`: a team-scale history instead, as
//! CI leaves it: label `main`, one ingest per commit, 1,000 rows a run (see
//! `benches/gen.rs`, `build_history`).
//! `gen_warehouse DIR COMMITS --year [--compact-every N] [--from F]`: a year of a
//! team's CI: COMMITS commits x 3 machine classes x 5 trials of 1,840 rows (H200 GEMM
//! shapes, 10 variants, 4 metrics), one Delta commit per commit and class, compacted
//! every N commits (36: daily) when asked; 3,625 commits = 100M rows (`build_year`).
//! With `--from F`, only commits F.. (a further day onto a year built before).

#[path = "../benches/gen.rs"]
mod gen;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(dir), Some(rows)) = (
        args.get(1),
        args.get(2).and_then(|r| r.parse::<usize>().ok()),
    ) else {
        eprintln!("usage: gen_warehouse DIR ROWS [--commits RUNS_PER_COMMIT] | gen_warehouse DIR COMMITS --year [--compact-every N] [--from F]");
        std::process::exit(2);
    };
    if args.get(3).map(String::as_str) == Some("--year") {
        let t = std::time::Instant::now();
        let option = |name: &str| {
            args.iter()
                .position(|a| a == name)
                .and_then(|i| args.get(i + 1))
                .and_then(|n| n.parse::<usize>().ok())
        };
        let every = option("--compact-every").filter(|n| *n > 0);
        let from = option("--from").unwrap_or(0);
        gen::build_year(std::path::Path::new(dir), from, rows, every);
        eprintln!(
            "built {dir}: {rows} commits, {} rows, in {:.1} s",
            (rows - from) * 3 * 5 * gen::YEAR_ROWS_PER_RUN,
            t.elapsed().as_secs_f64()
        );
        return;
    }
    let per_commit = match (args.get(3).map(String::as_str), args.get(4)) {
        (Some("--commits"), Some(n)) => n.parse::<usize>().ok(),
        _ => None,
    };
    let t = std::time::Instant::now();
    match per_commit {
        Some(n) => {
            gen::build_history(std::path::Path::new(dir), rows, n);
        }
        None => {
            gen::build_warehouse(std::path::Path::new(dir), rows);
        }
    }
    eprintln!(
        "built {dir} with {rows} background rows in {:.1} s",
        t.elapsed().as_secs_f64()
    );
}
