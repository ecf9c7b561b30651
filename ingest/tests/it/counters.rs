//! Hardware counters read right: each real profiler file (`sample-data/realworld/
//! {ncu-csv,rocprofv3-csv,proton-hatchet}`) against a parse of its own written here
//! (a quote-aware CSV split, a JSON walk), every counter undirected, a missing counter
//! null, and the profiled program's output read by its own format beside ncu's CSV.

use perfdb_ingest::formats::{self, Format};
use perfdb_ingest::model::{Direction, Measurement, Parsed};
use std::path::PathBuf;

fn read(rel: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../sample-data")
        .join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// A CSV line's cells, quotes removed: the test's own reading, not the reader's.
fn split(line: &str) -> Vec<String> {
    let (mut cells, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => cells.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    cells.push(cur);
    cells
}

fn note(m: &Measurement) -> Option<&str> {
    m.note.as_ref().map(|n| n.as_str())
}

fn find<'a>(p: &'a Parsed, variant: &str, metric: &str, place: &str) -> &'a Measurement {
    p.measurements
        .iter()
        .find(|m| {
            &*m.variant == variant
                && &*m.metric == metric
                && p.key_pairs(m).iter().any(|(_, v)| v == place)
        })
        .unwrap_or_else(|| panic!("no {variant} {metric} in {place}"))
}

#[test]
fn an_ncu_details_page_stores_every_metric_of_every_launch_with_its_unit() {
    let text = read("realworld/ncu-csv/superbench_cublaslt_ncu.log");
    let (format, p) = formats::parse(&text, None).unwrap();
    assert_eq!(format, Format::NcuCsv);
    // The file's own metric lines: a record under the header whose Metric Name is set.
    let lines: Vec<&str> = text.lines().collect();
    let at = lines.iter().position(|l| l.starts_with("\"ID\",")).unwrap();
    let header = split(lines[at]);
    let col = |n: &str| header.iter().position(|h| h == n).unwrap();
    let metrics: Vec<Vec<String>> = lines[at + 1..]
        .iter()
        .map(|l| split(l))
        .filter(|c| !c[col("Metric Name")].is_empty())
        .collect();
    assert_eq!(metrics.len(), 50);
    let ncu: Vec<&Measurement> = p
        .measurements
        .iter()
        .filter(|m| &*m.table == "ncu")
        .collect();
    // Each metric, plus the launch's grid and block.
    assert_eq!(ncu.len(), metrics.len() + 2);
    assert!(ncu.iter().all(|m| m.direction == Direction::None));
    for cells in &metrics {
        let (section, name, unit, value) = (
            &cells[col("Section Name")],
            &cells[col("Metric Name")],
            &cells[col("Metric Unit")],
            &cells[col("Metric Value")],
        );
        let m = find(&p, &cells[col("Kernel Name")], name, section);
        match value.parse::<f64>() {
            // Every unit of this file is its canonical one (hz, ns, cycle, %, byte...).
            Ok(v) => assert_eq!(
                (m.value, unit.is_empty() || !m.unit.is_empty()),
                (Some(v), true),
                "{name}"
            ),
            // A word (`PolicySpread`): kept as a setting, no value.
            Err(_) => {
                assert_eq!(m.value, None, "{name}");
                assert_eq!(note(m), Some("counter: setting"), "{name}");
            }
        }
    }
    let d = find(&p, "cutlass3x_sm100_tensorop_s64x256x32gemm_f8_f8_f32_f16_f16_64x256x128_1x1x1_0_tnn_align4_1sm_bias_f16_relu_aux_scalemax", "Duration", "GPU Speed Of Light Throughput");
    assert_eq!((d.value, &*d.unit), (Some(406240.0), "ns"));
    assert_eq!(note(d), Some("counter: time, lower is better"));
    let k = "cutlass3x_sm100_tensorop_s64x256x32gemm_f8_f8_f32_f16_f16_64x256x128_1x1x1_0_tnn_align4_1sm_bias_f16_relu_aux_scalemax";
    let f = find(&p, k, "DRAM Frequency", "GPU Speed Of Light Throughput");
    assert_eq!((f.value, &*f.unit), (Some(3995313115.40), "Hz"));
    let grid = find(&p, k, "Grid Size", "launch");
    assert_eq!(grid.value, Some(288.0), "(9, 32, 1) blocks");
    let block = find(&p, k, "Block Size", "launch");
    assert_eq!(block.value, Some(384.0));
    // The program's one result line is no format perfdb reads: said, not dropped silently.
    assert!(
        p.warnings
            .iter()
            .any(|w| w.reason.contains("1 line(s) of the profiled program")),
        "{:?}",
        p.warnings
    );
}

