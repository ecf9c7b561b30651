//! Write N aiter trial logs made by perturbing the real H200 logs' numbers:
//! `cargo run --release --example gen_logs -- DIR N`.

#[path = "../benches/gen.rs"]
mod gen;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(dir), Some(n)) = (
        args.get(1),
        args.get(2).and_then(|r| r.parse::<usize>().ok()),
    ) else {
        eprintln!("usage: gen_logs DIR N");
        std::process::exit(2);
    };
    let logs = gen::aiter_logs(n, 7);
    gen::write_logs(std::path::Path::new(dir), &logs);
    let bytes: usize = logs.iter().map(String::len).sum();
    eprintln!("wrote {n} logs, {:.2} MB, to {dir}", bytes as f64 / 1e6);
}
