//! The alerts `perfdb detect` stored (`perfdb alerts list`, `show`): one column list for
//! the terminal table and the markdown comment, one alert in full, and JSON.

use super::columns::{markdown_table, terminal_lines, Column};
use crate::alerts::confirm::render_text;
use crate::alerts::{AlertDetail, AlertGroup, AlertView, Moved};
use crate::fmt::OutputFormat;

/// The columns of an alert list.
pub const ALERT_COLUMNS: &[Column<AlertView>] = &[
    Column::left("id", |a: &AlertView| a.id.clone()),
    Column::left("status", |a: &AlertView| a.status.to_string()),
    Column::left("kernel", |a: &AlertView| {
        format!("{} {}", a.table, a.variant)
    }),
    Column::left("shape", |a: &AlertView| a.key_text.clone()),
    Column::left("machine", |a: &AlertView| a.machine.clone()),
    Column::left("first bad", |a: &AlertView| {
        format!("{} (last good {})", a.first_bad_commit, a.last_good_commit)
    }),
    Column::right("change", |a: &AlertView| a.change_text()),
    Column::left("metrics", |a: &AlertView| a.metrics.join(", ")),
];

/// The alerts as a terminal table.
pub fn table(alerts: &[AlertView]) -> String {
    if alerts.is_empty() {
        return "no alerts\n".to_string();
    }
    terminal_lines(ALERT_COLUMNS, alerts).join("\n") + "\n"
}

/// The alerts as a markdown comment body.
pub fn markdown(alerts: &[AlertView]) -> String {
    format!(
        "### perfdb: {} alert(s)\n\n{}",
        alerts.len(),
        markdown_table(ALERT_COLUMNS, alerts)
    )
}

/// The columns of a grouped list: one row a group, led by its worst alert.
pub const GROUP_COLUMNS: &[Column<AlertGroup>] = &[
    Column::left("group", |g: &AlertGroup| g.id.clone()),
    Column::left("status", |g: &AlertGroup| g.status.to_string()),
    Column::right("alerts", |g: &AlertGroup| g.alerts.len().to_string()),
    Column::left("machine", |g: &AlertGroup| g.machine.clone()),
    Column::left("first bad", |g: &AlertGroup| {
        format!("{} (last good {})", g.first_bad_commit, g.last_good_commit)
    }),
    Column::left("worst", |g: &AlertGroup| {
        let w = g.worst();
        format!("{} {} {}", w.table, w.variant, w.key_text)
    }),
    Column::right("change", |g: &AlertGroup| g.worst().change_text()),
];

/// The groups: a table a group and, under each, its alerts (worst first); markdown the
/// same; JSON the groups with their alerts.
pub fn groups(groups: &[AlertGroup], format: OutputFormat) -> String {
    match format {
        OutputFormat::Json => crate::json::pretty(groups),
        _ if groups.is_empty() => "no alerts\n".to_string(),
        OutputFormat::Table => {
            let mut s = terminal_lines(GROUP_COLUMNS, groups).join("\n") + "\n";
            for g in groups.iter().filter(|g| g.alerts.len() > 1) {
                s.push_str(&format!("\ngroup {} ({} alerts):\n", g.id, g.alerts.len()));
                s.push_str(&table(&g.alerts));
            }
            s
        }
        OutputFormat::Markdown => {
            let n: usize = groups.iter().map(|g| g.alerts.len()).sum();
            let mut s = format!(
                "### perfdb: {} change(s), {n} alert(s)\n\n{}",
                groups.len(),
                markdown_table(GROUP_COLUMNS, groups)
            );
            for g in groups.iter().filter(|g| g.alerts.len() > 1) {
                s.push_str(&format!(
                    "\n<details><summary>group {}: {} alerts</summary>\n\n{}\n</details>\n",
                    g.id,
                    g.alerts.len(),
                    markdown_table(ALERT_COLUMNS, &g.alerts)
                ));
            }
            s
        }
    }
}

/// One alert in full for the terminal: its row, what changed underneath it, each metric
/// that moved, its status changes and how to confirm it.
fn one(d: &AlertDetail) -> String {
    let a = &d.alert;
    let mut s = table(std::slice::from_ref(a));
    s.push_str(&format!(
        "  underneath: {}\n",
        d.underneath
            .between(&a.last_good_commit, &a.first_bad_commit)
    ));
    if !d.beside.is_empty() {
        s.push_str(&format!(
            "  beside it, the same shape across the same commits: {}\n",
            crate::alerts::beside::text(&d.beside)
        ));
    }
    for (row, lines) in crate::compare::counters::lines(&d.counters, 8) {
        s.push_str(&format!("  counters at the step, {row}\n"));
        for l in lines {
            s.push_str(&format!("    {l}\n"));
        }
    }
    s.push_str(&moved_and_history(a));
    if let Some(c) = &d.confirm {
        s.push_str(&render_text(c));
    }
    s
}

