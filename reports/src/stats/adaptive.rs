//! Which location test a row's trials call for. Yuen's trimmed test holds a row's
//! interval steady when a few trials are slowed (a clock dip, a neighbour's job); it
//! loses when the trials sit at two levels (a kernel with two speeds: trimming a side
//! whose slow mode holds 30% of its trials makes its mean jump between the modes), and
//! on clean normal trials it spends degrees of freedom for nothing. So the adaptive test
//! trims only when the pooled trials show a few far values: some, and at most the share
//! a side trims.
//!
//! The choice reads the residuals of both sides pooled (each side about its own median),
//! which do not change when the sides' labels are swapped, so it is made the same way
//! under no change as under a change (Hogg's adaptive tests); its price over the looks is
//! simulated with the choice in it ([`super::looks`]).

use super::{median, TTest, TRIM};

/// A value is far when it lies this many robust standard deviations (1.4826 MAD of the
/// pooled residuals) from its side's median.
pub const FAR: f64 = 4.0;

/// A location test of two samples of log values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Location {
    Welch,
    /// Yuen's, on 20%-trimmed means.
    Trimmed,
    /// Yuen's when a few trials lie far out ([`trims`]), else Welch's.
    Adaptive,
}

impl Location {
    /// The test of `a` against `b` (t > 0 when a is larger); at least 2 values a side.
    pub fn test(self, a: &[f64], b: &[f64]) -> TTest {
        if self.trims(a, b) {
            super::yuen(a, b, TRIM)
        } else {
            super::welch(a, b)
        }
    }

    /// Does the test trim these samples?
    pub fn trims(self, a: &[f64], b: &[f64]) -> bool {
        match self {
            Location::Welch => false,
            Location::Trimmed => true,
            Location::Adaptive => few_far(a, b),
        }
    }
}

/// Do some, and at most a trimmed share, of the pooled trials lie far out?
pub fn few_far(a: &[f64], b: &[f64]) -> bool {
    let residuals = |x: &[f64]| {
        let m = median(x);
        x.iter().map(move |v| (v - m).abs()).collect::<Vec<f64>>()
    };
    let mut r = residuals(a);
    r.extend(residuals(b));
    let scale = 1.4826 * median(&r);
    let far = r.iter().filter(|&&v| v > FAR * scale).count();
    far > 0 && far as f64 <= TRIM * r.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::SplitMix64;

    fn normal(n: usize, sd: f64, rng: &mut SplitMix64) -> Vec<f64> {
        (0..n).map(|_| sd * rng.normal()).collect()
    }

    #[test]
    fn one_slow_trial_is_trimmed() {
        let a = [0.0, 0.01, -0.01, 0.005, -0.004, 0.25, 0.002, -0.003];
        let b = [0.001, -0.008, 0.009, -0.002, 0.004, 0.0, -0.006, 0.007];
        assert!(few_far(&a, &b));
        assert!(Location::Adaptive.trims(&a, &b));
    }

    #[test]
    fn two_speeds_are_not_trimmed() {
        // Five of twelve trials a side in a mode 30% slower (ln 1.3 = 0.262).
        let mut rng = SplitMix64::new(3);
        let side = |rng: &mut SplitMix64| -> Vec<f64> {
            (0..12)
                .map(|i| if i % 12 < 5 { 0.262 } else { 0.0 } + 0.01 * rng.normal())
                .collect()
        };
        let (a, b) = (side(&mut rng), side(&mut rng));
        assert!(!few_far(&a, &b));
        assert_eq!(
            Location::Adaptive.test(&a, &b).p,
            crate::stats::welch(&a, &b).p
        );
    }

    #[test]
    fn clean_normal_trials_are_rarely_trimmed() {
        let mut rng = SplitMix64::new(11);
        let trimmed = (0..2000)
            .filter(|_| {
                let (a, b) = (normal(8, 0.01, &mut rng), normal(8, 0.01, &mut rng));
                few_far(&a, &b)
            })
            .count();
        // 224 of 2,000 pairs of 8 (11%): the pooled MAD of 16 residuals about their
        // sides' medians reads low at this n. Trimming one value an end there costs a
        // little power, which the run's simulations price (docs/STATS.md).
        assert!(trimmed < 300, "{trimmed} of 2000 trimmed");
    }
}
