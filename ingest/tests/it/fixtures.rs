//! Every value read, identified and attributed right, at the parser level, on the
//! fixtures in `sample-data/derived/` (what each proves: its README). The
//! comparison half is in the binary's `tests/it/cli_compare.rs`.

use perfdb_ingest::formats::{self, Format};
use perfdb_ingest::model::{Measurement, Numerics, RunMeta};
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

/// Every file under `dir`, recursively, sorted.
fn files_under(dir: &std::path::Path) -> Vec<PathBuf> {
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
    let mut out = Vec::new();
    walk(dir, &mut out);
    out.sort();
    out
}

fn parse(rel: &str) -> perfdb_ingest::model::Parsed {
    formats::parse(&read(rel), None)
        .unwrap_or_else(|e| panic!("{rel}: {e}"))
        .1
}

/// (table, variant, canonical key, metric) of every compared value: the row identities.
fn identities(p: &perfdb_ingest::model::Parsed) -> Vec<(String, String, String, String)> {
    let mut ids: Vec<_> = p
        .measurements
        .iter()
        .filter(|m| m.direction != perfdb_ingest::model::Direction::None)
        .map(|m| {
            (
                m.table.to_string(),
                m.variant.to_string(),
                p.key(m).to_string(),
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
    let first = perfdb_ingest::ingest_files(
        &wh,
        &files,
        None,
        &meta,
        &perfdb_ingest::devices::builtin(),
        &|_| {},
    )
    .unwrap();
    assert_eq!(added(first), 4, "four processes, four trials");
    // Re-ingesting the same files adds nothing.
    let again = perfdb_ingest::ingest_files(
        &wh,
        &files,
        None,
        &meta,
        &perfdb_ingest::devices::builtin(),
        &|_| {},
    )
    .unwrap();
    assert_eq!(added(again), 0);
    // The same file spelled another way (`./`, `..`) is the same file: its identity is
    // its canonical path.
    let p = perfdb_ingest::prepare_file(&files[0], None, &meta, &perfdb_ingest::devices::builtin())
        .unwrap();
    let parent = files[0].parent().unwrap();
    let dotted = format!(
        "{}/./../{}/{}",
        parent.display(),
        parent.file_name().unwrap().to_string_lossy(),
        files[0].file_name().unwrap().to_string_lossy()
    );
    let q = perfdb_ingest::prepare_bytes(
        &dotted,
        &texts[0],
        None,
        &meta,
        &perfdb_ingest::devices::builtin(),
    )
    .unwrap();
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
                    assert!(
                        (a - b).abs() / b < 1e-3,
                        "{:?} vs {:?}",
                        exp.raw(e),
                        plain.raw(p)
                    )
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
        assert_eq!(identities(&ms), identities(&us));
        for (a, b) in ms.measurements.iter().zip(&us.measurements) {
            assert_eq!(a.unit, b.unit);
            if &*a.metric == "latency" {
                let (a_v, b_v) = (a.value.unwrap(), b.value.unwrap());
                assert!(
                    (a_v - b_v).abs() <= 0.006,
                    "{:?} -> {a_v} vs {b_v}",
                    ms.raw(a)
                );
                assert!(
                    ms.raw(a).ends_with(" ms"),
                    "printed unit kept in raw: {:?}",
                    ms.raw(a)
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
        assert_eq!(identities(&reordered), identities(&original));
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
    assert_eq!(identities(&a), identities(&b));
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
        .all(|m| !p.key_pairs(m).iter().any(|(k, _)| k == "gpu temp")));
    let warned: Vec<&str> = p.warnings.iter().map(|w| w.reason.as_str()).collect();
    assert_eq!(warned.len(), 1, "once per column and file: {warned:?}");
    assert!(warned[0].contains("'gpu temp'"), "{warned:?}");
    assert_eq!(p.warnings[0].line, 62, "the header's line");
    // The text column `host` is a key column here; compare matches it away (it is on one
    // side only), see tests/it/cli_compare.rs.
    assert_eq!(identities(&p).len(), identities(&base).len());
}

#[test]
fn tokenspeed_problem_fields_are_identity() {
    let bf16 = parse("h200-gemm/ab/probe/base/trial1.log");
    let fp8 = parse("derived/probe-fp8/trial1.log");
    let key = |p: &perfdb_ingest::model::Parsed, i: usize| p.key_pairs(&p.measurements[i]);
    assert!(key(&bf16, 0).contains(&("dtype".into(), "bf16".into())));
    assert!(key(&bf16, 0).contains(&("mode".into(), "bench".into())));
    let ids_b = identities(&bf16);
    let ids_f = identities(&fp8);
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
    assert!(fp8
        .key_pairs(triton)
        .contains(&("split_k".into(), "1".into())));
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
            p.key_pairs(m)
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
    assert_eq!(
        p.provenance.verdict,
        Some(perfdb_ingest::model::RunVerdict::Fail)
    );
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
        let big = p.key_pairs(m).contains(&("M".into(), "4096".into()));
        assert_eq!(p.key(m) == p.key(rec[0]), big);
        let want = if big { Numerics::Fail } else { Numerics::Pass };
        assert_eq!(m.numerics, want, "{}", p.key(m));
    }
}

#[test]
fn a_failed_check_of_a_variant_no_table_measures_fails_the_run() {
    // Sample 06 ends with `ck: ...failed!` and `asm: ...warning!` after its last table,
    // whose variants are triton and hip: the run failed, and triton/hip are not blamed.
    let p = parse("formats/06_aiter_op_test_full_log_emulated.txt");
    assert_eq!(
        p.provenance.verdict,
        Some(perfdb_ingest::model::RunVerdict::Fail)
    );
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
                    let mut got = parsed.key_pairs(m);
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
    assert_eq!(parsed.raw(m), "11.953308 GB/s");
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
    assert_eq!((m.value, parsed.raw(m)), (None, "NaN"));
}

/// The format each fixture is in, by its path: `None` for files that are no benchmark
/// output (READMEs, scripts, validate-kernel-pr's reports) or that must be rejected.
fn expected_format(path: &str) -> Option<Format> {
    if path.contains("gpu-harness/nvbench/h200_") && path.ends_with(".json") {
        return Some(Format::NvbenchJson);
    }
    if path.contains("gpu-harness/pytorch-v3/") {
        return Some(Format::PytorchV3);
    }
    if path.contains("gpu-harness/tritonbench/h200_") {
        return Some(Format::Tritonbench);
    }
    if path.contains("gpu-harness/nvbench/h200_") && path.ends_with(".md") {
        return Some(Format::NvbenchMarkdown);
    }
    let by_part: &[(&str, Format)] = &[
        ("ab-torch-compare/", Format::TorchCompare),
        ("ab-flydsl-bench/", Format::FlydslBench),
        ("ab-rocm-bench-csv/", Format::RocmBenchCsv),
        ("ab-aiter-tuned-csv/", Format::AiterTunedCsv),
        ("ab-triton-csv/", Format::TritonCsv),
        ("ab-serving/", Format::Serving),
        ("ab-sglang/", Format::Serving),
        ("ab-ts-bench/", Format::TsProbe),
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
        (
            "h200-triton36/vector-add-performance.csv",
            Format::TritonCsv,
        ),
        ("h200-triton36/vector-add-stdout", Format::TritonPerfReport),
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
    // Real files from the field, one folder a format; those no format claims are
    // refused by detection (tests/it/realworld.rs says why of each).
    if let Some(rest) = path.split("realworld/").nth(1) {
        let undetected = [
            "asm_a8w8_gemm",
            "chunk_gdn_h_opt_tuned",
            "flydsl_pr848",
            "inferencex_agg",
            "olmo_issue258",
            "triton_issue319",
            "triton_issue5433",
            // nvbench compare reports: refused as what they are.
            "nvbench_pr14_compare",
            "nvbench_issue310_compare",
            "cucollections_pr409_compare",
            "cucollections_pr681_compare",
            "cucollections_pr771_compare",
            "cccl_pr8611_compare",
            "PROVENANCE",
        ];
        if undetected.iter().any(|u| rest.contains(u)) {
            return None;
        }
        let folder = rest.split('/').next()?;
        return Format::ALL.into_iter().find(|f| f.name() == folder);
    }
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
    let files = files_under(&sample(""));
    let mut seen = std::collections::BTreeMap::new();
    for f in files {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        let name = f.display().to_string().replace('\\', "/");
        let found = formats::detect(&text).ok();
        if name.contains("sample-data/invalid/") {
            continue; // rejected by their parsers: tests/it/cli_ingest.rs
        }
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

/// The one value of `table`/`variant`/`metric` whose key is exactly `key`.
fn one<'a>(
    p: &'a perfdb_ingest::model::Parsed,
    table: &str,
    variant: &str,
    key: &[(&str, &str)],
    metric: &str,
) -> &'a Measurement {
    let mut want: Vec<(String, String)> = key
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    want.sort();
    let found: Vec<&Measurement> = p
        .measurements
        .iter()
        .filter(|m| {
            let mut got = p.key_pairs(m);
            got.sort();
            *m.table == *table && *m.variant == *variant && *m.metric == *metric && got == want
        })
        .collect();
    assert_eq!(
        found.len(),
        1,
        "{table} {variant} {key:?} {metric}: {found:?}"
    );
    found[0]
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() <= 1e-9 * b.abs().max(1.0))
}

use perfdb_ingest::model::Direction;

#[test]
fn triton_csv_takes_its_table_from_the_file_and_its_unit_from_the_command_line() {
    let rel = "formats/31_triton_save_path_csv_from_sample24/vector-add-performance.csv";
    let path = sample(rel).display().to_string();
    let cx = formats::Context {
        source: &path,
        unit: Some("GB/s"),
        ..Default::default()
    };
    let (format, p) = formats::parse_in(&read(rel), None, &cx).unwrap();
    assert_eq!(format, Format::TritonCsv);
    assert_eq!(p.measurements.len(), 12);
    // `4096.000000,11.953308,11.377778`: the same values sample 24 printed.
    let m = one(
        &p,
        "vector-add-performance",
        "Triton",
        &[("size", "4096")],
        "bandwidth",
    );
    assert_eq!((&*m.unit, m.direction), ("TB/s", Direction::Higher));
    assert!(close(m.value, 0.011953308));
    assert_eq!((p.raw(m), m.line), ("11.953308 GB/s", 2));
    // Without --unit: kept, not compared, and said so.
    let cx = formats::Context {
        source: &path,
        unit: None,
        ..Default::default()
    };
    let (_, p) = formats::parse_in(&read(rel), None, &cx).unwrap();
    assert!(p
        .measurements
        .iter()
        .all(|m| m.direction == Direction::None));
    assert!(p.warnings[0].reason.contains("give --unit"));
    // An empty cell is NaN; three x columns are the key.
    let rel = "formats/31_triton_save_path_csv_from_sample24/matmul-performance-fp16.csv";
    let path = sample(rel).display().to_string();
    let cx = formats::Context {
        source: &path,
        unit: Some("TFLOPS"),
        ..Default::default()
    };
    let (_, p) = formats::parse_in(&read(rel), None, &cx).unwrap();
    let k = [("M", "1024"), ("N", "1024"), ("K", "1024")];
    let m = one(&p, "matmul-performance-fp16", "cuBLAS", &k, "throughput");
    assert!(close(m.value, 217.129784));
    assert_eq!(
        one(&p, "matmul-performance-fp16", "Broken", &k, "throughput").value,
        None
    );
}

#[test]
fn torch_compare_reads_labels_threads_sub_labels_and_the_footer_unit() {
    let p = parse("formats/25_torch_utils_benchmark_compare_torch2.11_H200_verbatim.txt");
    // Two printings of `Ops` (plain, then colourised and rounded) and one of `cpu`.
    assert_eq!(p.measurements.len(), 18);
    let k = [("threads", "4"), ("sub_label", "[1024, 1024]")];
    let ms: Vec<&Measurement> = p
        .measurements
        .iter()
        .filter(|m| {
            *m.variant == *"mm"
                && p.key_pairs(m)
                    .iter()
                    .any(|(k, v)| k == "threads" && v == "4")
        })
        .filter(|m| p.key_pairs(m).iter().any(|(_, v)| v == k[1].1))
        .collect();
    let values: Vec<Option<f64>> = ms.iter().map(|m| m.value).collect();
    assert_eq!(values, [Some(56.5), Some(57.0)]);
    assert!(ms
        .iter()
        .all(|m| &*m.unit == "us" && m.direction == Direction::Lower));
    let m = one(
        &p,
        "cpu",
        "add",
        &[("threads", "1"), ("env", "envB"), ("sub_label", "tiny")],
        "latency",
    );
    assert!(close(m.value, 2.5));
    // Another footer unit and a noise mark.
    let text = "[--- t ---]\n          |  a\n1 threads: ---\n    x     |  1.5 (! 12%)\n\nTimes are in milliseconds (ms).\n";
    let (_, p) = formats::parse(text, None).unwrap();
    let m = &p.measurements[0];
    assert_eq!((m.value, p.raw(m)), (Some(1500.0), "1.5 ms"));
    assert_eq!(
        m.note.map(|n| n.to_string()).as_deref(),
        Some("noisy: IQR 12% of the median")
    );
    let e = formats::parse(&text.replace("milliseconds (ms)", "bytes (B)"), None).unwrap_err();
    assert_eq!(e.line, 6);
}

#[test]
fn pytest_benchmark_values_and_provenance_come_from_the_json() {
    let rel = "formats/26_pytest_benchmark_json_cpu_generated/base/trial1.json";
    let doc: serde_json::Value = serde_json::from_str(&read(rel)).unwrap();
    let p = parse(rel);
    let b = &doc["benchmarks"][1];
    assert_eq!(b["name"], "test_sum[10000]");
    let m = one(&p, "sum", "test_sum", &[("n", "10000")], "latency");
    assert_eq!((&*m.unit, m.direction), ("us", Direction::Lower));
    assert!(close(m.value, b["stats"]["median"].as_f64().unwrap() * 1e6));
    let m = one(&p, "sum", "test_sum", &[("n", "10000")], "latency_stddev");
    assert_eq!(m.direction, Direction::None);
    let m = one(&p, "sum", "test_sum", &[("n", "10000")], "rounds");
    assert_eq!(m.value, b["stats"]["rounds"].as_f64());
    let m = one(
        &p,
        "sort",
        "test_sort",
        &[("kind", "reversed"), ("n", "1000")],
        "latency",
    );
    assert!(m.value.unwrap() > 0.0);
    assert_eq!(
        p.provenance.commit.as_deref(),
        doc["commit_info"]["id"].as_str()
    );
    assert_eq!(
        p.provenance.machine.as_deref(),
        doc["machine_info"]["cpu"]["brand_raw"].as_str()
    );
}

#[test]
fn google_benchmark_repetitions_are_trials_and_aggregates_are_derived() {
    let rel = "formats/27_google_benchmark_json_cpu_generated/base/run1.json";
    let doc: serde_json::Value = serde_json::from_str(&read(rel)).unwrap();
    let p = parse(rel);
    assert_eq!(p.repetitions.len(), 2);
    let first = &doc["benchmarks"][0];
    assert_eq!(
        (first["name"].as_str(), first["repetition_index"].as_u64()),
        (Some("BM_Sum/4096"), Some(0))
    );
    let k = [("arg1", "4096"), ("threads", "1")];
    let m = one(&p, "bench_vec", "BM_Sum", &k, "latency");
    assert!(close(m.value, first["real_time"].as_f64().unwrap() / 1e3));
    assert_eq!((&*m.unit, m.direction), ("us", Direction::Lower));
    let m = one(&p, "bench_vec", "BM_Sum", &k, "bandwidth");
    assert!(close(
        m.value,
        first["bytes_per_second"].as_f64().unwrap() / 1e12
    ));
    assert_eq!(m.direction, Direction::Higher);
    // The number as the file printed it, in the file's unit.
    assert_eq!(p.raw(m), "4.7301900444651117e+09 B/s");
    let m = one(&p, "bench_vec", "BM_Sum", &k, "latency_median");
    assert_eq!(m.direction, Direction::None);
    let m = one(&p, "bench_vec", "BM_Sum", &k, "latency_cv");
    assert_eq!(&*m.unit, "%");
    // The second repetition is the second trial.
    let second = &doc["benchmarks"][1];
    assert_eq!(second["repetition_index"].as_u64(), Some(1));
    let rep = p.repetitions[0]
        .iter()
        .find(|m| *m.variant == *"BM_Sum" && *m.metric == *"latency" && p.key(m).contains("4096"))
        .unwrap();
    assert!(close(
        rep.value,
        second["real_time"].as_f64().unwrap() / 1e3
    ));
}

#[test]
fn rocm_bench_csv_reads_each_problem_under_its_header() {
    let p = parse("formats/28_hipblaslt_rocblas_bench_csv_emulated.txt");
    assert_eq!(p.measurements.len(), 12);
    let m = p
        .measurements
        .iter()
        .find(|m| {
            *m.variant == *"hipblaslt"
                && *m.metric == *"throughput"
                && p.key(m).contains("\"m\":\"128\"")
        })
        .unwrap();
    assert!(close(m.value, 0.415278));
    // Line 10: the values under the `[0]:transA,...` header of line 9.
    assert_eq!(
        (&*m.unit, p.raw(m), m.line),
        ("TFLOPS", "415.278 Gflops", 10)
    );
    let k: Vec<(String, String)> = p.key_pairs(m);
    assert!(k.contains(&("d_type".to_string(), "f16_r".to_string())));
    assert!(!k.iter().any(|(n, _)| n == "us" || n.ends_with("-Gflops")));
    let lat = p
        .measurements
        .iter()
        .find(|m| *m.variant == *"rocblas" && *m.metric == *"latency")
        .unwrap();
    assert!(close(lat.value, 302.0));
    assert_eq!(lat.direction, Direction::Lower);
}

#[test]
fn aiter_tuned_csv_keeps_the_chosen_kernel_out_of_the_key() {
    let rel = "formats/29_aiter_tuned_gemm_csv_emulated/a8w8_tuned_gemm.csv";
    let path = sample(rel).display().to_string();
    let cx = formats::Context {
        source: &path,
        unit: None,
        ..Default::default()
    };
    let (format, p) = formats::parse_in(&read(rel), None, &cx).unwrap();
    assert_eq!(format, Format::AiterTunedCsv);
    let k = [
        ("gfx", "gfx942"),
        ("cu_num", "304"),
        ("M", "128"),
        ("N", "1280"),
        ("K", "8192"),
        ("q_dtype_w", "torch.int8"),
    ];
    let t = "a8w8_tuned_gemm";
    assert!(close(one(&p, t, "tuned", &k, "latency").value, 17.8615));
    assert!(close(one(&p, t, "tuned", &k, "throughput").value, 150.3));
    assert!(close(one(&p, t, "tuned", &k, "bandwidth").value, 0.68));
    assert_eq!(
        one(&p, t, "tuned", &k, "error_ratio").direction,
        Direction::None
    );
    let notes: Vec<&str> = p
        .measurements
        .iter()
        .filter(|m| *m.metric == *"note" && m.line == 4)
        .map(|m| p.raw(m))
        .collect();
    assert_eq!(
        notes,
        [
            "12",
            "2",
            "a8w8_rowwise_256x128x64x128_32x32_32x32_2x1_intrawave_v3"
        ]
    );
}

#[test]
fn flydsl_tables_reference_tables_and_ratio_lines() {
    let p = parse("formats/12_flydsl_bench_log_fixture_verbatim.txt");
    let k = [("shape", "32768x8192"), ("dtype", "bf16")];
    let m = one(&p, "softmax", "flydsl", &k, "bandwidth");
    assert_eq!(
        (m.value, &*m.unit, m.direction),
        (Some(3.938), "TB/s", Direction::Higher)
    );
    assert_eq!(one(&p, "softmax", "flydsl", &k, "throughput").value, None);
    // The table after `found_main=1` is main's, kept apart.
    let m = one(&p, "softmax", "flydsl", &k, "bandwidth@main");
    assert_eq!((m.value, m.direction), (Some(4.105), Direction::None));
    let ratios: Vec<(Option<f64>, &str)> = p
        .measurements
        .iter()
        .filter(|m| *m.table == *"softmax" && *m.metric == *"ratio")
        .map(|m| (m.value, &*m.column))
        .collect();
    assert_eq!(
        ratios,
        [
            (Some(0.959), "ratio vs main"),
            (Some(0.975), "ratio vs v0.2.0")
        ]
    );
    let k = [("shape", "4096x4096x4096"), ("dtype", "bf16")];
    assert!(close(
        one(&p, "wmma_gemm", "FlyDSL", &k, "latency").value,
        1264.1
    ));
    assert!(close(
        one(&p, "wmma_gemm", "AIter", &k, "latency").value,
        1119.7
    ));
    assert!(close(
        one(&p, "wmma_gemm", "FlyDSL", &k, "speedup").value,
        1.13
    ));
    // Sample 13: `[perf]` lines in the same log, and a `current=missing` ratio.
    let p = parse("formats/13_flydsl_run_benchmark_table_emulated.txt");
    assert!(p.measurements.iter().any(|m| *m.table == *"perf"));
    let k = [("shape", "8192x8192x8192"), ("dtype", "fp4")];
    let m = one(&p, "gemm", "flydsl", &k, "ratio");
    assert_eq!(
        (m.value, m.note.map(|n| n.to_string())),
        (None, Some("current missing".to_string()))
    );
}

#[test]
fn serving_results_have_units_directions_and_load_keys() {
    let p = parse("formats/30_sglang_bench_serving_jsonl_emulated.jsonl");
    let base = [
        ("dataset_name", "random"),
        ("max_concurrency", "64"),
        ("random_input_len", "1024"),
        ("random_output_len", "128"),
        ("random_range_ratio", "1"),
    ];
    let mut k: Vec<(&str, &str)> = base.to_vec();
    k.push(("request_rate", "8"));
    let m = one(&p, "serving", "sglang", &k, "ttft_p99");
    assert_eq!(
        (m.value, &*m.unit, m.direction, m.line),
        (Some(201700.0), "us", Direction::Lower, 2)
    );
    let m = one(&p, "serving", "sglang", &k, "output_throughput");
    assert_eq!(
        (m.value, &*m.unit, m.direction),
        (Some(992.3), "tokens/s", Direction::Higher)
    );
    let m = one(&p, "serving", "sglang", &k, "concurrency");
    assert_eq!(m.direction, Direction::None);
    let m = one(&p, "serving", "sglang", &k, "e2el_median");
    assert_eq!(m.value, Some(1_760_000.0));
    // vLLM's result JSON (TokenSpeed's serve export).
    let p = parse("formats/20_aorta_tokenspeed_bench_serve_export_fixture.json");
    let k = [
        ("model_id", "Qwen/Qwen3-0.6B"),
        ("label", "step1"),
        ("request_rate", "inf"),
        ("max_concurrency", "8"),
        ("burstiness", "1"),
        ("num_prompts", "32"),
    ];
    let m = one(&p, "serving", "openai", &k, "request_throughput");
    assert_eq!(
        (m.value, &*m.unit, m.direction),
        (Some(28.0), "req/s", Direction::Higher)
    );
    assert_eq!(
        one(&p, "serving", "openai", &k, "request_goodput").value,
        None
    );
    // TokenSpeed's TS_BENCH lines, with the same units and directions.
    let p = parse("formats/21_aorta_ts_bench_serve_stdout_lines.txt");
    let step = [("step", "1")];
    let m = one(&p, "ts_bench", "serve", &step, "ttft_median");
    assert_eq!((m.value, m.direction), (Some(46700.0), Direction::Lower));
    let m = one(&p, "ts_bench", "serve", &step, "output_throughput");
    assert_eq!((m.value, m.direction), (Some(3585.9), Direction::Higher));
    assert_eq!(
        one(&p, "ts_bench", "serve", &step, "completed").direction,
        Direction::None
    );
    let m = one(&p, "ts_bench", "serve", &[], "server_startup");
    assert_eq!(
        (m.value, &*m.unit, m.direction),
        (Some(307e6), "us", Direction::Lower)
    );
    assert_eq!(
        p.provenance.verdict,
        Some(perfdb_ingest::model::RunVerdict::Fail)
    );
}

#[test]
fn aorta_result_and_matrix() {
    let p = parse("formats/22_aorta_probe_result_json_docs_verbatim.json");
    assert_eq!(
        p.provenance.verdict,
        Some(perfdb_ingest::model::RunVerdict::Fail)
    );
    assert_eq!(
        p.provenance.verdict_detail.as_deref(),
        Some("verdict fail; exit code 137; detectors fired: tier1:exit_nonzero, tier4:hip_error")
    );
    let m = one(&p, "aorta", "none-none", &[], "walltime");
    assert_eq!(
        (m.value, &*m.unit, m.direction),
        (Some(12_345_000.0), "us", Direction::Lower)
    );
    let m = one(&p, "aorta", "none-none", &[], "peak_vram");
    assert_eq!(
        (m.value, &*m.unit, m.direction),
        (Some(71234.0), "MiB", Direction::Lower)
    );
    let p = parse("formats/23_aorta_matrix_md_emulated.md");
    let t = "triage:_subprocess";
    let env = [("environment", "local")];
    let m = one(&p, t, "ts_gemm_torch_bf16-none", &env, "step_time");
    assert_eq!(
        (m.value, m.direction, p.raw(m)),
        (Some(16_877_000.0), Direction::Lower, "16877.0 ms")
    );
    let m = one(&p, t, "ts_gemm_torch_bf16-none", &env, "failure_rate");
    assert_eq!((m.value, m.direction), (Some(33.0), Direction::None));
    let m = one(
        &p,
        t,
        "ts_gemm_torch_bf16-hip_launch_blocking",
        &env,
        "step_time",
    );
    assert_eq!(m.value, None);
}

/// Every parser on every prefix of every fixture (cut at 97 positions a file, at char
/// boundaries) and detection on each: an error or a result, never a panic. (`fuzz/`
/// does this properly; this is the cheap floor.)
#[test]
fn no_parser_panics_on_a_cut_off_fixture() {
    let mut files = files_under(&sample("formats"));
    files.extend(files_under(&sample("invalid")));
    let mut tried = 0;
    for f in files {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        let step = (text.len() / 97).max(1);
        let mut cut = 0;
        while cut <= text.len() {
            if text.is_char_boundary(cut) {
                let part = &text[..cut];
                let _ = formats::detect(part);
                for format in Format::ALL {
                    let cx = formats::Context {
                        source: "cut.csv",
                        unit: Some("ms"),
                        ..Default::default()
                    };
                    let _ = formats::parse_in(part, Some(format), &cx);
                    tried += 1;
                }
            }
            cut += step;
        }
    }
    assert!(tried > 10_000, "{tried}");
}

#[test]
fn nvbench_markdown_reads_repeated_columns_by_place_and_counts_throttling() {
    let rel = "gpu-harness/nvbench/h200_run1.md";
    let cx = formats::Context {
        variant_axis: Some("Op"),
        ..Default::default()
    };
    let (format, p) = formats::parse_in(&read(rel), None, &cx).unwrap();
    assert_eq!(format, Format::NvbenchMarkdown);
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    let k = [("N", "8192")];
    // `| 8192 | matmul | ... |   1.631 ms |  4.97% |  1.431 ms | 1.26% | 768.556T |
    // 281.454 GB/s |  5.85% |   1056x |  1.653 ms |`
    let m = one(&p, "torch_bf16", "matmul", &k, "latency");
    assert_eq!((&*m.unit, m.direction), ("us", Direction::Lower));
    assert!(close(m.value, 1431.0));
    assert_eq!((p.raw(m), &*m.column, m.line), ("1.431 ms", "GPU Time", 78));
    // The two `Noise` columns: CPU's after CPU Time, the GPU's after GPU Time.
    assert!(close(
        one(&p, "torch_bf16", "matmul", &k, "cpu_noise").value,
        0.0497
    ));
    assert!(close(
        one(&p, "torch_bf16", "matmul", &k, "noise").value,
        0.0126
    ));
    // The two `Samples` columns: cold, then batch.
    assert!(close(
        one(&p, "torch_bf16", "matmul", &k, "samples").value,
        1056.0
    ));
    let m = one(&p, "torch_bf16", "matmul", &k, "samples_batch");
    assert!(close(m.value, 1056.0));
    let m = one(&p, "torch_bf16", "matmul", &k, "item_rate");
    assert_eq!(m.direction, Direction::Higher);
    assert!(close(m.value, 768.556e12));
    let m = one(&p, "torch_bf16", "matmul", &k, "bandwidth");
    assert_eq!(&*m.unit, "TB/s");
    assert!(close(m.value, 0.281454));
    assert!(close(
        one(&p, "torch_bf16", "matmul", &k, "bytes").value,
        256.0 * 1048576.0
    ));
    let m = one(&p, "torch_bf16", "matmul", &k, "latency_batch");
    assert_eq!(m.direction, Direction::None);
    assert!(close(m.value, 1653.0));
    // The log's 27 throttle warnings of this state, the lowest clock in the note.
    let m = one(&p, "torch_bf16", "matmul", &k, "throttled");
    assert!(close(m.value, 27.0));
    assert!(
        p.raw(m).contains("1370.87 MHz / 1980.00 MHz"),
        "{}",
        p.raw(m)
    );
    // `add` has no FLOP count and no item rate: empty cells are no values, not zeros.
    let add = |metric: &str| {
        p.measurements
            .iter()
            .any(|m| *m.variant == *"add" && *m.metric == *metric)
    };
    assert!(!add("flop") && !add("item_rate") && add("bandwidth"));
    assert_eq!(p.provenance.machine.as_deref(), Some("NVIDIA H200"));
    assert_eq!(p.provenance.arch.as_deref(), Some("sm_90"));
    // The printed GPU Time is the mean: not the JSON's cold median.
    assert!(p
        .provenance
        .tags
        .contains(&("method".to_string(), "nvbench:cold-mean".to_string())));
}

#[test]
fn nvbench_markdown_without_a_log_takes_the_leading_columns_as_axes() {
    let text = read("gpu-harness/nvbench/h200_run3_entropy.md");
    let results = &text[text.find("# Benchmark Results").unwrap()..];
    let (format, p) = formats::parse(results, None).unwrap();
    assert_eq!(format, Format::NvbenchMarkdown);
    let m = one(
        &p,
        "torch_bf16",
        "default",
        &[("N", "2048"), ("Op", "add")],
        "latency",
    );
    assert!(close(m.value, 10.89));
    // A cell nvbench would never print is refused with its line and column.
    let bad = results.replace("10.890 us", "10.890 parsecs");
    let err = formats::parse(&bad, None).unwrap_err();
    assert_eq!(err.line, 11, "{err}");
    assert!(err.reason.contains("GPU Time is '10.890 parsecs'"), "{err}");
}

/// tritonbench's three forms of one H200 run hold the same values under the same rows.
#[test]
fn tritonbench_printed_csv_and_json_agree() {
    let dir = "gpu-harness/tritonbench";
    let parse = |file: &str| {
        let path = sample(&format!("{dir}/{file}")).display().to_string();
        let cx = formats::Context {
            source: &path,
            ..Default::default()
        };
        let (format, p) = formats::parse_in(&read(&format!("{dir}/{file}")), None, &cx)
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(format, Format::Tritonbench, "{file}");
        assert!(
            p.provenance
                .tags
                .contains(&("method".to_string(), "tritonbench:p50".to_string())),
            "{file}"
        );
        p
    };
    let printed = parse("h200_vector_add_stdout.txt");
    let csv = parse("h200_vector_add_output.csv");
    let json = parse("h200_vector_add_output.json");
    let k = [("x_val", "4096")];
    // `     4096   0.004576 (±24.48%)   (10.741258930627152, 9.14..., 14.22...)`: ms -> us,
    // the spread beside, never in, the value; the gbps tuple's first element.
    let m = one(
        &printed,
        "h200_vector_add_stdout",
        "torch_add",
        &k,
        "latency",
    );
    assert_eq!((&*m.unit, m.direction), ("us", Direction::Lower));
    assert!(close(m.value, 4.576));
    assert_eq!((printed.raw(m), m.line), ("0.004576 (±24.48%) ms", 65));
    let m = one(
        &printed,
        "h200_vector_add_stdout",
        "torch_add",
        &k,
        "latency_spread",
    );
    assert!(close(m.value, 0.2448));
    let m = one(
        &printed,
        "h200_vector_add_stdout",
        "triton_add",
        &k,
        "bandwidth",
    );
    assert!(close(m.value, 0.01335652144275226));
    let m = one(
        &printed,
        "h200_vector_add_stdout",
        "triton_add",
        &k,
        "speedup",
    );
    assert_eq!(m.direction, Direction::None);
    // The CSV and the JSON print the latency unrounded; the JSON names the operator.
    let m = one(&csv, "h200_vector_add_output", "torch_add", &k, "latency");
    assert!(close(m.value, 4.575999919325113));
    let m = one(&json, "vector_add", "torch_add", &k, "latency");
    assert!(close(m.value, 4.575999919325113));
    let m = one(&json, "vector_add", "triton_add", &k, "bandwidth");
    assert!(close(m.value, 0.01335652144275226));
    // The same rows and metrics in all three.
    let shape = |p: &perfdb_ingest::model::Parsed| {
        let mut v: Vec<String> = p
            .measurements
            .iter()
            .map(|m| format!("{} {:?} {}", m.variant, p.key_pairs(m), m.metric))
            .filter(|s| !s.contains("spread"))
            .collect();
        v.sort();
        v.dedup();
        v
    };
    assert_eq!(shape(&printed), shape(&csv));
    let mut from_json = shape(&json);
    // The JSON's `-avg` fields repeat the average row under their own metric names.
    from_json.retain(|s| shape(&csv).contains(s));
    assert_eq!(from_json, shape(&csv));
    // The average row: derived, never compared.
    let avg = [("x_val", "average")];
    let m = one(
        &printed,
        "h200_vector_add_stdout",
        "triton_add",
        &avg,
        "speedup",
    );
    assert!(close(m.value, 1.05441));
    assert!(printed
        .measurements
        .iter()
        .filter(|m| printed.key_pairs(m)[0].1 == "average")
        .all(|m| m.direction == Direction::None));
    // tritonbench's A/B mode: two configurations in one output, refused with the line.
    let ab = read(&format!("{dir}/h200_vector_add_abtest_stdout.txt"));
    let err = formats::parse(&ab, None).unwrap_err();
    assert!(err.reason.contains("A/B mode"), "{err}");
    assert_eq!(
        &ab.lines().nth(err.line - 1).unwrap()[..17],
        "Running Side B: -"
    );
}

/// PyTorch's benchmark database v3, in its three layouts (pytorch/test-infra's test
/// files): an array, one object with `runners`, and JSON lines mixing records and arrays.
#[test]
fn pytorch_v3_records_in_every_layout() {
    let dir = "gpu-harness/pytorch-v3";
    let parse = |file: &str| {
        let (format, p) = formats::parse(&read(&format!("{dir}/{file}")), None)
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(format, Format::PytorchV3, "{file}");
        p
    };
    let p = parse("test-infra_add_loop_eager.json");
    let m = one(
        &p,
        "pr_time_benchmarks",
        "eager",
        &[("model", "add_loop_eager")],
        "compile_time_instruction_count",
    );
    assert_eq!((&*m.unit, m.direction), ("count", Direction::Lower));
    assert!(close(m.value, 3086359081.0));
    // One object: the unit inside the name, the identity field of metric.extra_info in
    // the key, target_value 0 = none, the runner = the machine.
    let p = parse("test-infra_do_not_overwrite_runners_info.json");
    assert_eq!(p.measurements.len(), 1);
    let k = [
        ("model", "edsr"),
        ("mode", "inference"),
        ("method", "forward"),
    ];
    let m = one(
        &p,
        "ExecuTorch",
        "xnnpack_q8",
        &k,
        "peak_inference_mem_usage",
    );
    assert_eq!((&*m.unit, m.direction), ("MB", Direction::Lower));
    assert!(close(m.value, 333.2014794921875));
    assert_eq!(p.provenance.machine.as_deref(), Some("Apple iPhone 15"));
    // JSON lines, one of them an array: three records, each on its own line.
    let p = parse("test-infra_json-each-row.json");
    let lines: Vec<u32> = p.measurements.iter().map(|m| m.line).collect();
    assert_eq!(lines, [1, 2, 3]);
    let m = one(
        &p,
        "pr_time_benchmarks",
        "inductor",
        &[("model", "add_loop_inductor_dynamic_gpu")],
        "compile_time_instruction_count",
    );
    assert!(close(m.value, 40859830085.0));
    // A broken line is refused with its number.
    let text = read(&format!("{dir}/test-infra_json-each-row.json"));
    let bad = text.replacen(
        "\"benchmark_values\": [5712213247]",
        "\"benchmark_values\": [57",
        1,
    );
    let err = formats::parse(&bad, None).unwrap_err();
    assert_eq!(err.line, 2, "{err}");
    // Records printed over several lines, one after another; several values are trials;
    // a name with no unit is kept and said.
    let two = r#"{"benchmark": {"name": "b"}, "model": {"name": "m", "backend": "x"},
 "metric": {"name": "latency_ms", "benchmark_values": [1.5, 1.6, 1.7]}}
{"benchmark": {"name": "b"}, "model": {"name": "m", "backend": "x"},
 "metric": {"name": "load_status", "benchmark_values": [1]}}"#;
    let (_, p) = formats::parse(two, None).unwrap();
    let m = one(&p, "b", "x", &[("model", "m")], "latency");
    assert!(close(m.value, 1500.0));
    assert_eq!(p.repetitions.len(), 2);
    assert!(close(p.repetitions[1][0].value, 1700.0));
    assert_eq!(p.warnings.len(), 1);
    assert!(
        p.warnings[0].reason.contains("'load_status'"),
        "{:?}",
        p.warnings
    );
}
