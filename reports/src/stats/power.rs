//! Noise and power (docs/STATS.md, "Noise and power"): how noisy a series is, and how
//! many trials a side a two-sided test at `alpha` needs to see a change `delta` with
//! power `power`, or the smallest change it sees at `n`.
//!
//! sigma is the standard deviation of ln values within a group (a commit of a history,
//! an arm of an A/A run); n = 2 (t_{1-alpha/2,df} + t_{power,df})^2 sigma^2 /
//! ln(1 + delta)^2 with df = 2n - 2, iterated from the normal quantiles.

use super::{median, variance};
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// The noise of one series over its groups of trials.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Noise {
    /// Trials in groups of two or more (the ones that say anything about noise).
    pub trials: usize,
    pub groups: usize,
    /// Pooled standard deviation of ln values within each group.
    pub sigma: f64,
    /// 1.4826 x the median absolute deviation of ln values about each group's median.
    pub sigma_robust: f64,
}

/// The noise of trials grouped as `groups` (each group's values > 0; groups of fewer
/// than two trials are left out). `None` when no group has two trials.
pub fn noise(groups: &[Vec<f64>]) -> Option<Noise> {
    let mut ss = 0.0;
    let mut dof = 0usize;
    let mut deviations = Vec::new();
    let mut trials = 0;
    let mut used = 0;
    for g in groups.iter().filter(|g| g.len() >= 2) {
        let logs: Vec<f64> = g.iter().map(|v| v.ln()).collect();
        ss += variance(&logs) * (logs.len() - 1) as f64;
        dof += logs.len() - 1;
        let m = median(&logs);
        deviations.extend(logs.iter().map(|x| (x - m).abs()));
        trials += g.len();
        used += 1;
    }
    if dof == 0 {
        return None;
    }
    Some(Noise {
        trials,
        groups: used,
        sigma: (ss / dof as f64).sqrt(),
        sigma_robust: 1.4826 * median(&deviations),
    })
}

/// The `p` quantile of Student's t with `df` degrees of freedom (infinite when df is
/// not a positive number: no interval is finite then).
pub(crate) fn t_quantile(p: f64, df: f64) -> f64 {
    if !(df.is_finite() && df > 0.0) {
        return f64::INFINITY;
    }
    StudentsT::new(0.0, 1.0, df).expect("df > 0").inverse_cdf(p)
}

fn z_quantile(p: f64) -> f64 {
    Normal::new(0.0, 1.0).expect("standard").inverse_cdf(p)
}

/// Trials a side with the normal quantiles (the starting point; also the large-n limit).
pub fn trials_needed_normal(sigma: f64, delta: f64, alpha: f64, power: f64) -> f64 {
    let z = z_quantile(1.0 - alpha / 2.0) + z_quantile(power);
    2.0 * z * z * sigma * sigma / (1.0 + delta).ln().powi(2)
}

/// Trials a side (about: the fixed point of the t formula, rounded) to see `delta` with
/// a two-sided Welch test at `alpha` and power `power`; at least 2. `None` when sigma
/// or delta is not positive and finite, or the answer is beyond a million.
pub fn trials_needed(sigma: f64, delta: f64, alpha: f64, power: f64) -> Option<usize> {
    if !(sigma.is_finite() && delta.is_finite() && sigma > 0.0 && delta > 0.0) {
        return (sigma == 0.0 && delta > 0.0).then_some(2);
    }
    let l2 = (1.0 + delta).ln().powi(2);
    let formula = |n: f64| {
        let df = (2.0 * n - 2.0).max(1.0);
        let t = t_quantile(1.0 - alpha / 2.0, df) + t_quantile(power, df);
        2.0 * t * t * sigma * sigma / l2
    };
    let mut n = trials_needed_normal(sigma, delta, alpha, power);
    if n > 1e6 {
        return None;
    }
    // Damped: the undamped iteration oscillates around the fixed point at small n.
    for _ in 0..200 {
        let next = (n + formula(n.max(1.5))) / 2.0;
        if (next - n).abs() < 1e-9 {
            break;
        }
        n = next;
    }
    Some((n.round() as usize).max(2))
}

/// The smallest change a two-sided Welch test at `alpha` sees with power `power` at
/// `n` trials a side (n >= 2): exp((t_{1-alpha/2} + t_{power}) sigma sqrt(2/n)) - 1.
pub fn min_detectable(sigma: f64, n: usize, alpha: f64, power: f64) -> f64 {
    let df = (2 * n).saturating_sub(2).max(1) as f64;
    let t = t_quantile(1.0 - alpha / 2.0, df) + t_quantile(power, df);
    (t * sigma * (2.0 / n as f64).sqrt()).exp() - 1.0
}

/// The power every figure perfdb prints is planned for.
pub const POWER: f64 = 0.8;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_values_of_stats_md() {
        // sigma 0.01, alpha 0.05, power 0.8, delta 2%: 4.003 normal, 5 with t.
        let n = trials_needed_normal(0.01, 0.02, 0.05, 0.8);
        assert!((n - 4.003).abs() < 5e-4, "{n}");
        assert_eq!(trials_needed(0.01, 0.02, 0.05, 0.8), Some(5));
        // sigma 0.03: 36.03 / 37.
        let n = trials_needed_normal(0.03, 0.02, 0.05, 0.8);
        assert!((n - 36.03).abs() < 5e-3, "{n}");
        assert_eq!(trials_needed(0.03, 0.02, 0.05, 0.8), Some(37));
    }

    #[test]
    fn the_detectable_change_at_the_needed_n_is_the_change() {
        let n = trials_needed(0.02, 0.05, 0.05, 0.8).unwrap();
        let mde = min_detectable(0.02, n, 0.05, 0.8);
        assert!((mde - 0.05).abs() < 0.005, "n {n}, mde {mde}");
        // Three trials a side of 3% noise cannot see 5%.
        assert!(min_detectable(0.03, 3, 0.05, 0.8) > 0.05);
    }

    #[test]
    fn noiseless_and_degenerate_inputs() {
        assert_eq!(trials_needed(0.0, 0.05, 0.05, 0.8), Some(2));
        assert_eq!(trials_needed(f64::NAN, 0.05, 0.05, 0.8), None);
        assert_eq!(trials_needed(0.01, 0.0, 0.05, 0.8), None);
        assert_eq!(noise(&[vec![1.0]]), None);
    }

    #[test]
    fn pooled_and_robust_sigma() {
        // Two groups with the same spread on the log scale, at different levels.
        let g1: Vec<f64> = [-0.01f64, 0.0, 0.01]
            .iter()
            .map(|d| 10.0 * d.exp())
            .collect();
        let g2: Vec<f64> = [-0.01f64, 0.0, 0.01]
            .iter()
            .map(|d| 30.0 * d.exp())
            .collect();
        let n = noise(&[g1, g2, vec![5.0]]).unwrap();
        assert_eq!((n.trials, n.groups), (6, 2));
        assert!((n.sigma - 0.01).abs() < 1e-12, "{}", n.sigma);
        assert!((n.sigma_robust - 1.4826 * 0.01).abs() < 1e-9);
    }
}
