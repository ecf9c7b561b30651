//! The CI recipes of examples/ci/ run here: their shell steps (examples/ci/steps.sh, the
//! lines both workflow files call) against a local warehouse and a git repository built
//! in the test, no GitHub or GitLab needed.

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A `[perf]` benchmark at `kernel.conf` us, ~1% noise seeded by the trial's count.
const BENCH: &str = r#"n=$(cat .trial 2>/dev/null || echo 0); n=$((n + 1)); echo $n > .trial
awk -v n="$n" -v base="$(cat kernel.conf)" 'BEGIN { srand(n * 31 + 7)
  printf "[perf] dim: (64,) dtype: bf16, torch avg: %.3f us, ck avg: %.3f us\n", 5 * (1 + 0.004 * (rand() - 0.5)), base * (1 + 0.02 * (rand() - 0.5)) }'
"#;

fn commit(dir: &Path, us: f64, msg: &str) {
    std::fs::write(dir.join("kernel.conf"), format!("{us}\n")).unwrap();
    std::fs::write(dir.join("notes.txt"), msg).unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", msg]);
}

fn steps() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/ci/steps.sh")
}

/// `steps.sh VERB` in `repo`, as a CI job runs it: exit code, the summary file's text.
fn step(wh: &Wh, repo: &Path, verb: &str) -> (i32, String, String) {
    let summary = wh.dir.path().join(format!("summary-{verb}.md"));
    let out = Command::new("sh")
        .arg(steps())
        .arg(verb)
        .current_dir(repo)
        .env("PERFDB", env!("CARGO_BIN_EXE_perfdb"))
        .env("PERFDB_WAREHOUSE", wh.path())
        .env("BENCH", "sh bench.sh")
        .env("MACHINE", "ci-gpu")
        .env("TRIALS", "4")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .unwrap();
    let text = std::fs::read_to_string(&summary).unwrap_or_default();
    (
        code(&out),
        text,
        format!("{}{}", stdout(&out), stderr(&out)),
    )
}

#[test]
fn the_ci_steps_ingest_main_and_judge_a_pull_request_against_the_merge_base() {
    let wh = Wh::new();
    let repo = wh.dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("bench.sh"), BENCH).unwrap();
    std::fs::write(repo.join(".gitignore"), ".trial\nperfdb-report.md\n").unwrap();
    commit(&repo, 10.0, "c0");
    commit(&repo, 10.0, "c1");
    // A push to main: its runs ingested at HEAD.
    let (rc, _, log) = step(&wh, &repo, "main");
    assert_eq!(rc, 0, "{log}");
    // After the branch point main lands the same slow config: against main's newest
    // commit the pull request would read "no change"; against c1, where it forked, it is
    // the +30% regression it brings.
    git(&repo, &["checkout", "-q", "-b", "slower"]);
    commit(&repo, 13.0, "the tile config that slows ck");
    git(&repo, &["checkout", "-q", "main"]);
    commit(&repo, 13.0, "c2: main takes the same config");
    let (rc, _, log) = step(&wh, &repo, "main");
    assert_eq!(rc, 0, "{log}");
    git(&repo, &["checkout", "-q", "slower"]);
    let (rc, summary, log) = step(&wh, &repo, "pr");
    assert_eq!(rc, 1, "a regression fails the job: {log}");
    let report = std::fs::read_to_string(repo.join("perfdb-report.md")).unwrap();
    assert!(report.contains("regress"), "{report}");
    assert_eq!(summary, report, "the job summary holds the report");
    // The head's outputs, compared straight from their files, were kept under pr-SHA
    // with their commit and machine class.
    let kept = wh.count(
        "SELECT count(*) FROM runs WHERE label LIKE 'pr-%' AND \"commit\" IS NOT NULL \
         AND tags LIKE '%\"machine\":\"ci-gpu\"%'",
    );
    assert_eq!(kept, 4, "{log}");
    // A branch that changes nothing passes.
    git(&repo, &["checkout", "-q", "-b", "docs", "main~1"]);
    std::fs::write(repo.join("README"), "docs\n").unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "docs"]);
    let (rc, _, log) = step(&wh, &repo, "pr");
    assert_eq!(rc, 0, "{log}");
    // The interleaved A/B form on one runner: the merge base against head.
    git(&repo, &["checkout", "-q", "slower"]);
    let (rc, summary, log) = step(&wh, &repo, "ab");
    assert_eq!(rc, 1, "{log}");
    assert!(summary.contains("regress"), "{summary}");
    // The worktree it made is gone.
    let trees = Command::new("git")
        .arg("-C")
        .arg(&repo)
        .args(["worktree", "list"])
        .output()
        .unwrap();
    assert_eq!(stdout(&trees).lines().count(), 1, "{}", stdout(&trees));
}

/// Both workflow files run the steps this test runs, and nothing else of perfdb.
#[test]
fn the_workflow_files_call_the_tested_steps() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/ci");
    for (file, verbs) in [
        ("github-workflow.yml", &["main", "pr"][..]),
        ("gitlab-ci.yml", &["main", "pr", "ab"][..]),
    ] {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        for v in verbs {
            assert!(
                text.contains(&format!("sh examples/ci/steps.sh {v}")),
                "{file} does not run steps.sh {v}"
            );
        }
        let commands = ["run", "compare", "ab", "ingest", "detect", "bisect"];
        for line in text.lines().filter(|l| !l.trim_start().starts_with('#')) {
            assert!(
                !commands
                    .iter()
                    .any(|c| line.contains(&format!("perfdb {c} "))),
                "{file} runs perfdb outside the tested steps: {line}"
            );
        }
    }
}

/// `check-jsonschema` with the schemas it ships (SchemaStore's, checked in: no network)
/// on `files`: its exit code and what it printed.
fn schema_check(schema: &str, files: &[PathBuf]) -> (bool, String) {
    let out = Command::new("check-jsonschema")
        .args(["--builtin-schema", schema])
        .args(files)
        .output()
        .expect("check-jsonschema not found: run scripts/test (it installs it), or pip install check-jsonschema");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

/// The workflow files (both recipes and the release workflow) are valid GitHub Actions and
/// GitLab CI by the published schemas, and the check rejects a misspelt key, so a pass
/// means something.
#[test]
#[ignore = "needs check-jsonschema: run scripts/test"]
fn the_workflow_files_hold_to_the_published_schemas() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let github = [
        root.join(".github/workflows/release.yml"),
        root.join("examples/ci/github-workflow.yml"),
    ];
    let gitlab = [root.join("examples/ci/gitlab-ci.yml")];
    for (schema, files) in [
        ("vendor.github-workflows", &github[..]),
        ("vendor.gitlab-ci", &gitlab[..]),
    ] {
        let (ok, text) = schema_check(schema, files);
        assert!(ok, "{schema}:\n{text}");
    }

    let dir = tempfile::tempdir().unwrap();
    for (schema, file, key) in [
        ("vendor.github-workflows", &github[1], "runs-on:"),
        ("vendor.gitlab-ci", &gitlab[0], "\n  script:"),
    ] {
        let text = std::fs::read_to_string(file).unwrap();
        assert!(text.contains(key), "{} has no {key:?}", file.display());
        let broken = dir.path().join(file.file_name().unwrap());
        std::fs::write(&broken, text.replacen(key, &key.replace(':', "s:"), 1)).unwrap();
        let (ok, text) = schema_check(schema, &[broken]);
        assert!(!ok, "{schema} took a misspelt {key:?}:\n{text}");
        assert!(text.contains("Schema validation errors"), "{text}");
    }
}
