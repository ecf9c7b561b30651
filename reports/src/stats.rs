//! Statistics for comparing base and head (see `docs/STATS.md` for the method).
//!
//! The unit of replication is the trial: one benchmark process, one value per row.
//! - Welch's t-test on ln(value): the default, decides with 3 trials a side.
//! - Exact, tie-aware Mann-Whitney U: conditional null distribution given the tie
//!   pattern by dynamic programming over tied blocks; normal approximation with tie and
//!   continuity correction for large samples. Two-sided p by the min-tail rule.
//!   (statrs' own `mannwhitneyu` is not used: its exact path returns the wrong tail.)
//! - Benjamini-Hochberg adjusted p-values (q) over the tested rows of a report.
//! - Median with a distribution-free CI from order statistics (benchstat's QuantileCI).
//! - Geometric mean of ratios with a t-interval, and a stratified bootstrap CI with an
//!   in-tree SplitMix64 so results are reproducible.

pub mod changepoint;
pub mod modes;
pub mod power;

use statrs::distribution::{ContinuousCDF, Discrete, Normal, StudentsT};

/// Confidence level of every interval perfdb reports.
pub const CONFIDENCE: f64 = 0.95;
/// Largest side size for the exact U distribution without ties (scipy uses 8; the DP
/// is cheap enough to go much further).
pub const MW_EXACT_MAX_NO_TIES: usize = 50;
/// Largest side size for the exact conditional distribution with ties.
pub const MW_EXACT_MAX_TIES: usize = 25;
/// Bootstrap resamples for the summary CI.
pub const BOOTSTRAP_RESAMPLES: usize = 2000;

/// Fixed seed: the same data always gives the same interval.
pub const BOOTSTRAP_SEED: u64 = 0x5eed_9e37_79b9_7f4a;

pub fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

/// Sample variance (n - 1 denominator).
pub fn variance(x: &[f64]) -> f64 {
    let m = mean(x);
    x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (x.len() as f64 - 1.0)
}

pub fn median(x: &[f64]) -> f64 {
    let mut s = x.to_vec();
    median_in_place(&mut s)
}

