//! `compare main@merge-base head`: the label's runs at the commit the checkout's branch
//! forked from, in a repository built here (main c0..c3, a feature branch from c2).

use crate::common::*;

/// One `[perf]` trial log of the kernel at `us`, three trials, under `label` at `commit`.
fn runs(wh: &Wh, label: &str, commit: &str, us: f64) {
    let dir = wh.dir.path().join(format!("logs/{label}-{commit}"));
    std::fs::create_dir_all(&dir).unwrap();
    for t in 0..3 {
        let v = us * (1.0 + 0.003 * t as f64);
        std::fs::write(
            dir.join(format!("t{t}.log")),
            format!("[perf] dim: (64,) dtype: bf16, torch avg: 5.00 us, ck avg: {v:.3} us\n"),
        )
        .unwrap();
    }
    wh.ok(&[
        "ingest",
        dir.to_str().unwrap(),
        "--label",
        label,
        "--commit",
        commit,
    ]);
}

#[test]
fn main_at_the_merge_base_is_the_branch_point() {
    let wh = Wh::new();
    let repo = wh.dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    let mut main = Vec::new();
    for i in 0..4 {
        std::fs::write(repo.join("k.txt"), format!("{i}\n")).unwrap();
        git(&repo, &["add", "-A"]);
        git(&repo, &["commit", "-q", "-m", &format!("c{i}")]);
        main.push(git(&repo, &["rev-parse", "HEAD"]));
    }
    git(&repo, &["checkout", "-q", "-b", "feature", &main[2]]);
    std::fs::write(repo.join("k.txt"), "feature\n").unwrap();
    git(&repo, &["commit", "-qam", "f1"]);
    let tip = git(&repo, &["rev-parse", "HEAD"]);
    // main measured at c0, c1 and c3 (10 us, 10 us, 20 us): not at c2, the branch point.
    runs(&wh, "main", &main[0], 10.0);
    runs(&wh, "main", &main[1], 10.0);
    runs(&wh, "main", &main[3], 20.0);
    runs(&wh, "head", &tip, 10.0);
    let dir = repo.to_str().unwrap();
    let compare = |extra: &[&str]| {
        let mut args = vec![
            "compare",
            "main@merge-base",
            "head",
            "--git-dir",
            dir,
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        wh.run(&args)
    };
    // No run at c2: the nearest measured ancestor is named, and offered by a flag.
    let out = compare(&[]);
    assert_eq!(code(&out), 2);
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "main has no run at the merge base {} c2",
            &main[2][..7]
        )) && err.contains(&format!(
            "nearest measured ancestor is {} c1, 1 commit(s) earlier",
            &main[1][..7]
        )) && err.contains("--nearest-measured"),
        "{err}"
    );
    // With it: compared with c1 (10 us), not with main's newest (c3, 20 us).
    let out = compare(&["--nearest-measured"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["base"]["commits"][0], main[1].as_str(), "{v}");
    assert!(stderr(&out).contains("comparing with its nearest measured ancestor"));
    // Once c2 is measured, it is the base.
    runs(&wh, "main", &main[2], 10.0);
    let out = compare(&[]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["base"]["commits"][0], main[2].as_str(), "{v}");
    assert_eq!(v["base"]["matched_by"], "label@commit");
    // The working directory is the default checkout.
    let out = wh
        .cmd()
        .current_dir(&repo)
        .args(["compare", "main@merge-base", "head", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // Outside a checkout, and with no branch of the label's name.
    let out = wh.run(&[
        "compare",
        "main@merge-base",
        "head",
        "--git-dir",
        wh.dir.path().join("logs").to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("is not a git checkout"),
        "{}",
        stderr(&out)
    );
    let out = wh.run(&["compare", "nightly@merge-base", "head", "--git-dir", dir]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("no branch nightly or origin/nightly in"),
        "{}",
        stderr(&out)
    );
}
