//! Kernel identity on the Triton cache a real pass left (an H100, triton 3.6:
//! sample-data/h100-kernel-identity/PROVENANCE.md): six kernels compiled for a base file
//! and three edits of it, each in its own folder.

use perfdb_ingest::kernel_identity::{changed, read_cache, without_locations, Kernel};
use std::path::PathBuf;

fn cache(edit: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../sample-data/h100-kernel-identity/cache")
        .join(edit)
}

fn kernels(edit: &str) -> Vec<Kernel> {
    read_cache(&cache(edit)).unwrap_or_else(|e| panic!("{edit}: {e}"))
}

#[test]
fn the_six_kernels_read_with_their_launch() {
    let base = kernels("base");
    let names: Vec<&str> = base.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "add_kernel",
            "layernorm_kernel",
            "matmul_kernel",
            "relu_scale_kernel",
            "rowsum_kernel",
            "softmax_kernel"
        ]
    );
    for k in &base {
        assert_eq!(k.target.as_deref(), Some("cuda:90"), "{k:?}");
        assert_eq!(k.num_ctas, Some(1), "{k:?}");
        assert!(k.num_warps.is_some_and(|w| w >= 1), "{k:?}");
        assert_eq!(k.code.len(), 16, "{k:?}");
    }
    // Six kernels, six codes.
    let mut codes: Vec<&str> = base.iter().map(|k| k.code.as_str()).collect();
    codes.dedup();
    assert_eq!(codes.len(), 6);
}

#[test]
fn a_comment_changes_no_identity_though_every_file_changed() {
    let ttgir = |edit: &str| std::fs::read_to_string(cache(edit).join("add_kernel.ttgir")).unwrap();
    // The files differ (each names its folder and lines)...
    assert_ne!(ttgir("base"), ttgir("comment_in_kernel"));
    // ...the code does not, and no location is left in it.
    let code = without_locations(&ttgir("base"));
    assert!(!code.contains("#loc") && !code.contains(" loc("), "{code}");
    assert!(code.contains("tt.func public @add_kernel"), "{code}");
    assert_eq!(
        without_locations(&ttgir("base")),
        without_locations(&ttgir("comment_in_kernel"))
    );
    assert_eq!(
        changed(&kernels("base"), &kernels("comment_in_kernel")),
        Default::default()
    );
}

#[test]
fn a_change_names_exactly_the_kernels_whose_code_changed() {
    let base = kernels("base");
    // The shared helper: its two callers, and no other kernel.
    let helper = changed(&base, &kernels("shared_helper"));
    assert_eq!(helper.changed, ["relu_scale_kernel", "rowsum_kernel"]);
    assert!(helper.only_before.is_empty() && helper.only_after.is_empty());
    // A constexpr default: the kernel that takes it.
    assert_eq!(
        changed(&base, &kernels("constexpr_default")).changed,
        ["add_kernel"]
    );
}

#[test]
fn a_folder_with_no_compiled_kernel_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let err = read_cache(dir.path()).unwrap_err().to_string();
    assert!(err.contains("no compiled Triton kernel"), "{err}");
    let bad = dir.path().join("k");
    std::fs::create_dir(&bad).unwrap();
    std::fs::write(bad.join("add.ttgir"), "module {}\n").unwrap();
    std::fs::write(bad.join("add.json"), "{not json").unwrap();
    let err = read_cache(dir.path()).unwrap_err().to_string();
    assert!(
        err.contains("add.json: not a Triton kernel's metadata"),
        "{err}"
    );
}

mod autotune {
    use perfdb_ingest::kernel_identity::autotune::{compare, read_record, winners, TuneChange};
    use std::path::PathBuf;

    fn record(process: usize) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!(
            "../sample-data/h100-kernel-identity/autotune/process-{process}/tuned_add.autotune.json"
        ))
    }

    /// Each process's record names the winner that process printed; over the 8, the
    /// spread; two processes that chose differently are drift, never a code change.
    #[test]
    fn eight_processes_drift_between_two_near_tied_configs() {
        let printed: Vec<String> = serde_json::from_str(
            &std::fs::read_to_string(
                PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                    .join("../sample-data/h100-kernel-identity/autotune/printed.json"),
            )
            .unwrap(),
        )
        .unwrap();
        let runs: Vec<_> = (0..8).map(|i| read_record(&record(i)).unwrap()).collect();
        for (t, p) in runs.iter().zip(&printed) {
            let p: serde_json::Value = serde_json::from_str(p).unwrap();
            let warps = format!("num_warps={}", p["num_warps"]);
            assert!(t.winner.contains(&warps), "{} against {p}", t.winner);
            assert_eq!(t.kernel, "tuned_add");
            assert_eq!(t.candidates.len(), 2);
        }
        assert_eq!(
            winners(&runs),
            [
                (
                    "BLOCK=1024 num_warps=4 num_stages=3 num_ctas=1".to_string(),
                    5
                ),
                (
                    "BLOCK=1024 num_warps=8 num_stages=3 num_ctas=1".to_string(),
                    3
                )
            ]
        );
        assert_eq!(compare(&runs[0], &runs[1]), TuneChange::Same);
        assert_eq!(
            compare(&runs[0], &runs[2]),
            TuneChange::Drift {
                from: "BLOCK=1024 num_warps=4 num_stages=3 num_ctas=1".into(),
                to: "BLOCK=1024 num_warps=8 num_stages=3 num_ctas=1".into(),
            }
        );
    }

    /// A candidate taken out of the list is a changed config set, whoever won.
    #[test]
    fn a_removed_candidate_is_a_changed_config_set() {
        let text = std::fs::read_to_string(record(0)).unwrap();
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v.get_mut("configs_timings")
            .and_then(|c| c.as_array_mut())
            .unwrap()
            .truncate(1);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tuned_add.autotune.json");
        std::fs::write(&path, v.to_string()).unwrap();
        let before = read_record(&record(0)).unwrap();
        let after = read_record(&path).unwrap();
        assert_eq!(
            compare(&before, &after),
            TuneChange::ConfigSet {
                added: vec![],
                removed: vec!["BLOCK=1024 num_warps=8 num_stages=3 num_ctas=1".into()],
            }
        );
        std::fs::write(&path, "{\"configs_timings\": [[{}]]}").unwrap();
        let err = read_record(&path).unwrap_err().to_string();
        assert!(err.contains("not [config, timings]"), "{err}");
    }
}
