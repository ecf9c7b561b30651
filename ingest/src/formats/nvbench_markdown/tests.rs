//! The nvbench markdown reader on inline texts.

use super::*;
use crate::formats::nvbench_markdown::cells::axis_value;
use crate::formats::nvbench_markdown::cells::read_cell;
use crate::formats::nvbench_markdown::cells::Cell;

#[test]
fn cells_in_their_units() {
    assert_eq!(read_cell("1.431 ms", Cell::Time), Some(Some(1431.0)));
    assert_eq!(read_cell("26.763 us", Cell::Time), Some(Some(26.763)));
    assert_eq!(read_cell("14.24%", Cell::Percent), Some(Some(0.1424)));
    assert_eq!(read_cell("inf%", Cell::Percent), Some(None));
    assert_eq!(read_cell("768.556T", Cell::Count), Some(Some(768.556e12)));
    assert_eq!(read_cell("1056x", Cell::Count), Some(Some(1056.0)));
    assert_eq!(
        read_cell("16.000 MiB", Cell::Count),
        Some(Some(16.0 * 1048576.0))
    );
    assert_eq!(
        read_cell("281.454 GB/s", Cell::Bandwidth),
        Some(Some(0.281454))
    );
    assert_eq!(read_cell("2.333 TB/s", Cell::Bandwidth), Some(Some(2.333)));
    assert_eq!(read_cell("fast", Cell::Time), None);
    assert_eq!(read_cell("12 GB/s", Cell::Time), None);
    assert_eq!(axis_value("2^10 = 1024"), "1024");
    assert_eq!(axis_value("matmul"), "matmul");
    use crate::formats::nvbench_markdown::cells::same_axis_value;
    assert!(same_axis_value("2^16 = 65536", "2^16"));
    assert!(same_axis_value("2^16 = 65536", "65536"));
    assert!(!same_axis_value("2^16 = 65536", "2^17"));
    assert!(same_axis_value("matmul", "matmul"));
}

/// The key and compared value of every row: (key, latency in us).
fn rows(text: &str) -> (crate::formats::Format, Vec<(String, Option<f64>)>, String) {
    let (f, p) = crate::formats::parse(text, None).unwrap();
    let method = p
        .provenance
        .tags
        .iter()
        .find(|(k, _)| k == "method")
        .unwrap()
        .1
        .clone();
    let rows = p
        .measurements
        .iter()
        .filter(|m| m.metric.as_str() == "latency")
        .map(|m| (p.key(m).to_string(), m.value))
        .collect();
    (f, rows, method)
}

