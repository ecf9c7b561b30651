//! Every value read, identified and attributed right: the parser-level half of issue 7,
//! on the fixtures in `sample-data/derived/` (what each proves: its README). The
//! comparison half is in the binary's `tests/cli_compare.rs`.

use perfdb_ingest::formats::{self, Format};
use perfdb_ingest::model::{key_from_json, Measurement, Numerics, RunMeta};
use perfdb_ingest::warehouse::{Outcome, Warehouse};
use std::path::PathBuf;

fn sample(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../sample-data")
        .join(rel)
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(sample(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn parse(rel: &str) -> perfdb_ingest::model::Parsed {
    formats::parse(&read(rel), None)
        .unwrap_or_else(|e| panic!("{rel}: {e}"))
        .1
}

/// (table, variant, canonical key, metric) of every compared value: the row identities.
fn identities(ms: &[Measurement]) -> Vec<(String, String, String, String)> {
    let mut ids: Vec<_> = ms
        .iter()
        .filter(|m| m.direction != perfdb_ingest::model::Direction::None)
        .map(|m| {
            (
                m.table.to_string(),
                m.variant.to_string(),
                m.key.to_string(),
                m.metric.to_string(),
            )
        })
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

#[test]
fn identical_logs_are_distinct_trials() {
    let dir = tempfile::tempdir().unwrap();
    let wh = Warehouse::new(dir.path());
    let files: Vec<PathBuf> = (1..=4)
        .map(|t| sample(&format!("derived/identical-trials/trial{t}.log")))
        .collect();
    let texts: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
    assert!(
        texts.windows(2).all(|w| w[0] == w[1]),
        "fixture is byte-identical"
    );
    let meta = RunMeta {
        label: "base".into(),
        ..Default::default()
    };
    let added = |reports: Vec<perfdb_ingest::FileReport>| {
        reports
            .iter()
            .filter(|r| r.result.as_ref().unwrap().trial.is_some())
            .count()
    };
    let first = perfdb_ingest::ingest_files(&wh, &files, None, &meta, &|_| {}).unwrap();
    assert_eq!(added(first), 4, "four processes, four trials");
    // Re-ingesting the same files adds nothing.
    let again = perfdb_ingest::ingest_files(&wh, &files, None, &meta, &|_| {}).unwrap();
    assert_eq!(added(again), 0);
    // A path spelled with `./` is the same file.
    let p = perfdb_ingest::prepare_file(&files[0], None, &meta).unwrap();
    let dotted = format!("./{}", files[0].display());
    let q = perfdb_ingest::prepare_bytes(&dotted, &texts[0], None, &meta).unwrap();
    assert_eq!(p.run.run_id, q.run.run_id);
    assert!(matches!(
        wh.commit(vec![q]).unwrap()[0],
        Outcome::AlreadyPresent { .. }
    ));
}

#[test]
fn perf_values_with_exponents_are_read_whole() {
    for t in 1..=5 {
        let exp = parse(&format!("derived/perf-exponents/trial{t}.log"));
        let plain = parse(&format!("h200-gemm/ab/perf/base/trial{t}.log"));
        assert_eq!(exp.measurements.len(), plain.measurements.len());
        for (e, p) in exp.measurements.iter().zip(&plain.measurements) {
            // `%.3e` keeps four significant digits of the printed value.
            match (e.value, p.value) {
                (Some(a), Some(b)) => {
                    assert!((a - b).abs() / b < 1e-3, "{:?} vs {:?}", e.raw, p.raw)
                }
                (a, b) => assert_eq!(a, b),
            }
        }
    }
}

#[test]
fn units_are_stored_in_one_unit_per_metric() {
    for (changed, format) in [("aa-ms", "aiter"), ("aa-ms-perf", "perf")] {
        let ms = parse(&format!("derived/{changed}/trial1.log"));
        let us = parse(&format!("h200-gemm/ab/{format}/base/trial1.log"));
        assert_eq!(identities(&ms.measurements), identities(&us.measurements));
        for (a, b) in ms.measurements.iter().zip(&us.measurements) {
            assert_eq!(a.unit, b.unit);
            if &*a.metric == "latency" {
                let (a_v, b_v) = (a.value.unwrap(), b.value.unwrap());
                assert!((a_v - b_v).abs() <= 0.006, "{:?} -> {a_v} vs {b_v}", a.raw);
                assert!(
                    a.raw.ends_with(" ms"),
                    "printed unit kept in raw: {:?}",
                    a.raw
                );
            }
        }
    }
}

#[test]
fn identity_is_a_map_independent_of_column_order() {
    for t in 1..=5 {
        let reordered = parse(&format!("derived/aa-reordered/trial{t}.log"));
        let original = parse(&format!("h200-gemm/ab/aiter/base/trial{t}.log"));
        assert_eq!(
            identities(&reordered.measurements),
            identities(&original.measurements)
        );
        // The source order is kept for display.
        assert_eq!(
            &*reordered.measurements[0].key_order,
            r#"["dtype","K","N","M"]"#
        );
        assert_eq!(
            &*original.measurements[0].key_order,
            r#"["M","N","K","dtype"]"#
        );
    }
}

#[test]
fn an_unknown_variant_is_a_variant_and_rows_do_not_split() {
    let a = parse("derived/fa3-variant/trial1.log");
    let b = parse("derived/fa3-variant/trial2.log");
    assert_eq!(identities(&a.measurements), identities(&b.measurements));
    let variants: Vec<&str> = a.measurements.iter().map(|m| &*m.variant).collect();
    assert_eq!(variants, ["fa3", "torch", "fa3", "torch"]);
    assert!(a.measurements.iter().all(|m| &*m.metric == "latency"));
}

#[test]
fn an_unclassified_column_is_reported_and_never_identity() {
    let p = parse("derived/aa-extra-column/trial1.log");
    let base = parse("h200-gemm/ab/aiter/base/trial1.log");
    let temp: Vec<&Measurement> = p
        .measurements
        .iter()
        .filter(|m| &*m.column == "gpu temp")
        .collect();
    assert!(!temp.is_empty());
    assert!(temp.iter().all(|m| &*m.metric == "unclassified"));
    assert!(p
        .measurements
        .iter()
        .all(|m| !key_from_json(&m.key).iter().any(|(k, _)| k == "gpu temp")));
    let warned: Vec<&str> = p.warnings.iter().map(|w| w.reason.as_str()).collect();
    assert_eq!(warned.len(), 1, "once per column and file: {warned:?}");
    assert!(warned[0].contains("'gpu temp'"), "{warned:?}");
    assert_eq!(p.warnings[0].line, 62, "the header's line");
    // The text column `host` is a key column here; compare matches it away (it is on one
    // side only), see tests/cli_compare.rs.
    assert_eq!(
        identities(&p.measurements).len(),
        identities(&base.measurements).len()
    );
}

#[test]
fn tokenspeed_problem_fields_are_identity() {
    let bf16 = parse("h200-gemm/ab/probe/base/trial1.log");
    let fp8 = parse("derived/probe-fp8/trial1.log");
    let key = |p: &perfdb_ingest::model::Parsed, i: usize| key_from_json(&p.measurements[i].key);
    assert!(key(&bf16, 0).contains(&("dtype".into(), "bf16".into())));
    assert!(key(&bf16, 0).contains(&("mode".into(), "bench".into())));
    let ids_b = identities(&bf16.measurements);
    let ids_f = identities(&fp8.measurements);
    assert!(
        ids_b.iter().all(|id| !ids_f.contains(id)),
        "bf16 and fp8 never one row"
    );
    // A numeric METRIC field that is not a measurement (split_k) is identity too.
    let triton = fp8
        .measurements
        .iter()
        .find(|m| m.variant.starts_with("triton"))
        .unwrap();
    assert!(key_from_json(&triton.key).contains(&("split_k".into(), "1".into())));
}

#[test]
fn failures_are_attributed_or_escalated() {
    let p = parse("derived/unattributed-fail.log");
    let of = |table: &str, variant: &str| -> Vec<(Numerics, Option<&str>)> {
        p.measurements
            .iter()
            .filter(|m| &*m.table == table && &*m.variant == variant)
            .map(|m| (m.numerics, m.note.as_deref()))
            .collect()
    };
    // `ck_gemm:` names ck: one verdict per row, in order.
    assert_eq!(
        of("gemm_a8w8", "ck"),
        [(Numerics::Fail, None), (Numerics::Pass, None)]
    );
    assert_eq!(
        of("gemm_a8w8", "asm"),
        [(Numerics::NotChecked, None), (Numerics::NotChecked, None)]
    );
    // msg="": every non-reference variant of the table it precedes fails, with the reason.
    let unattributed = Some("unattributed numerics failure");
    assert_eq!(of("mha", "triton"), [(Numerics::Fail, unattributed)]);
    assert_eq!(of("mha", "torch"), [(Numerics::NotChecked, None)]);
}

#[test]
fn repeated_tables_are_told_apart_by_their_calling_arguments() {
    let p = parse("derived/repeated-tables/calls/head/trial1.log");
    let tables: std::collections::BTreeSet<&str> =
        p.measurements.iter().map(|m| &*m.table).collect();
    assert_eq!(tables.into_iter().collect::<Vec<_>>(), ["gemm"]);
    let layouts: std::collections::BTreeSet<String> = p
        .measurements
        .iter()
        .map(|m| {
            key_from_json(&m.key)
                .into_iter()
                .find(|(k, _)| k == "layout")
                .expect("layout added to the key")
                .1
        })
        .collect();
    assert_eq!(layouts.into_iter().collect::<Vec<_>>(), ["'TN'", "'TT'"]);
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);

    // Without `calling` lines nothing tells the copies apart: by position, with a warning.
    let p = parse("derived/repeated-tables/positional/base/trial1.log");
    let tables: std::collections::BTreeSet<&str> =
        p.measurements.iter().map(|m| &*m.table).collect();
    assert_eq!(
        tables.into_iter().collect::<Vec<_>>(),
        ["gemm", "gemm#2", "gemm#3"]
    );
    assert!(
        p.warnings[0].reason.contains("by position"),
        "{:?}",
        p.warnings
    );
}

#[test]
fn one_odd_block_does_not_reject_a_log() {
    let p = parse("derived/stray-pipe.log");
    let tables: std::collections::BTreeSet<&str> =
        p.measurements.iter().map(|m| &*m.table).collect();
    assert_eq!(tables.into_iter().collect::<Vec<_>>(), ["gemm_a16w16"]);
    assert_eq!(p.measurements.len(), 4);
    let lines: Vec<usize> = p.warnings.iter().map(|w| w.line).collect();
    // The cut-off row, the stray `| a | stray |`, the grid table, the cut-off `add` row.
    assert_eq!(lines, [2, 4, 11, 17], "{:?}", p.warnings);
    // A file with no good block is still an error, naming the first bad line.
    let e = formats::parse("| a | b |\n| 1 | 2 |\n", Some(Format::AiterTable)).unwrap_err();
    assert_eq!(e.line, 1, "{e}");
}

#[test]
fn a_long_plain_text_log_is_read_once() {
    // 100k lines of prose-like columns (the worst case for the `to_string` fallback)
    // then a table: this runs in linear time (the benchmark `ingest` measures it).
    let mut text = String::new();
    for i in 0..100_000 {
        text.push_str(&format!("step {i:>6}   loss 0.{i:04}   lr 1e-4\n"));
    }
    text.push_str("[aiter] gemm summary (markdown):\n| M | torch us |\n|---:|---:|\n| 1 | 2.5 |\n");
    let (_, p) = formats::parse(&text, None).unwrap();
    assert!(p.measurements.iter().any(|m| m.value == Some(2.5)));
}

#[test]
fn a_probe_that_failed_before_measuring_is_a_run() {
    let p = parse("derived/probe-failed-early.log");
    assert!(p.measurements.is_empty());
    assert_eq!(p.provenance.verdict.as_deref(), Some("fail"));
    assert_eq!(
        p.provenance.verdict_detail.as_deref(),
        Some("benchmark_cli_rc=1")
    );
}

#[test]
fn failrec_lines_are_kept_with_the_row_they_name() {
    let p = parse("derived/probe-failrec.log");
    let rec: Vec<&Measurement> = p
        .measurements
        .iter()
        .filter(|m| m.note.as_deref() == Some("TS_KERNEL_FAILREC") && m.metric.starts_with("error"))
        .collect();
    assert_eq!(rec.len(), 2);
    assert_eq!(rec[0].value, Some(0.5));
    // Attached: the M=4096 record's measurements carry the failure, M=1's do not.
    for m in p.measurements.iter().filter(|m| &*m.metric == "latency") {
        let big = key_from_json(&m.key).contains(&("M".into(), "4096".into()));
        assert_eq!(m.key == rec[0].key, big);
        let want = if big { Numerics::Fail } else { Numerics::Pass };
        assert_eq!(m.numerics, want, "{:?}", m.key);
    }
}

#[test]
fn a_failed_check_of_a_variant_no_table_measures_fails_the_run() {
    // Sample 06 ends with `ck: ...failed!` and `asm: ...warning!` after its last table,
    // whose variants are triton and hip: the run failed, and triton/hip are not blamed.
    let p = parse("formats/06_aiter_op_test_full_log_emulated.txt");
    assert_eq!(p.provenance.verdict.as_deref(), Some("fail"));
    let detail = p.provenance.verdict_detail.unwrap();
    assert!(
        detail.contains("'ck'") && detail.contains("'asm'"),
        "{detail}"
    );
    assert!(p.measurements.iter().all(|m| m.numerics != Numerics::Fail));
}

/// Triton `perf_report(..., print_data=True)` as real H200 output printed it (sample 24):
/// every value, unit, direction and key read from the printed table.
#[test]
fn triton_perf_report_reads_every_line_of_every_plot() {
    let rel = "formats/24_triton_perf_report_print_data_triton3.6.0_H200_verbatim.txt";
    let (format, parsed) = formats::parse(&read(rel), None).unwrap();
    assert_eq!(format, Format::TritonPerfReport);
    assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
    // 6 sizes x 2 lines, 3 shapes x 2 lines.
    assert_eq!(parsed.measurements.len(), 18);
    let find = |table: &str, variant: &str, key: &[(&str, &str)]| {
        let want: Vec<(String, String)> = key
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        parsed
            .measurements
            .iter()
            .find(|m| {
                *m.table == *table && *m.variant == *variant && {
                    let mut got = key_from_json(&m.key);
                    let mut w = want.clone();
                    got.sort();
                    w.sort();
                    got == w
                }
            })
            .unwrap_or_else(|| panic!("no {table} {variant} {key:?}"))
    };
    // `0       4096.0      11.953308     11.377778`: GB/s stored as TB/s, the key an integer.
    let m = find("vector-add-performance", "Triton", &[("size", "4096")]);
    assert_eq!((&*m.metric, &*m.unit), ("bandwidth", "TB/s"));
    assert_eq!(m.direction, perfdb_ingest::model::Direction::Higher);
    assert!((m.value.unwrap() - 0.011953308).abs() < 1e-12);
    assert_eq!(m.raw.as_str(), "11.953308 GB/s");
    assert_eq!(&*m.column, "Triton (GB/s)");
    assert_eq!(m.line, 4);
    let m = find("vector-add-performance", "Torch", &[("size", "134217728")]);
    assert!((m.value.unwrap() - 4.302034094).abs() < 1e-12);
    // `0   256.0   256.0   256.0         5.331894              NaN`
    let k = [("M", "256"), ("N", "256"), ("K", "256")];
    let m = find("matmul-performance-fp16", "cuBLAS", &k);
    assert_eq!(
        (&*m.metric, &*m.unit, m.value),
        ("throughput", "TFLOPS", Some(5.331894))
    );
    assert_eq!(&*m.key_order, "[\"M\",\"N\",\"K\"]");
    let m = find("matmul-performance-fp16", "Broken", &k);
    assert_eq!((m.value, m.raw.as_str()), (None, "NaN"));
}

/// The format each fixture is in, by its path: `None` for files that are no benchmark
/// output (READMEs, scripts, the seed tool's reports) or that must be rejected.
fn expected_format(path: &str) -> Option<Format> {
    let by_part: &[(&str, Format)] = &[
        ("ab-torch-compare/", Format::TorchCompare),
        ("ab-flydsl-bench/", Format::FlydslBench),
        ("ab-rocm-bench-csv/", Format::RocmBenchCsv),
        ("ab-aiter-tuned-csv/", Format::AiterTunedCsv),
        ("ab-triton-csv/", Format::TritonCsv),
        ("ab-serving/", Format::Serving),
        ("ab-aorta-matrix/", Format::AortaMatrix),
        ("ab-aorta-result/", Format::AortaResult),
        ("formats/12_", Format::FlydslBench),
        ("formats/13_", Format::FlydslBench),
        ("formats/16_", Format::TsExport),
        ("formats/17_", Format::TsExport),
        ("formats/14_", Format::TsProbe),
        ("formats/15_", Format::TsProbe),
        ("formats/20_", Format::Serving),
        ("formats/21_", Format::TsProbe),
        ("formats/22_", Format::AortaResult),
        ("formats/23_", Format::AortaMatrix),
        ("formats/24_", Format::TritonPerfReport),
        ("formats/25_", Format::TorchCompare),
        ("formats/26_", Format::PytestBenchmark),
        ("formats/27_", Format::GoogleBenchmark),
        ("formats/28_", Format::RocmBenchCsv),
        ("formats/29_", Format::AiterTunedCsv),
        ("formats/30_", Format::Serving),
        ("formats/31_", Format::TritonCsv),
        ("formats/01_", Format::PerfLines),
        ("formats/09_vkpr_perf_lines", Format::PerfLines),
        ("/perf/", Format::PerfLines),
        ("aa-ms-perf/", Format::PerfLines),
        ("identical-trials/", Format::PerfLines),
        ("perf-exponents/", Format::PerfLines),
        ("/probe/", Format::TsProbe),
        (".probe.log", Format::TsProbe),
        ("probe-", Format::TsProbe),
        ("/aiter/", Format::AiterTable),
        (".aiter.log", Format::AiterTable),
        ("formats/0", Format::AiterTable),
        ("formats/19_", Format::AiterTable),
        ("derived/aa-", Format::AiterTable),
        ("fa3-variant/", Format::AiterTable),
        ("repeated-tables/", Format::AiterTable),
        ("stray-pipe.log", Format::AiterTable),
        ("unattributed-fail.log", Format::AiterTable),
    ];
    let not_output = [".md", ".py", ".cc", "README", "PROVENANCE", "invalid/"];
    let is_json_report = path.contains("formats/07_vkpr_compare")
        || path.contains("formats/09_vkpr_compare")
        || path.contains("formats/1")
            && path.ends_with(".json")
            && !path.contains("formats/16_")
            && !path.contains("formats/17_");
    if is_json_report
        || (not_output.iter().any(|n| path.contains(n))
            && !path.contains("formats/05_")
            && !path.contains("formats/19_")
            && !path.contains("formats/23_")
            && !path.contains("ab-aorta-matrix/"))
    {
        return None;
    }
    by_part
        .iter()
        .find(|(part, _)| path.contains(part))
        .map(|(_, f)| *f)
}

/// Detection over every fixture in `sample-data/`: each benchmark output is recognised
/// as its own format, and no format claims a file of another (formats are tried in a
/// fixed order, so one that matched too much would take the later ones' files).
#[test]
fn detection_never_confuses_two_formats_on_any_fixture() {
    fn walk(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(&sample(""), &mut files);
    files.sort();
    let mut seen = std::collections::BTreeMap::new();
    for f in files {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        let name = f.display().to_string().replace('\\', "/");
        let found = formats::detect(&text).ok();
        match expected_format(&name) {
            Some(want) => {
                assert_eq!(found, Some(want), "{name}");
                *seen.entry(want.name()).or_insert(0) += 1;
            }
            // Not benchmark output: whatever the text looks like, it is never taken for
            // one of the structured formats.
            None => assert!(
                !matches!(
                    found,
                    Some(
                        Format::TritonCsv
                            | Format::TorchCompare
                            | Format::PytestBenchmark
                            | Format::GoogleBenchmark
                            | Format::RocmBenchCsv
                            | Format::AiterTunedCsv
                            | Format::Serving
                            | Format::AortaResult
                            | Format::TritonPerfReport
                    )
                ),
                "{name}: {found:?}"
            ),
        }
    }
    // Every format has fixtures.
    for f in Format::ALL {
        assert!(
            seen.contains_key(f.name()),
            "no fixture detected as {f}: {seen:?}"
        );
    }
}
