//! Step 3, before a row is tested: trials run on several GPUs (`perfdb ab --gpus`), each
//! GPU a block of whole ABBA blocks of both arms, compared with each GPU's own offset
//! taken out (docs/STATS.md, "GPUs as blocks").
//!
//! Model, on the log scale: `ln y = mu + gpu_g + delta [head] + e`. Each GPU's offset is
//! the mean of its two arms' means, `o_g = (A_g + B_g) / 2`; every trial is moved by
//! `o - o_g` (`o` the trials' mean offset, so the values keep their scale). Head's mean
//! minus base's is then a weighted mean of the per-GPU differences `B_g - A_g`: no
//! GPU's offset is left in it, whichever GPU ran more blocks. The spread about each
//! arm's mean has lost `G - 1` degrees of freedom to the offsets; the residuals are
//! widened by `sqrt((n - 2) / (n - G - 1))` (n trials in all), which makes the two-sample
//! t statistic the exact one of the model, and [`Stratified::lost_df`] takes those
//! degrees off the test's. A GPU that ran only one arm says nothing of the change: its
//! trials are left out. With one GPU nothing is moved.

use super::load::Value;
pub use super::options::Strata;
use super::types::GpuOffset;
use std::collections::{BTreeMap, HashMap};

/// What the adjustment did to a row's trials.
#[derive(Debug, Clone, PartialEq)]
pub struct Stratified {
    pub offsets: Vec<GpuOffset>,
    /// Degrees of freedom the offsets used (GPUs - 1): taken off the test's.
    pub lost_df: f64,
    /// Trials left out: their GPU ran only one arm of this row.
    pub left_out: usize,
}

