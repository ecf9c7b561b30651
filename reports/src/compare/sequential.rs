//! A comparison judged as one look of a sequential A/B run (`perfdb ab`; docs/STATS.md,
//! "Sequential A/B"), and the power of a row judged once (`compare`'s "underpowered").
//!
//! At a look each row's p (and its p against the margin) is adjusted for the run's
//! planned looks before Benjamini-Hochberg: by the law of a null row's smallest p over
//! those looks ([`Rule::Calibrated`], [`LookLevels`]), or by their count, p' = min(1, K p)
//! ([`Rule::UnionBound`], the reference rule). Either way a null row is flagged at any
//! look with probability <= alpha. Regression and improvement follow `compare`'s rule on
//! the adjusted q's, and a row that is neither is
//! - `cleared` when the one-sided bound of its slowdown, at the per-look level the rule
//!   allows, is below ln(1 + tau): a regression beyond the threshold is ruled out;
//! - `undecidable` (from the rule's first trials a side for it) when, at the noise
//!   measured, even `max_trials` a side would leave ln(1 + tau) inside that interval;
//! - `undecided` otherwise: more trials can tell.

use super::margin::{shift, trials_to_separate};
use super::types::{Row, State, Verdict};
use super::{Options, Test};
use crate::fmt::signed_pct;
use crate::stats::looks::LookLevels;
use crate::stats::power;
use crate::stats::power::t_quantile;
use serde::{Deserialize, Serialize};

/// Trials a side at which the looks fall, cut at the run's maximum (both rules: a look
/// after the first block, at 2 a side, decided nothing earlier on any replay or
/// simulation: docs/STATS.md).
pub const LOOKS: [usize; 7] = [4, 6, 8, 12, 16, 20, 30];

/// How the looks are paid for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// Each look's p adjusted by the simulated law of the smallest p over the looks; a
    /// regression shown beyond the threshold by the test against the margin.
    #[default]
    Calibrated,
    /// docs/STATS.md's reference rule: p' = K p, a regression's size from its point
    /// estimate, undecidable from 8 a side. Kept to replay against.
    UnionBound,
}

impl Rule {
    /// The test each look makes: the adaptive one (Yuen's on trimmed means when a few
    /// trials lie far out, so one slow trial does not hold a row open; Welch's on clean
    /// or two-speed trials), or the reference's Welch.
    pub fn test(self) -> Test {
        match self {
            Rule::Calibrated => Test::Adaptive,
            Rule::UnionBound => Test::Welch,
        }
    }

    /// Trials a side from which a row may be called undecidable.
    pub fn undecidable_from(self) -> usize {
        match self {
            Rule::Calibrated => 6,
            Rule::UnionBound => 8,
        }
    }
}

/// The looks a run with at most `max_trials` a side plans: [`LOOKS`] below it, and it
/// (the last look).
pub fn planned_looks(max_trials: usize) -> Vec<usize> {
    let mut v: Vec<usize> = LOOKS.iter().copied().filter(|&n| n < max_trials).collect();
    v.push(max_trials);
    v
}

/// `opt` as the comparison each look of a run makes: the rule, its looks, and the test
/// its levels are simulated for (`perfdb ab`, its replays and its tests).
pub fn look_options(opt: Options, max_trials: usize, rule: Rule) -> Options {
    Options {
        sequential: Some(Look::new(max_trials, rule)),
        test: rule.test(),
        ..opt
    }
}

/// Where a comparison stands as one look of a sequential run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Look {
    /// Planned looks (K).
    pub looks: usize,
    pub max_trials: usize,
    #[serde(default)]
    pub rule: Rule,
}

impl Look {
    pub fn new(max_trials: usize, rule: Rule) -> Look {
        Look {
            looks: planned_looks(max_trials).len(),
            max_trials,
            rule,
        }
    }

    /// The simulated levels of this look's schedule and test (None: the union bound,
    /// the reference rule's, and the only one for a rank test).
    fn levels(&self, test: Test) -> Option<std::sync::Arc<LookLevels>> {
        let looks = planned_looks(self.max_trials);
        let location = test.location()?;
        (self.rule == Rule::Calibrated && looks[0] >= 2).then(|| LookLevels::of(&looks, location))
    }

    /// The one-sided level each look's bound is taken at.
    pub fn one_sided_level(&self, alpha: f64, test: Test) -> f64 {
        match self.levels(test) {
            Some(l) => l.per_look(alpha, true),
            None => alpha / self.looks as f64,
        }
    }