/// Median by selection, O(n); reorders `s`.
pub fn median_in_place(s: &mut [f64]) -> f64 {
    let n = s.len();
    let (_, hi, _) = s.select_nth_unstable_by(n / 2, f64::total_cmp);
    let hi = *hi;
    if n % 2 == 1 {
        hi
    } else {
        // The lower middle is the largest of the left part.
        let lo = s[..n / 2].iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (lo + hi) / 2.0
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Welch {
    pub t: f64,
    pub df: f64,
    pub p: f64,
}

/// Welch's two-sided t-test of `a` against `b` (t > 0 when mean(a) > mean(b)).
/// Needs at least 2 values a side. Zero variance on both sides: equal means give
/// p = 1, different means a deterministic difference, p = 0.
pub fn welch(a: &[f64], b: &[f64]) -> Welch {
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (va, vb) = (variance(a) / na, variance(b) / nb);
    let diff = mean(a) - mean(b);
    let se2 = va + vb;
    if se2 == 0.0 {
        return if diff == 0.0 {
            Welch {
                t: 0.0,
                df: na + nb - 2.0,
                p: 1.0,
            }
        } else {
            Welch {
                t: diff.signum() * f64::INFINITY,
                df: na + nb - 2.0,
                p: 0.0,
            }
        };
    }
    let t = diff / se2.sqrt();
    let df = se2 * se2 / (va * va / (na - 1.0) + vb * vb / (nb - 1.0));
    let dist = StudentsT::new(0.0, 1.0, df).expect("df > 0");
    Welch {
        t,
        df,
        p: (2.0 * dist.sf(t.abs())).min(1.0),
    }
}

/// 95% CI of the ratio of geometric means of `a` over `b`: exp(d +- t(df) se) with d the
/// difference of mean logs and Welch's se and df. Needs at least 2 values a side.
pub fn geomean_ratio_ci(a: &[f64], b: &[f64]) -> Option<(f64, f64)> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let la: Vec<f64> = a.iter().map(|v| v.ln()).collect();
    let lb: Vec<f64> = b.iter().map(|v| v.ln()).collect();
    let d = mean(&la) - mean(&lb);
    let se = (variance(&la) / la.len() as f64 + variance(&lb) / lb.len() as f64).sqrt();
    if se == 0.0 {
        return Some((d.exp(), d.exp()));
    }
    let t = StudentsT::new(0.0, 1.0, welch(&la, &lb).df)
        .ok()?
        .inverse_cdf(1.0 - (1.0 - CONFIDENCE) / 2.0);
    Some(((d - t * se).exp(), (d + t * se).exp()))
}

/// Welch's test on ln(value): the tested quantity is the log ratio of geometric means.
pub fn welch_log(a: &[f64], b: &[f64]) -> Welch {
    let la: Vec<f64> = a.iter().map(|v| v.ln()).collect();
    let lb: Vec<f64> = b.iter().map(|v| v.ln()).collect();
    welch(&la, &lb)
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MannWhitney {
    /// U of the first sample: #{a > b} + 0.5 #{a = b}.
    pub u: f64,
    /// Two-sided p, min-tail rule.
    pub p: f64,
    pub p_less: f64,
    pub p_greater: f64,
    pub exact: bool,
}

/// U of `a`: #{a > b} + 0.5 * #{a = b} over all pairs, by sorting (O(n log n)).
pub fn u_statistic(a: &[f64], b: &[f64]) -> f64 {
    let mut sb = b.to_vec();
    sb.sort_by(f64::total_cmp);
    let mut sa = a.to_vec();
    sa.sort_by(f64::total_cmp);
    let (mut below, mut upto) = (0usize, 0usize);
    let mut twice_u = 0usize;
    for x in &sa {
        while below < sb.len() && sb[below] < *x {
            below += 1;
        }
        upto = upto.max(below);
        while upto < sb.len() && sb[upto] <= *x {
            upto += 1;
        }
        // below values of b are smaller, (upto - below) are equal.
        twice_u += 2 * below + (upto - below);
    }
    twice_u as f64 / 2.0
}

/// Sizes of the tied blocks of the pooled sample, in increasing value order.
fn tie_blocks(a: &[f64], b: &[f64]) -> Vec<usize> {
    let mut all: Vec<f64> = a.iter().chain(b).copied().collect();
    all.sort_by(f64::total_cmp);
    let mut blocks = Vec::new();
    let mut i = 0;
    while i < all.len() {
        let mut j = i + 1;
        while j < all.len() && all[j] == all[i] {
            j += 1;
        }
        blocks.push(j - i);
        i = j;
    }
    blocks
}

fn ln_choose(n: usize, k: usize) -> f64 {
    statrs::function::factorial::ln_binomial(n as u64, k as u64)
}

/// C(n, k) as f64 by the multiplicative formula (exact while it fits 2^53).
fn choose(n: usize, k: usize) -> f64 {
    let k = k.min(n - k);
    let mut r = 1.0f64;
    for i in 0..k {
        r = r * (n - i) as f64 / (i + 1) as f64;
    }
    r
}

/// Exact conditional distribution of 2U (an integer) for `n1` values of the first sample
/// spread over tied blocks `blocks`: probabilities indexed by 2U.
///
/// A first-sample value in block j beats every second-sample value in earlier blocks and
/// ties with the second-sample values of block j. With a_j first-sample values in block
/// j, m of them placed before, 2U gains a_j * (2 * (T_before - m) + (t_j - a_j)).
/// Each assignment has weight prod C(t_j, a_j) out of C(N, n1).
fn exact_u2_distribution(n1: usize, blocks: &[usize]) -> Vec<f64> {
    EXACT_U_RUNS.with(|c| c.set(c.get() + 1));
    let n: usize = blocks.iter().sum();
    let n2 = n - n1;
    let max_u2 = 2 * n1 * n2;
    // dp[m][u2] = number of assignments (as f64) using m first-sample values so far.
    let mut dp = vec![vec![0.0f64; max_u2 + 1]; n1 + 1];
    dp[0][0] = 1.0;
    let mut before = 0usize;
    for &t in blocks {
        let mut next = vec![vec![0.0f64; max_u2 + 1]; n1 + 1];
        for m in 0..=n1 {
            for u2 in 0..=max_u2 {
                let ways = dp[m][u2];
                if ways == 0.0 {
                    continue;
                }
                for a in 0..=t.min(n1 - m) {
                    // More second-sample values than there are: no such assignment
                    // (and its 2U would run past the table).
                    if before + t - (m + a) > n2 {
                        continue;
                    }
                    let ys_before = before - m;
                    let gain = a * (2 * ys_before + (t - a));
                    let w = choose(t, a);
                    next[m + a][u2 + gain] += ways * w;
                }
            }
        }
        dp = next;
        before += t;
    }
    let total = choose(n, n1);
    dp[n1].iter().map(|w| w / total).collect()
}

thread_local! {
    static EXACT_U_RUNS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// How many times this thread ran the exact U distribution: its cost grows with the
/// square of the sizes (about 25M steps at 50 trials a side), so callers and tests check
/// it is run only when asked for.
pub fn exact_u_runs() -> usize {
    EXACT_U_RUNS.with(std::cell::Cell::get)
}

/// Does the exact distribution apply to these sizes and tie pattern (else the normal
/// approximation)?
fn exact_applies(n1: usize, n2: usize, blocks: &[usize]) -> bool {
    let limit = if blocks.iter().any(|t| *t > 1) {
        MW_EXACT_MAX_TIES
    } else {
        MW_EXACT_MAX_NO_TIES
    };
    n1 <= limit && n2 <= limit
}

/// Smallest two-sided p the U test can reach for these samples' sizes *and tie
/// pattern*: under the exact conditional null the extremes of U are the rarest
/// outcomes, so it is 2 min(P(U = min), P(U = max)). With heavy ties it can exceed alpha
/// where the sizes alone (`mw_min_p`) would not: [1,1,1,1,1] vs [1,1,1,1,2] can reach
/// only p = 1. Above the exact sizes the normal approximation reaches any p, and the
/// no-ties bound is returned.
pub fn mw_min_p_given(a: &[f64], b: &[f64]) -> f64 {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 {
        return 1.0;
    }
    let blocks = tie_blocks(a, b);
    if !exact_applies(n1, n2, &blocks) {
        return mw_min_p(n1, n2);
    }
    let dist = exact_u2_distribution(n1, &blocks);
    let first = dist.iter().find(|p| **p > 0.0).copied().unwrap_or(1.0);
    let last = dist
        .iter()
        .rev()
        .find(|p| **p > 0.0)
        .copied()
        .unwrap_or(1.0);
    (2.0 * first.min(last)).min(1.0)
}

/// Two-sided Mann-Whitney U test of `a` against `b`.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> MannWhitney {
    let (n1, n2) = (a.len(), b.len());
    let u = u_statistic(a, b);
    let blocks = tie_blocks(a, b);
    if exact_applies(n1, n2, &blocks) {
        let dist = exact_u2_distribution(n1, &blocks);
        let u2 = (2.0 * u).round() as usize;
        let p_less: f64 = dist[..=u2].iter().sum();
        let p_greater: f64 = dist[u2..].iter().sum();
        return MannWhitney {
            u,
            p: (2.0 * p_less.min(p_greater)).min(1.0),
            p_less: p_less.min(1.0),
            p_greater: p_greater.min(1.0),
            exact: true,
        };
    }
    let (p_less, p_greater, p) = mw_normal(u, n1, n2, &blocks);
    MannWhitney {
        u,
        p,
        p_less,
        p_greater,
        exact: false,
    }
}

/// Normal approximation with tie and continuity correction:
/// mu = n1 n2 / 2, sigma^2 = n1 n2 / 12 ((N + 1) - sum(t^3 - t) / (N (N - 1))),
/// z = (U - mu - c) / sigma with the continuity correction c = 0.5 sgn(U - mu), and
/// c = 0 at the centre (U = mu gives p = 1, not 0.998). Returns (P(U <= u), P(U >= u),
/// two-sided p).
fn mw_normal(u: f64, n1: usize, n2: usize, blocks: &[usize]) -> (f64, f64, f64) {
    let (f1, f2) = (n1 as f64, n2 as f64);
    let nn = f1 + f2;
    let mu = f1 * f2 / 2.0;
    let tie: f64 = blocks.iter().map(|&t| (t * t * t - t) as f64).sum();
    let sigma = (f1 * f2 / 12.0 * ((nn + 1.0) - tie / (nn * (nn - 1.0)))).sqrt();
    let std = Normal::new(0.0, 1.0).expect("standard normal");
    if sigma == 0.0 {
        return (1.0, 1.0, 1.0);
    }
    let p_less = std.cdf((u - mu + 0.5) / sigma);
    let p_greater = std.sf((u - mu - 0.5) / sigma);
    let correction = if u > mu {
        0.5
    } else if u < mu {
        -0.5
    } else {
        0.0
    };
    let z = (u - mu - correction) / sigma;
    let p = (2.0 * std.sf(z.abs())).min(1.0);
    (p_less, p_greater, p)
}

/// Normal-approximation p of the U test, whatever the sample sizes (for reference).
pub fn mann_whitney_normal(a: &[f64], b: &[f64]) -> f64 {
    mw_normal(u_statistic(a, b), a.len(), b.len(), &tie_blocks(a, b)).2
}

/// Smallest two-sided p the U test can reach without ties: 2 / C(n1 + n2, n1).
pub fn mw_min_p(n1: usize, n2: usize) -> f64 {
    (2.0 / ln_choose(n1 + n2, n1).exp()).min(1.0)
}

/// Smallest equal side size whose attainable U-test p reaches `alpha`.
pub fn mw_trials_needed(alpha: f64) -> usize {
    (2..200).find(|n| mw_min_p(*n, *n) <= alpha).unwrap_or(200)
}

/// Benjamini-Hochberg adjusted p-values, in the input order.
pub fn benjamini_hochberg(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|a, b| p[*a].total_cmp(&p[*b]));
    let mut q = vec![0.0; m];
    let mut running = 1.0f64;
    for rank in (0..m).rev() {
        let i = order[rank];
        running = running.min(p[i] * m as f64 / (rank + 1) as f64);
        q[i] = running.min(1.0);
    }
    q
}

/// 1-based order-statistic indices (lo, hi) of the distribution-free CI of the median
/// (0 = -inf, n + 1 = +inf): the narrowest interval [x_(lo), x_(hi)] whose binomial
/// coverage P(lo <= B < hi), B ~ Binomial(n, 1/2), reaches `confidence`; the lower one
/// among equally narrow intervals (as benchstat's QuantileCI).
pub fn median_ci_indices(n: usize, confidence: f64) -> (usize, usize) {
    /// ((n, confidence bits), (lo, hi)) of recent calls: a compare asks for the same n
    /// once per row and side.
    type Entry = ((usize, u64), (usize, usize));
    thread_local! {
        static CACHE: std::cell::RefCell<Vec<Entry>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    let k = (n, confidence.to_bits());
    if let Some(hit) = CACHE.with(|c| {
        c.borrow()
            .iter()
            .find(|(key, _)| *key == k)
            .map(|(_, v)| *v)
    }) {
        return hit;
    }
    let b = statrs::distribution::Binomial::new(0.5, n as u64).expect("valid binomial");
    // cdf[i] = P(B < i), so P(lo <= B <= hi - 1) = cdf[hi] - cdf[lo].
    let mut cdf = Vec::with_capacity(n + 2);
    cdf.push(0.0);
    for k in 0..=n as u64 {
        cdf.push(cdf.last().copied().unwrap_or(0.0) + b.pmf(k));
    }
    let mut found = (0, n + 1);
    'search: for width in 1..=n + 1 {
        for lo in 0..=(n + 1 - width) {
            let hi = lo + width;
            if cdf[hi.min(n + 1)] - cdf[lo] >= confidence - 1e-12 {
                found = (lo, hi);
                break 'search;
            }
        }
    }
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() > 64 {
            c.clear();
        }
        c.push((k, found));
    });
    found
}

