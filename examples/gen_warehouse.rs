//! Build a synthetic warehouse for load tests: `cargo run --release --example
//! gen_warehouse -- DIR ROWS` (100 measurements a run, table `gemm`, variants torch and
//! triton, labels `history`, `base`, `head`).

#[path = "../benches/gen.rs"]
mod gen;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(dir), Some(rows)) = (
        args.get(1),
        args.get(2).and_then(|r| r.parse::<usize>().ok()),
    ) else {
        eprintln!("usage: gen_warehouse DIR ROWS");
        std::process::exit(2);
    };
    let t = std::time::Instant::now();
    gen::build_warehouse(std::path::Path::new(dir), rows);
    eprintln!(
        "built {dir} with {rows} background rows in {:.1} s",
        t.elapsed().as_secs_f64()
    );
}
