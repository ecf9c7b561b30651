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
