//! Distribution-free intervals of the median (order statistics, as benchstat's
//! QuantileCI), and the geometric mean of ratios with a t-interval.

use super::{mean, variance, CONFIDENCE};
use statrs::distribution::{ContinuousCDF, Discrete, StudentsT};

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
