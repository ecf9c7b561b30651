//! The comparison as JSON: the report itself (docs/compare-json.md).

use super::Exporter;
use crate::compare::Report;

pub struct Json;

impl Exporter for Json {
    fn render(&self, report: &Report) -> String {
        crate::json::pretty(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON is the report itself: it reads back as what was written.
    #[test]
    fn the_report_round_trips() {
        let report = super::super::sample_report();
        let text = Json.render(&report);
        let back: Report = serde_json::from_str(&text).unwrap();
        assert_eq!(Json.render(&back), text);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        insta::assert_snapshot!(v["reasons"], @r#"
            [{"code":"regressed","rows":1,"text":"1 kernel/shape row(s) regressed (1 metric row(s))"}]
            "#);
        insta::assert_snapshot!(v["only_in_base"], @r#"
            [{"key":{"M":"8192","N":"4096"},"metric":"latency","table":"gemm","variant":"triton","verdict":"missing"}]
            "#);
    }
}