/// Each metric that moved and the alert's status changes, a line each.
fn moved_and_history(a: &AlertView) -> String {
    let mut s = String::new();
    for m in a.moved() {
        match m {
            Moved::Stale {
                metric,
                missing_commits,
            } => s.push_str(&format!(
                "  {metric}: not measured for {missing_commits} commit(s) after {}\n",
                a.last_good_commit
            )),
            Moved::Step {
                metric,
                unit,
                before_median,
                after_median,
                ratio,
                p,
            } => s.push_str(&format!(
                "  {}\n",
                super::move_text(&metric, &unit, before_median, after_median, ratio, p)
            )),
        }
    }
    for h in &a.history {
        s.push_str(&format!("  status {} by {}: {}\n", h.status, h.who, h.note));
    }
    s
}

/// The alerts in `format` (`alerts list`, and a triage action's result: the first alert
/// alone when `one_alert`).
pub fn show(alerts: &[AlertView], format: OutputFormat, one_alert: bool) -> String {
    match format {
        OutputFormat::Table if one_alert => table(&alerts[..1]) + &moved_and_history(&alerts[0]),
        OutputFormat::Table => table(alerts),
        OutputFormat::Markdown => markdown(alerts),
        OutputFormat::Json if one_alert => crate::json::pretty(&alerts[0]),
        OutputFormat::Json => crate::json::pretty(alerts),
    }
}

/// One alert in full in `format` (`alerts show`).
pub fn detail(d: &AlertDetail, format: OutputFormat) -> String {
    let bisect = d
        .bisect
        .as_ref()
        .map(|b| crate::bisect::summary(b) + "\n")
        .unwrap_or_default();
    match format {
        OutputFormat::Table => one(d) + &bisect,
        OutputFormat::Markdown => markdown(std::slice::from_ref(&d.alert)) + &bisect,
        OutputFormat::Json => crate::json::pretty(d),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfdb_ingest::model::AlertStatus;

    fn alert(id: &str, status: AlertStatus, ratio: f64) -> AlertView {
        AlertView {
            kind: crate::alerts::AlertKind::Regression,
            id: id.into(),
            status,
            label: "main".into(),
            table: "gemm".into(),
            variant: "triton".into(),
            key: vec![("M".into(), "512".into())],
            key_json: r#"{"M":"512"}"#.into(),
            fingerprint: String::new(),
            key_text: "M=512".into(),
            metrics: vec!["latency".into(), "throughput".into()],
            metric_detail: serde_json::Value::Null,
            machine: "gfx942/default".into(),
            last_good_commit: "c06".into(),
            first_bad_commit: "c07".into(),
            ratio,
            p: 1e-5,
            runs: serde_json::Value::Null,
            created_at_us: 0,
            history: vec![],
        }
    }

    #[test]
    fn one_column_list_both_ways() {
        let a = [
            alert("3f2a9c01d4e5b6a7", AlertStatus::Active, 1.214),
            alert("0b1c2d3e4f5a6b7c", AlertStatus::Acknowledged, 1.052),
        ];
        insta::assert_snapshot!(table(&a), @r"
            id                status        kernel       shape  machine         first bad            change  metrics
            3f2a9c01d4e5b6a7  active        gemm triton  M=512  gfx942/default  c07 (last good c06)  +21.4%  latency, throughput
            0b1c2d3e4f5a6b7c  acknowledged  gemm triton  M=512  gfx942/default  c07 (last good c06)   +5.2%  latency, throughput
            ");
        insta::assert_snapshot!(markdown(&a), @r"
            ### perfdb: 2 alert(s)

            | id | status | kernel | shape | machine | first bad | change | metrics |
            |---|---|---|---|---|---|---:|---|
            | 3f2a9c01d4e5b6a7 | active | gemm triton | M=512 | gfx942/default | c07 (last good c06) | +21.4% | latency, throughput |
            | 0b1c2d3e4f5a6b7c | acknowledged | gemm triton | M=512 | gfx942/default | c07 (last good c06) | +5.2% | latency, throughput |
            ");
        assert_eq!(table(&[]), "no alerts\n");
    }
}
