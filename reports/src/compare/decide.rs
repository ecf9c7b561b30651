//! Step 3: the decisions, as pure functions of the loaded values (no DuckDB): each row's
//! validity, test and verdict, and the control gate (the overall verdict is
//! [`super::verdict`]'s).

use super::load::Value;
use super::margin;
use super::options::variant_matches;
use super::{
    ControlMetric, ControlStatus, Options, Reduce, Row, SideStats, Test, Verdict,
    MIN_TRIALS_REPORT_MW, MIN_TRIALS_WELCH,
};
use crate::fmt::signed_pct as fmt_pct;
use crate::stats;
use perfdb_ingest::model::{self, Direction, SeriesKey};
use perfdb_ingest::trial_energy;
use std::collections::{BTreeMap, HashMap};

/// Is `variant` one of the `control` variants ([`variant_matches`])?
pub(super) fn is_control(variant: &str, control: &[String]) -> bool {
    control.iter().any(|c| variant_matches(c, variant))
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
    // The exact U test costs ~n^2 per row (25M steps at 50 trials a side): only when asked.
    if opt.test == Test::Welch
        && opt.mann_whitney_p
        && nb >= MIN_TRIALS_REPORT_MW
        && nh >= MIN_TRIALS_REPORT_MW
    {
        row.p_mann_whitney = Some(stats::mann_whitney(&hv, &bv).p);
    }
    match opt.test {
        Test::Welch | Test::Trimmed | Test::Adaptive => {
            if nb < MIN_TRIALS_WELCH || nh < MIN_TRIALS_WELCH {
                row.verdict = Verdict::Insufficient;
                row.reason = format!(
                    "{nb} base and {nh} head trial(s); {} needs at least {MIN_TRIALS_WELCH} a side",
                    match opt.test {
                        Test::Trimmed => "Yuen's test",
                        Test::Adaptive => "the t-test",
                        _ => "Welch's test",
                    }
                );
                return;
            }
            let (sh, sb) = (
                margin::slowness(&hv, row.direction),
                margin::slowness(&bv, row.direction),
            );
            row.p = Some(
                margin::location_test(opt.test, &sh, &sb)
                    .with_lost_df(row.lost_df)
                    .p,
            );
        }
        Test::MannWhitney => {
            // What the test can reach given these sizes and these ties, not the sizes alone.
            let min_p = stats::mw_min_p_given(&hv, &bv);
            if min_p > opt.alpha {
                row.verdict = Verdict::Insufficient;
                let sizes_alone = if nb == 0 || nh == 0 {
                    1.0
                } else {
                    stats::mw_min_p(nb, nh)
                };
                row.reason = if sizes_alone > opt.alpha {
                    format!(
                        "{nb} base and {nh} head trial(s): the U test cannot reach p <= {} (smallest p {:.3}); run at least {} a side",
                        opt.alpha,
                        min_p,
                        stats::mw_trials_needed(opt.alpha)
                    )
                } else {
                    format!(
                        "{nb} base and {nh} head trial(s) with these ties: the U test cannot reach p <= {} (smallest attainable p {:.3}); values printed with more digits, or more trials, can decide",
                        opt.alpha, min_p
                    )
                };
                return;
            }
            let mw = stats::mann_whitney(&hv, &bv);
            row.p = Some(mw.p);
            row.p_mann_whitney = Some(mw.p);
        }
    }
    row.p_beyond = row.change.and_then(|c| {
        margin::p_beyond(
            &bv,
            &hv,
            row.direction,
            c,
            row.threshold,
            opt.test,
            row.lost_df,
        )
    });
    // Tested; the final verdict comes after gating and BH.
    row.verdict = Verdict::NoSignificantChange;
}

/// What ties a row to its control's row: its series with the variant left empty.
fn control_key(r: &Row) -> SeriesKey {
    SeriesKey {
        table: r.table.clone(),
        variant: String::new(),
        key: model::key_of(&r.key).0.to_string(),
        metric: r.metric.clone(),
        unit: r.unit.clone(),
    }
}