/// Moves each trial by its GPU's offset (module doc) when the trials ran on more than
/// one GPU; `None` (nothing moved) otherwise, or when a value is missing or not
/// positive (the row is invalid as it stands).
pub(super) fn adjust(base: &mut Vec<Value>, head: &mut Vec<Value>) -> Option<Stratified> {
    let all = base.iter().chain(head.iter());
    if all
        .clone()
        .any(|v| v.gpu.is_none() || !v.value.is_some_and(|x| x > 0.0 && x.is_finite()))
    {
        return None;
    }
    // Per GPU: each arm's sum of logs and count.
    let mut cells: BTreeMap<u32, [(f64, usize); 2]> = BTreeMap::new();
    for (arm, side) in [&*base, &*head].into_iter().enumerate() {
        for v in side {
            let c = &mut cells.entry(v.gpu.unwrap_or(0)).or_default()[arm];
            c.0 += v.value.unwrap_or(1.0).ln();
            c.1 += 1;
        }
    }
    if cells.len() < 2 {
        return None;
    }
    let one_arm: Vec<u32> = cells
        .iter()
        .filter(|(_, c)| c[0].1 == 0 || c[1].1 == 0)
        .map(|(g, _)| *g)
        .collect();
    let left_out = base
        .iter()
        .chain(head.iter())
        .filter(|v| v.gpu.is_some_and(|g| one_arm.contains(&g)))
        .count();
    let keep = |v: &Value| !v.gpu.is_some_and(|g| one_arm.contains(&g));
    base.retain(keep);
    head.retain(keep);
    cells.retain(|g, _| !one_arm.contains(g));
    let offset: HashMap<u32, f64> = cells
        .iter()
        .map(|(g, c)| (*g, (c[0].0 / c[0].1 as f64 + c[1].0 / c[1].1 as f64) / 2.0))
        .collect();
    let gpus = cells.len();
    let n = base.len() + head.len();
    if gpus < 2 || n < gpus + 2 {
        // One GPU left: nothing to take out (or too few trials to take it out).
        return (gpus >= 2 || left_out > 0).then(|| Stratified {
            offsets: Vec::new(),
            lost_df: 0.0,
            left_out,
        });
    }
    let mean_offset = base
        .iter()
        .chain(head.iter())
        .map(|v| offset[&v.gpu.unwrap_or(0)])
        .sum::<f64>()
        / n as f64;
    let widen = ((n as f64 - 2.0) / (n as f64 - gpus as f64 - 1.0)).sqrt();
    for side in [&mut *base, &mut *head] {
        let moved: Vec<f64> = side
            .iter()
            .map(|v| v.value.unwrap_or(1.0).ln() - offset[&v.gpu.unwrap_or(0)] + mean_offset)
            .collect();
        let m = moved.iter().sum::<f64>() / moved.len() as f64;
        for (v, z) in side.iter_mut().zip(moved) {
            v.value = Some((m + widen * (z - m)).exp());
        }
    }
    Some(Stratified {
        offsets: cells
            .iter()
            .map(|(g, c)| GpuOffset {
                gpu: *g,
                offset: (offset[g] - mean_offset).exp() - 1.0,
                trials: c[0].1.min(c[1].1),
            })
            .collect(),
        lost_df: (gpus - 1) as f64,
        left_out,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{self, SplitMix64};
    use perfdb_ingest::model::Numerics;

    fn v(x: f64, gpu: u32) -> Value {
        Value {
            value: Some(x),
            numerics: Numerics::NotChecked,
            gpu: Some(gpu),
        }
    }

    /// `per_gpu` trials of each arm on each GPU; GPU g `slow[g]` slower; head `change`.
    fn trials(
        slow: &[f64],
        per_gpu: usize,
        change: f64,
        sd: f64,
        rng: &mut SplitMix64,
    ) -> (Vec<Value>, Vec<Value>) {
        let (mut b, mut h) = (Vec::new(), Vec::new());
        for (g, s) in slow.iter().enumerate() {
            for _ in 0..per_gpu {
                b.push(v(100.0 * (1.0 + s) * (sd * rng.normal()).exp(), g as u32));
                h.push(v(
                    100.0 * (1.0 + s) * (1.0 + change) * (sd * rng.normal()).exp(),
                    g as u32,
                ));
            }
        }
        (b, h)
    }

    fn logs(v: &[Value]) -> Vec<f64> {
        v.iter().map(|v| v.value.unwrap().ln()).collect()
    }

    #[test]
    fn one_gpu_moves_nothing() {
        let mut rng = SplitMix64::new(1);
        let (mut b, mut h) = trials(&[0.0], 6, 0.02, 0.01, &mut rng);
        let before = (logs(&b), logs(&h));
        assert_eq!(adjust(&mut b, &mut h), None);
        assert_eq!((logs(&b), logs(&h)), before);
    }

    #[test]
    fn a_slow_gpu_is_taken_out_and_named() {
        let mut rng = SplitMix64::new(2);
        let (mut b, mut h) = trials(&[0.0, 0.03, 0.0, 0.0], 4, 0.0, 0.002, &mut rng);
        let d_before = stats::mean(&logs(&h)) - stats::mean(&logs(&b));
        let s = adjust(&mut b, &mut h).unwrap();
        assert_eq!(s.lost_df, 3.0);
        assert_eq!(s.left_out, 0);
        let slow = s.offsets.iter().find(|o| o.gpu == 1).unwrap();
        assert!((slow.offset - 0.0225).abs() < 0.002, "{:?}", s.offsets);
        assert!(s
            .offsets
            .iter()
            .filter(|o| o.gpu != 1)
            .all(|o| o.offset < 0.0));
        // The change is the same number; the spread lost the GPUs' differences.
        let d_after = stats::mean(&logs(&h)) - stats::mean(&logs(&b));
        assert!((d_after - d_before).abs() < 1e-12);
        assert!(stats::variance(&logs(&b)).sqrt() < 0.004);
    }

    #[test]
    fn a_gpu_that_ran_one_arm_is_left_out() {
        let mut rng = SplitMix64::new(3);
        let (mut b, mut h) = trials(&[0.0, 0.0], 4, 0.0, 0.01, &mut rng);
        h.push(v(200.0, 7));
        let s = adjust(&mut b, &mut h).unwrap();
        assert_eq!((s.left_out, h.len(), s.offsets.len()), (1, 8, 2));
    }

    /// The stratified test holds its level: A/A over 4 GPUs up to 5% apart, Welch's test
    /// with the lost degrees taken off, flags about alpha of the time (not more); left as
    /// they were, the same trials' test has lost its power to GPUs' spread.
    #[test]
    fn the_stratified_test_holds_its_level_and_keeps_its_power() {
        let mut rng = SplitMix64::new(4);
        let (mut flagged, mut found, mut found_raw) = (0, 0, 0);
        let runs = 4000;
        for _ in 0..runs {
            let (mut b, mut h) = trials(&[0.0, 0.05, -0.02, 0.01], 2, 0.0, 0.01, &mut rng);
            let s = adjust(&mut b, &mut h).unwrap();
            let t = stats::welch(&logs(&h), &logs(&b)).with_lost_df(s.lost_df);
            flagged += usize::from(t.p < 0.05);
            let (b, h) = trials(&[0.0, 0.05, -0.02, 0.01], 2, 0.015, 0.01, &mut rng);
            found_raw += usize::from(stats::welch(&logs(&h), &logs(&b)).p < 0.05);
            let (mut b, mut h) = (b, h);
            let s = adjust(&mut b, &mut h).unwrap();
            let t = stats::welch(&logs(&h), &logs(&b)).with_lost_df(s.lost_df);
            found += usize::from(t.p < 0.05);
        }
        let rate = flagged as f64 / runs as f64;
        eprintln!("A/A flagged {rate}; a 1.5% change found {found} (moved) and {found_raw} (as they were) of {runs}");
        assert!((0.04..0.06).contains(&rate), "A/A flagged {rate}");
        assert!(found > 2 * found_raw, "{found} vs {found_raw} of {runs}");
    }
}
