//! The price of looking more than once: how small a null row's smallest Welch p over a
//! run's planned looks gets, so that a p seen at any look is adjusted by what the looks
//! together cost, not by their count (docs/STATS.md, "Sequential A/B").
//!
//! Under no change, with normal noise of equal spread on both sides, the paths of a run
//! (both arms growing by one trial each, a Welch test at every planned look) are
//! simulated once per schedule with a fixed seed. F(x), the share of paths whose
//! smallest p is at most x, is the law of that minimum: a p seen at any look, adjusted
//! to F(p), is at most alpha with probability at most alpha, whichever look the run stops
//! at. The union bound K x is F's ceiling (each look's p is uniform); the adjustment is
//! the smaller of K x and a 99.9% upper bound on F(x) given the paths simulated, so the
//! Monte Carlo error of the table never makes it anti-conservative.

use super::rng::SplitMix64;
use super::Location;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Null paths simulated per schedule.
pub const PATHS: usize = 40_000;
/// The simulation's seed: the same schedule always gives the same table.
const SEED: u64 = 0x100c_5eed_0000_0042;
/// z of the one-sided 99.9% bound on a simulated proportion.
const Z: f64 = 3.09;

/// The law of a null row's smallest p over a schedule's looks, two-sided and one-sided.
#[derive(Debug)]
pub struct LookLevels {
    looks: Vec<usize>,
    /// Each path's smallest two-sided p, sorted.
    two: Vec<f64>,
    /// Each path's smallest one-sided (upper tail) p, sorted.
    one: Vec<f64>,
}

impl LookLevels {
    /// The levels of `looks` (trials a side, increasing; each at least 2), simulated once
    /// per process.
    pub fn of(looks: &[usize], test: Location) -> Arc<LookLevels> {
        type Cache = Mutex<HashMap<(Vec<usize>, Location), Arc<LookLevels>>>;
        static CACHE: OnceLock<Cache> = OnceLock::new();
        let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
        let key = (looks.to_vec(), test);
        if let Some(l) = cache.lock().expect("look levels").get(&key) {
            return l.clone();
        }
        let l = Arc::new(LookLevels::simulate(looks, PATHS, SEED, test));
        cache.lock().expect("look levels").insert(key, l.clone());
        l
    }

    /// `paths` null paths of the schedule: both sides standard normal, `test` at each
    /// look on the trials so far (the adaptive test choosing at each look, as a run does).
    pub fn simulate(looks: &[usize], paths: usize, seed: u64, test: Location) -> LookLevels {
        assert!(
            looks.windows(2).all(|w| w[0] < w[1]) && looks.first().is_some_and(|&n| n >= 2),
            "looks must increase from at least 2 trials a side: {looks:?}"
        );
        let mut rng = SplitMix64::new(seed);
        let n_max = *looks.last().expect("at least one look");
        let (mut two, mut one) = (Vec::with_capacity(paths), Vec::with_capacity(paths));
        for _ in 0..paths {
            let (mut a, mut b) = (Vec::with_capacity(n_max), Vec::with_capacity(n_max));
            let (mut min2, mut min1) = (1.0f64, 1.0f64);
            for &n in looks {
                while a.len() < n {
                    a.push(rng.normal());
                    b.push(rng.normal());
                }
                let w = test.test(&a, &b);
                min1 = min1.min(w.p_greater());
                min2 = min2.min(w.p);
            }
            two.push(min2);
            one.push(min1);
        }
        two.sort_by(f64::total_cmp);
        one.sort_by(f64::total_cmp);
        LookLevels {
            looks: looks.to_vec(),
            two,
            one,
        }
    }

    /// A two-sided p seen at one of the looks, adjusted for all of them.
    pub fn two_sided(&self, p: f64) -> f64 {
        self.adjusted(&self.two, p)
    }

    /// A one-sided p seen at one of the looks, adjusted for all of them.
    pub fn one_sided(&self, p: f64) -> f64 {
        self.adjusted(&self.one, p)
    }

    /// The planned looks.
    pub fn looks(&self) -> &[usize] {
        &self.looks
    }

    fn adjusted(&self, mins: &[f64], p: f64) -> f64 {
        let n = mins.len() as f64;
        let f = mins.partition_point(|&m| m <= p) as f64 / n;
        let z2 = Z * Z;
        // Wilson's upper bound on the proportion f of n.
        let upper = (f + z2 / (2.0 * n) + Z * (f * (1.0 - f) / n + z2 / (4.0 * n * n)).sqrt())
            / (1.0 + z2 / n);
        upper.min(self.looks.len() as f64 * p).min(1.0)
    }

    /// The largest per-look p that `alpha` allows (the level each look is tested at):
    /// the largest x with an adjusted value at most `alpha`.
    pub fn per_look(&self, alpha: f64, one_sided: bool) -> f64 {
        let adj = |x: f64| {
            if one_sided {
                self.one_sided(x)
            } else {
                self.two_sided(x)
            }
        };
        let (mut lo, mut hi) = (0.0f64, alpha);
        for _ in 0..60 {
            let mid = (lo + hi) / 2.0;
            if adj(mid) <= alpha {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_look_is_the_test_itself() {
        // A single look: F(x) = x up to the simulation's bound.
        let l = LookLevels::simulate(&[6], 20_000, 3, Location::Welch);
        for x in [0.01, 0.05, 0.2] {
            assert!((l.two_sided(x) - x).abs() < 0.01 + 0.1 * x, "{x}");
            assert!((l.one_sided(x) - x).abs() < 0.01 + 0.1 * x, "{x}");
        }
    }

    #[test]
    fn several_looks_cost_less_than_their_count_and_more_than_one() {
        let l = LookLevels::of(&[4, 6, 8, 12, 16, 20], Location::Welch);
        let x = 0.05 / 6.0;
        let adj = l.two_sided(x);
        // The union bound would say 0.05; correlated looks cost about 3.4 looks.
        assert!(adj < 0.045 && adj > 0.02, "{adj}");
        let per = l.per_look(0.05, false);
        assert!(per > 0.05 / 6.0 && per < 0.025, "{per}");
        // Far in the tail the bound on the simulation is wider than the union bound.
        assert_eq!(l.two_sided(1e-7), 6.0 * 1e-7);
        // One-sided: its own law.
        let per1 = l.per_look(0.05, true);
        assert!(per1 > 0.05 / 6.0 && per1 < 0.025, "{per1}");
    }
}
