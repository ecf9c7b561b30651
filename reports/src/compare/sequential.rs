//! A comparison judged as one look of a sequential A/B run (`perfdb ab`; docs/STATS.md,
//! "Sequential A/B"), and the power of a row judged once (`compare`'s "underpowered").
//!
//! At a look with K planned looks each row's Welch p becomes p' = min(1, K p) before
//! Benjamini-Hochberg (the union bound over the looks: a null row is flagged at any look
//! with probability <= alpha), regression and improvement follow `compare`'s rule on
//! the adjusted q, and a row that is neither is
//! - `cleared` when the one-sided (1 - alpha/K) Welch bound of its slowdown is below
//!   ln(1 + tau): a regression beyond the threshold is ruled out;
//! - `undecidable` (from [`UNDECIDABLE_FROM`] trials a side) when, at the noise measured,
//!   even `max_trials` a side would leave ln(1 + tau) inside that interval;
//! - `undecided` otherwise: more trials can tell.

use super::types::{Row, State, Verdict};
use crate::fmt::signed_pct;
use crate::stats::power::t_quantile;
use crate::stats::{self, mean, power, variance};
use perfdb_ingest::model::Direction;
use serde::{Deserialize, Serialize};

/// Trials a side at which the looks fall, cut at the run's maximum.
pub const LOOKS: [usize; 7] = [4, 6, 8, 12, 16, 20, 30];
/// Trials a side from which a row may be called undecidable.
pub const UNDECIDABLE_FROM: usize = 8;

/// The looks a run with at most `max_trials` a side plans: [`LOOKS`] below it, and it
/// (the last look).
pub fn planned_looks(max_trials: usize) -> Vec<usize> {
    let mut v: Vec<usize> = LOOKS.iter().copied().filter(|&n| n < max_trials).collect();
    v.push(max_trials);
    v
}

/// Where a comparison stands as one look of a sequential run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Look {
    /// Planned looks (K).
    pub looks: usize,
    pub max_trials: usize,
}

/// ln values, direction-normalised: a larger mean is slower whatever the metric.
fn slowness(values: &[f64], dir: Direction) -> Vec<f64> {
    values
        .iter()
        .map(|v| match dir {
            Direction::Higher => -v.ln(),
            _ => v.ln(),
        })
        .collect()
}

/// The slowdown on the log scale (head over base), its standard error, Welch's df,
/// and the sum of the two sides' variances (se at n a side is sqrt(that / n)).
struct Shift {
    d: f64,
    se: f64,
    df: f64,
    var_sum: f64,
}

fn shift(r: &Row) -> Option<Shift> {
    let (b, h) = (
        slowness(&r.base.finite(), r.direction),
        slowness(&r.head.finite(), r.direction),
    );
    if b.len() < 2 || h.len() < 2 {
        return None;
    }
    let (vb, vh) = (variance(&b), variance(&h));
    let se = (vb / b.len() as f64 + vh / h.len() as f64).sqrt();
    Some(Shift {
        d: mean(&h) - mean(&b),
        se,
        df: stats::welch(&h, &b).df,
        var_sum: vb + vh,
    })
}

/// Trials a side at which an interval of half-width t sqrt(var_sum / n) around `d`
/// leaves out `edge` (None: never, the estimate sits on it).
fn trials_to_separate(s: &Shift, edge: f64, p: f64) -> Option<usize> {
    let gap = (s.d - edge).abs();
    if gap < 1e-12 || s.var_sum <= 0.0 {
        return (s.var_sum <= 0.0).then_some(2);
    }
    let mut n: f64 = 4.0;
    for _ in 0..100 {
        let t = t_quantile(p, (2.0 * n - 2.0).max(1.0));
        let next = (t * t * s.var_sum / (gap * gap)).max(2.0);
        if (next - n).abs() < 1e-6 || next > 1e7 {
            n = next;
            break;
        }
        n = (n + next) / 2.0;
    }
    (n <= 1e7).then(|| n.ceil() as usize)
}

/// The p values a look tests: min(1, K p).
pub(super) fn adjust(ps: &mut [f64], look: &Look) {
    for p in ps {
        *p = (*p * look.looks as f64).min(1.0);
    }
}

