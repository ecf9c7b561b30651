//! Exporters for a comparison: one per output format behind [`Exporter`] ([`json`],
//! [`markdown`], [`terminal`]), and what they share: the texts of a row ([`RowView`]),
//! the lines above the table, and the table's columns, defined once ([`ROW_COLUMNS`]).
//! The alert list's exporters are in [`alerts`], the overview's in [`overview`], and
//! aiter validate-kernel-pr's perf-stage fields in [`vkpr`]. [`report`] renders a
//! comparison in the [`ReportFormat`] asked for.

pub mod alerts;
mod columns;
pub mod detect;
pub mod devices;
mod json;
mod markdown;
pub mod overview;
mod terminal;
pub mod vkpr;

pub use columns::{markdown_table, row_columns, terminal_lines, Column, Shown, ROW_COLUMNS};
pub use json::Json;
pub use markdown::Markdown;
pub use terminal::Terminal;

use crate::compare::{Overall, Report, Row, Verdict};
use std::fmt::Write;

pub trait Exporter {
    fn render(&self, report: &Report) -> String;
}

/// How a comparison is printed (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    Table,
    Markdown,
    Json,
    /// The fields of aiter validate-kernel-pr's perf stage (its scrape_perf report)
    Vkpr,
}

/// A comparison in `format`; the table in colour when `color`.
pub fn report(report: &Report, format: ReportFormat, color: bool) -> String {
    match format {
        ReportFormat::Table => Terminal { color }.render(report),
        ReportFormat::Markdown => Markdown.render(report),
        ReportFormat::Json => Json.render(report),
        ReportFormat::Vkpr => vkpr::render(report),
    }
}

pub use crate::fmt::num;

/// One metric's move across a step, as `detect` and `alerts show` print it:
/// `latency 10.1 -> 12.3 us (+21.8%, p 1.0e-4)` (a median not stored reads `?`).
pub fn move_text(
    metric: &str,
    unit: &str,
    before: Option<f64>,
    after: Option<f64>,
    ratio: f64,
    p: f64,
) -> String {
    let n = |v: Option<f64>| v.map_or_else(|| "?".to_string(), num);
    format!(
        "{metric} {} -> {} {unit} ({:+.1}%, p {p:.1e})",
        n(before),
        n(after),
        (ratio - 1.0) * 100.0
    )
}

/// What profiling cost and the counters that moved, as a report's last section: the
/// heading, each row after `row`, each of its counters after `counter` (the terminal
/// indents, markdown lists). Empty when nothing was profiled.
pub(crate) fn counters_block(report: &Report, heading: &str, row: &str, counter: &str) -> String {
    let mut s = String::new();
    for line in &report.profiling {
        s.push_str(&format!("profiled: {line}\n"));
    }
    let counters = crate::compare::counters::lines(&report.counters, 8);
    if !counters.is_empty() {
        s.push_str(heading);
        s.push('\n');
    }
    for (r, lines) in counters {
        s.push_str(&format!("{row}{r}\n"));
        for l in lines {
            s.push_str(&format!("{counter}{l}\n"));
        }
    }
    s
}

fn opt_num(v: Option<f64>) -> String {
    v.map(num).unwrap_or_else(|| "-".into())
}

fn pct(change: Option<f64>) -> String {
    change
        .map(crate::fmt::signed_pct)
        .unwrap_or_else(|| "-".into())
}

/// A row's change in its metric's own terms, with the direction-aware factor:
/// TFLOPS 535 -> 176 is `-67.1% (3.04x slower)`, latency 10 -> 12 us `+20.0% (1.20x slower)`.
/// A trial's energy is more or less, not slower or faster: `+11.6% (1.12x the energy)`.
pub fn change_text(r: &Row) -> String {
    if crate::compare::is_energy(r) {
        return match r.ratio.filter(|x| x.is_finite() && *x > 0.0) {
            Some(x) => format!("{:+.1}% ({x:.2}x the energy)", (x - 1.0) * 100.0),
            None => "-".into(),
        };
    }
    change_words(r.ratio, r.direction)
}

/// head / base `ratio` of a metric that is better in `direction`, as [`change_text`] reads it.
pub fn change_words(ratio: Option<f64>, direction: perfdb_ingest::model::Direction) -> String {
    let Some(ratio) = ratio.filter(|x| x.is_finite() && *x > 0.0) else {
        return "-".into();
    };
    let worse = match direction {
        perfdb_ingest::model::Direction::Higher => 1.0 / ratio,
        _ => ratio,
    };
    let factor = if worse >= 1.0 {
        format!("{worse:.2}x slower")
    } else {
        format!("{:.2}x faster", 1.0 / worse)
    };
    format!("{:+.1}% ({factor})", (ratio - 1.0) * 100.0)
}

