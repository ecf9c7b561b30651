//! Change points of a series over commits: where a new level starts. One detector serves
//! the history chart and `perfdb detect`.
//!
//! Method (docs/STATS.md, "History"), in the manner of Apache Otava (`analysis.py`:
//! split, then merge), on the natural log of every trial:
//! - Points are commits in commit order, each carrying its trials. A split falls only
//!   between commits, and every segment keeps at least [`MIN_SEGMENT`] commits.
//! - Split: in a segment, take the boundary where the E-divisive divergence (Matteson &
//!   James' q-hat, alpha = 1, on the log of each commit's median) is largest; keep it as a
//!   candidate when Welch's t-test on the log trials left vs right has p below
//!   [`SPLIT_FACTOR`] x [`P_STRICT`] and the step of the medians exceeds [`MIN_STEP`];
//!   then split both sides the same way. Locating by the divergence of medians rather
//!   than the smallest p keeps one odd trial on the first new commit from placing the
//!   point a commit late.
//! - Merge: test every candidate against its neighbours (segment before vs segment
//!   after); while some candidate has p >= [`P_STRICT`] or a step <= [`MIN_STEP`], drop
//!   the weakest (largest p) and test again. The best of many boundaries is a minimum of
//!   many p-values; the merge is what keeps long flat series quiet.

use super::{median, welch};

/// Significance a change point must keep after the merge (Welch on log trials).
pub const P_STRICT: f64 = 1e-3;
/// A split is a candidate at a p this many times weaker (Otava's weak threshold).
pub const SPLIT_FACTOR: f64 = 10.0;
/// Smallest relative step of the medians a change point must have.
pub const MIN_STEP: f64 = 0.05;
/// Fewest commits on each side of a change point.
pub const MIN_SEGMENT: usize = 2;

/// The detector's thresholds (the defaults above, or `perfdb.toml`'s `[detect]`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    pub p: f64,
    pub min_step: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            p: P_STRICT,
            min_step: MIN_STEP,
        }
    }
}

/// A change point: the index of the first commit of the new level, the p of the test of
/// the segment before against the segment after, and after / before of their medians.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePoint {
    pub index: usize,
    pub p: f64,
    pub ratio: f64,
}

/// The indices where a new level starts (see the module docs).
pub fn change_points(series: &[Vec<f64>]) -> Vec<usize> {
    detect(series).iter().map(|c| c.index).collect()
}

/// Change points with their evidence (see the module docs). Values that are not
/// positive and finite are left out; a commit with none left cannot start a level.
pub fn detect(series: &[Vec<f64>]) -> Vec<ChangePoint> {
    detect_with(series, &Params::default())
}

/// [`detect`] with other thresholds.
pub fn detect_with(series: &[Vec<f64>], params: &Params) -> Vec<ChangePoint> {
    let logs: Vec<Vec<f64>> = series
        .iter()
        .map(|t| {
            t.iter()
                .filter(|v| v.is_finite() && **v > 0.0)
                .map(|v| v.ln())
                .collect()
        })
        .collect();
    let meds = medians(&logs);
    let mut candidates = Vec::new();
    split(&logs, &meds, 0, logs.len(), params, &mut candidates);
    candidates.sort_unstable();
    merge(&logs, candidates, params)
}

/// Each commit's median (NaN for a commit without values).
fn medians(logs: &[Vec<f64>]) -> Vec<f64> {
    logs.iter()
        .map(|t| if t.is_empty() { f64::NAN } else { median(t) })
        .collect()
}

/// Welch's p and the step (after / before of the medians) of `logs[lo..s]` vs `logs[s..hi]`.
fn test(logs: &[Vec<f64>], lo: usize, s: usize, hi: usize) -> Option<(f64, f64)> {
    let left: Vec<f64> = logs[lo..s].iter().flatten().copied().collect();
    let right: Vec<f64> = logs[s..hi].iter().flatten().copied().collect();
    if left.len() < 2 || right.len() < 2 {
        return None;
    }
    let p = welch(&right, &left).p;
    Some((p, (median(&right) - median(&left)).exp()))
}

/// Matteson & James' q-hat (alpha = 1) between two samples, as defined: what
/// [`best_split`] computes incrementally (a test holds the two together).
#[cfg(test)]
fn q_hat(x: &[f64], y: &[f64]) -> f64 {
    let (m, n) = (x.len() as f64, y.len() as f64);
    let between: f64 = x
        .iter()
        .flat_map(|a| y.iter().map(move |b| (a - b).abs()))
        .sum();
    let within = |v: &[f64]| -> f64 {
        let k = v.len() as f64;
        if v.len() < 2 {
            return 0.0;
        }
        let mut s = 0.0;
        for i in 0..v.len() {
            for j in i + 1..v.len() {
                s += (v[i] - v[j]).abs();
            }
        }
        s / (k * (k - 1.0) / 2.0)
    };
    let e = 2.0 * between / (m * n) - within(x) - within(y);
    m * n / (m + n) * e
}