/// A tested non-control row's state at this look, once `decide` has judged it on the
/// adjusted q; a row neither regressed nor improved is cleared, undecidable or
/// undecided, and the last two are not compared (`Insufficient`, with the trials a
/// side they need).
pub(super) fn judge(r: &mut Row, look: &Look, alpha: f64) {
    if r.control || r.p.is_none() {
        return;
    }
    match r.verdict {
        Verdict::Regression => r.state = Some(State::Regression),
        Verdict::Improvement => r.state = Some(State::Improvement),
        Verdict::NoSignificantChange | Verdict::WithinThreshold => {
            let Some(s) = shift(r) else { return };
            let edge = (1.0 + r.threshold).ln();
            let one_sided = 1.0 - alpha / look.looks as f64;
            let bound = s.d + t_quantile(one_sided, s.df) * s.se;
            let tau = format!("{:.0}%", r.threshold * 100.0);
            if bound < edge {
                r.state = Some(State::Cleared);
                r.reason = format!(
                    "cleared: a slowdown beyond {tau} is ruled out (at most {} at {:.1}% confidence; {})",
                    signed_pct(bound.exp() - 1.0),
                    one_sided * 100.0,
                    r.reason
                );
                return;
            }
            let n = r.base.finite().len().min(r.head.finite().len());
            let needed = trials_to_separate(&s, edge, 1.0 - alpha / (2.0 * look.looks as f64));
            r.trials_needed = needed;
            let needs = match needed {
                Some(k) => format!("needs ~{k} a side"),
                None => "no number of trials can tell at this estimate".to_string(),
            };
            let undecidable = n >= UNDECIDABLE_FROM && needed.is_none_or(|k| k > look.max_trials);
            r.state = Some(if undecidable {
                State::Undecidable
            } else {
                State::Undecided
            });
            r.reason = format!(
                "{} at n = {n}: a slowdown beyond {tau} is neither ruled out nor shown ({} now, at most {} at {:.1}% confidence; {needs}; --max-trials {})",
                if undecidable { "undecidable" } else { "undecided" },
                signed_pct(r.change.unwrap_or(s.d.exp() - 1.0)),
                signed_pct(bound.exp() - 1.0),
                one_sided * 100.0,
                look.max_trials
            );
            r.verdict = Verdict::Insufficient;
        }
        _ => {}
    }
}