fn one_sided_text(o: &crate::compare::OneSided, sep: &str) -> String {
    [
        o.table.as_str(),
        o.variant.as_str(),
        &perfdb_ingest::model::key_display(&o.key),
        o.metric.as_str(),
    ]
    .join(sep)
}

fn pval(p: Option<f64>) -> String {
    match p {
        None => "-".into(),
        Some(p) if p < 1e-3 => format!("{p:.1e}"),
        Some(p) => format!("{p:.3}"),
    }
}

fn label(r: &Row) -> String {
    let mut s = r.verdict.as_str().to_string();
    match r.numerics {
        crate::compare::NumericsStatus::NewFailure => s = format!("NUMERICS FAIL; {s}"),
        crate::compare::NumericsStatus::PreExisting => {
            s = format!("numerics fail on both sides; {s}")
        }
        crate::compare::NumericsStatus::UncheckedOnHead => {
            s = format!("numerics not checked on head; {s}")
        }
        crate::compare::NumericsStatus::Ok => {}
    }
    if r.control {
        s = format!("{s} (control)");
    }
    s
}

/// One report row as a person reads it, whatever the output: the terminal table, the
/// markdown comment and the web page all show these texts.
#[derive(Debug, Clone, PartialEq)]
pub struct RowView {
    /// The verdict, with `NUMERICS FAIL` / `pre-existing numerics failure` and `(control)`.
    pub verdict: String,
    pub table: String,
    pub variant: String,
    /// `name=value` in the order the log printed them.
    pub key: String,
    /// `latency (us)`.
    pub metric: String,
    /// Each side reduced as the options say (median or best).
    pub base: String,
    pub head: String,
    /// In the metric's own terms with the factor: `-66.4% (2.97x slower)`.
    pub change: String,
    pub p: String,
    /// BH-adjusted p (for a control row, its own p).
    pub q: String,
    pub reason: String,
    /// Head's value as a percent of the row's peak (`78.9%`), empty without one.
    pub peak: String,
    /// A regression or a new numerics failure on a non-control row.
    pub bad: bool,
}

impl RowView {
    pub fn of(r: &Row, report: &Report) -> RowView {
        let (b, h) = reduced(r, report);
        RowView {
            verdict: label(r),
            table: r.table.clone(),
            variant: r.variant.clone(),
            key: r.key_display(),
            metric: if r.unit.is_empty() {
                r.metric.clone()
            } else {
                format!("{} ({})", r.metric, r.unit)
            },
            base: opt_num(b),
            head: opt_num(h),
            change: change_text(r),
            p: pval(r.p),
            q: pval(if r.control { r.p } else { r.q }),
            reason: r.reason.clone(),
            peak: match (&r.peak, h, r.measured_peak) {
                (Some(p), Some(v), Some(m)) => {
                    format!("{:.1}% ({:.0}% of measured)", p.percent(v), 100.0 * v / m)
                }
                (Some(p), Some(v), None) => format!("{:.1}%", p.percent(v)),
                _ => String::new(),
            },
            bad: r.numerics_failed() || (r.verdict == Verdict::Regression && !r.control),
        }
    }
}

fn reduced(r: &Row, report: &Report) -> (Option<f64>, Option<f64>) {
    match report.options.reduce {
        crate::compare::Reduce::Best => (r.base.best, r.head.best),
        crate::compare::Reduce::Median => (r.base.median, r.head.median),
    }
}

fn headline(report: &Report) -> String {
    let v = match report.verdict {
        Overall::Ok => "OK",
        Overall::Regression => "REGRESSION",
        Overall::Inconclusive => "INCONCLUSIVE",
        Overall::Unreliable => "UNRELIABLE",
    };
    format!("{v}: {}", report.reason)
}