/// nvbench's summaries example: axes named `ms` and `us` (keys, not latencies), the
/// mean hidden and the min/max shown; the minimum is compared.
#[test]
fn axes_named_like_units_are_keys_and_min_max_tables_compare_the_minimum() {
    let text = "# Log\n\n```\nRun:  [1/2] summary_example [Device=0 ms=10 us=100]\n\
        Pass: Cold: 10.1ms GPU\nRun:  [2/2] summary_example [Device=0 ms=10 us=300]\n```\n\n\
        # Benchmark Results\n\n## summary_example\n\n### [0] NVIDIA H200\n\n\
        | ms | us  | Duration (s) | Samples | Min CPU Time | Max CPU Time | Noise | Min GPU Time | Max GPU Time | Noise |\n\
        |----|-----|--------------|---------|--------------|--------------|-------|--------------|--------------|-------|\n\
        | 10 | 100 |    10.100 ms |     50x |    10.112 ms |    10.150 ms | 0.10% |    10.101 ms |    10.140 ms | 0.08% |\n\
        | 10 | 300 |    10.300 ms |     49x |    10.312 ms |    10.350 ms | 0.09% |    10.301 ms |    10.340 ms | 0.07% |\n";
    let (f, rows, method) = rows(text);
    assert_eq!(f, crate::formats::Format::NvbenchMarkdown);
    assert_eq!(method, "nvbench:cold-min");
    assert_eq!(
        rows,
        vec![
            (r#"{"ms":"10","us":"100"}"#.to_string(), Some(10101.0)),
            (r#"{"ms":"10","us":"300"}"#.to_string(), Some(10301.0)),
        ]
    );
}

/// Axis names with spaces (`Axis Size`) and power-of-two cells (`2^1 = 2`), as a
/// course repository's committed outputs print them.
#[test]
fn axis_names_with_spaces_and_power_of_two_cells() {
    let text = "# Log\n\n```\nRun:  [1/2] Not Coalesced (Different Array Sizes) [Device=0 Axis Size=2^1]\n\
        Run:  [2/2] Not Coalesced (Different Array Sizes) [Device=0 Axis Size=2^3]\n```\n\n\
        # Benchmark Results\n\n## Not Coalesced (Different Array Sizes)\n\n### [0] NVIDIA GeForce RTX 3060 Ti\n\n\
        |  Axis Size  | Num Elements | Samples |  CPU Time  |  Noise  |  GPU Time  | Noise  |\n\
        |-------------|--------------|---------|------------|---------|------------|--------|\n\
        |     2^1 = 2 |            8 |  70149x |  27.116 us | 315.39% |   7.128 us | 13.06% |\n\
        |     2^3 = 8 |          128 |  69708x |  26.414 us | 271.29% |   7.173 us | 12.60% |\n";
    let (f, rows, _) = rows(text);
    assert_eq!(f, crate::formats::Format::NvbenchMarkdown);
    assert_eq!(
        rows,
        vec![
            (r#"{"Axis Size":"2"}"#.to_string(), Some(7.128)),
            (r#"{"Axis Size":"8"}"#.to_string(), Some(7.173)),
        ]
    );
    assert_eq!(
        run_axes("Device=0 Axis Size=2^1 Num Threads=2^9"),
        vec![
            ("Device".to_string(), "0".to_string()),
            ("Axis Size".to_string(), "2^1".to_string()),
            ("Num Threads".to_string(), "2^9".to_string()),
        ]
    );
}

/// A table pasted into an issue: no `# Benchmark Results`, no log, no heading.
#[test]
fn a_table_pasted_without_its_sections() {
    let text = "Here is what I get:\n\n\
        | T{ct} | Elements{io} | Samples |  CPU Time  | Noise  |  GPU Time  | Noise  | Elem/s  |\n\
        |-------|--------------|---------|------------|--------|------------|--------|---------|\n\
        |   I32 | 2^16 = 65536 |   1000x | 114.193 us | 37.11% |  19.632 us | 75.68% |  3.338G |\n\
        |   I32 | 2^20 = 1048576 |   1000x | 124.193 us | 7.11% |  29.632 us | 5.68% |  35.386G |\n";
    let (f, rows, method) = rows(text);
    assert_eq!(f, crate::formats::Format::NvbenchMarkdown);
    assert_eq!(method, "nvbench:cold-mean");
    assert_eq!(
        rows,
        vec![
            (
                r#"{"Elements{io}":"65536","T{ct}":"I32"}"#.to_string(),
                Some(19.632)
            ),
            (
                r#"{"Elements{io}":"1048576","T{ct}":"I32"}"#.to_string(),
                Some(29.632)
            ),
        ]
    );
}

#[test]
fn a_benchmark_with_no_data_is_said_and_a_file_of_only_those_is_a_failed_run() {
    let mixed = "# Benchmark Results\n\n## copy\n\n\
        | N | Samples | CPU Time | Noise | GPU Time | Noise |\n\
        |---|---|---|---|---|---|\n\
        | 1024 | 100x | 10.000 us | 1.00% | 9.000 us | 1.00% |\n\n\
        ## big\n\nNo data -- check log.\n";
    assert_eq!(
        crate::formats::detect(mixed).unwrap(),
        crate::formats::Format::NvbenchMarkdown
    );
    let p = NvbenchMarkdown.parse(mixed).unwrap();
    assert_eq!(p.provenance.verdict, None, "copy measured");
    assert!(p.measurements.iter().any(|m| m.value == Some(9.0)));
    let w = p
        .warnings
        .iter()
        .find(|w| w.reason.starts_with("big: no data"))
        .unwrap_or_else(|| panic!("{:?}", p.warnings));
    assert_eq!(w.line, 11, "the line of `No data -- check log.`");

    let only = "# Log\n\nRun:  [1/1] big [Device=0 N=1]\nSkip: OOM: out of memory\n\n\
        # Benchmark Results\n\n## big\n\n### [0] NVIDIA A30\n\nNo data -- check log.\n";
    assert_eq!(
        crate::formats::detect(only).unwrap(),
        crate::formats::Format::NvbenchMarkdown
    );
    let p = NvbenchMarkdown.parse(only).unwrap();
    assert_eq!(p.provenance.verdict, Some(crate::model::RunVerdict::Fail));
    assert_eq!(
        p.provenance.verdict_detail.as_deref(),
        Some("big: no data: nvbench skipped 1 of its 1 state(s) (OOM: out of memory)")
    );
    assert!(p.measurements.is_empty());
}