/// The median's CI values; infinite ends when there are too few trials (< 6).
pub fn median_ci(x: &[f64]) -> (f64, f64) {
    let mut s = x.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    let (lo, hi) = median_ci_indices(n, CONFIDENCE);
    let at = |i: usize, inf: f64| if i == 0 || i == n + 1 { inf } else { s[i - 1] };
    (at(lo, f64::NEG_INFINITY), at(hi, f64::INFINITY))
}

/// Geometric mean of `ratios` with a t-interval on the log scale.
pub fn geomean_t_ci(ratios: &[f64]) -> (f64, Option<(f64, f64)>) {
    let logs: Vec<f64> = ratios.iter().map(|r| r.ln()).collect();
    let m = mean(&logs);
    if logs.len() < 2 {
        return (m.exp(), None);
    }
    let se = (variance(&logs) / logs.len() as f64).sqrt();
    let t = StudentsT::new(0.0, 1.0, logs.len() as f64 - 1.0)
        .expect("df > 0")
        .inverse_cdf(1.0 - (1.0 - CONFIDENCE) / 2.0);
    (m.exp(), Some(((m - t * se).exp(), (m + t * se).exp())))
}

/// SplitMix64: a tiny, well-mixed generator; in-tree so the stream never changes.
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform index in 0..n.
    pub fn below(&mut self, n: usize) -> usize {
        ((self.uniform() * n as f64) as usize).min(n - 1)
    }
}

/// The statistic each side of a row is reduced to in the bootstrap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Statistic {
    Median,
    Min,
}

impl SplitMix64 {
    /// Uniform in (0, 1), never 0 or 1.
    pub fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    /// Standard normal (Box-Muller).
    pub fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
    /// Gamma(a, 1) for a >= 1 (Marsaglia and Tsang 2000).
    fn gamma(&mut self, a: f64) -> f64 {
        let d = a - 1.0 / 3.0;
        let c = 1.0 / (9.0 * d).sqrt();
        loop {
            let x = self.normal();
            let v = (1.0 + c * x).powi(3);
            if v <= 0.0 {
                continue;
            }
            let u = self.uniform();
            if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
                return d * v;
            }
        }
    }
    /// Beta(a, b) for a, b >= 1.
    fn beta(&mut self, a: f64, b: f64) -> f64 {
        let x = self.gamma(a);
        let y = self.gamma(b);
        x / (x + y)
    }
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

#[cfg(test)]
#[path = "stats_tests.rs"]
mod tests;
