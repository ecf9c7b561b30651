//! Commit names are data: a name git would read as an option, or one with a control
//! character, is refused where it enters (a flag, or the file that names it), so it
//! never reaches `git` or a printed hint.

use crate::common::*;

#[test]
fn a_commit_flag_that_git_would_read_as_an_option_is_refused() {
    let wh = Wh::new();
    let log = sample("h200-gemm/history/c01/trial1.aiter.log");
    for bad in ["--commit=--output=/tmp/x", "--commit=c01\u{1b}[2J"] {
        let out = wh.run(&["ingest", log.to_str().unwrap(), "--label", "main", bad]);
        assert_eq!(code(&out), 2, "{bad}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("--commit <COMMIT>"),
            "{}",
            stderr(&out)
        );
        assert!(stderr(&out).contains("commit name"), "{}", stderr(&out));
    }
    let out = wh.run(&[
        "ab",
        "--base-dir",
        ".",
        "--head-dir",
        ".",
        "--commit-base=-x",
        "--",
        "true",
    ]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("--commit-base"), "{}", stderr(&out));
    assert_eq!(wh.count("SELECT count(*) FROM runs"), 0);
}

#[test]
fn a_file_that_names_such_a_commit_is_refused_and_nothing_is_stored() {
    let wh = Wh::new();
    let text = std::fs::read_to_string(sample(
        "formats/26_pytest_benchmark_json_cpu_generated/head/trial2.json",
    ))
    .unwrap()
    .replace(
        "\"id\": \"9842149051b176a30b89e9a160ba8c3f7707b09e\"",
        "\"id\": \"--output=/tmp/perfdb-pwned\"",
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bench.json");
    std::fs::write(&file, text).unwrap();
    let out = wh.run(&["ingest", file.to_str().unwrap(), "--label", "main"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("bench.json")
            && err.contains("the file names commit `--output=/tmp/perfdb-pwned`"),
        "{err}"
    );
    assert!(err.contains("give the right one with --commit"), "{err}");
    assert_eq!(wh.count("SELECT count(*) FROM runs"), 0);
    // The same file with a commit given on the command line is stored under it.
    let out = wh.run(&[
        "ingest",
        file.to_str().unwrap(),
        "--label",
        "main",
        "--commit",
        "abc123",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
}
