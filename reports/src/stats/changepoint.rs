//! Change points of a series over commits (the history chart).
//!
//! Each point of the series is one commit's trials. A change point is an index where a
//! new level starts.

use super::{median, welch_log};

/// Smallest relative step a change point must have (noise on small shapes reaches ~20%
/// between trials, but a per-commit step of the median is far steadier).
pub const CHANGE_MIN_STEP: f64 = 0.05;
/// Significance a split must reach (Welch's t on log values of the trials either side).
pub const CHANGE_ALPHA: f64 = 1e-4;
/// Fewest points on each side of a split.
pub const CHANGE_MIN_SEGMENT: usize = 2;

/// Change points by binary segmentation: split where the Welch t statistic on ln(value)
/// between the trials before and after is largest; keep the split when its p is below
/// [`CHANGE_ALPHA`] and the step of the medians exceeds [`CHANGE_MIN_STEP`]; recurse on
/// both halves. Returns the indices where a new level starts.
pub fn change_points(series: &[Vec<f64>]) -> Vec<usize> {
    let mut out = Vec::new();
    split(series, 0, series.len(), &mut out);
    out.sort();
    out
}

fn split(series: &[Vec<f64>], lo: usize, hi: usize, out: &mut Vec<usize>) {
    if hi - lo < 2 * CHANGE_MIN_SEGMENT {
        return;
    }
    let mut best: Option<(usize, f64, f64)> = None;
    for s in lo + CHANGE_MIN_SEGMENT..=hi - CHANGE_MIN_SEGMENT {
        let a: Vec<f64> = series[lo..s]
            .iter()
            .flatten()
            .copied()
            .filter(|v| *v > 0.0)
            .collect();
        let b: Vec<f64> = series[s..hi]
            .iter()
            .flatten()
            .copied()
            .filter(|v| *v > 0.0)
            .collect();
        if a.len() < 2 || b.len() < 2 {
            continue;
        }
        let w = welch_log(&b, &a);
        let step = (median(&b) / median(&a) - 1.0).abs();
        if best.is_none_or(|(_, t, _)| w.t.abs() > t) {
            best = Some((
                s,
                w.t.abs(),
                if w.p < CHANGE_ALPHA && step > CHANGE_MIN_STEP {
                    1.0
                } else {
                    0.0
                },
            ));
        }
    }
    if let Some((s, _, ok)) = best {
        if ok > 0.0 {
            out.push(s);
            split(series, lo, s, out);
            split(series, s, hi, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn change_point_at_a_step() {
        let mut s: Vec<Vec<f64>> = (0..12)
            .map(|i| vec![10.0 + (i % 3) as f64 * 0.05, 10.1, 9.95])
            .collect();
        s.extend((0..8).map(|i| vec![20.0 + (i % 2) as f64 * 0.1, 20.2, 19.9]));
        assert_eq!(change_points(&s), vec![12]);
        let flat: Vec<Vec<f64>> = (0..20)
            .map(|i| vec![10.0 + (i % 4) as f64 * 0.1, 10.05, 9.9])
            .collect();
        assert!(change_points(&flat).is_empty());
    }
}
