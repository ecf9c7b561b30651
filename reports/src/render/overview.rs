//! The overview in the terminal (`perfdb status`): one line a series, worst first.

use crate::fmt::ratio_pct as percent;
use crate::overview::{spark_text, Overview};

/// The rows as a text table with a header line saying what they span (`perfdb status`),
/// or as CSV; `total` is the number of series before the list was cut.
pub fn table(o: &Overview, total: usize, csv: bool) -> String {
    let mut head = vec![
        "table",
        "variant",
        "key",
        "metric",
        "trend",
        "latest step",
        "alerts",
        "last measured",
    ];
    let with_peak = o.rows.iter().any(|r| r.percent_of_peak.is_some());
    if with_peak {
        head.insert(5, "% peak");
    }
    let rows: Vec<Vec<String>> = o.rows.iter().map(|r| cells(r, with_peak)).collect();
    if csv {
        let mut out = head.join(",") + "\n";
        for r in &rows {
            let cells: Vec<String> = r
                .iter()
                .map(|c| {
                    if c.contains([',', '"', '\n']) {
                        format!("\"{}\"", c.replace('"', "\"\""))
                    } else {
                        c.clone()
                    }
                })
                .collect();
            out.push_str(&cells.join(","));
            out.push('\n');
        }
        return out;
    }
    let mut out = format!(
        "label {} on {}: {} series over the newest {} commit(s) ({} .. {}), worst first\n\n",
        o.label,
        o.machine,
        total,
        o.commits.len(),
        o.commits.first().map(String::as_str).unwrap_or("-"),
        o.commits.last().map(String::as_str).unwrap_or("-"),
    );
    if !o.class_stale.is_empty() {
        out.push_str(&format!(
            "{} stopped reporting: stale alert {}\n\n",
            o.machine,
            o.class_stale.join(", ")
        ));
    }
    let width = |i: usize| {
        rows.iter()
            .map(|r| r[i].chars().count())
            .chain([head[i].len()])
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..head.len()).map(width).collect();
    let line = |cells: &[&str]| {
        let mut l = String::new();
        for (i, c) in cells.iter().enumerate() {
            let pad = widths[i].saturating_sub(c.chars().count());
            l.push_str(c);
            if i + 1 < cells.len() {
                l.push_str(&" ".repeat(pad + 2));
            }
        }
        l.trim_end().to_string() + "\n"
    };
    out.push_str(&line(&head));
    for r in &rows {
        out.push_str(&line(&r.iter().map(String::as_str).collect::<Vec<_>>()));
    }
    if rows.len() < total {
        out.push_str(&format!(
            "... {} more (--limit 0 shows all)\n",
            total - rows.len()
        ));
    }
    out
}

/// One series' cells, in the header's order.
fn cells(r: &crate::overview::Row, with_peak: bool) -> Vec<String> {
    let step = match &r.step {
        Some(s) => format!(
            "{} at {}{}",
            percent(s.ratio),
            s.commit,
            if s.worse { " (worse)" } else { "" }
        ),
        None => "none".to_string(),
    };
    let last = if r.commits_since == 0 {
        r.last_commit.clone()
    } else {
        format!("{} ({} commits ago)", r.last_commit, r.commits_since)
    };
    let mut cells = vec![
        r.table.clone(),
        r.variant.clone(),
        r.key_text.clone(),
        format!("{} ({})", r.metric, r.unit),
        spark_text(&r.medians),
        step,
        if r.open_alerts.is_empty() {
            String::new()
        } else {
            r.open_alerts.join(" ")
        },
        last,
    ];
    if with_peak {
        let p = r
            .percent_of_peak
            .map(|p| format!("{p:.1}%"))
            .unwrap_or_default();
        cells.insert(5, p);
    }
    cells
}
