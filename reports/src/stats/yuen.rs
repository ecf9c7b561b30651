//! Yuen's trimmed t-test: Welch's test on trimmed means, with the winsorized variance.
//! A trial slowed by a clock dip or a neighbour's job moves a mean and doubles a
//! variance; it falls in the trimmed tail here. With nothing trimmed (fewer than
//! 1 / gamma trials a side) it is Welch's test.

use super::{mean, variance, TTest};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// The share of each side's trials trimmed from each end.
pub const TRIM: f64 = 0.2;

/// A side's trimmed mean, its squared standard error (Yuen's d) and the trials kept.
pub struct Trimmed {
    pub mean: f64,
    pub d: f64,
    pub kept: usize,
}

/// Trims floor(gamma n) values from each end of `x` (at least 2 values).
pub fn trimmed(x: &[f64], gamma: f64) -> Trimmed {
    let n = x.len();
    let mut s = x.to_vec();
    s.sort_by(f64::total_cmp);
    let g = ((gamma * n as f64).floor() as usize).min((n - 2) / 2);
    let h = n - 2 * g;
    let lo = s[g];
    let hi = s[n - 1 - g];
    let w: Vec<f64> = s.iter().map(|v| v.clamp(lo, hi)).collect();
    Trimmed {
        mean: mean(&s[g..n - g]),
        d: (n as f64 - 1.0) * variance(&w) / (h as f64 * (h as f64 - 1.0)),
        kept: h,
    }
}

/// Yuen's two-sided test of `a` against `b` (t > 0 when a's trimmed mean is larger).
/// Needs at least 2 values a side.
pub fn yuen(a: &[f64], b: &[f64], gamma: f64) -> TTest {
    yuen_of(&trimmed(a, gamma), &trimmed(b, gamma))
}

/// Yuen's test from the two sides' trimmed summaries.
pub fn yuen_of(a: &Trimmed, b: &Trimmed) -> TTest {
    let diff = a.mean - b.mean;
    let se2 = a.d + b.d;
    let df_all = (a.kept + b.kept) as f64 - 2.0;
    if se2 == 0.0 {
        return TTest {
            t: if diff == 0.0 {
                0.0
            } else {
                diff.signum() * f64::INFINITY
            },
            df: df_all,
            p: if diff == 0.0 { 1.0 } else { 0.0 },
        };
    }
    let t = diff / se2.sqrt();
    let df = se2 * se2 / (a.d * a.d / (a.kept as f64 - 1.0) + b.d * b.d / (b.kept as f64 - 1.0));
    let dist = StudentsT::new(0.0, 1.0, df).expect("df > 0");
    TTest {
        t,
        df,
        p: (2.0 * dist.sf(t.abs())).min(1.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_trimming_it_is_welch() {
        let (a, b) = ([2.0, 1.0, 3.0, 4.0], [6.0, 5.0, 7.0, 9.0]);
        let y = yuen(&a, &b, TRIM);
        let w = super::super::welch(&a, &b);
        assert!((y.t - w.t).abs() < 1e-12 && (y.df - w.df).abs() < 1e-12);
        assert!((y.p - 0.008_512_863_131_378_17).abs() < 1e-12);
    }

    #[test]
    fn trims_and_winsorizes_by_hand() {
        // x = 1..10 and y = 2..10 with 100: 20% trimming drops two values from each end.
        // Trimmed means 5.5 and 6.5; both winsorized samples (3,3,3,4..8,8,8 and
        // 4,4,4,5..9,9,9) have variance 42.5 / 9, so d = 9 (42.5 / 9) / (6 5) = 1.416667
        // a side: t = -1 / sqrt(2.833333) = -0.5940885, df = (2d)^2 / (2 d^2 / 5) = 10.
        let a: Vec<f64> = (1..=10).map(f64::from).collect();
        let b: Vec<f64> = (2..=10).map(f64::from).chain([100.0]).collect();
        let ta = trimmed(&a, TRIM);
        let tb = trimmed(&b, TRIM);
        assert_eq!((ta.mean, tb.mean, ta.kept), (5.5, 6.5, 6));
        assert!((ta.d - 1.4166667).abs() < 1e-6 && (tb.d - ta.d).abs() < 1e-12);
        let y = yuen(&a, &b, TRIM);
        assert!((y.t + 0.5940885).abs() < 1e-6, "{}", y.t);
        assert!((y.df - 10.0).abs() < 1e-9, "{}", y.df);
    }

    #[test]
    fn one_slow_trial_does_not_double_the_spread() {
        let base = [21.09, 21.06, 21.66, 21.02, 21.06, 26.37];
        let head = [21.66, 21.34, 21.70, 21.38, 22.05, 20.67];
        let ln = |x: &[f64]| x.iter().map(|v| v.ln()).collect::<Vec<f64>>();
        let w = super::super::welch(&ln(&head), &ln(&base));
        let y = yuen(&ln(&head), &ln(&base), TRIM);
        assert!(y.t.abs() > 2.0 * w.t.abs() || y.p < w.p, "{w:?} {y:?}");
    }
}
