//! Welch's t-test, on values and on their logs, and the ratio of geometric means with
//! its interval.

use super::{mean, variance, CONFIDENCE};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// A t test's result (Welch's or Yuen's: [`super::Location::test`] says which ran): the
/// statistic, its degrees of freedom and the two-sided p.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TTest {
    pub t: f64,
    pub df: f64,
    pub p: f64,
}

impl TTest {
    /// The one-sided p that `a` is larger: half the two-sided p when t points that way.
    pub fn p_greater(&self) -> f64 {
        if self.t > 0.0 {
            self.p / 2.0
        } else {
            1.0 - self.p / 2.0
        }
    }

    /// The same statistic with `k` fewer degrees of freedom (parameters fitted before
    /// the test: the GPUs' offsets of `compare::strata`), its p re-read; 0 changes nothing.
    pub fn with_lost_df(self, k: f64) -> TTest {
        if k <= 0.0 || !self.t.is_finite() {
            return self;
        }
        let df = (self.df - k).max(1.0);
        let dist = StudentsT::new(0.0, 1.0, df).expect("df > 0");
        TTest {
            t: self.t,
            df,
            p: (2.0 * dist.sf(self.t.abs())).min(1.0),
        }
    }
}

/// Welch's two-sided t-test of `a` against `b` (t > 0 when mean(a) > mean(b)).
/// Needs at least 2 values a side. Zero variance on both sides: equal means give
/// p = 1, different means a deterministic difference, p = 0.
pub fn welch(a: &[f64], b: &[f64]) -> TTest {
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (va, vb) = (variance(a) / na, variance(b) / nb);
    let diff = mean(a) - mean(b);
    let se2 = va + vb;
    if se2 == 0.0 {
        return if diff == 0.0 {
            TTest {
                t: 0.0,
                df: na + nb - 2.0,
                p: 1.0,
            }
        } else {
            TTest {
                t: diff.signum() * f64::INFINITY,
                df: na + nb - 2.0,
                p: 0.0,
            }
        };
    }
    let t = diff / se2.sqrt();
    let df = se2 * se2 / (va * va / (na - 1.0) + vb * vb / (nb - 1.0));
    let dist = StudentsT::new(0.0, 1.0, df).expect("df > 0");
    TTest {
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
pub fn welch_log(a: &[f64], b: &[f64]) -> TTest {
    let la: Vec<f64> = a.iter().map(|v| v.ln()).collect();
    let lb: Vec<f64> = b.iter().map(|v| v.ln()).collect();
    welch(&la, &lb)
}
