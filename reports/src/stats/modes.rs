//! Two modes in a row's trials: a kernel that runs at one of two speeds (a clock or
//! cache state it lands in per process) gives trials at two levels, and the medians of
//! two sides then compare how often each sat in the slow one, not the code.
//!
//! The split is the widest gap between sorted log values that leaves at least
//! [`MIN_SHARE`] of the trials (and 4) on each side; it is two modes when the groups are
//! far apart for their own spread — Ashman's D = sqrt(2) |m1 - m2| / sqrt(s1^2 + s2^2)
//! above [`MIN_ASHMAN_D`] (2 is the usual line for a clean separation of two normals;
//! 6 keeps a unimodal sample's chance split out: none in 4,000 simulated; the H200's two-speed
//! add reads 9.4) — and their levels differ by at least
//! [`MIN_SEPARATION`].

/// Fewest trials of a side before two modes are looked for.
pub const MIN_TRIALS: usize = 10;
/// Smallest share of the trials each mode holds (a few outliers are no mode).
pub const MIN_SHARE: f64 = 0.2;
/// Ashman's D the split must exceed.
pub const MIN_ASHMAN_D: f64 = 6.0;
/// Smallest relative difference of the two levels (3%).
pub const MIN_SEPARATION: f64 = 0.03;

/// The two levels (medians of each mode, low first) `values` split into, if they do.
pub fn two_modes(values: &[f64]) -> Option<(f64, f64)> {
    let mut l: Vec<f64> = values
        .iter()
        .filter(|v| v.is_finite() && **v > 0.0)
        .map(|v| v.ln())
        .collect();
    let n = l.len();
    if n < MIN_TRIALS {
        return None;
    }
    l.sort_by(f64::total_cmp);
    let least = ((n as f64 * MIN_SHARE).ceil() as usize).max(4);
    if 2 * least > n {
        return None;
    }
    let k =
        (least..=n - least).max_by(|a, b| (l[*a] - l[*a - 1]).total_cmp(&(l[*b] - l[*b - 1])))?;
    let (lo, hi) = l.split_at(k);
    let (m1, m2) = (super::mean(lo), super::mean(hi));
    if m2 - m1 < MIN_SEPARATION.ln_1p() {
        return None;
    }
    let spread = super::variance(lo) + super::variance(hi);
    let d = if spread > 0.0 {
        std::f64::consts::SQRT_2 * (m2 - m1) / spread.sqrt()
    } else {
        f64::INFINITY
    };
    (d > MIN_ASHMAN_D).then(|| (super::median(lo).exp(), super::median(hi).exp()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::SplitMix64;

    /// The H200's 1M-element add, torch, 30 trials of base (us): 6.1-6.3 or 6.7-7.0.
    const ADD_1M_TORCH: [f64; 30] = [
        6.736, 6.24, 6.24, 6.176, 6.88, 6.176, 6.208, 6.816, 6.176, 6.208, 6.816, 6.208, 6.864,
        6.208, 6.816, 6.272, 6.896, 7.008, 6.24, 6.272, 6.176, 6.656, 6.208, 6.752, 6.208, 6.88,
        6.208, 6.784, 6.176, 6.208,
    ];

    #[test]
    fn the_two_speeds_of_a_real_kernel_are_found() {
        let (lo, hi) = two_modes(&ADD_1M_TORCH).expect("two modes");
        assert!(
            (6.1..6.3).contains(&lo) && (6.7..6.9).contains(&hi),
            "{lo} {hi}"
        );
    }

    #[test]
    fn one_mode_with_outliers_is_not_two() {
        let mut v: Vec<f64> = ADD_1M_TORCH.iter().map(|x| x.min(6.3)).collect();
        v.extend([20.2, 31.0, 27.1]);
        assert_eq!(two_modes(&v), None);
        assert_eq!(two_modes(&[1.0, 1.5, 1.0, 1.5]), None, "too few trials");
    }

    /// Lognormal trials of one level (CV 1-10%, 8-60 trials): two modes are
    /// never claimed.
    #[test]
    fn unimodal_noise_is_rarely_split() {
        let mut rng = SplitMix64::new(7);
        let mut claimed = 0;
        let runs = 4000;
        for i in 0..runs {
            let n = 8 + i % 53;
            let cv = 0.01 + 0.09 * ((i / 53) % 10) as f64 / 9.0;
            let v: Vec<f64> = (0..n).map(|_| (cv * rng.normal()).exp() * 100.0).collect();
            claimed += usize::from(two_modes(&v).is_some());
        }
        assert!(
            claimed * 1000 <= runs,
            "{claimed} of {runs} unimodal samples split"
        );
    }
}
