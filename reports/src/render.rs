//! Exporters for a comparison: one per output format, behind [`Exporter`].

use crate::compare::{Overall, Report, Row, Verdict};
use std::fmt::Write;

pub trait Exporter {
    fn render(&self, report: &Report) -> String;
}

pub struct Json;
pub struct Markdown;
pub struct Terminal {
    pub color: bool,
}

/// Significant-figure formatting for values: 4 significant digits, no exponent for
/// ordinary magnitudes.
pub fn num(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let mag = v.abs().log10().floor() as i32;
    if !(-4..6).contains(&mag) {
        return format!("{v:.3e}");
    }
    let decimals = (3 - mag).max(0) as usize;
    format!("{v:.decimals$}")
}

fn opt_num(v: Option<f64>) -> String {
    v.map(num).unwrap_or_else(|| "-".into())
}

fn pct(change: Option<f64>) -> String {
    change
        .map(|c| format!("{:+.1}%", c * 100.0))
        .unwrap_or_else(|| "-".into())
}

/// A row's change in its metric's own terms, with the direction-aware factor:
/// TFLOPS 535 -> 176 is `-67.1% (3.04x slower)`, latency 10 -> 12 us `+20.0% (1.20x slower)`.
pub fn change_text(r: &Row) -> String {
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
            let shapes = crate::compare::regressed_rows(&report.rows).len();
            parts.push(format!("{n} regression ({shapes} kernel/shape row(s))"));
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
                "geomean change over {} row(s): {}{ci} (positive = slower)",
                report.summary.rows,
                pct(Some(g - 1.0))
            )
        }
    }
}

impl Exporter for Json {
    fn render(&self, report: &Report) -> String {
        serde_json::to_string_pretty(report).expect("report serialises") + "\n"
    }
}

impl Exporter for Markdown {
    fn render(&self, report: &Report) -> String {
        let mut s = String::new();
        let icon = match report.verdict {
            Overall::Ok => "✅",
            Overall::Regression => "❌",
            _ => "⚠️",
        };
        let _ = writeln!(s, "## perfdb: {icon} {}\n", headline(report));
        let _ = writeln!(s, "- {}", side_line("base", &report.base));
        let _ = writeln!(s, "- {}", side_line("head", &report.head));
        let _ = writeln!(
            s,
            "- rows: {} (reduce: {}, test: {}, threshold ±{:.0}%, alpha {})",
            counts(report),
            match report.options.reduce {
                crate::compare::Reduce::Best => "best of N",
                crate::compare::Reduce::Median => "median",
            },
            match report.options.test {
                crate::compare::Test::Welch => "Welch's t on log values",
                crate::compare::Test::MannWhitney => "Mann-Whitney U",
            },
            report.options.threshold * 100.0,
            report.options.alpha
        );
        let _ = writeln!(s, "- {}", summary_line(report));
        for c in control_lines(report) {
            let _ = writeln!(s, "- {c}");
        }
        for k in key_basis_lines(report) {
            let _ = writeln!(s, "- {k}");
        }
        for w in &report.warnings {
            let _ = writeln!(s, "- ⚠️ {w}");
        }
        let _ = writeln!(s);
        let shown: Vec<&Row> = report
            .rows
            .iter()
            .filter(|r| {
                r.numerics_failed()
                    || !matches!(
                        r.verdict,
                        Verdict::NoSignificantChange | Verdict::WithinThreshold
                    )
            })
            .collect();
        if !shown.is_empty() {
            let _ = writeln!(
                s,
                "| verdict | table | variant | key | metric | base | head | change | q | reason |"
            );
            let _ = writeln!(s, "|---|---|---|---|---|---:|---:|---:|---:|---|");
            for r in shown {
                let v = RowView::of(r, report);
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                    v.verdict,
                    v.table,
                    v.variant,
                    v.key,
                    v.metric,
                    v.base,
                    v.head,
                    v.change,
                    v.q,
                    v.reason.replace('|', "\\|")
                );
            }
            let _ = writeln!(s);
        }
        let quiet = report
            .rows
            .iter()
            .filter(|r| {
                !r.control
                    && !r.numerics_failed()
                    && matches!(
                        r.verdict,
                        Verdict::NoSignificantChange | Verdict::WithinThreshold
                    )
            })
            .count();
        if quiet > 0 {
            let _ = writeln!(
                s,
                "{quiet} other row(s) showed no change beyond the threshold.\n"
            );
        }
        // Missing rows decide the verdict: shown, not folded away.
        if !report.only_in_base.is_empty() {
            let _ = writeln!(
                s,
                "**Missing on head**: {} row(s) measured on base{}\n",
                report.only_in_base.len(),
                if report.options.allow_missing {
                    " (accepted: --allow-missing)"
                } else {
                    ""
                }
            );
            for o in &report.only_in_base {
                let _ = writeln!(s, "- {}", one_sided_text(o, " / "));
            }
            let _ = writeln!(s);
        }
        if !report.only_in_head.is_empty() {
            let _ = writeln!(
                s,
                "<details><summary>New on head ({} row(s))</summary>\n",
                report.only_in_head.len()
            );
            for o in &report.only_in_head {
                let _ = writeln!(s, "- {}", one_sided_text(o, " / "));
            }
            let _ = writeln!(s, "\n</details>\n");
        }
        s
    }
}

