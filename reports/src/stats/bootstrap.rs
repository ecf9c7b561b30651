//! The stratified bootstrap CI of the geometric mean of per-row ratios, each side's
//! statistic drawn exactly without materialising a resample.

use super::rng::SplitMix64;
use super::{BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, CONFIDENCE};

/// The statistic each side of a row is reduced to in the bootstrap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Statistic {
    Median,
    Min,
}

/// The statistic of one bootstrap resample of `sorted` (ascending), drawn without
/// materialising the resample. A resample is n indices drawn uniformly from 0..n; as
/// `sorted` is monotone, its k-th smallest value is `sorted[k-th smallest index]`, and the
/// k-th smallest of n uniform indices is floor(n U_(k)) with U_(k) ~ Beta(k, n - k + 1),
/// the k-th order statistic of n uniforms on (0, 1). For an even n the next one follows
/// as U_(k+1) = U_(k) + (1 - U_(k)) (1 - V^(1/(n-k))), V uniform. Exact, and O(1) instead
/// of O(n) per resample.
pub fn bootstrap_statistic(sorted: &[f64], stat: Statistic, rng: &mut SplitMix64) -> f64 {
    let n = sorted.len();
    let nf = n as f64;
    let at = |u: f64| sorted[((u * nf) as usize).min(n - 1)];
    match stat {
        Statistic::Min => at(1.0 - rng.uniform().powf(1.0 / nf)),
        Statistic::Median if n % 2 == 1 => {
            let k = n.div_ceil(2) as f64;
            at(rng.beta(k, nf - k + 1.0))
        }
        Statistic::Median => {
            let k = (n / 2) as f64;
            let u = rng.beta(k, nf - k + 1.0);
            let next = u + (1.0 - u) * (1.0 - rng.uniform().powf(1.0 / (nf - k)));
            (at(u) + at(next)) / 2.0
        }
    }
}

/// Largest sample an [`IndexDraw`] tabulates (n^2 pairs for an even median); a larger
/// one draws through [`bootstrap_statistic`].
pub const INDEX_TABLE_MAX: usize = 64;

/// The exact distribution of a bootstrap resample's statistic over the places of a
/// sorted sample of n: each outcome is a pair of places (`lo`, `hi`) whose values'
/// mean is the statistic (the same place twice for a minimum or an odd median), with
/// its cumulative probability. A resample is n places drawn uniformly with
/// replacement; with `F(i) = (i + 1) / n`:
/// - minimum: `P(X(1) >= i) = (1 - i/n)^n`;
/// - median of odd n, k = (n + 1) / 2: `P(X(k) <= i) = P(Binomial(n, F(i)) >= k)`;
/// - median of even n, k = n / 2: for `a < b`, `P(X(k) <= a, X(k+1) > b) =
///   C(n, k) F(a)^k (1 - F(b))^(n-k)` (exactly k places at or below a, none in
///   (a, b]), differenced into the joint probability of each pair.
///
/// One uniform and a binary search a draw, where [`bootstrap_statistic`] draws a Beta
/// (two Gammas); the same distribution (a test enumerates every resample of small n).
pub struct IndexDraw {
    /// Each outcome's places and probability.
    outcomes: Vec<((usize, usize), f64)>,
    /// Walker's alias table over `pairs`: outcome i is kept with probability
    /// `keep[i]`, else it is `alias[i]` (one uniform, one comparison a draw).
    keep: Vec<f64>,
    alias: Vec<u32>,
}