    fn two_sided_level(&self, alpha: f64, test: Test) -> f64 {
        match self.levels(test) {
            Some(l) => l.per_look(alpha, false),
            None => alpha / self.looks as f64,
        }
    }

    /// Is a regression's size shown by the test against the margin (the calibrated rule,
    /// and `compare`), or read from its point estimate (the reference rule)?
    pub fn sized_by_margin(&self) -> bool {
        self.rule == Rule::Calibrated
    }
}

/// The two-sided p values a look tests, adjusted for the run's looks.
pub(super) fn adjust(ps: &mut [f64], look: &Look, test: Test) {
    let levels = look.levels(test);
    for p in ps {
        *p = match &levels {
            Some(l) => l.two_sided(*p),
            None => (*p * look.looks as f64).min(1.0),
        };
    }
}

/// The one-sided p values (against the margin) a look tests, adjusted for its looks.
pub(super) fn adjust_one_sided(ps: &mut [f64], look: &Look, test: Test) {
    let levels = look.levels(test);
    for p in ps {
        *p = match &levels {
            Some(l) => l.one_sided(*p),
            None => (*p * look.looks as f64).min(1.0),
        };
    }
}

/// A tested non-control row's state at this look, once `decide` has judged it on the
/// adjusted q; a row neither regressed nor improved is cleared, undecidable or
/// undecided, and the last two are not compared (`Insufficient`, with the trials a
/// side they need).
pub(super) fn judge(r: &mut Row, look: &Look, alpha: f64, test: Test) {
    if r.control || r.p.is_none() {
        return;
    }
    match r.verdict {
        Verdict::Regression => r.state = Some(State::Regression),
        Verdict::Improvement => r.state = Some(State::Improvement),
        Verdict::NoSignificantChange | Verdict::WithinThreshold | Verdict::SizeUnknown => {
            // What the test said, without the one-shot trials estimate this look replaces.
            let said = match (r.verdict, r.q) {
                (Verdict::SizeUnknown, Some(q)) => format!(
                    "significant (q = {q:.2e}), its size not shown past {:.0}%",
                    r.threshold * 100.0
                ),
                _ => r.reason.clone(),
            };
            let Some(s) = shift(r, test) else { return };
            let edge = (1.0 + r.threshold).ln();
            let one_sided = 1.0 - look.one_sided_level(alpha, test);
            let bound = s.d + t_quantile(one_sided, s.df) * s.se;
            let tau = format!("{:.0}%", r.threshold * 100.0);
            if bound < edge {
                r.state = Some(State::Cleared);
                r.reason = format!(
                    "cleared: a slowdown beyond {tau} is ruled out (at most {} at {:.1}% confidence; {})",
                    signed_pct(bound.exp() - 1.0),
                    one_sided * 100.0,
                    said
                );
                return;
            }
            let n = r.base.finite().len().min(r.head.finite().len());
            let needed =
                trials_to_separate(&s, edge, 1.0 - look.two_sided_level(alpha, test) / 2.0);
            r.trials_needed = needed;
            let needs = match needed {
                Some(k) => format!("needs ~{k} a side"),
                None => "no number of trials can tell at this estimate".to_string(),
            };
            let undecidable =
                n >= look.rule.undecidable_from() && needed.is_none_or(|k| k > look.max_trials);
            r.state = Some(if undecidable {
                State::Undecidable
            } else {
                State::Undecided
            });
            r.reason = format!(
                "{} at n = {n}: a slowdown beyond {tau} is neither ruled out nor shown ({} now, at most {} at {:.1}% confidence; {needs}; --max-trials {}); {}",
                if undecidable { "undecidable" } else { "undecided" },
                signed_pct(r.change.unwrap_or(s.d.exp() - 1.0)),
                signed_pct(bound.exp() - 1.0),
                one_sided * 100.0,
                look.max_trials,
                said
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
    use crate::stats;

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
            ..crate::compare::test_row::test_row(side(b), side(h))
        }
    }

    #[test]
    fn looks_are_cut_at_the_maximum() {
        assert_eq!(planned_looks(20), vec![4, 6, 8, 12, 16, 20]);
        assert_eq!(planned_looks(30), vec![4, 6, 8, 12, 16, 20, 30]);
        assert_eq!(planned_looks(10), vec![4, 6, 8, 10]);
        assert_eq!(Look::new(20, Rule::Calibrated).looks, 6);
    }

    #[test]
    fn two_percent_is_cleared_at_the_first_look() {
        // docs/STATS.md reference: d 0.0197792, se 0.00598149, df 5.99765, p 0.0162802,
        // p' 0.0976810, bound 0.0394458 < ln(1.05) with t = 3.28791.
        let (b, h) = ([10.0, 10.1, 9.9, 10.05], [10.2, 10.3, 10.1, 10.25]);
        let mut r = row(&b, &h);
        let s = shift(&r, Test::Welch).unwrap();
        assert!((s.d - 0.0197792).abs() < 1e-6);
        assert!((s.se - 0.00598149).abs() < 1e-7);
        assert!((s.df - 5.99765).abs() < 1e-4);
        let p = r.p.unwrap();
        assert!((p - 0.0162802).abs() < 1e-6, "{p}");
        let look = Look::new(20, Rule::UnionBound);
        let mut ps = [p];
        adjust(&mut ps, &look, Test::Welch);
        assert!((ps[0] - 0.0976810).abs() < 1e-6);
        assert!((t_quantile(1.0 - 0.05 / 6.0, s.df) - 3.28791).abs() < 1e-4);
        r.q = Some(ps[0]);
        judge(&mut r, &look, 0.05, Test::Welch);
        assert_eq!(r.state, Some(State::Cleared), "{}", r.reason);
        assert!(r.reason.starts_with("cleared"), "{}", r.reason);
    }

    #[test]
    fn undecided_and_undecidable_rows_say_what_they_need() {
        let look = Look::new(20, Rule::UnionBound);
        // +4% with 3% noise at n = 4: more trials can tell.
        let b = [10.0, 10.3, 9.7, 10.1];
        let h = [10.4, 10.7, 10.1, 10.5];
        let mut r = row(&b, &h);
        judge(&mut r, &look, 0.05, Test::Welch);
        assert_eq!(r.state, Some(State::Undecided), "{}", r.reason);
        assert_eq!(r.verdict, Verdict::Insufficient);
        assert!(r.trials_needed.is_some());
        // The same at n = 8 with the change right at the threshold: 20 cannot tell.
        let b8 = [10.0, 10.3, 9.7, 10.1, 10.0, 10.3, 9.7, 10.1];
        let h8: Vec<f64> = b8.iter().map(|v| v * 1.05).collect();
        let mut r = row(&b8, &h8);
        judge(&mut r, &look, 0.05, Test::Welch);
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
    fn aa_run(seed: u64, sigma: f64, threshold: f64, max_trials: usize, rule: Rule) -> bool {
        let mut rng = stats::SplitMix64::new(seed);
        let look = Look::new(max_trials, rule);
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
        for n in planned_looks(max_trials) {
            while b.len() < n {
                b.push(trial(&mut rng));
                h.push(trial(&mut rng));
            }
            let mut r = row(&b, &h);
            r.threshold = threshold;
            let change = r.change.unwrap();
            let mut ps = [
                r.p.unwrap(),
                crate::compare::margin::p_beyond(
                    &b,
                    &h,
                    r.direction,
                    change,
                    threshold,
                    crate::compare::Test::Welch,
                    0.0,
                )
                .unwrap(),
            ];
            adjust(&mut ps[..1], &look, Test::Welch);
            adjust_one_sided(&mut ps[1..], &look, Test::Welch);
            r.q = Some(ps[0]);
            r.q_beyond = Some(ps[1]);
            super::super::decide::decide(&mut r, 0.05, look.sized_by_margin(), Test::Welch);
            judge(&mut r, &look, 0.05, Test::Welch);
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
        for rule in [Rule::UnionBound, Rule::Calibrated] {
            // Threshold 0: any significant difference flags, the hardest case for the rule.
            for (sigma, runs) in [(0.01, 2000), (0.05, 1000)] {
                let flagged = (0..runs)
                    .filter(|&s| aa_run(s as u64 + 1, sigma, 0.0, 20, rule))
                    .count();
                let rate = flagged as f64 / runs as f64;
                assert!(
                    rate <= 0.05,
                    "{rule:?}, sigma {sigma}: {flagged} of {runs} A/A runs flagged ({rate})"
                );
            }
            // At the usual 5% threshold, real noise flags (next to) nothing.
            let flagged = (0..1000)
                .filter(|&s| aa_run(s as u64 + 7, 0.02, 0.05, 20, rule))
                .count();
            assert!(flagged <= 5, "{rule:?}: {flagged} of 1000");
        }
    }
}