fn counts(report: &Report) -> String {
    let mut parts = Vec::new();
    for v in [
        Verdict::Regression,
        Verdict::SizeUnknown,
        Verdict::Improvement,
        Verdict::WithinThreshold,
        Verdict::NoSignificantChange,
        Verdict::Insufficient,
        Verdict::Invalid,
        Verdict::Withheld,
        Verdict::Unreliable,
    ] {
        let n = report.count(v);
        if n > 0 && v == Verdict::Regression {
            // `us` and `TFLOPS` of one shape moving together are one regression.
            let shapes = crate::compare::regressed_rows(
                report.rows.iter().filter(|r| !crate::compare::is_energy(r)),
            )
            .len();
            let energy = |trial: bool| {
                report.rows.iter().any(|r| {
                    crate::compare::is_energy(r)
                        && crate::compare::is_trial_energy(r) == trial
                        && r.verdict == Verdict::Regression
                })
            };
            let energy = match (energy(true), energy(false)) {
                (false, false) => None,
                (true, false) => Some("a trial's GPU energy"),
                (false, true) => Some("energy per call"),
                (true, true) => Some("a trial's GPU energy and energy per call"),
            };
            parts.push(match (shapes, energy) {
                (_, None) => format!("{n} regression ({shapes} kernel/shape row(s))"),
                (0, Some(e)) => format!("{n} regression ({e})"),
                (_, Some(e)) => format!("{n} regression ({shapes} kernel/shape row(s) and {e})"),
            });
        } else if n > 0 {
            parts.push(format!("{n} {}", v.as_str()));
        }
    }
    if parts.is_empty() {
        "no rows compared".into()
    } else {
        parts.join(", ")
    }
}

fn side_line(name: &str, s: &crate::compare::SideInfo) -> String {
    format!(
        "{name}: '{}' ({} run(s) by {}{})",
        s.selector,
        s.runs.len(),
        s.matched_by,
        if s.commits.is_empty() {
            String::new()
        } else {
            format!(", commit {}", s.commits.join(", "))
        }
    )
}

fn control_lines(report: &Report) -> Vec<String> {
    let Some(c) = &report.control else {
        return vec!["control: none given (drift cannot be told from change)".into()];
    };
    if c.metrics.is_empty() {
        return vec![format!(
            "control '{}': matched no comparable row",
            c.variant.join(",")
        )];
    }
    c.metrics
        .iter()
        .map(|m| {
            format!(
                "control {} on {}: {} over {} row(s) -> {} (tolerance ±{:.0}%)",
                c.matched_variants.join(","),
                m.metric,
                pct(Some(m.ratio - 1.0)),
                m.rows,
                if m.passed { "passed" } else { "FAILED" },
                c.tolerance * 100.0
            )
        })
        .collect()
}

/// How rows were matched, per table: the key columns, and the derived columns that were
/// kept out of the key.
fn key_basis_lines(report: &Report) -> Vec<String> {
    report
        .key_basis
        .iter()
        .map(|k| {
            let derived = if k.derived_columns_excluded.is_empty() {
                String::new()
            } else {
                format!(
                    "; derived columns not in the key: {}",
                    k.derived_columns_excluded.join(", ")
                )
            };
            format!(
                "rows of {} matched on variant, metric and key [{}]{derived}",
                k.table,
                k.key_columns.join(", ")
            )
        })
        .collect()
}

/// The GPU energy beside the geomean (which it is not part of): `; GPU energy a trial:
/// gpu=0 -15.5% (improvement)`, `; energy per call over 12 row(s): geomean -17.0%, 12
/// improvement`, or nothing without energy rows.
fn energy_summary(report: &Report) -> String {
    let mut out = String::new();
    let trial: Vec<String> = report
        .rows
        .iter()
        .filter(|r| crate::compare::is_trial_energy(r))
        .map(|r| format!("{} {} ({})", r.key_text, pct(r.change), r.verdict.as_str()))
        .collect();
    if !trial.is_empty() {
        out.push_str(&format!("; GPU energy a trial: {}", trial.join(", ")));
    }
    // The headline's rule: rows compared and trusted, not the control's.
    let per_call: Vec<&crate::compare::Row> = report
        .rows
        .iter()
        .filter(|r| crate::compare::is_energy(r) && !crate::compare::is_trial_energy(r))
        .filter(|r| !r.control)
        .collect();
    if per_call.is_empty() {
        return out;
    }
    let ratios: Vec<f64> = per_call
        .iter()
        .filter(|r| r.verdict.is_decided())
        .filter_map(|r| r.change.map(|c| 1.0 + c))
        .collect();
    let geomean = (!ratios.is_empty()).then(|| crate::stats::geomean_t_ci(&ratios).0 - 1.0);
    let mut verdicts: Vec<(Verdict, usize)> = Vec::new();
    for r in &per_call {
        match verdicts.iter_mut().find(|(v, _)| *v == r.verdict) {
            Some((_, n)) => *n += 1,
            None => verdicts.push((r.verdict, 1)),
        }
    }
    let verdicts: Vec<String> = verdicts
        .iter()
        .map(|(v, n)| format!("{n} {}", v.as_str()))
        .collect();
    out.push_str(&format!(
        "; energy per call over {} row(s): geomean {}, {}",
        per_call.len(),
        pct(geomean),
        verdicts.join(", ")
    ));
    out
}

