//! `perfdb demo`, the README's first command: the bundled H200 logs written where no
//! other user can redirect them, ingested and compared (exit 1: the sample's real
//! regression of three GEMM shapes), the same files each time.

use crate::common::*;

#[test]
fn the_demo_flags_the_three_rows_and_never_writes_through_a_planted_link() {
    let wh = Wh::new();
    let home = wh.dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let demo = || {
        wh.cmd()
            .env("HOME", &home)
            .env_remove("XDG_CACHE_HOME")
            .arg("demo")
            .output()
            .unwrap()
    };
    let out = demo();
    assert_eq!(code(&out), 1, "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("REGRESSION: 3 kernel/shape row(s) regressed"),
        "{}",
        stdout(&out)
    );
    let sample = home.join(".cache/perfdb/demo-sample/base");
    assert!(sample.join("trial1.log").is_file());

    // A link planted at a sample file's name is replaced, never followed.
    let victim = wh.dir.path().join("victim");
    std::fs::write(&victim, "keep me\n").unwrap();
    std::fs::remove_file(sample.join("trial1.log")).unwrap();
    std::os::unix::fs::symlink(&victim, sample.join("trial1.log")).unwrap();
    let out = demo();
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me\n");
    let meta = std::fs::symlink_metadata(sample.join("trial1.log")).unwrap();
    assert!(meta.is_file(), "the link is replaced by the sample's file");
    // The same files: nothing new the second time.
    assert!(stderr(&out).contains("0 new run(s)"), "{}", stderr(&out));

    // A sample folder that is a link to somewhere else is refused.
    let elsewhere = wh.dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::remove_dir_all(&sample).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &sample).unwrap();
    let out = demo();
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("is a link or not a folder"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);

    // A sample folder that is a link to a world-writable sticky folder, or that is open
    // to everyone itself: refused, nothing written.
    use std::os::unix::fs::PermissionsExt;
    let demo_dir = home.join(".cache/perfdb/demo-sample");
    std::fs::remove_dir_all(&demo_dir).unwrap();
    let shared = wh.dir.path().join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    std::os::unix::fs::symlink(&shared, &demo_dir).unwrap();
    let out = demo();
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("others may write in"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_dir(&shared).unwrap().count(), 0);
    std::fs::remove_file(&demo_dir).unwrap();
    std::fs::create_dir(&demo_dir).unwrap();
    std::fs::set_permissions(&demo_dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = demo();
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("others may write in it (mode 777)"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_dir(&demo_dir).unwrap().count(), 0);
}

/// A relative `XDG_CACHE_HOME` is ignored, as the XDG rules say: the sample goes under
/// the home's cache, never into the working folder.
#[test]
fn a_relative_xdg_cache_home_is_ignored() {
    let wh = Wh::new();
    let home = wh.dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let out = wh
        .cmd()
        .env("HOME", &home)
        .env("XDG_CACHE_HOME", "rel-cache")
        .arg("demo")
        .output()
        .unwrap();
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(!wh.dir.path().join("rel-cache").exists());
    assert!(home
        .join(".cache/perfdb/demo-sample/base/trial1.log")
        .is_file());
}
