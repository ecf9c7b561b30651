//! The exact, tie-aware Mann-Whitney U test (its conditional null by dynamic
//! programming over tied blocks), its normal approximation, and the smallest p it can
//! reach.

use super::{MW_EXACT_MAX_NO_TIES, MW_EXACT_MAX_TIES};
use statrs::distribution::{ContinuousCDF, Normal};

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