fn summary_line(report: &Report) -> String {
    match report.summary.geomean_ratio {
        None => "geomean: no rows compared".into(),
        Some(g) => {
            let ci = report
                .summary
                .ci
                .map(|(lo, hi)| {
                    format!(
                        " [95% CI {} .. {}]",
                        pct(Some(lo - 1.0)),
                        pct(Some(hi - 1.0))
                    )
                })
                .unwrap_or_default();
            format!(
                "geomean change over {} row(s): {}{ci} (positive = slower){}",
                report.summary.rows,
                pct(Some(g - 1.0)),
                energy_summary(report)
            )
        }
    }
}

/// A small comparison every exporter's tests print: a regression, a control row, an
/// unchanged row, a row too short to compare, a row missing on head.
#[cfg(test)]
pub(crate) fn sample_report() -> Report {
    use crate::compare::test_row::test_row;
    use crate::compare::{
        ControlMetric, ControlStatus, KeyBasis, MatchedBy, OneSided, OneSidedKind, Options, Reason,
        ReasonCode, SideInfo, SideStats, Summary,
    };
    let stats = |v: &[f64]| SideStats {
        n: v.len(),
        values: v.iter().map(|x| Some(*x)).collect(),
        best: v.iter().copied().reduce(f64::min),
        median: Some(crate::stats::median(v)),
        median_ci: (None, None),
    };
    let row = |variant: &str, m: &str, b: &[f64], h: &[f64], verdict: Verdict| Row {
        table: "gemm".into(),
        variant: variant.into(),
        key: vec![("M".into(), m.into()), ("N".into(), "4096".into())],
        key_text: format!("M={m} N=4096"),
        ratio: Some(crate::stats::median(h) / crate::stats::median(b)),
        change: Some(crate::stats::median(h) / crate::stats::median(b) - 1.0),
        p: Some(0.0004),
        q: Some(0.0012),
        verdict,
        ..test_row(stats(b), stats(h))
    };
    let side = |name: &str| SideInfo {
        selector: name.into(),
        not_timed: vec![],
        identity_runs: vec![],
        matched_by: MatchedBy::Label,
        runs: vec![
            format!("{name}-1"),
            format!("{name}-2"),
            format!("{name}-3"),
        ],
        labels: vec![name.into()],
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
    };
    let regressed = row(
        "triton",
        "512",
        &[10.0, 10.1, 10.2],
        &[12.0, 12.1, 12.2],
        Verdict::Regression,
    );
    let control = Row {
        control: true,
        p: Some(0.61),
        q: None,
        ..row(
            "torch",
            "512",
            &[20.0, 20.2, 20.1],
            &[20.1, 20.0, 20.2],
            Verdict::NoSignificantChange,
        )
    };
    let same = row(
        "triton",
        "1024",
        &[30.0, 30.3, 30.1],
        &[30.2, 30.0, 30.1],
        Verdict::NoSignificantChange,
    );
    let short = Row {
        reason: "1 trial on head: a test needs 3 a side (add trials)".into(),
        p: None,
        q: None,
        ..row(
            "triton",
            "2048",
            &[40.0, 40.1, 40.3],
            &[41.0],
            Verdict::Insufficient,
        )
    };
    let reasons = vec![Reason::new(
        ReasonCode::Regressed,
        Some(1),
        "1 kernel/shape row(s) regressed (1 metric row(s))".into(),
    )];
    Report {
        verdict: Overall::Regression,
        reason: Reason::prose(&reasons),
        reasons,
        base: side("base"),
        head: side("head"),
        options: Options {
            control: vec!["torch".into()],
            ..Options::default()
        },
        control: Some(ControlStatus {
            variant: vec!["torch".into()],
            matched_variants: vec!["torch".into()],
            tolerance: 0.10,
            metrics: vec![ControlMetric {
                metric: "latency".into(),
                ratio: 1.0,
                rows: 1,
                passed: true,
            }],
        }),
        summary: Summary {
            geomean_ratio: Some(1.09),
            ci: Some((1.01, 1.18)),
            t_ci: None,
            rows: 2,
        },
        rows: vec![regressed, short, same, control],
        only_in_base: vec![OneSided {
            verdict: OneSidedKind::Missing,
            table: "gemm".into(),
            variant: "triton".into(),
            key: vec![("M".into(), "8192".into()), ("N".into(), "4096".into())],
            metric: "latency".into(),
            filled_from: None,
        }],
        only_in_head: vec![],
        not_timed: vec![],
        not_measured: 0,
        key_basis: vec![KeyBasis {
            table: "gemm".into(),
            key_columns: vec!["M".into(), "N".into()],
            derived_columns_excluded: vec![],
        }],
        warnings: vec![],
        counters: vec![],
        profiling: vec![],
    }
}