impl Exporter for Terminal {
    fn render(&self, report: &Report) -> String {
        let paint = |code: &str, text: &str| {
            if self.color {
                format!("\x1b[{code}m{text}\x1b[0m")
            } else {
                text.to_string()
            }
        };
        let mut s = String::new();
        let code = match report.verdict {
            Overall::Ok => "32",
            Overall::Regression => "31;1",
            _ => "33;1",
        };
        let _ = writeln!(s, "{}", paint(code, &headline(report)));
        let _ = writeln!(s, "{}", side_line("base", &report.base));
        let _ = writeln!(s, "{}", side_line("head", &report.head));
        for c in control_lines(report) {
            let _ = writeln!(s, "{c}");
        }
        let _ = writeln!(s, "{}", summary_line(report));
        let _ = writeln!(s, "rows: {}", counts(report));
        for k in key_basis_lines(report) {
            let _ = writeln!(s, "{k}");
        }
        for w in &report.warnings {
            let _ = writeln!(s, "{}", paint("33", &format!("warning: {w}")));
        }
        let _ = writeln!(s);
        let header = [
            "verdict", "table", "variant", "key", "metric", "base", "head", "change", "p", "q",
        ];
        let mut lines: Vec<[String; 10]> = Vec::new();
        for r in &report.rows {
            let v = RowView::of(r, report);
            lines.push([
                v.verdict,
                v.table,
                v.variant,
                v.key,
                v.metric,
                v.base,
                v.head,
                v.change,
                v.p,
                pval(r.q),
            ]);
        }
        let mut widths = header.map(|h| h.chars().count());
        for l in &lines {
            for (w, c) in widths.iter_mut().zip(l) {
                *w = (*w).max(c.chars().count());
            }
        }
        let fmt_line = |cells: &[String]| {
            cells
                .iter()
                .zip(widths)
                .enumerate()
                .map(|(i, (c, w))| {
                    if (5..10).contains(&i) {
                        format!("{c:>w$}")
                    } else {
                        format!("{c:<w$}")
                    }
                })
                .collect::<Vec<_>>()
                .join("  ")
                .trim_end()
                .to_string()
        };
        let _ = writeln!(s, "{}", fmt_line(&header.map(String::from)));
        for (l, r) in lines.iter().zip(&report.rows) {
            let text = fmt_line(l);
            let colored = if r.numerics_failed() || r.verdict == Verdict::Regression && !r.control {
                paint("31", &text)
            } else if r.verdict == Verdict::Improvement && !r.control {
                paint("32", &text)
            } else if !r.verdict.is_decided() {
                paint("33", &text)
            } else {
                text
            };
            let _ = writeln!(s, "{colored}");
        }
        let not_decided: Vec<&Row> = report
            .rows
            .iter()
            .filter(|r| !r.verdict.is_decided())
            .collect();
        if !not_decided.is_empty() {
            let _ = writeln!(s, "\nnot compared:");
            for r in not_decided {
                let _ = writeln!(
                    s,
                    "  {} {} {} {}: {}",
                    r.table,
                    r.variant,
                    r.key_display(),
                    r.metric,
                    r.reason
                );
            }
        }
        for (what, list) in [
            ("missing on head", &report.only_in_base),
            ("new on head", &report.only_in_head),
        ] {
            for o in list.iter() {
                let _ = writeln!(s, "{what}: {}", one_sided_text(o, " "));
            }
        }
        if report.not_measured > 0 {
            let _ = writeln!(
                s,
                "{} row(s) have no value on either side (not measured)",
                report.not_measured
            );
        }
        s
    }
}