impl IndexDraw {
    pub fn new(n: usize, stat: Statistic) -> IndexDraw {
        assert!(n >= 1, "a sample to resample");
        let nf = n as f64;
        let f = |i: isize| ((i + 1) as f64 / nf).clamp(0.0, 1.0);
        let mut probs: Vec<((u32, u32), f64)> = Vec::new();
        // P(Binomial(n, p) >= k).
        let at_least = |k: usize, p: f64| -> f64 {
            (k..=n)
                .map(|j| binomial(n, j) * p.powi(j as i32) * (1.0 - p).powi((n - j) as i32))
                .sum()
        };
        match stat {
            Statistic::Min => {
                for i in 0..n {
                    let p = (1.0 - i as f64 / nf).powi(n as i32)
                        - (1.0 - (i + 1) as f64 / nf).powi(n as i32);
                    probs.push(((i as u32, i as u32), p));
                }
            }
            Statistic::Median if n % 2 == 1 => {
                let k = n.div_ceil(2);
                for i in 0..n as isize {
                    let p = at_least(k, f(i)) - if i == 0 { 0.0 } else { at_least(k, f(i - 1)) };
                    probs.push(((i as u32, i as u32), p));
                }
            }
            Statistic::Median => {
                let k = n / 2;
                let c = binomial(n, k);
                // P(X(k) <= a, X(k+1) > b), a < b; no place is below 0.
                let h = |a: isize, b: isize| -> f64 {
                    if a < 0 {
                        return 0.0;
                    }
                    c * f(a).powi(k as i32) * (1.0 - f(b)).powi((n - k) as i32)
                };
                for i in 0..n as isize {
                    let marginal =
                        at_least(k, f(i)) - if i == 0 { 0.0 } else { at_least(k, f(i - 1)) };
                    let mut apart = 0.0;
                    for j in i + 1..n as isize {
                        let p = h(i, j - 1) - h(i - 1, j - 1) - h(i, j) + h(i - 1, j);
                        apart += p;
                        probs.push(((i as u32, j as u32), p));
                    }
                    probs.push(((i as u32, i as u32), marginal - apart));
                }
            }
        }
        probs.retain(|(_, p)| *p > 0.0);
        let total: f64 = probs.iter().map(|(_, p)| p).sum();
        let (keep, alias) = alias_table(&probs.iter().map(|(_, p)| p / total).collect::<Vec<_>>());
        IndexDraw {
            outcomes: probs
                .into_iter()
                .map(|((lo, hi), p)| ((lo as usize, hi as usize), p))
                .collect(),
            keep,
            alias,
        }
    }

    /// The places of one resample's statistic.
    pub fn draw(&self, rng: &mut SplitMix64) -> (usize, usize) {
        let u = rng.uniform() * self.keep.len() as f64;
        let i = (u as usize).min(self.keep.len() - 1);
        let at = if u - (i as f64) < self.keep[i] {
            i
        } else {
            self.alias[i] as usize
        };
        self.outcomes[at].0
    }

    /// Each outcome's places and probability (for tests and inspection).
    pub fn outcomes(&self) -> Vec<((usize, usize), f64)> {
        self.outcomes.clone()
    }
}

/// Walker's alias table of the distribution `p` (summing to one), by Vose's method.
fn alias_table(p: &[f64]) -> (Vec<f64>, Vec<u32>) {
    let m = p.len();
    let mut keep: Vec<f64> = p.iter().map(|x| x * m as f64).collect();
    let mut alias: Vec<u32> = (0..m as u32).collect();
    let (mut small, mut large): (Vec<usize>, Vec<usize>) = (0..m).partition(|&i| keep[i] < 1.0);
    while let (Some(s), Some(&l)) = (small.pop(), large.last()) {
        alias[s] = l as u32;
        keep[l] -= 1.0 - keep[s];
        if keep[l] < 1.0 {
            large.pop();
            small.push(l);
        }
    }
    // What is left is one up to rounding.
    for i in large.into_iter().chain(small) {
        keep[i] = 1.0;
    }
    (keep, alias)
}

