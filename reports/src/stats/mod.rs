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

pub mod adaptive;
mod bootstrap;
pub mod changepoint;
mod fdr;
mod intervals;
pub mod looks;
mod mann_whitney;
pub mod modes;
pub mod power;
mod rng;
mod welch;
mod yuen;

pub use adaptive::Location;
pub use bootstrap::*;
pub use fdr::*;
pub use intervals::*;
pub use mann_whitney::*;
pub use rng::*;
pub use welch::*;
pub use yuen::*;

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

#[cfg(test)]
mod tests;
