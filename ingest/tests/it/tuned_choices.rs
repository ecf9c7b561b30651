//! What an autotuner chose, from the files other tools keep: Inductor's `.best_config`
//! (five real files, sample-data/inductor-best-config/) and aiter's tuned CSVs
//! (three real versions of one file, sample-data/realworld/aiter-tuned-csv/), and how
//! two versions differ: another winner among the same candidates is a drift, other
//! candidates a changed config set.

use perfdb_ingest::formats::aiter_tuned_choices;
use perfdb_ingest::kernel_identity::autotune::{
    compare_best, compare_choices, read_best_config, BestConfig, TuneChange,
};
use std::path::PathBuf;

fn realworld(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../sample-data/realworld")
        .join(rel)
}

fn sample(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../sample-data")
        .join(rel)
}

fn best(rel: &str) -> BestConfig {
    let path = sample(&format!("inductor-best-config/{rel}"));
    let text = std::fs::read_to_string(&path).unwrap();
    read_best_config(&path, &text).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn inductors_best_configs_read_as_a_winner_among_hashed_candidates() {
    let bk =
        best("bk/5959678433f8b5031f12a364f84d6c48b8c21f089b6bc9e7bd21bf65cdb63f04.best_config");
    assert_eq!(bk.winner, "XBLOCK=8 num_warps=2 num_stages=1");
    assert_eq!(
        bk.configs_hash.as_deref(),
        Some("ec7c98dadee3d6e3126c4251be209c7153a1ad4c7909275ea44497e068a40dbb")
    );
    assert!(!bk.found_by_coordesc);
    assert_eq!(bk.time_taken_ms, Some(198.0));
    let dt =
        best("dt/ad24d4b2497131f065466b72605f573f8c2989f12e2cec26524b0ab6b8bae479.best_config");
    assert_eq!(
        dt.winner,
        "R0_BLOCK=16 XBLOCK=2 YBLOCK=16 num_warps=2 num_stages=1"
    );
    // Two kernels tuned among the same candidates (one configs_hash) to the same winner:
    // the same choice; a kernel tuned among other candidates: another config set.
    let np =
        best("np/abd623330d33327f8bd5572e2d406ab99a17fc0e6fcf654b10b3353d5828509f.best_config");
    let vo =
        best("vo/3c566572983417b4cbe3cfbbd8626a8118569b4aa00bb74e5f9d54930709f4e2.best_config");
    assert_eq!(compare_best(&np, &vo), TuneChange::Same);
    assert!(matches!(
        compare_best(&bk, &np),
        TuneChange::ConfigSet { .. }
    ));
    // Among the same candidates, another winner is a drift (the real file with its
    // winner's warps changed: the one thing two processes' files would differ in).
    let drifted = BestConfig {
        winner: "XBLOCK=1024 num_warps=8 num_stages=1".to_string(),
        ..vo.clone()
    };
    assert_eq!(
        compare_best(&np, &drifted),
        TuneChange::Drift {
            from: "XBLOCK=1024 num_warps=4 num_stages=1".to_string(),
            to: "XBLOCK=1024 num_warps=8 num_stages=1".to_string()
        }
    );
    // Not a best config: said, with the file.
    let path = sample("inductor-best-config/none.best_config");
    let err = read_best_config(&path, "{\"XBLOCK\": 8}")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("none.best_config") && err.contains("num_warps"),
        "{err}"
    );
}

fn choices(file: &str) -> Vec<perfdb_ingest::kernel_identity::autotune::Choice> {
    let text = std::fs::read_to_string(realworld(&format!("aiter-tuned-csv/{file}"))).unwrap();
    aiter_tuned_choices(&text).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// Three committed versions of aiter's `a8w8_tuned_gemm.csv` (2025-01, 2025-09, now):
/// compared on the key columns both versions have; the counts were computed apart, with
/// Python's csv module, from the same files.
#[test]
fn three_versions_of_an_aiter_tuned_csv_say_which_shapes_were_retuned() {
    let (jan, sep, now) = (
        choices("a8w8_tuned_gemm_2025-01.csv"),
        choices("a8w8_tuned_gemm_2025-09.csv"),
        choices("a8w8_tuned_gemm.csv"),
    );
    assert_eq!(jan.len(), 26);
    assert_eq!(
        jan[0].winner,
        "kernelId=34 splitK=0 kernelName=a8w8_rowwise_256x16x64x512_16x16_1x1_32x8x1_32x8x1_1x16x1x16_4x4x1_1x1_intrawave_v3"
    );
    let split = |changes: Vec<(String, TuneChange)>| {
        let mut drifts = Vec::new();
        let (mut added, mut removed) = (0, 0);
        for (k, c) in changes {
            match c {
                TuneChange::Drift { .. } => drifts.push(k),
                TuneChange::ConfigSet {
                    added: a,
                    removed: r,
                } => (added, removed) = (a.len(), r.len()),
                TuneChange::Same => panic!("a same choice is not listed"),
            }
        }
        (drifts, added, removed)
    };
    let (drifts, added, removed) = split(compare_choices(&jan, &sep));
    assert_eq!((drifts.len(), added, removed), (3, 434, 0), "{drifts:?}");
    assert!(
        drifts.contains(&"M=64 N=8192 K=1024".to_string()),
        "{drifts:?}"
    );
    let (drifts, added, removed) = split(compare_choices(&sep, &now));
    assert_eq!(drifts, ["cu_num=80 M=2048 N=8192 K=1024"]);
    assert_eq!((added, removed), (60, 3));
    // A version against itself: nothing changed.
    assert!(compare_choices(&now, &now).is_empty());
}
