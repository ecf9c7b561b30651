//! Step 3: the decisions, as pure functions of the loaded values (no DuckDB): each row's
//! validity, test and verdict, the control gate, and the overall verdict.

use super::load::Value;
use super::{
    ControlMetric, ControlStatus, Options, Overall, Reduce, Row, SideStats, Test, Verdict,
    MIN_TRIALS_REPORT_MW, MIN_TRIALS_WELCH,
};
use crate::stats;
use perfdb_ingest::model::{self, Direction};
use std::collections::{BTreeMap, HashMap};

pub(super) fn is_control(variant: &str, control: &[String]) -> bool {
    let v = variant.to_lowercase();
    control.iter().any(|c| v.contains(&c.to_lowercase()))
}

pub(super) fn reduce_best(values: &[f64], dir: Direction) -> f64 {
    match dir {
        Direction::Higher => values.iter().copied().fold(f64::MIN, f64::max),
        _ => values.iter().copied().fold(f64::MAX, f64::min),
    }
}

pub(super) fn side_stats(vals: &[Value], dir: Direction) -> SideStats {
    let values: Vec<Option<f64>> = vals.iter().map(|v| v.value).collect();
    let ok: Vec<f64> = values.iter().flatten().copied().collect();
    let (best, median, ci) = if ok.is_empty() {
        (None, None, (None, None))
    } else {
        let (lo, hi) = stats::median_ci(&ok);
        (
            Some(reduce_best(&ok, dir)),
            Some(stats::median(&ok)),
            (lo.is_finite().then_some(lo), hi.is_finite().then_some(hi)),
        )
    };
    SideStats {
        n: vals.len(),
        values,
        best,
        median,
        median_ci: ci,
    }
}

/// Direction-normalised ratio: > 1 is worse.
pub(super) fn normalised(ratio: f64, dir: Direction) -> f64 {
    match dir {
        Direction::Higher => 1.0 / ratio,
        _ => ratio,
    }
}

pub(super) fn fmt_pct(x: f64) -> String {
    format!("{:+.1}%", x * 100.0)
}

/// Validity, sufficiency, ratio and test of one row (before gating and BH).
pub(super) fn assess(row: &mut Row, bvals: &[Value], hvals: &[Value], opt: &Options) {
    let bad = |vals: &[Value], side: &str| -> Option<String> {
        let missing = vals.iter().filter(|v| v.value.is_none()).count();
        if missing > 0 {
            return Some(format!(
                "{missing} of {} {side} trial(s) have no value",
                vals.len()
            ));
        }
        vals.iter().find_map(|v| match v.value {
            Some(x) if !(x.is_finite() && x > 0.0) => {
                Some(format!("a {side} trial has value {x} (must be > 0)"))
            }
            _ => None,
        })
    };
    if let Some(reason) = bad(bvals, "base").or_else(|| bad(hvals, "head")) {
        row.verdict = Verdict::Invalid;
        row.reason = reason;
        return;
    }
    let bv: Vec<f64> = bvals.iter().filter_map(|v| v.value).collect();
    let hv: Vec<f64> = hvals.iter().filter_map(|v| v.value).collect();
    let (rb, rh) = match opt.reduce {
        Reduce::Best => (row.base.best, row.head.best),
        Reduce::Median => (row.base.median, row.head.median),
    };
    if let (Some(rb), Some(rh)) = (rb, rh) {
        let ratio = rh / rb;
        row.ratio = Some(ratio);
        row.change = Some(normalised(ratio, row.direction) - 1.0);
    }
    let (nb, nh) = (bv.len(), hv.len());
    row.ratio_ci = stats::geomean_ratio_ci(&hv, &bv);
    if nb >= MIN_TRIALS_REPORT_MW && nh >= MIN_TRIALS_REPORT_MW {
        row.p_mann_whitney = Some(stats::mann_whitney(&hv, &bv).p);
    }
    match opt.test {
        Test::Welch => {
            if nb < MIN_TRIALS_WELCH || nh < MIN_TRIALS_WELCH {
                row.verdict = Verdict::Insufficient;
                row.reason = format!(
                    "{nb} base and {nh} head trial(s); Welch's test needs at least {MIN_TRIALS_WELCH} a side"
                );
                return;
            }
            row.p = Some(stats::welch_log(&hv, &bv).p);
        }
        Test::MannWhitney => {
            let min_p = if nb == 0 || nh == 0 {
                1.0
            } else {
                stats::mw_min_p(nb, nh)
            };
            if min_p > opt.alpha {
                row.verdict = Verdict::Insufficient;
                row.reason = format!(
                    "{nb} base and {nh} head trial(s): the U test cannot reach p <= {} (smallest p {:.3}); run at least {} a side",
                    opt.alpha,
                    min_p,
                    stats::mw_trials_needed(opt.alpha)
                );
                return;
            }
            row.p = Some(stats::mann_whitney(&hv, &bv).p);
        }
    }
    // Tested; the final verdict comes after gating and BH.
    row.verdict = Verdict::NoSignificantChange;
}