/// Control gating per metric and per row (docs/STATS.md, "Control-column gating").
pub(super) fn gate_on_control(rows: &mut [Row], opt: &Options) -> Option<ControlStatus> {
    if opt.control.is_empty() {
        return None;
    }
    let tol = (1.0 + opt.control_tol).ln();
    let mut matched: Vec<String> = Vec::new();
    let mut per_metric: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut per_key: HashMap<SeriesKey, Vec<f64>> = HashMap::new();
    for r in rows.iter().filter(|r| r.control) {
        if !matched.contains(&r.variant) {
            matched.push(r.variant.clone());
        }
        if let Some(ratio) = r.ratio {
            let lw = normalised(ratio, r.direction).ln();
            per_metric.entry(r.metric.clone()).or_default().push(lw);
            per_key.entry(control_key(r)).or_default().push(lw);
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
        // A trial's energy spans every kernel of the trial, the control's too: any
        // control metric that moved gates it.
        let energy = is_trial_energy(r);
        if let Some(cm) = metrics
            .iter()
            .find(|c| (c.metric == r.metric || energy) && !c.passed)
        {
            r.verdict = Verdict::Unreliable;
            r.reason = format!(
                "control moved {} on {} (tolerance ±{:.0}%)",
                fmt_pct(cm.ratio - 1.0),
                cm.metric,
                opt.control_tol * 100.0
            );
            continue;
        }
        if let Some(lws) = per_key.get(&control_key(r)) {
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
/// A tested row's verdict on its q: no significant change, within the threshold, or
/// beyond it, which (`by_margin`) the test against the margin must show, else its size is
/// unknown; without `by_margin` (the sequential reference rule) the point estimate says.
pub(super) fn decide(r: &mut Row, alpha: f64, by_margin: bool, test: Test) {
    if r.verdict != Verdict::NoSignificantChange {
        return;
    }
    let (Some(change), Some(p)) = (r.change, if r.control { r.p } else { r.q }) else {
        return;
    };
    let what = if r.control { "p" } else { "q" };
    let tau = format!("{:.0}%", r.threshold * 100.0);
    if p > alpha {
        r.verdict = Verdict::NoSignificantChange;
        r.reason = format!("{what} = {p:.3} > {alpha}");
        return;
    }
    if change.abs() <= r.threshold {
        r.verdict = Verdict::WithinThreshold;
        r.reason = format!(
            "significant ({what} = {p:.2e}) but {} is within ±{tau}",
            fmt_pct(change)
        );
        return;
    }
    // Beyond the threshold on evidence: the test against the margin (a control row is
    // judged on its own p: it gates, it is not reported as a change).
    let beyond = if r.control || !by_margin {
        None
    } else {
        Some(r.q_beyond.unwrap_or(1.0))
    };
    match beyond {
        Some(qb) if qb > alpha => {
            r.verdict = Verdict::SizeUnknown;
            let needs = margin::shift(r, test)
                .and_then(|s| {
                    let edge = (1.0 + r.threshold).ln() * change.signum();
                    margin::trials_to_separate(&s, edge, 1.0 - alpha)
                })
                .filter(|&k| k > r.base.n.min(r.head.n));
            r.trials_needed = needs;
            r.reason = format!(
                "significant ({what} = {p:.2e}), {} now, but not shown beyond ±{tau} (q = {qb:.3} > {alpha} for a change past it; {})",
                fmt_pct(change),
                needs.map_or_else(
                    || "more trials will not narrow it at this estimate".to_string(),
                    |k| format!("needs ~{k} a side")
                )
            );
        }
        _ => {
            let beyond = beyond.map_or_else(String::new, |qb| format!(", beyond it q = {qb:.2e}"));
            // A trial's energy is more or less, not slower or faster.
            let factor = match (is_energy(r), change > 0.0) {
                (true, _) => format!("{:.2}x the energy", 1.0 + change),
                (false, true) => format!("{:.2}x slower", 1.0 + change),
                (false, false) => format!("{:.2}x faster", 1.0 / (1.0 + change)),
            };
            if change > 0.0 {
                r.verdict = Verdict::Regression;
                r.reason =
                    format!("{factor}, beyond the {tau} threshold, {what} = {p:.2e}{beyond}");
            } else {
                r.verdict = Verdict::Improvement;
                r.reason = format!("{factor}, {what} = {p:.2e}{beyond}");
            }
        }
    }
}

/// A row judged against its own control: when the control variant's row of the same
/// table, key and metric moved significantly (its own p <= alpha) in the same direction
/// as a regressed or improved row, the machine may have moved them both (a kernel that
/// runs at one of two speeds, a clock). The row's change is then read relative to its
/// control's: still beyond the threshold, the verdict stands and says so; not, the row is
/// withheld, saying by how much the control moved.
pub fn relative_to_control(rows: &mut [Row], alpha: f64) {
    // Per key, the mean log change of the control rows that moved significantly.
    let mut moved: HashMap<SeriesKey, (f64, f64, usize)> = HashMap::new();
    for r in rows.iter().filter(|r| r.control) {
        if let (Some(change), Some(p)) = (r.change, r.p) {
            if p <= alpha {
                let e = moved.entry(control_key(r)).or_insert((0.0, p, 0));
                e.0 += change.ln_1p();
                e.1 = e.1.max(p);
                e.2 += 1;
            }
        }
    }
    if moved.is_empty() {
        return;
    }
    for r in rows
        .iter_mut()
        .filter(|r| !r.control && matches!(r.verdict, Verdict::Regression | Verdict::Improvement))
    {
        let (Some(change), Some(&(sum, p, n))) = (r.change, moved.get(&control_key(r))) else {
            continue;
        };
        let control_change = (sum / n as f64).exp_m1();
        if change.signum() != control_change.signum() {
            continue;
        }
        let relative = (1.0 + change) / (1.0 + control_change) - 1.0;
        let moved_by = format!(
            "this row's control moved {} too (p = {p:.2e})",
            fmt_pct(control_change)
        );
        if relative.abs() > r.threshold && relative.signum() == change.signum() {
            r.reason = format!(
                "{}; {moved_by}: relative to it the row moved {}, still beyond ±{:.0}%",
                r.reason,
                fmt_pct(relative),
                r.threshold * 100.0
            );
        } else {
            r.verdict = Verdict::Withheld;
            r.reason = format!(
                "{} with its control: {moved_by}; relative to its control the row moved {}, within ±{:.0}%",
                fmt_pct(change),
                fmt_pct(relative),
                r.threshold * 100.0
            );
        }
    }
}

/// Say so in the row's reason when its trials split into two modes.
pub fn note_modes(r: &mut Row) {
    if let Some((lo, hi)) = r.modes {
        let unit = if r.unit.is_empty() {
            String::new()
        } else {
            format!(" {}", r.unit)
        };
        let note = format!(
            "a side's trials split into two modes (~{} and ~{}{unit}): the medians weigh how often each side ran in the slow one",
            crate::fmt::four_figures(lo),
            crate::fmt::four_figures(hi)
        );
        r.reason = if r.reason.is_empty() {
            note
        } else {
            format!("{}; {note}", r.reason)
        };
    }
}

/// Regressed non-control rows grouped by kernel and shape (`us` and `TFLOPS` moving
/// together are one regression): ("table variant key", metrics that moved).
pub fn regressed_rows<'a>(rows: impl IntoIterator<Item = &'a Row>) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for r in rows
        .into_iter()
        .filter(|r| !r.control && r.verdict == Verdict::Regression)
    {
        let what = format!("{} {} {}", r.table, r.variant, r.key_text);
        match out.iter_mut().find(|(w, _)| *w == what) {
            Some((_, m)) => m.push(r.metric.clone()),
            None => out.push((what, vec![r.metric.clone()])),
        }
    }
    out
}

/// Whether `r` is GPU energy, judged beside time and not part of it: a trial's
/// (`perfdb_ingest::trial_energy`) or a kernel's per call (`perfdb_ingest::call_energy`).
pub fn is_energy(r: &Row) -> bool {
    is_energy_row(&r.table, &r.variant, &r.metric)
}

/// [`is_energy`] of a row by its table, variant and metric (a row not yet judged).
pub fn is_energy_row(table: &str, variant: &str, metric: &str) -> bool {
    trial_energy::is_row(table, variant, metric) || perfdb_ingest::call_energy::is_metric(metric)
}

/// Whether `r` is a whole trial's GPU energy (every kernel of the trial, the control's too).
pub fn is_trial_energy(r: &Row) -> bool {
    trial_energy::is_row(&r.table, &r.variant, &r.metric)
}

/// Distinct (table, variant, key) among `rows`.
pub fn kernel_shapes<'a>(rows: impl Iterator<Item = &'a Row>) -> usize {
    let mut seen = std::collections::HashSet::new();
    rows.filter(|r| seen.insert((&r.table, &r.variant, &r.key_text)))
        .count()
}

/// The decisions on hand-made rows and sides: no warehouse, no DuckDB.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::load::{per_run, Value};
    use crate::compare::verdict::{overall, Evidence};
    use crate::compare::{FailedRun, NumericsStatus, Overall, Reason, ReasonCode, SideInfo};
    use perfdb_ingest::model::Numerics;

    fn stats() -> SideStats {
        SideStats {
            n: 3,
            values: vec![Some(1.0); 3],
            best: Some(1.0),
            median: Some(1.0),
            median_ci: (None, None),
        }
    }

    fn row(key: &str, metric: &str, verdict: Verdict) -> Row {
        Row {
            table: "gemm".into(),
            key: vec![("M".into(), key.into())],
            key_text: format!("M={key}"),
            metric: metric.into(),
            unit: String::new(),
            ratio: Some(1.0),
            change: Some(0.0),
            p: Some(0.5),
            q: Some(0.5),
            verdict,
            ..crate::compare::test_row::test_row(stats(), stats())
        }
    }

    #[test]
    fn a_row_of_a_thousand_trials_a_side_draws_small() {
        let mut r = row("1", "latency", Verdict::Regression);
        for (side, base) in [(&mut r.base, 10.0), (&mut r.head, 12.0)] {
            side.values = (0..1000).map(|i| Some(base + i as f64 * 0.001)).collect();
            side.n = 1000;
            side.median = Some(base + 0.5);
        }
        let svg = crate::chart::trials_strip(&r);
        assert_eq!(
            svg.matches("<circle").count(),
            2 * crate::chart::ratio::MAX_DOTS
        );
        assert!(
            svg.contains("base: 1000 trial(s), drawn as 40 quantiles"),
            "{svg}"
        );
        assert!(svg.len() < 5_000, "{} bytes", svg.len());
    }

    fn side() -> SideInfo {
        SideInfo {
            selector: "s".into(),
            not_timed: vec![],
            identity_runs: vec![],
            matched_by: crate::compare::MatchedBy::Label,
            runs: vec!["r".into()],
            labels: vec!["s".into()],
            commits: vec![],
            failed_runs: vec![],
            archs: vec!["gfx942".into()],
            image_digests: vec![],
            machines: vec![],
            methods: vec![],
            devices: vec![],
            gpu_tags: vec![],
            profiled_runs: 0,
            profiled_run_ids: Vec::new(),
        }
    }

    fn verdict_of(rows: &[Row], tweak: impl Fn(&mut Evidence)) -> (Overall, Vec<Reason>) {
        let (b, h, opt) = (side(), side(), Options::default());
        let mut ev = Evidence {
            base: &b,
            head: &h,
            missing: 0,
            control_one_sided: vec![],
            mixed_hardware: vec![],
            mixed_methods: vec![],
            unpaired_tables: 0,
            opt: &opt,
        };
        tweak(&mut ev);
        overall(rows, &None, &ev)
    }

    #[test]
    fn numerics_are_judged_against_base() {
        use Numerics::*;
        assert_eq!(NumericsStatus::of(Pass, Fail), NumericsStatus::NewFailure);
        assert_eq!(
            NumericsStatus::of(NotChecked, Fail),
            NumericsStatus::NewFailure
        );
        assert_eq!(NumericsStatus::of(Fail, Fail), NumericsStatus::PreExisting);
        assert_eq!(
            NumericsStatus::of(Pass, NotChecked),
            NumericsStatus::UncheckedOnHead
        );
        assert_eq!(NumericsStatus::of(Fail, Pass), NumericsStatus::Ok);
        assert_eq!(
            NumericsStatus::of(NotChecked, NotChecked),
            NumericsStatus::Ok
        );
    }

    #[test]
    fn regressions_are_counted_per_kernel_and_shape() {
        let rows = [
            row("512", "latency", Verdict::Regression),
            row("512", "throughput", Verdict::Regression),
            row("16", "latency", Verdict::NoSignificantChange),
        ];
        let (v, reason) = verdict_of(&rows, |_| {});
        assert_eq!(v, Overall::Regression);
        assert_eq!(
            reason,
            [Reason::new(
                ReasonCode::Regressed,
                Some(1),
                "1 kernel/shape row(s) regressed (2 metric row(s))".into()
            )]
        );
        let (v, reason) = verdict_of(&rows[2..], |_| {});
        assert_eq!(v, Overall::Ok);
        assert_eq!(
            (reason[0].code, reason[0].rows),
            (ReasonCode::NoRegression, Some(1))
        );
    }

    #[test]
    fn no_ok_without_evidence() {
        let rows = [row("16", "latency", Verdict::NoSignificantChange)];
        type Tweak = fn(&mut Evidence);
        let cases: [(ReasonCode, Tweak); 4] = [
            (ReasonCode::MissingOnHead, |e| e.missing = 2),
            (ReasonCode::MixedMethods, |e| {
                e.mixed_methods = vec!["method base nvbench:cold, head do_bench:mean".into()]
            }),
            (ReasonCode::MixedHardware, |e| {
                e.mixed_hardware = vec!["arch base gfx942, head gfx950".into()]
            }),
            (ReasonCode::ControlOnOneSide, |e| {
                e.control_one_sided = vec!["'torch' matches torch on base".into()]
            }),
        ];
        for (code, tweak) in cases {
            let (v, reason) = verdict_of(&rows, tweak);
            assert_eq!(v, Overall::Inconclusive, "{code:?}");
            assert_eq!(reason.iter().map(|r| r.code).collect::<Vec<_>>(), [code]);
        }
        let (v, reason) = verdict_of(&[], |_| {});
        assert_eq!(v, Overall::Inconclusive, "nothing matched");
        assert_eq!(reason[0].code, ReasonCode::NothingMatched);
        // On other hardware a slower row proves nothing.
        let slower = [row("512", "latency", Verdict::Regression)];
        let (v, reason) = verdict_of(&slower, |e| {
            e.mixed_hardware = vec!["arch base gfx942, head gfx950".into()]
        });
        assert_eq!(v, Overall::Inconclusive, "{reason:?}");
        assert_eq!(reason[0].code, ReasonCode::MixedHardware);
    }

    #[test]
    fn a_failed_run_is_never_ok() {
        let rows = [row("16", "latency", Verdict::NoSignificantChange)];
        let failed = FailedRun {
            run_id: "abc".into(),
            source_path: "t4.log".into(),
            detail: "benchmark_cli_rc=1".into(),
        };
        let mut h = side();
        h.failed_runs.push(failed.clone());
        let (b, opt) = (side(), Options::default());
        let ev = Evidence {
            base: &b,
            head: &h,
            missing: 0,
            control_one_sided: vec![],
            mixed_hardware: vec![],
            mixed_methods: vec![],
            unpaired_tables: 0,
            opt: &opt,
        };
        let (v, reason) = overall(&rows, &None, &ev);
        assert_eq!(v, Overall::Regression);
        assert_eq!(reason[0].code, ReasonCode::HeadRunFailed);
        assert_eq!(
            Reason::prose(&reason),
            "head run abc (t4.log) failed: benchmark_cli_rc=1"
        );
        let ev = Evidence {
            base: &h,
            head: &b,
            ..ev
        };
        assert_eq!(overall(&rows, &None, &ev).0, Overall::Inconclusive);
    }

    #[test]
    fn the_trial_is_the_run() {
        let v = |x: f64, n: Numerics| Value {
            value: Some(x),
            numerics: n,
            gpu: None,
        };
        use Numerics::*;
        // Runs 7, 7, 9: run 7's two values give their median, its worst numerics.
        let (trials, most) = per_run(
            vec![v(10.0, Pass), v(12.0, Fail), v(11.0, Pass)],
            &[7, 7, 9],
        );
        assert_eq!(most, 2);
        assert_eq!(trials.len(), 2);
        assert_eq!((trials[0].value, trials[0].numerics), (Some(11.0), Fail));
        assert_eq!((trials[1].value, trials[1].numerics), (Some(11.0), Pass));
        // Distinct runs: untouched.
        let (trials, most) = per_run(vec![v(1.0, Pass), v(2.0, Pass)], &[1, 2]);
        assert_eq!((trials.len(), most), (2, 1));
    }
    /// A trial's energy has no control row of its own: the control's time moving gates
    /// it, and it stays out of the geomean.
    #[test]
    fn a_trials_energy_is_gated_by_any_control_metric_and_kept_out_of_the_geomean() {
        let energy = || Row {
            table: "gpu".into(),
            variant: "trial".into(),
            key: vec![("gpu".into(), "0".into())],
            key_text: "gpu=0".into(),
            ..row("0", "energy", Verdict::NoSignificantChange)
        };
        let mut control = row("1", "latency", Verdict::NoSignificantChange);
        control.variant = "torch".into();
        control.control = true;
        control.ratio = Some(1.3);
        let opt = Options {
            control: vec!["torch".into()],
            ..Options::default()
        };
        let mut rows = vec![control.clone(), energy()];
        gate_on_control(&mut rows, &opt);
        assert_eq!(rows[1].verdict, Verdict::Unreliable, "{}", rows[1].reason);
        assert!(rows[1]
            .reason
            .starts_with("control moved +30.0% on latency"));
        // A control that held leaves it judged.
        control.ratio = Some(1.01);
        let mut rows = vec![control, energy()];
        gate_on_control(&mut rows, &opt);
        assert_eq!(rows[1].verdict, Verdict::NoSignificantChange);
        // Not in the geomean: a kernel row at +10% and the energy at +50%.
        let mut kernel = row("2", "latency", Verdict::Regression);
        kernel.change = Some(0.10);
        let mut e = energy();
        e.change = Some(0.5);
        e.verdict = Verdict::Regression;
        let summary = crate::compare::summarise::summarize(&[kernel, e], &opt);
        assert_eq!(summary.rows, 1);
        assert!((summary.geomean_ratio.unwrap() - 1.10).abs() < 1e-9);
    }
}

