//! Detection by evidence and the rules every reader shares, on small texts.

use super::*;

fn read(text: &str) -> (Format, Parsed) {
    parse(text, None).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

type Row = (String, String, String, Option<f64>);

/// (variant, key, metric, value) of every value.
fn values(p: &Parsed) -> Vec<Row> {
    p.measurements
        .iter()
        .map(|m| row(m.variant.as_str(), p.key(m), m.metric.as_str(), m.value))
        .collect()
}

/// One expected row of `values`.
fn row(variant: &str, key: &str, metric: &str, value: Option<f64>) -> Row {
    (variant.into(), key.into(), metric.into(), value)
}

const NVBENCH_TABLE: &str = "\
| T{ct} | Elements{io} | Samples |  CPU Time  | Noise  |  GPU Time  | Noise  |\n\
|-------|--------------|---------|------------|--------|------------|--------|\n\
|   I32 | 2^16 = 65536 |   1000x | 114.193 us | 37.11% |  19.632 us | 75.68% |\n";

#[test]
fn an_nvbench_table_is_nvbench_even_in_a_log_the_aiter_tables_would_take() {
    let (f, _) = read(NVBENCH_TABLE);
    assert_eq!(f, Format::NvbenchMarkdown);
    let with_perf_line = format!("[perf] gemm: 12.5 us\n{NVBENCH_TABLE}");
    assert_eq!(read(&with_perf_line).0, Format::NvbenchMarkdown);
}

#[test]
fn two_signatures_are_refused_naming_both_formats() {
    let text = format!(
            "[aiter] gemm summary (markdown):\n| M | torch us |\n|---:|---:|\n| 1 | 2.5 |\n\n{NVBENCH_TABLE}"
        );
    let e = detect(&text).unwrap_err();
    assert!(
        e.reason.contains("nvbench-markdown") && e.reason.contains("aiter-table"),
        "{e}"
    );
    assert!(e.reason.contains("--format"), "{e}");
    // The `--format` it names settles it.
    let (f, p) = parse(&text, Some(Format::AiterTable)).unwrap();
    assert_eq!(f, Format::AiterTable);
    assert!(!p.measurements.is_empty());
}

#[test]
fn hand_written_tables_with_github_separators() {
    for sep in ["| --- | --- |", "|:---:|:---:|", "| :-: | --: |"] {
        let text = format!("| M | triton us |\n{sep}\n| 1 | 17.2 |\n| 16 | 19.9 |\n");
        let (f, p) = read(&text);
        assert_eq!(f, Format::AiterTable, "{sep}");
        assert_eq!(
            values(&p),
            [
                row("triton", r#"{"M":"1"}"#, "latency", Some(17.2)),
                row("triton", r#"{"M":"16"}"#, "latency", Some(19.9)),
            ],
            "{sep}"
        );
    }
}

/// aiter's autotuning tables print the chosen backend with its ratio: the column is
/// a result, never part of the row's identity.
#[test]
fn a_measured_number_inside_a_name_cell_is_never_identity() {
    let text = "| M | torch us | triton us | chosen |\n| --- | --- | --- | --- |\n\
                    | 1 | 18.4 | 17.2 | **triton** (1.07x) |\n| 16 | 18.5 | 19.9 | **torch** (0.93x) |\n";
    let (_, p) = read(text);
    let keys: std::collections::BTreeSet<String> = p
        .measurements
        .iter()
        .map(|m| p.key(m).to_string())
        .collect();
    assert_eq!(
        keys.into_iter().collect::<Vec<_>>(),
        [r#"{"M":"1"}"#, r#"{"M":"16"}"#]
    );
    let chosen: Vec<&str> = p
        .measurements
        .iter()
        .filter(|m| m.column.as_str() == "chosen")
        .map(|m| m.metric.as_str())
        .collect();
    assert_eq!(chosen, ["ratio", "ratio"]);
}

#[test]
fn difference_columns_are_derived_not_latencies() {
    let text = "| kernel | base (ns) | head (ns) | Delta (ns) |\n|:-:|-:|-:|-:|\n\
                    | add | 1200 | 1250 | 50 |\n";
    let (_, p) = read(text);
    let delta = p
        .measurements
        .iter()
        .find(|m| m.column.as_str() == "Delta (ns)")
        .unwrap();
    assert_eq!(delta.direction, crate::model::Direction::None);
    assert_eq!(delta.metric.as_str(), support::columns::DIFFERENCE);
}

#[test]
fn a_file_whose_measured_columns_are_all_empty_is_refused_naming_them() {
    let text = "| M | triton us |\n|---:|---:|\n| 1 |  |\n| 2 | - |\n";
    let e = parse(text, None).unwrap_err();
    assert_eq!(e.line, 3);
    assert!(
        e.reason
            .contains("every measured column is empty (triton us)"),
        "{e}"
    );
}

#[test]
fn a_table_of_only_nan_cells_is_refused_at_its_line() {
    for (header, says) in [
        (
            "| M | N | triton us | torch us |",
            "every measured column is empty",
        ),
        ("| M | N | triton | torch |", "not one cell holds a number"),
    ] {
        let text = format!("# Benchmark Results\n\n{header}\n|---:|---:|---:|---:|\n| nan | nan | nan | nan |\n| nan | nan | nan | nan |\n");
        let e = parse(&text, None).unwrap_err();
        assert!(e.line >= 3, "{e}");
        assert!(e.reason.contains(says), "{e}");
    }
    // Numbers under headers that say nothing of what they measure: found, not read.
    let text = "| Operation | cpu | cuda |\n|---|---|---|\n| Argmax | 9.36 | 0.06 |\n";
    let e = parse(text, None).unwrap_err();
    assert_eq!(e.line, 1, "{e}");
    assert!(
        e.reason.contains("none of its columns read as measured"),
        "{e}"
    );
}

#[test]
fn a_table_whose_every_kernel_errored_is_a_failed_run() {
    let text = "| M | triton us |\n|---:|---:|\n| 1 | error |\n| 2 | OOM |\n";
    let (_, p) = read(text);
    assert_eq!(p.provenance.verdict, Some(crate::model::RunVerdict::Fail));
    assert!(p.measurements.iter().all(|m| m.value.is_none()));
}

#[test]
fn a_serving_result_with_no_completed_request_is_a_failed_run_not_zeros() {
    let text = r#"{"backend": "vllm", "completed": 0, "failed": 8, "request_throughput": 0.0, "median_ttft_ms": 0.0}"#;
    let (_, p) = read(text);
    assert_eq!(p.provenance.verdict, Some(crate::model::RunVerdict::Fail));
    for m in &p.measurements {
        if m.direction != crate::model::Direction::None {
            assert_eq!(m.value, None, "{}", m.metric.as_str());
        }
    }
}

#[test]
fn a_load_run_twice_in_one_jsonl_is_two_trials_of_one_row() {
    let text = "{\"backend\": \"sglang\", \"request_rate\": 4, \"completed\": 10, \"median_ttft_ms\": 40.0}\n\
                    {\"backend\": \"sglang\", \"request_rate\": 4, \"completed\": 10, \"median_ttft_ms\": 42.0}\n\
                    {\"backend\": \"sglang\", \"request_rate\": 8, \"completed\": 10, \"median_ttft_ms\": 60.0}\n";
    let (_, p) = read(text);
    let ttft = |ms: &[crate::model::Measurement]| -> Vec<(String, Option<f64>)> {
        ms.iter()
            .filter(|m| m.metric.as_str() == "ttft_median")
            .map(|m| (p.key(m).to_string(), m.value))
            .collect()
    };
    assert_eq!(
        ttft(&p.measurements),
        [
            (r#"{"request_rate":"4"}"#.to_string(), Some(40000.0)),
            (r#"{"request_rate":"8"}"#.to_string(), Some(60000.0)),
        ]
    );
    assert_eq!(p.repetitions.len(), 1);
    assert_eq!(
        ttft(&p.repetitions[0]),
        [(r#"{"request_rate":"4"}"#.to_string(), Some(42000.0))]
    );
}

#[test]
fn pytorch_v3_unit_fields_decide_unit_and_direction() {
    let text = r#"[{"benchmark": {"name": "attn"}, "model": {"name": "causal"},
            "metric": {"name": "forward_latency", "unit": "us", "benchmark_values": [6566.7]}},
            {"benchmark": {"name": "attn"}, "model": {"name": "causal"},
            "metric": {"name": "forward_tflops", "unit": "TFLOPS/s", "benchmark_values": [0.0103]}}]"#;
    let (_, p) = read(text);
    let got: Vec<(String, String, crate::model::Direction)> = p
        .measurements
        .iter()
        .map(|m| {
            (
                m.metric.as_str().into(),
                m.unit.as_str().into(),
                m.direction,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "forward_latency".into(),
                "us".into(),
                crate::model::Direction::Lower
            ),
            (
                "forward_tflops".into(),
                "TFLOPS".into(),
                crate::model::Direction::Higher
            ),
        ]
    );
}

/// Hand-written tables that print each value with its unit: the header names the
/// variant, each cell converts by its own unit; what follows the unit is not read.
#[test]
fn cells_that_carry_their_unit_are_read_cell_by_cell() {
    let text = "| Case | torch | triton |\n|---|---|---|\n\
                | 256 | 8.18 ms | 117.30 µs (2050.4 TFLOPs) |\n| 512 | 60.41 ms | 1.5 ms |\n";
    let (_, p) = read(text);
    assert_eq!(
        values(&p),
        [
            row("torch", r#"{"Case":"256"}"#, "latency", Some(8180.0)),
            row("triton", r#"{"Case":"256"}"#, "latency", Some(117.3)),
            row("torch", r#"{"Case":"512"}"#, "latency", Some(60410.0)),
            row("triton", r#"{"Case":"512"}"#, "latency", Some(1500.0)),
        ]
    );
    // Cells of two quantities in one column are no measurement of either.
    let mixed = "| Case | torch |\n|---|---|\n| 256 | 8.18 ms |\n| 512 | 3.2 TB/s |\n";
    let e = parse(mixed, None).unwrap_err();
    assert!(e.reason.contains("not plain numbers"), "{e}");
}

/// Intel's triton_kernels_benchmark prints its units inside the line names.
#[test]
fn triton_line_names_that_carry_their_unit() {
    let text = "softmax-performance:\n         N  Triton-GB/s  Triton-GB/s-min  Triton-TFlops\n\
                0    256.0   873.813292       794.375734       0.873813\n";
    let (f, p) = read(text);
    assert_eq!(f, Format::TritonPerfReport);
    let got: Vec<(String, String, String, bool)> = p
        .measurements
        .iter()
        .map(|m| {
            let compared = m.direction != crate::model::Direction::None;
            (
                m.variant.as_str().into(),
                m.metric.as_str().into(),
                m.unit.as_str().into(),
                compared,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("Triton".into(), "bandwidth".into(), "TB/s".into(), true),
            (
                "Triton".into(),
                "bandwidth_min".into(),
                "TB/s".into(),
                false
            ),
            ("Triton".into(), "throughput".into(), "TFLOPS".into(), true),
        ]
    );
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
}

/// A log that holds both an aiter summary and a Triton perf_report print: read as
/// either, half of it would be lost without a word.
#[test]
fn a_log_with_an_aiter_table_and_a_triton_print_is_refused_naming_both() {
    let text = "[aiter] gemm summary (markdown):\n| M | torch us |\n|---:|---:|\n| 1 | 2.5 |\n\n\
                vector-add-performance:\n       size  Triton (GB/s)\n0    4096.0      11.953308\n";
    let e = detect(text).unwrap_err();
    assert!(
        e.reason.contains("triton-perf-report") && e.reason.contains("aiter-table"),
        "{e}"
    );
}

/// One garbled row in a log of good tables: the file is refused with the row's line,
/// never stored without that table (its rows would read as gone).
#[test]
fn a_table_row_that_cannot_be_read_refuses_the_file() {
    let text = "[aiter] gemm summary (markdown):\n| M | torch us |\n|---:|---:|\n| 1 | 2.5 |\n\n\
                [aiter] add summary (markdown):\n| n | torch us |\n|---:|---:|\n| 1 | 2.5 | 7 |\n";
    let e = parse(text, None).unwrap_err();
    assert_eq!(e.line, 9);
    assert!(
        e.reason
            .contains("row has 3 cells, the header at line 7 has 2"),
        "{e}"
    );
    // A block that is no table (a stray `|` line) stays skipped.
    let stray = "[aiter] gemm summary (markdown):\n| M | torch us |\n|---:|---:|\n| 1 | 2.5 |\n\n| not a table\n";
    assert!(parse(stray, None).is_ok());
}

/// A value written as text where the format writes a number is no value: the file is
/// refused with the record's line, never stored without it.
#[test]
fn text_where_a_format_writes_a_number_refuses_the_file() {
    let gbench = r#"{"context": {"date": "x"}, "benchmarks": [
  {"name": "BM_a", "run_name": "BM_a", "run_type": "iteration", "iterations": 1,
   "real_time": "fast", "cpu_time": 1.0, "time_unit": "ns"}]}"#;
    let e = parse(gbench, None).unwrap_err();
    assert!(
        e.reason.contains("real_time is \"fast\", not a number"),
        "{e}"
    );
    // The line of its record.
    assert_eq!(e.line, 2);
    let serving = r#"{"backend": "vllm", "completed": 8, "request_throughput": 2.0, "median_e2el_ms": "slow"}"#;
    let e = parse(serving, None).unwrap_err();
    assert!(e.reason.contains("`median_e2el_ms` is \"slow\""), "{e}");
}

/// A garbled cell among numbers is stored without a value and said, at its line; a
/// missing token (`nan`) or a failure (`OOM`) is not a garbled cell.
#[test]
fn a_cell_that_is_not_a_number_refuses_the_file_at_its_line() {
    let text = "| M | torch us |\n|---|---|\n| 1 | 17.2 |\n| 16 | 1O.9 garbled |\n\
                | 32 | 20.1 |\n| 64 | nan |\n| 128 | OOM |\n| 256 | see log |\n";
    let e = parse(text, None).unwrap_err();
    assert_eq!(e.line, 4);
    assert_eq!(
        e.reason,
        "`1O.9 garbled` in column torch us is not a number (2 measured cell(s) of the file \
         are not numbers); fix the file, or write `nan` where there is no value"
    );
    // No value written as such (`nan`) and a failure (`OOM`) are read.
    let (_, clean) = read(
        "| M | torch us |\n|---|---|\n| 1 | 17.2 |\n| 64 | nan |\n| 128 | OOM |\n| 256 | 31.5 |\n",
    );
    assert!(clean.warnings.is_empty(), "{:?}", clean.warnings);
    assert_eq!(
        values(&clean)[1],
        row("torch", r#"{"M":"64"}"#, "latency", None)
    );
}

/// `x` or `%` after a number where a time stands is a ratio, not a latency: refused at
/// its line, saying so; the same sign in a column of ratios reads as the ratio.
#[test]
fn a_ratio_where_a_time_stands_refuses_the_file_at_its_line() {
    for (text, line) in [
        ("[perf] dim: (64,) dtype: bf16, torch avg: 5.00 us, ck avg: 12.5x us\n", 1),
        ("[perf] dim: (64,) dtype: bf16, torch avg: 5.00 us, ck avg: 12.5% us\n", 1),
        (
            "| M | triton us | ck us |\n|---|---|---|\n| 128 | 3.0 | 2.5 |\n| 256 | 1.31x | 2.6 |\n",
            4,
        ),
    ] {
        let e = parse(text, None).unwrap_err();
        assert_eq!(e.line, line, "{text}: {e}");
        assert!(e.reason.contains("is a ratio or a percentage"), "{e}");
    }
    let speedups = "| M | triton us | ck us | triton/ck |\n|---|---|---|---|\n\
                    | 128 | 3.0 | 2.5 | 1.20x |\n| 256 | 3.1 | 2.6 | 1.19x |\n";
    let (_, p) = parse(speedups, None).unwrap();
    let ratios: Vec<_> = p
        .measurements
        .iter()
        .filter(|m| m.metric.as_str() == "ratio")
        .map(|m| m.value)
        .collect();
    assert_eq!(ratios, [Some(1.2), Some(1.19)]);
}

/// A table of one row gives no other row to say a column is numeric: a number garbled
/// in print under a variant's header refuses the file at the cell, never joins the key.
#[test]
fn a_one_row_tables_garbled_cell_is_refused_not_read_into_the_key() {
    let text =
        "| M | N | K | triton | ck |\n|---|---|---|---|---|\n| 128 | 256 | 512 | 1O.5 | 2.5 |\n";
    let e = parse(text, None).unwrap_err();
    assert_eq!(e.line, 3, "{e}");
    assert!(e.reason.contains("1O.5"), "{e}");
    // A shape or a version under a key's header stays a key.
    let keyed = "| shape | version | ck us |\n|---|---|---|\n| 128x256 | 3.6.0 | 2.5 |\n";
    let (_, p) = parse(keyed, None).unwrap();
    assert!(p.key(&p.measurements[0]).contains("128x256"));
}

/// GitHub's tables may leave the outer pipes out: read as the same table, with or
/// without aiter's banner; a row a cell short refuses the file at its line.
#[test]
fn a_github_table_without_outer_pipes_reads_as_one_with_them() {
    let piped = "summary (markdown):\n| M | N | triton us | ck us |\n| --- | --- | --- | --- |\n\
                 | 128 | 256 | 3.0 | 2.5 |\n| 256 | 256 | 3.1 | 2.6 |\n";
    let bare = "summary (markdown):\nM | N | triton us | ck us\n--- | --- | --- | ---\n\
                128 | 256 | 3.0 | 2.5\n256 | 256 | 3.1 | 2.6\n";
    let rows = |text: &str| {
        let (_, p) = parse(text, None).unwrap();
        p.measurements
            .iter()
            .map(|m| (m.variant.to_string(), p.key(m).to_string(), m.value, m.line))
            .collect::<Vec<_>>()
    };
    assert_eq!(rows(bare), rows(piped));
    assert_eq!(rows(bare).len(), 4);
    let no_banner = bare.replace("summary (markdown):\n", "");
    assert_eq!(rows(&no_banner).len(), 4);
    let short = bare.replace("256 | 256 | 3.1 | 2.6", "256 | 3.1 | 2.6");
    let e = parse(&short, None).unwrap_err();
    assert_eq!(e.line, 5, "{e}");
}