/// The boundary `s` of `lo..hi` (each side at least [`MIN_SEGMENT`] commits, `s` a
/// commit with trials) where [`q_hat`] of the medians before and after is largest,
/// with that q-hat. Each side's sums of pairwise distances are carried from one `s` to
/// the next (a commit moves from the right side to the left), a distance sum of one
/// value to a side read from Fenwick trees over the values' ranks: O(n log n) a
/// segment where `q_hat` at every boundary is O(n^3) (minutes a series at a year of
/// commits).
fn best_split(logs: &[Vec<f64>], meds: &[f64], lo: usize, hi: usize) -> Option<(usize, f64)> {
    // The segment's medians that exist, in commit order, and each one's rank.
    let points: Vec<(usize, f64)> = (lo..hi)
        .filter(|i| meds[*i].is_finite())
        .map(|i| (i, meds[i]))
        .collect();
    let n = points.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|a, b| points[*a].1.total_cmp(&points[*b].1));
    let mut rank = vec![0; n];
    for (r, &i) in order.iter().enumerate() {
        rank[i] = r;
    }
    let sorted: Vec<f64> = order.iter().map(|&i| points[i].1).collect();
    let mut prefix = vec![0.0; n + 1];
    for (i, v) in sorted.iter().enumerate() {
        prefix[i + 1] = prefix[i] + v;
    }
    // Sum of |v - x| over every point of the segment, v being the point of rank r.
    let to_all = |r: usize, v: f64| -> f64 {
        (r as f64 * v - prefix[r]) + (prefix[n] - prefix[r + 1] - (n - r - 1) as f64 * v)
    };
    let total: f64 = sorted
        .iter()
        .enumerate()
        .map(|(k, v)| v * (2.0 * k as f64 - (n as f64 - 1.0)))
        .sum();
    let mut left = Fenwick::new(n);
    let (mut within_left, mut within_right, mut between) = (0.0, total, 0.0);
    let mut moved = 0;
    let mut best: Option<(usize, f64)> = None;
    let boundaries = logs.iter().enumerate().take(hi - MIN_SEGMENT + 1);
    for (s, trials) in boundaries.skip(lo + MIN_SEGMENT) {
        while moved < n && points[moved].0 < s {
            let (r, v) = (rank[moved], points[moved].1);
            let d_left = left.distance(r, v);
            let d_right = to_all(r, v) - d_left;
            within_left += d_left;
            within_right -= d_right;
            between += d_right - d_left;
            left.add(r, v);
            moved += 1;
        }
        if trials.is_empty() {
            continue;
        }
        let (m, k) = (moved as f64, (n - moved) as f64);
        let within = |sum: f64, c: f64| {
            if c < 2.0 {
                0.0
            } else {
                sum / (c * (c - 1.0) / 2.0)
            }
        };
        let e = 2.0 * between / (m * k) - within(within_left, m) - within(within_right, k);
        let q = m * k / (m + k) * e;
        if q.is_finite() && best.is_none_or(|(_, b)| q >= b) {
            best = Some((s, q));
        }
    }
    best
}

/// Counts and sums of values by rank: the distance sum of one value to those added.
struct Fenwick {
    count: Vec<f64>,
    sum: Vec<f64>,
    total: (f64, f64),
}

impl Fenwick {
    fn new(n: usize) -> Fenwick {
        Fenwick {
            count: vec![0.0; n + 1],
            sum: vec![0.0; n + 1],
            total: (0.0, 0.0),
        }
    }

    fn add(&mut self, rank: usize, v: f64) {
        let mut i = rank + 1;
        while i < self.count.len() {
            self.count[i] += 1.0;
            self.sum[i] += v;
            i += i & i.wrapping_neg();
        }
        self.total.0 += 1.0;
        self.total.1 += v;
    }

    /// Count and sum of the values added with rank below `rank`.
    fn below(&self, rank: usize) -> (f64, f64) {
        let (mut c, mut s) = (0.0, 0.0);
        let mut i = rank;
        while i > 0 {
            c += self.count[i];
            s += self.sum[i];
            i -= i & i.wrapping_neg();
        }
        (c, s)
    }

    /// Sum of |v - x| over the values x added, v being of rank `rank` (not added).
    fn distance(&self, rank: usize, v: f64) -> f64 {
        let (c, s) = self.below(rank);
        let (above_c, above_s) = (self.total.0 - c, self.total.1 - s);
        (c * v - s) + (above_s - above_c * v)
    }
}

fn split(
    logs: &[Vec<f64>],
    meds: &[f64],
    lo: usize,
    hi: usize,
    params: &Params,
    out: &mut Vec<usize>,
) {
    if hi - lo < 2 * MIN_SEGMENT {
        return;
    }
    let best = best_split(logs, meds, lo, hi);
    let Some((s, _)) = best else {
        return;
    };
    let Some((p, ratio)) = test(logs, lo, s, hi) else {
        return;
    };
    if p < SPLIT_FACTOR * params.p && (ratio - 1.0).abs() > params.min_step {
        out.push(s);
        split(logs, meds, lo, s, params, out);
        split(logs, meds, s, hi, params, out);
    }
}

