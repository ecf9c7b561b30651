//! The comparison in a terminal: an aligned table, coloured on a terminal.

use super::columns;
use super::*;

pub struct Terminal {
    pub color: bool,
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
        let views: Vec<RowView> = report.rows.iter().map(|r| RowView::of(r, report)).collect();
        let mut lines = columns::terminal_lines(&columns::row_columns(&views), &views).into_iter();
        let _ = writeln!(s, "{}", lines.next().expect("a header"));
        for (text, r) in lines.zip(&report.rows) {
            let colored = if r.numerics_failed() || r.verdict == Verdict::Regression && !r.control {
                paint("31", &text)
            } else if r.verdict == Verdict::Improvement && !r.control {
                paint("32", &text)
            } else if !r.verdict.is_decided() || r.verdict == Verdict::SizeUnknown {
                paint("33", &text)
            } else {
                text
            };
            let _ = writeln!(s, "{colored}");
        }
        for (heading, listed) in [
            (
                "size not shown",
                (|r: &Row| r.verdict == Verdict::SizeUnknown) as fn(&Row) -> bool,
            ),
            ("not compared", |r: &Row| !r.verdict.is_decided()),
        ] {
            let rows: Vec<&Row> = report.rows.iter().filter(|r| listed(r)).collect();
            if rows.is_empty() {
                continue;
            }
            let _ = writeln!(s, "\n{heading}:");
            for r in rows {
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
        for o in &report.not_timed {
            let _ = writeln!(
                s,
                "not timed on head: {}: identity equal to {}",
                one_sided_text(o, " "),
                o.filled_from.as_deref().unwrap_or("?")
            );
        }
        if report.not_measured > 0 {
            let _ = writeln!(
                s,
                "{} row(s) have no value on either side (not measured)",
                report.not_measured
            );
        }
        s.push_str(&counters_block(
            report,
            "\ncounters that moved:",
            "  ",
            "    ",
        ));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_aligned_and_no_colour_off_a_terminal() {
        insta::assert_snapshot!(Terminal { color: false }.render(&super::super::sample_report()), @r"
            REGRESSION: 1 kernel/shape row(s) regressed (1 metric row(s))
            base: 'base' (3 run(s) by label)
            head: 'head' (3 run(s) by label)
            control torch on latency: +0.0% over 1 row(s) -> passed (tolerance ±10%)
            geomean change over 2 row(s): +9.0% [95% CI +1.0% .. +18.0%] (positive = slower)
            rows: 1 regression (1 kernel/shape row(s)), 1 no significant change, 1 insufficient
            rows of gemm matched on variant, metric and key [M, N]

            verdict                          table  variant  key            metric         base   head                 change       p      q
            regression                       gemm   triton   M=512 N=4096   latency (us)  10.10  12.10  +19.8% (1.20x slower)  4.0e-4  0.001
            insufficient                     gemm   triton   M=2048 N=4096  latency (us)  40.10  41.00   +2.2% (1.02x slower)       -      -
            no significant change            gemm   triton   M=1024 N=4096  latency (us)  30.10  30.10   +0.0% (1.00x slower)  4.0e-4  0.001
            no significant change (control)  gemm   torch    M=512 N=4096   latency (us)  20.10  20.10   +0.0% (1.00x slower)   0.610  0.610

            not compared:
              gemm triton M=2048 N=4096 latency: 1 trial on head: a test needs 3 a side (add trials)
            missing on head: gemm triton M=8192 N=4096 latency
            ");
    }
}