/// The ncu CSV inside the output of the program it profiled (`ncu --csv python3
/// bench.py > out.txt`): the program's table read by its own format and marked profiled,
/// the counters beside it, line numbers the file's own; an `n/a` counter is null, never 0.
#[test]
fn a_benchmark_profiled_by_ncu_keeps_its_rows_and_gains_the_counters() {
    let triton = read("h200-triton36/vector-add-stdout.txt");
    let header = "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"";
    let rec = |id: u32, grid: &str, name: &str, unit: &str, v: &str| {
        format!("\"{id}\",\"7\",\"python3\",\"127.0.0.1\",\"add_kernel\",\"1\",\"7\",\"(1024, 1, 1)\",\"({grid}, 1, 1)\",\"0\",\"9.0\",\"Memory Workload Analysis\",\"{name}\",\"{unit}\",\"{v}\"")
    };
    let text = format!(
        "==PROF== Connected to process 7 (/usr/bin/python3.12)\n{triton}==PROF== Disconnected from process 7\n{header}\n{}\n{}\n{}\n{}\n",
        rec(0, "4", "DRAM Bytes", "Kbyte", "32.77"),
        rec(0, "4", "Memory Throughput", "Gbyte/second", "1,215.40"),
        rec(1, "131072", "DRAM Bytes", "Gbyte", "1.61"),
        rec(1, "131072", "L2 Hit Rate", "%", "n/a"),
    );
    let (format, p) = formats::parse(&text, None).unwrap();
    assert_eq!(format, Format::TritonPerfReport);
    let triton_rows = p
        .measurements
        .iter()
        .filter(|m| &*m.table == "vector-add-performance")
        .count();
    assert_eq!(triton_rows, 12, "the program's table, whole");
    // Timed under ncu's replay: marked profiled, never a timed trial; the run tagged.
    assert!(p
        .measurements
        .iter()
        .filter(|m| &*m.table == "vector-add-performance")
        .all(|m| m.direction == Direction::None
            && formats::counters::is_profiled_note(m.note.as_deref())));
    assert!(p
        .provenance
        .tags
        .contains(&("profiled".into(), "ncu".into())));
    let counters: Vec<&Measurement> = p
        .measurements
        .iter()
        .filter(|m| &*m.table == "ncu")
        .collect();
    // Two launches: 2 + 2 counters and a grid and block each.
    assert_eq!(counters.len(), 8);
    let bytes: Vec<Option<f64>> = counters
        .iter()
        .filter(|m| &*m.metric == "DRAM Bytes")
        .map(|m| m.value)
        .collect();
    assert_eq!(bytes, [Some(32770.0), Some(1.61e9)]);
    let bw = counters
        .iter()
        .find(|m| &*m.metric == "Memory Throughput")
        .unwrap();
    assert_eq!((bw.value, &*bw.unit), (Some(1215.40e9), "byte/s"));
    assert_eq!(p.raw(bw), "1,215.40 Gbyte/second");
    let hit = counters
        .iter()
        .find(|m| &*m.metric == "L2 Hit Rate")
        .unwrap();
    assert_eq!(hit.value, None, "n/a is null, never 0");
    let grids: Vec<Option<f64>> = counters
        .iter()
        .filter(|m| &*m.metric == "Grid Size")
        .map(|m| m.value)
        .collect();
    assert_eq!(grids, [Some(4.0), Some(131072.0)]);
    let first = text
        .lines()
        .position(|l| l.contains("\"DRAM Bytes\""))
        .unwrap()
        + 1;
    assert_eq!(
        counters
            .iter()
            .find(|m| &*m.metric == "DRAM Bytes")
            .unwrap()
            .line as usize,
        first
    );
}