fn merge(logs: &[Vec<f64>], mut cands: Vec<usize>, params: &Params) -> Vec<ChangePoint> {
    loop {
        let tested: Vec<Option<(f64, f64)>> = (0..cands.len())
            .map(|i| {
                let lo = if i == 0 { 0 } else { cands[i - 1] };
                let hi = cands.get(i + 1).copied().unwrap_or(logs.len());
                test(logs, lo, cands[i], hi)
            })
            .collect();
        let weakest = tested
            .iter()
            .enumerate()
            .filter(|(_, t)| match t {
                Some((p, ratio)) => *p >= params.p || (ratio - 1.0).abs() <= params.min_step,
                None => true,
            })
            .max_by(|a, b| {
                let p = |t: &Option<(f64, f64)>| t.map(|(p, _)| p).unwrap_or(f64::INFINITY);
                p(a.1).total_cmp(&p(b.1))
            })
            .map(|(i, _)| i);
        match weakest {
            Some(i) => {
                cands.remove(i);
            }
            None => {
                return cands
                    .iter()
                    .zip(tested)
                    .map(|(index, t)| {
                        let (p, ratio) = t.expect("kept candidates were tested");
                        ChangePoint {
                            index: *index,
                            p,
                            ratio,
                        }
                    })
                    .collect()
            }
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

    #[test]
    fn one_odd_trial_does_not_move_the_point() {
        // The first commit of the new level has one trial still at the old level's
        // neighbourhood (real data: 32.8, 32.7, 51.8 us): the point stays at that commit.
        let mut s: Vec<Vec<f64>> = (0..12).map(|_| vec![32.6, 32.8, 32.7]).collect();
        s.push(vec![97.6, 97.4, 51.8]);
        s.extend((0..7).map(|_| vec![97.6, 97.4, 98.0]));
        assert_eq!(change_points(&s), vec![12]);
    }

    #[test]
    fn a_fixed_regression_gives_both_points() {
        let mut s: Vec<Vec<f64>> = (0..6).map(|_| vec![10.0, 10.1, 9.9]).collect();
        s.extend((0..7).map(|_| vec![15.0, 15.2, 14.9]));
        s.extend((0..6).map(|_| vec![10.0, 10.05, 9.95]));
        let cps = detect(&s);
        assert_eq!(cps.iter().map(|c| c.index).collect::<Vec<_>>(), vec![6, 13]);
        assert!(cps[0].ratio > 1.4 && cps[1].ratio < 0.7);
        assert!(cps.iter().all(|c| c.p < P_STRICT));
    }

    #[test]
    fn shifting_every_value_keeps_the_points() {
        let mut s: Vec<Vec<f64>> = (0..8)
            .map(|i| vec![5.0 + i as f64 * 0.01, 5.1, 4.9])
            .collect();
        s.extend((0..8).map(|_| vec![6.0, 6.1, 5.95]));
        let scaled: Vec<Vec<f64>> = s
            .iter()
            .map(|t| t.iter().map(|v| v * 1000.0).collect())
            .collect();
        assert_eq!(change_points(&s), change_points(&scaled));
        assert_eq!(change_points(&s), vec![8]);
    }

    #[test]
    fn the_incremental_split_is_the_argmax_of_q_hat() {
        let mut rng = crate::stats::SplitMix64::new(11);
        for len in [4, 5, 9, 30, 80] {
            for _ in 0..20 {
                let logs: Vec<Vec<f64>> = (0..len)
                    .map(|i| {
                        // Some commits without trials, some steps, some ties.
                        if rng.below(9) == 0 {
                            return Vec::new();
                        }
                        let level = if i > len / 2 { 0.3 } else { 0.0 };
                        (0..3)
                            .map(|_| level + (rng.below(5) as f64) * 0.01)
                            .collect()
                    })
                    .collect();
                let meds = medians(&logs);
                let present = |a: usize, b: usize| -> Vec<f64> {
                    meds[a..b]
                        .iter()
                        .copied()
                        .filter(|m| m.is_finite())
                        .collect()
                };
                let (lo, hi) = (0, len);
                let brute = (lo + MIN_SEGMENT..=hi - MIN_SEGMENT)
                    .filter(|s| !logs[*s].is_empty())
                    .map(|s| (s, q_hat(&present(lo, s), &present(s, hi))))
                    .filter(|(_, q)| q.is_finite())
                    .fold(None::<(usize, f64)>, |best, (s, q)| match best {
                        Some((_, b)) if q < b - 1e-9 => best,
                        _ => Some((s, q)),
                    });
                let fast = best_split(&logs, &meds, lo, hi);
                match (brute, fast) {
                    (None, None) => {}
                    (Some((_, qb)), Some((s, qf))) => {
                        assert!((qb - qf).abs() < 1e-9, "{len}: {qb} vs {qf}");
                        // The point found has the largest q-hat (ties: within rounding).
                        let at = q_hat(&present(lo, s), &present(s, hi));
                        assert!((at - qb).abs() < 1e-9, "{len}: at {s} {at} vs {qb}");
                    }
                    other => panic!("{len}: {other:?}"),
                }
            }
        }
    }
}