#[cfg(test)]
mod cost_tests {
    use super::*;
    use crate::compare::load::Value;
    use perfdb_ingest::model::Numerics;

    fn trials(n: usize, base: f64) -> Vec<Value> {
        (0..n)
            .map(|i| Value {
                // Distinct values: at 50 a side without ties the exact test applies.
                value: Some(base + i as f64 * 0.001),
                numerics: Numerics::NotChecked,
                gpu: None,
            })
            .collect()
    }

    fn row_of(b: &[Value], h: &[Value]) -> Row {
        let dir = Direction::Lower;
        Row {
            variant: "v".into(),
            ..crate::compare::test_row::test_row(side_stats(b, dir), side_stats(h, dir))
        }
    }

    #[test]
    fn welch_does_not_pay_for_the_exact_u_test() {
        let (b, h) = (trials(50, 10.0), trials(50, 10.2));
        let mut row = row_of(&b, &h);
        let before = stats::exact_u_runs();
        assess(&mut row, &b, &h, &Options::default());
        assert_eq!(stats::exact_u_runs(), before, "Welch ran the exact U test");
        assert!(row.p.is_some() && row.p_mann_whitney.is_none());
        // Asked for, it is computed, exactly.
        let opt = Options {
            mann_whitney_p: true,
            ..Options::default()
        };
        let mut row = row_of(&b, &h);
        assess(&mut row, &b, &h, &opt);
        assert!(row.p_mann_whitney.is_some());
        assert_eq!(stats::exact_u_runs(), before + 1);
    }

    #[test]
    fn ties_that_cannot_reach_alpha_are_insufficient() {
        let v = |x: &[f64]| -> Vec<Value> {
            x.iter()
                .map(|x| Value {
                    value: Some(*x),
                    numerics: Numerics::NotChecked,
                    gpu: None,
                })
                .collect()
        };
        let (b, h) = (v(&[1., 2., 2., 2., 3.]), v(&[2., 2., 2., 2., 2.]));
        let opt = Options {
            test: Test::MannWhitney,
            ..Options::default()
        };
        let mut row = row_of(&b, &h);
        assess(&mut row, &b, &h, &opt);
        assert_eq!(row.verdict, Verdict::Insufficient, "{}", row.reason);
        assert!(row.reason.contains("with these ties"), "{}", row.reason);
        assert!(
            row.reason.contains("smallest attainable p 0.556"),
            "{}",
            row.reason
        );
    }
}