#[test]
fn an_ncu_raw_page_reads_a_column_a_metric_with_the_units_line() {
    let text = "==PROF== Connected to process 9 (/usr/bin/python3)\n\
\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"dram__bytes_read.sum\",\"gpu__time_duration.sum\",\"launch__registers_per_thread\",\"sm__throughput.avg.pct_of_peak_sustained_elapsed\"\n\
\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"Mbyte\",\"usecond\",\"register/thread\",\"%\"\n\
\"0\",\"9\",\"python3\",\"127.0.0.1\",\"add_kernel\",\"1\",\"7\",\"(1024, 1, 1)\",\"(128, 1, 1)\",\"0\",\"9.0\",\"1,048.58\",\"12.35\",\"16\",\"42.10\"\n\
\"1\",\"9\",\"python3\",\"127.0.0.1\",\"add_kernel\",\"1\",\"7\",\"(1024, 1, 1)\",\"(128, 1, 1)\",\"0\",\"9.0\",\"1,048.60\",\"12.41\",\"16\",\"nan\"\n";
    let (format, p) = formats::parse(text, None).unwrap();
    assert_eq!(format, Format::NcuCsv);
    let of = |metric: &str| -> Vec<Option<f64>> {
        p.measurements
            .iter()
            .filter(|m| &*m.metric == metric)
            .map(|m| m.value)
            .collect()
    };
    assert_eq!(
        of("dram__bytes_read.sum"),
        [Some(1048.58e6), Some(1048.60e6)]
    );
    assert_eq!(of("gpu__time_duration.sum"), [Some(12350.0), Some(12410.0)]);
    assert_eq!(of("launch__registers_per_thread"), [Some(16.0), Some(16.0)]);
    assert_eq!(
        of("sm__throughput.avg.pct_of_peak_sustained_elapsed"),
        [Some(42.10), None],
        "NaN is null"
    );
    assert_eq!(of("Grid Size"), [Some(128.0), Some(128.0)]);
    // The launch's own columns (process, stream, device...) are no counters.
    assert!(of("Stream").is_empty() && of("CC").is_empty());
}

#[test]
fn an_ncu_file_that_profiled_nothing_is_refused_at_its_line() {
    let none = "==PROF== Connected to process 9 (/usr/bin/python3)\nresult 1.0\n==WARNING== No kernels were profiled.\n";
    let e = formats::parse(none, None).unwrap_err();
    assert_eq!(e.line, 3, "{e}");
    assert!(e.reason.contains("profiled no kernel"), "{e}");
    let header_only = "\"ID\",\"Process ID\",\"Kernel Name\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n";
    let e = formats::parse(header_only, None).unwrap_err();
    assert_eq!(e.line, 1, "{e}");
    let garbled = "\"ID\",\"Kernel Name\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n\"0\",\"k\",\"S\",\"Duration\",\"ns\",\"12.5.3\"\n";
    // Text that starts like a number: kept as a setting, said, never a number.
    let (_, p) = formats::parse(garbled, None).unwrap();
    let d = p
        .measurements
        .iter()
        .find(|m| &*m.metric == "Duration")
        .unwrap();
    assert_eq!(d.value, None);
    assert!(
        p.warnings
            .iter()
            .any(|w| w.line == 2 && w.reason.contains("`12.5.3`")),
        "{:?}",
        p.warnings
    );
}

