//! How conservative `perfdb ab`'s union bound over its looks is: under no change, the
//! smallest p a row shows over the planned looks (4, 6, 8, 12, 16, 20 a side), simulated;
//! the level c at which P(min p <= c) = alpha is what a look could test at instead of
//! alpha / K, and alpha / c the looks' effective number.
//!
//!   cargo run -p perfdb-reports --release --example ab_levels -- [SIMS=100000] [MAX=20]

use perfdb_reports::compare::sequential::planned_looks;
use perfdb_reports::stats::{welch_log, SplitMix64};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let sims: usize = args.first().map_or(100_000, |s| s.parse().expect("SIMS"));
    let max: usize = args.get(1).map_or(20, |s| s.parse().expect("MAX"));
    let looks = planned_looks(max);
    let alpha = 0.05;
    let mut rng = SplitMix64::new(1);
    let (mut two, mut one) = (Vec::with_capacity(sims), Vec::with_capacity(sims));
    for _ in 0..sims {
        let b: Vec<f64> = (0..max).map(|_| (0.01 * rng.normal()).exp()).collect();
        let h: Vec<f64> = (0..max).map(|_| (0.01 * rng.normal()).exp()).collect();
        let (mut min2, mut min1) = (1.0f64, 1.0f64);
        for &n in &looks {
            let w = welch_log(&h[..n], &b[..n]);
            min2 = min2.min(w.p);
            // One-sided: head slower.
            let p1 = if w.t > 0.0 {
                w.p / 2.0
            } else {
                1.0 - w.p / 2.0
            };
            min1 = min1.min(p1);
        }
        two.push(min2);
        one.push(min1);
    }
    let q = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[(alpha * v.len() as f64) as usize]
    };
    let (c2, c1) = (q(&mut two), q(&mut one));
    println!(
        "looks {looks:?} (K = {}), {sims} simulated rows with no change",
        looks.len()
    );
    println!(
        "two-sided: P(min p <= c) = {alpha} at c = {c2:.5}: effective looks {:.2} (union bound: {})",
        alpha / c2,
        looks.len()
    );
    println!("one-sided: c = {c1:.5}: effective looks {:.2}", alpha / c1);
}