/// A "no significant change" row of a one-shot comparison whose trials could not have
/// seen its threshold (the smallest change they detect with power 0.8 is beyond it) is
/// underpowered: its reason says so, with the trials a side that would.
pub(super) fn note_power(r: &mut Row, alpha: f64) {
    if r.verdict != Verdict::NoSignificantChange || r.state.is_some() {
        return;
    }
    let (b, h) = (r.base.finite(), r.head.finite());
    let n = b.len().min(h.len());
    if n < 2 {
        return;
    }
    // The noise of each side about its own level (ln values, pooled).
    let Some(noise) = power::noise(&[b, h]) else {
        return;
    };
    let mde = power::min_detectable(noise.sigma, n, alpha, power::POWER);
    if !mde.is_finite() || mde <= r.threshold {
        return;
    }
    // The smallest n a side whose detectable change is within the threshold, from the
    // estimate of the t formula (rounded, it can sit a trial either side).
    let sees = |k: usize| power::min_detectable(noise.sigma, k, alpha, power::POWER) <= r.threshold;
    let needed = power::trials_needed(noise.sigma, r.threshold, alpha, power::POWER).map(|est| {
        let mut k = est.max(n + 1);
        while !sees(k) && k < 10 * est + 10 {
            k += 1;
        }
        while k > n + 1 && sees(k - 1) {
            k -= 1;
        }
        k
    });
    r.trials_needed = needed;
    r.reason = format!(
        "underpowered: cannot see {:.0}% at n = {n} (sees {} with power 0.8; needs ~{} a side); {}",
        r.threshold * 100.0,
        signed_pct(mde),
        needed.map_or_else(|| "too many".to_string(), |k| k.to_string()),
        r.reason
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::types::SideStats;

    fn side(v: &[f64]) -> SideStats {
        SideStats {
            n: v.len(),
            values: v.iter().map(|x| Some(*x)).collect(),
            best: None,
            median: Some(stats::median(v)),
            median_ci: (None, None),
        }
    }

    fn row(b: &[f64], h: &[f64]) -> Row {
        Row {
            change: Some(stats::median(h) / stats::median(b) - 1.0),
            p: Some(stats::welch_log(h, b).p),
            verdict: Verdict::NoSignificantChange,
            ..crate::compare::types::test_row(side(b), side(h))
        }
    }

    #[test]
    fn looks_are_cut_at_the_maximum() {
        assert_eq!(planned_looks(20), vec![4, 6, 8, 12, 16, 20]);
        assert_eq!(planned_looks(30), vec![4, 6, 8, 12, 16, 20, 30]);
        assert_eq!(planned_looks(10), vec![4, 6, 8, 10]);
    }

    #[test]
    fn two_percent_is_cleared_at_the_first_look() {
        // docs/STATS.md reference: d 0.0197792, se 0.00598149, df 5.99765, p 0.0162802,
        // p' 0.0976810, bound 0.0394458 < ln(1.05) with t = 3.28791.
        let (b, h) = ([10.0, 10.1, 9.9, 10.05], [10.2, 10.3, 10.1, 10.25]);
        let mut r = row(&b, &h);
        let s = shift(&r).unwrap();
        assert!((s.d - 0.0197792).abs() < 1e-6);
        assert!((s.se - 0.00598149).abs() < 1e-7);
        assert!((s.df - 5.99765).abs() < 1e-4);
        let p = r.p.unwrap();
        assert!((p - 0.0162802).abs() < 1e-6, "{p}");
        let look = Look {
            looks: 6,
            max_trials: 20,
        };
        let mut ps = [p];
        adjust(&mut ps, &look);
        assert!((ps[0] - 0.0976810).abs() < 1e-6);
        assert!((t_quantile(1.0 - 0.05 / 6.0, s.df) - 3.28791).abs() < 1e-4);
        r.q = Some(ps[0]);
        judge(&mut r, &look, 0.05);
        assert_eq!(r.state, Some(State::Cleared), "{}", r.reason);
        assert!(r.reason.starts_with("cleared"), "{}", r.reason);
    }

    #[test]
    fn undecided_and_undecidable_rows_say_what_they_need() {
        let look = Look {
            looks: 6,
            max_trials: 20,
        };
        // +4% with 3% noise at n = 4: more trials can tell.
        let b = [10.0, 10.3, 9.7, 10.1];
        let h = [10.4, 10.7, 10.1, 10.5];
        let mut r = row(&b, &h);
        judge(&mut r, &look, 0.05);
        assert_eq!(r.state, Some(State::Undecided), "{}", r.reason);
        assert_eq!(r.verdict, Verdict::Insufficient);
        assert!(r.trials_needed.is_some());
        // The same at n = 8 with the change right at the threshold: 20 cannot tell.
        let b8 = [10.0, 10.3, 9.7, 10.1, 10.0, 10.3, 9.7, 10.1];
        let h8: Vec<f64> = b8.iter().map(|v| v * 1.05).collect();
        let mut r = row(&b8, &h8);
        judge(&mut r, &look, 0.05);
        assert_eq!(r.state, Some(State::Undecidable), "{}", r.reason);
    }

    #[test]
    fn three_noisy_trials_cannot_see_five_percent() {
        let mut r = row(&[10.0, 10.6, 9.5], &[10.2, 9.7, 10.5]);
        note_power(&mut r, 0.05);
        assert!(
            r.reason.starts_with("underpowered: cannot see 5% at n = 3"),
            "{}",
            r.reason
        );
        assert!(r.trials_needed.unwrap() > 3);
        // Tight trials see it: the reason is left alone.
        let mut r = row(&[10.0, 10.01, 9.99], &[10.0, 10.02, 9.98]);
        note_power(&mut r, 0.05);
        assert!(r.reason.is_empty(), "{}", r.reason);
    }

    /// One simulated A/A run of the whole rule: trials two a side per block, a look at
    /// each planned point, stop when decided. Whether it flagged the row.
    fn aa_run(seed: u64, sigma: f64, threshold: f64, max_trials: usize) -> bool {
        let mut rng = stats::SplitMix64::new(seed);
        let looks = planned_looks(max_trials);
        let look = Look {
            looks: looks.len(),
            max_trials,
        };
        let trial = |rng: &mut stats::SplitMix64| {
            // Lognormal noise, and one trial in 50 slowed 10-40% (a one-sided outlier:
            // a clock dip, a neighbour's job).
            let slow = if rng.below(50) == 0 {
                1.1 + 0.3 * rng.uniform()
            } else {
                1.0
            };
            20.0 * (sigma * rng.normal()).exp() * slow
        };
        let (mut b, mut h) = (Vec::new(), Vec::new());
        for &n in &looks {
            while b.len() < n {
                b.push(trial(&mut rng));
                h.push(trial(&mut rng));
            }
            let mut r = row(&b, &h);
            r.threshold = threshold;
            let mut ps = [r.p.unwrap()];
            adjust(&mut ps, &look);
            r.q = Some(ps[0]);
            super::super::decide::decide(&mut r, 0.05);
            judge(&mut r, &look, 0.05);
            match r.state {
                Some(State::Regression | State::Improvement) => return true,
                Some(State::Undecided) => continue,
                _ => return false,
            }
        }
        false
    }

    #[test]
    fn a_a_runs_flag_at_most_alpha_of_the_time() {
        // Threshold 0: any significant difference flags, the hardest case for the rule.
        for (sigma, runs) in [(0.01, 2000), (0.05, 1000)] {
            let flagged = (0..runs)
                .filter(|&s| aa_run(s as u64 + 1, sigma, 0.0, 20))
                .count();
            let rate = flagged as f64 / runs as f64;
            assert!(
                rate <= 0.05,
                "sigma {sigma}: {flagged} of {runs} A/A runs flagged ({rate})"
            );
        }
        // At the usual 5% threshold, real noise flags (next to) nothing.
        let flagged = (0..1000)
            .filter(|&s| aa_run(s as u64 + 7, 0.02, 0.05, 20))
            .count();
        assert!(flagged <= 5, "{flagged} of 1000");
    }
}
