//! Every file of `sample-data/` (fixtures, derived trials, the reject corpus) and every
//! input fuzzing found a fault with (`fuzz/regressions/<target>/`) passes the checks the
//! fuzz targets make (`perfdb_ingest::testing::roundtrip::check`): read as detected and as each
//! format, no panic, a rejection names a real line, an accepted input survives Parquet;
//! and the fast JSON reader reads each as serde_json does (`check_json_reader`).

use perfdb_ingest::formats::Format;
use perfdb_ingest::testing::roundtrip::{check, check_json_reader};
use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        {
            continue;
        }
        let meta = std::fs::symlink_metadata(&p).unwrap();
        if meta.is_dir() {
            files(&p, out);
        } else if meta.is_file() && meta.len() < 8 << 20 {
            out.push(p);
        }
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn every_sample_file_passes_the_fuzz_checks_as_every_format() {
    let mut all = Vec::new();
    files(&root().join("sample-data"), &mut all);
    assert!(all.len() > 100, "{} files", all.len());
    for f in &all {
        let bytes = std::fs::read(f).unwrap();
        let run = |format: Option<Format>| {
            std::panic::catch_unwind(|| check(format, &bytes))
                .unwrap_or_else(|_| panic!("{} as {format:?}", f.display()))
        };
        run(None);
        check_json_reader(&bytes);
        for format in Format::ALL {
            run(Some(format));
        }
    }
}

#[test]
fn what_fuzzing_found_stays_fixed() {
    let mut found = Vec::new();
    files(&root().join("fuzz/regressions"), &mut found);
    for f in &found {
        let target = f.parent().unwrap().file_name().unwrap().to_str().unwrap();
        let bytes = std::fs::read(f).unwrap();
        if target == "json_reader" {
            std::panic::catch_unwind(|| check_json_reader(&bytes))
                .unwrap_or_else(|_| panic!("{} fails again", f.display()));
            continue;
        }
        let format = match target {
            "detect" => None,
            name => Some(
                name.replace('_', "-")
                    .parse::<Format>()
                    .unwrap_or_else(|_| panic!("{}: no format {name}", f.display())),
            ),
        };
        std::panic::catch_unwind(|| check(format, &bytes))
            .unwrap_or_else(|_| panic!("{} fails again", f.display()));
    }
    eprintln!("{} regression inputs replayed", found.len());
}

/// A log cut at every byte (a benchmark killed mid-print, a partial upload): each prefix
/// is rejected naming a line that exists, or accepted and stored whole. Three layouts:
/// an aiter pipe table, a JSON export, a CSV.
#[test]
fn a_table_cut_at_every_byte_is_rejected_or_read() {
    let fixtures = [
        "sample-data/h200-gemm/ab/aiter/base/trial1.log",
        "sample-data/formats/16_tokenspeed_kernel_bench_export_emulated.json",
        "sample-data/formats/29_aiter_tuned_gemm_csv_emulated/a8w8_tuned_gemm.csv",
    ];
    for rel in fixtures {
        let path = root().join(rel);
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let (mut accepted, mut rejected) = (0, 0);
        for cut in 0..=bytes.len() {
            let prefix = &bytes[..cut];
            let meta = perfdb_ingest::model::RunMeta::default();
            match perfdb_ingest::prepare_bytes(
                "cut.log",
                prefix,
                None,
                &meta,
                &perfdb_ingest::devices::builtin(),
            ) {
                Ok(_) => accepted += 1,
                Err(_) => rejected += 1,
            }
            std::panic::catch_unwind(|| check(None, prefix))
                .unwrap_or_else(|_| panic!("{rel} cut at byte {cut}"));
        }
        assert!(
            accepted > 0 && rejected > 0,
            "{rel}: {accepted} accepted, {rejected} rejected"
        );
    }
}