/// Control gating per metric and per row (docs/STATS.md, "Control-column gating").
pub(super) fn gate_on_control(rows: &mut [Row], opt: &Options) -> Option<ControlStatus> {
    if opt.control.is_empty() {
        return None;
    }
    let tol = (1.0 + opt.control_tol).ln();
    let mut matched: Vec<String> = Vec::new();
    let mut per_metric: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut per_key: HashMap<(String, String, String, String), Vec<f64>> = HashMap::new();
    for r in rows.iter().filter(|r| r.control) {
        if !matched.contains(&r.variant) {
            matched.push(r.variant.clone());
        }
        if let Some(ratio) = r.ratio {
            let lw = normalised(ratio, r.direction).ln();
            per_metric.entry(r.metric.clone()).or_default().push(lw);
            per_key
                .entry((
                    r.table.clone(),
                    model::key_of(&r.key).0.to_string(),
                    r.metric.clone(),
                    r.unit.clone(),
                ))
                .or_default()
                .push(lw);
        }
    }
    let metrics: Vec<ControlMetric> = per_metric
        .iter()
        .map(|(m, lws)| {
            let g = stats::mean(lws);
            ControlMetric {
                metric: m.clone(),
                ratio: g.exp(),
                rows: lws.len(),
                passed: g.abs() <= tol,
            }
        })
        .collect();
    for r in rows
        .iter_mut()
        .filter(|r| !r.control && r.verdict == Verdict::NoSignificantChange)
    {
        if let Some(cm) = metrics.iter().find(|c| c.metric == r.metric && !c.passed) {
            r.verdict = Verdict::Unreliable;
            r.reason = format!(
                "control moved {} on {} (tolerance ±{:.0}%)",
                fmt_pct(cm.ratio - 1.0),
                cm.metric,
                opt.control_tol * 100.0
            );
            continue;
        }
        let k = (
            r.table.clone(),
            model::key_of(&r.key).0.to_string(),
            r.metric.clone(),
            r.unit.clone(),
        );
        if let Some(lws) = per_key.get(&k) {
            let g = stats::mean(lws);
            if g.abs() > tol {
                r.verdict = Verdict::Withheld;
                r.reason = format!(
                    "this row's control moved {} (tolerance ±{:.0}%)",
                    fmt_pct(g.exp() - 1.0),
                    opt.control_tol * 100.0
                );
            }
        }
    }
    Some(ControlStatus {
        variant: opt.control.clone(),
        matched_variants: matched,
        tolerance: opt.control_tol,
        metrics,
    })
}

/// Final verdict of a tested row from q (p for control rows), change and threshold.
pub(super) fn decide(r: &mut Row, alpha: f64) {
    if r.verdict != Verdict::NoSignificantChange {
        return;
    }
    let (Some(change), Some(p)) = (r.change, if r.control { r.p } else { r.q }) else {
        return;
    };
    let what = if r.control { "p" } else { "q" };
    if p > alpha {
        r.verdict = Verdict::NoSignificantChange;
        r.reason = format!("{what} = {p:.3} > {alpha}");
    } else if change > r.threshold {
        r.verdict = Verdict::Regression;
        r.reason = format!(
            "{} worse than the {:.0}% threshold, {what} = {p:.2e}",
            fmt_pct(change),
            r.threshold * 100.0
        );
    } else if change < -r.threshold {
        r.verdict = Verdict::Improvement;
        r.reason = format!("{} better, {what} = {p:.2e}", fmt_pct(-change));
    } else {
        r.verdict = Verdict::WithinThreshold;
        r.reason = format!(
            "significant ({what} = {p:.2e}) but {} is within ±{:.0}%",
            fmt_pct(change),
            r.threshold * 100.0
        );
    }
}

pub(super) fn overall(rows: &[Row], control: &Option<ControlStatus>) -> (Overall, String) {
    let numerics: Vec<&Row> = rows.iter().filter(|r| r.numerics_failed()).collect();
    let regressions = rows
        .iter()
        .filter(|r| !r.control && r.verdict == Verdict::Regression)
        .count();
    if regressions > 0 || !numerics.is_empty() {
        let mut parts = Vec::new();
        if regressions > 0 {
            parts.push(format!("{regressions} regression(s)"));
        }
        if !numerics.is_empty() {
            parts.push(format!("{} row(s) failed numerics on head", numerics.len()));
        }
        return (Overall::Regression, parts.join(" and "));
    }
    if let Some(c) = control {
        let failed: Vec<String> = c
            .metrics
            .iter()
            .filter(|m| !m.passed)
            .map(|m| format!("{} {}", m.metric, fmt_pct(m.ratio - 1.0)))
            .collect();
        if !failed.is_empty() {
            return (
                Overall::Unreliable,
                format!(
                    "the control moved beyond ±{:.0}% ({}): those metrics cannot be judged",
                    c.tolerance * 100.0,
                    failed.join(", ")
                ),
            );
        }
    }
    let judged: Vec<&Row> = rows.iter().filter(|r| !r.control).collect();
    if judged.is_empty() {
        return (
            Overall::Inconclusive,
            "no row matched across the two sides".to_string(),
        );
    }
    let undecided = judged.iter().filter(|r| !r.verdict.is_decided()).count();
    if undecided > 0 {
        return (
            Overall::Inconclusive,
            format!(
                "{undecided} of {} row(s) could not be compared (insufficient, invalid or withheld)",
                judged.len()
            ),
        );
    }
    (
        Overall::Ok,
        format!("no regression in {} compared row(s)", judged.len()),
    )
}
