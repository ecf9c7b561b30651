//! The alerts `perfdb detect` stored (`perfdb alerts list`): one column list for the
//! terminal table and the markdown comment.

use super::columns::{markdown_table, terminal_lines, Column};
use crate::triage::AlertView;

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

#[cfg(test)]
mod tests {
    use super::*;
    use perfdb_ingest::model::AlertStatus;

    fn alert(id: &str, status: AlertStatus, ratio: f64) -> AlertView {
        AlertView {
            kind: crate::triage::AlertKind::Regression,
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
