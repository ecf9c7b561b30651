//! A step's verdict from the watched rows of its comparison: bad, good, skipped (a
//! failed trial, rows missing) or undecided, with the evidence each row gives.

use super::record::{Evidence, Found, Watch};
use crate::compare::{FailedRun, Report, Row, State};

/// The counters of the rows `watch` holds in `report`: a row it does not watch (another
/// change in the range, measured against the same good end) explains nothing of this
/// step.
pub fn watched_counters(
    watch: &Watch,
    report: &Report,
) -> Vec<crate::compare::counters::Explained> {
    report
        .counters
        .iter()
        .filter(|e| {
            report.rows.iter().any(|r| {
                watch.holds(r)
                    && r.table == e.table
                    && r.variant == e.variant
                    && r.key_text == e.key_text
                    && r.metric == e.metric
            })
        })
        .cloned()
        .collect()
}

/// The step's verdict from the rows `watch` holds in `report`: (found, why, evidence).
pub fn judge(watch: &Watch, report: &Report) -> (Found, Option<String>, Vec<Evidence>) {
    let rows: Vec<&Row> = report.rows.iter().filter(|r| watch.holds(r)).collect();
    let evidence: Vec<Evidence> = rows
        .iter()
        .map(|r| Evidence {
            row: format!("{} {} {} {}", r.table, r.variant, r.key_text, r.metric),
            share: watch.series_of(r).and_then(|s| {
                let total = s.ratio.ln().abs();
                r.ratio
                    .filter(|_| total > 0.0 && total.is_finite())
                    .map(|x| x.ln().abs() / total)
            }),
            state: r.state.map(|s| s.as_str().to_string()),
            ratio: r.ratio,
            ratio_ci: r.ratio_ci,
            trials: (r.base.finite().len(), r.head.finite().len()),
        })
        .collect();
    // A trial that failed skips the step (as `git bisect skip`): the trials left are
    // never judged alone. A commit that fails some trials and not others is flaky.
    let failed: Vec<&FailedRun> = report
        .head
        .failed_runs
        .iter()
        .chain(&report.base.failed_runs)
        .collect();
    if let Some(first) = failed.first() {
        let head = report.head.failed_runs.len();
        let flaky = head > 0 && head < report.head.runs.len();
        return (
            Found::Skip,
            Some(format!(
                "{} trial(s) failed ({}){}: skipped, never judged on the trials left",
                failed.len(),
                first.detail,
                if flaky {
                    "; the commit passes some trials and fails others: flaky"
                } else {
                    ""
                }
            )),
            evidence,
        );
    }
    if rows.is_empty() {
        return (
            Found::Skip,
            Some(
                "its trials ran and printed, but not the watched rows (renamed, or no longer run)"
                    .into(),
            ),
            evidence,
        );
    }
    if rows.iter().any(|r| r.state == Some(State::Regression)) {
        (Found::Bad, None, evidence)
    } else if rows
        .iter()
        .all(|r| matches!(r.state, Some(State::Cleared | State::Improvement)))
    {
        (Found::Good, None, evidence)
    } else {
        let open: Vec<String> = rows
            .iter()
            .filter(|r| !matches!(r.state, Some(State::Cleared | State::Improvement)))
            .map(|r| format!("{} {}: {}", r.key_text, r.metric, r.reason))
            .collect();
        (Found::Undecided, Some(open.join("; ")), evidence)
    }
}