/// n choose k as a float (exact up to 2^53, ample for the tabulated sizes).
fn binomial(n: usize, k: usize) -> f64 {
    let k = k.min(n - k);
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// Stratified bootstrap CI of the geometric mean of per-row ratios: each resample
/// redraws the trials of each side of each row with replacement, reduces each side to
/// `stat`, and takes the geomean of head/base over rows. [`BOOTSTRAP_RESAMPLES`]
/// resamples; each side's statistic is drawn directly ([`IndexDraw`] up to
/// [`INDEX_TABLE_MAX`] trials, [`bootstrap_statistic`] above), so the cost does not
/// grow with the number of trials.
pub fn bootstrap_geomean_ci(rows: &[(Vec<f64>, Vec<f64>)], stat: Statistic) -> Option<(f64, f64)> {
    if rows.is_empty() || rows.iter().any(|(b, h)| b.is_empty() || h.is_empty()) {
        return None;
    }
    // Sorted: what the order-statistic draw needs, and the interval then does not depend
    // on the order the trials arrive in.
    let sorted: Vec<(Vec<f64>, Vec<f64>)> = rows
        .iter()
        .map(|(b, h)| {
            let (mut b, mut h) = (b.clone(), h.clone());
            b.sort_by(f64::total_cmp);
            h.sort_by(f64::total_cmp);
            (b, h)
        })
        .collect();
    // One table per sample size: the rows of a comparison share a few.
    let mut tables: std::collections::HashMap<usize, IndexDraw> = Default::default();
    for (b, h) in &sorted {
        for n in [b.len(), h.len()] {
            if n <= INDEX_TABLE_MAX {
                tables.entry(n).or_insert_with(|| IndexDraw::new(n, stat));
            }
        }
    }
    // The log of one resample's statistic of a side, from its values, their logs and
    // its size's table.
    let draw =
        |xs: &[f64], logs: &[f64], table: Option<&IndexDraw>, rng: &mut SplitMix64| match table {
            Some(t) => match t.draw(rng) {
                (lo, hi) if lo == hi => logs[lo],
                (lo, hi) => ((xs[lo] + xs[hi]) / 2.0).ln(),
            },
            None => bootstrap_statistic(xs, stat, rng).ln(),
        };
    // Row by row, each row its own stream of draws (seeded by its place), in chunks
    // shared among the cores; the chunks' sums are added in order, so the interval is
    // the same on any number of cores.
    const CHUNK: usize = 64;
    let chunk_sums = |rows: &[(Vec<f64>, Vec<f64>)], first: usize| -> Vec<f64> {
        let mut sums = vec![0.0; BOOTSTRAP_RESAMPLES];
        for (i, (b, h)) in rows.iter().enumerate() {
            let (lb, lh): (Vec<f64>, Vec<f64>) = (
                b.iter().map(|v| v.ln()).collect(),
                h.iter().map(|v| v.ln()).collect(),
            );
            let mut rng = SplitMix64::new(
                BOOTSTRAP_SEED ^ ((first + i) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15),
            );
            let (tb, th) = (tables.get(&b.len()), tables.get(&h.len()));
            for s in sums.iter_mut() {
                let bs = draw(b, &lb, tb, &mut rng);
                let hs = draw(h, &lh, th, &mut rng);
                *s += hs - bs;
            }
        }
        sums
    };
    let chunks: Vec<_> = sorted.chunks(CHUNK).enumerate().collect();
    let mut total = vec![0.0; BOOTSTRAP_RESAMPLES];
    for sums in crate::par::parallel_map(&chunks, |(c, rows)| chunk_sums(rows, c * CHUNK)) {
        for (t, v) in total.iter_mut().zip(sums) {
            *t += v;
        }
    }
    let mut stats: Vec<f64> = total
        .into_iter()
        .map(|sum| (sum / sorted.len() as f64).exp())
        .collect();
    stats.sort_by(f64::total_cmp);
    let at = |q: f64| stats[((q * (stats.len() - 1) as f64).round() as usize).min(stats.len() - 1)];
    let tail = (1.0 - CONFIDENCE) / 2.0;
    Some((at(tail), at(1.0 - tail)))
}
