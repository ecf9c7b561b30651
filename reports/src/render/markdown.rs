//! The comparison as a pull-request comment (markdown).

use super::columns;
use super::*;

pub struct Markdown;

/// The rows' counts and how they were judged: `1 regression, ... (reduce: median, test:
/// Welch's t on log values, threshold ±5%, alpha 0.05)`.
fn rows_line(report: &Report) -> String {
    format!(
        "{} (reduce: {}, test: {}, threshold ±{:.0}%, alpha {})",
        counts(report),
        match report.options.reduce {
            crate::compare::Reduce::Best => "best of N",
            crate::compare::Reduce::Median => "median",
        },
        match report.options.test {
            crate::compare::Test::Welch => "Welch's t on log values",
            crate::compare::Test::MannWhitney => "Mann-Whitney U",
            crate::compare::Test::Trimmed => "Yuen's t on 20%-trimmed log values",
            crate::compare::Test::Adaptive => {
                "Yuen's t on 20%-trimmed log values where a few trials lie far out, else Welch's t"
            }
        },
        report.options.threshold * 100.0,
        report.options.alpha
    )
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
        let _ = writeln!(s, "- rows: {}", rows_line(report));
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
            let views: Vec<RowView> = shown.iter().map(|r| RowView::of(r, report)).collect();
            s.push_str(&columns::markdown_table(
                &columns::row_columns(&views),
                &views,
            ));
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
        if !report.not_timed.is_empty() {
            let _ = writeln!(
                s,
                "<details><summary>Not timed on head ({} row(s)): identity equal to the runs they are filled from</summary>\n",
                report.not_timed.len()
            );
            for o in &report.not_timed {
                let _ = writeln!(
                    s,
                    "- {}: {}",
                    one_sided_text(o, " / "),
                    o.filled_from.as_deref().unwrap_or("?")
                );
            }
            let _ = writeln!(s, "\n</details>\n");
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
        s.push_str(&counters_block(
            report,
            "\n**Counters that moved**\n",
            "- ",
            "  - ",
        ));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_comment_shows_what_moved_and_folds_the_rest() {
        insta::assert_snapshot!(Markdown.render(&super::super::sample_report()), @r"
            ## perfdb: ❌ REGRESSION: 1 kernel/shape row(s) regressed (1 metric row(s))

            - base: 'base' (3 run(s) by label)
            - head: 'head' (3 run(s) by label)
            - rows: 1 regression (1 kernel/shape row(s)), 1 no significant change, 1 insufficient (reduce: median, test: Welch's t on log values, threshold ±5%, alpha 0.05)
            - geomean change over 2 row(s): +9.0% [95% CI +1.0% .. +18.0%] (positive = slower)
            - control torch on latency: +0.0% over 1 row(s) -> passed (tolerance ±10%)
            - rows of gemm matched on variant, metric and key [M, N]

            | verdict | table | variant | key | metric | base | head | change | q | reason |
            |---|---|---|---|---|---:|---:|---:|---:|---|
            | regression | gemm | triton | M=512 N=4096 | latency (us) | 10.10 | 12.10 | +19.8% (1.20x slower) | 0.001 |  |
            | insufficient | gemm | triton | M=2048 N=4096 | latency (us) | 40.10 | 41.00 | +2.2% (1.02x slower) | - | 1 trial on head: a test needs 3 a side (add trials) |

            1 other row(s) showed no change beyond the threshold.

            **Missing on head**: 1 row(s) measured on base

            - gemm / triton / M=8192 N=4096 / latency
            ");
    }
}