#[test]
fn rocprofv3_csvs_read_each_dispatch_with_its_duration_and_counters() {
    let trace = read("realworld/rocprofv3-csv/rocprofiler_sdk_docs_kernel_trace.csv");
    let (format, p) = formats::parse(&trace, None).unwrap();
    assert_eq!(format, Format::Rocprofv3Csv);
    let lines: Vec<Vec<String>> = trace.lines().map(split).collect();
    let col = |n: &str| lines[0].iter().position(|h| h == n).unwrap();
    let durations: Vec<&Measurement> = p
        .measurements
        .iter()
        .filter(|m| &*m.metric == "duration")
        .collect();
    assert_eq!(durations.len(), lines.len() - 1);
    for (row, m) in lines[1..].iter().zip(&durations) {
        let start: u64 = row[col("Start_Timestamp")].parse().unwrap();
        let end: u64 = row[col("End_Timestamp")].parse().unwrap();
        assert_eq!(&*m.variant, row[col("Kernel_Name")].as_str());
        assert_eq!(m.value, Some((end - start) as f64));
        assert_eq!(&*m.unit, "ns");
    }
    let grid = p
        .measurements
        .iter()
        .find(|m| &*m.metric == "Grid_Size")
        .unwrap();
    assert_eq!(grid.value, Some(1024.0 * 1024.0));
    let counters = read("realworld/rocprofv3-csv/rocprofiler_sdk_docs_counter_collection.csv");
    let (_, p) = formats::parse(&counters, None).unwrap();
    let lines: Vec<Vec<String>> = counters.lines().map(split).collect();
    let col = |n: &str| lines[0].iter().position(|h| h == n).unwrap();
    let waves: Vec<&Measurement> = p
        .measurements
        .iter()
        .filter(|m| &*m.metric == "SQ_WAVES")
        .collect();
    assert_eq!(waves.len(), 4);
    for (row, m) in lines[1..].iter().zip(&waves) {
        assert_eq!(m.value, Some(row[col("Counter_Value")].parse().unwrap()));
        assert_eq!(&*m.variant, row[col("Kernel_Name")].as_str());
        assert_eq!(m.direction, Direction::None);
    }
    let vgpr: Vec<Option<f64>> = p
        .measurements
        .iter()
        .filter(|m| &*m.metric == "VGPR_Count")
        .map(|m| m.value)
        .collect();
    assert_eq!(vgpr, [Some(8.0), Some(8.0), Some(8.0), Some(12.0)]);
}

#[test]
fn a_proton_profile_reads_each_kernel_node_under_its_scopes() {
    for rel in [
        "realworld/proton-hatchet/triton_proton_cuda.json",
        "realworld/proton-hatchet/triton_proton_hip.json",
        "realworld/proton-hatchet/triton_proton_scoped.json",
    ] {
        let text = read(rel);
        let (format, p) = formats::parse(&text, None).unwrap_or_else(|e| panic!("{rel}: {e}"));
        assert_eq!(format, Format::ProtonHatchet);
        // The test's own walk: every node under ROOT with metrics of its own.
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let mut want = Vec::new();
        fn walk(
            n: &serde_json::Value,
            scope: &mut Vec<String>,
            root: bool,
            want: &mut Vec<(String, String, String, f64)>,
        ) {
            let name = n["frame"]["name"].as_str().unwrap().to_string();
            for (k, v) in n["metrics"].as_object().unwrap() {
                if !root && !k.starts_with("device_") {
                    let metric = match k.as_str() {
                        "time (ns)" => "time",
                        k => k,
                    };
                    want.push((
                        name.clone(),
                        scope.join("/"),
                        metric.to_string(),
                        v.as_f64().unwrap(),
                    ));
                }
            }
            if !root {
                scope.push(name);
            }
            for c in n["children"].as_array().unwrap() {
                walk(c, scope, false, want);
            }
            if !root {
                scope.pop();
            }
        }
        walk(&v[0], &mut Vec::new(), true, &mut want);
        assert_eq!(p.measurements.len(), want.len(), "{rel}");
        for (kernel, scope, metric, value) in want {
            let m = p
                .measurements
                .iter()
                .find(|m| {
                    *m.variant == *kernel
                        && *m.metric == *metric
                        && p.key_pairs(m)
                            .iter()
                            .map(|(_, v)| v.as_str())
                            .collect::<String>()
                            == scope
                })
                .unwrap_or_else(|| panic!("{rel}: no {kernel} {metric} under {scope:?}"));
            assert_eq!(m.value, Some(value), "{rel} {kernel} {metric}");
            assert_eq!(m.direction, Direction::None);
        }
        let arch = p.provenance.arch.clone();
        let want_arch = if rel.ends_with("scoped.json") {
            Some("sm_86".to_string())
        } else {
            None
        };
        assert_eq!(
            arch, want_arch,
            "{rel}: one device arch is the run's; two are none"
        );
    }
}
