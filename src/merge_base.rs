//! `LABEL@merge-base`: the runs of LABEL at the commit this checkout's branch forked
//! from (`git merge-base HEAD LABEL`, or `origin/LABEL` when no local branch has the
//! label's name) — what a pull request compares against, not main's newest commit. Not
//! a command: `compare`'s sides are resolved here before the comparison.

use anyhow::{bail, Context};
use perfdb_reports::db::{sql_str, Db};
use std::path::Path;

/// Ancestors of the merge base searched for a measured one.
const NEAREST_WITHIN: usize = 1000;

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    perfdb_reports::git::run(dir, args).ok()
}

/// `spec` as `compare` takes it: `LABEL@merge-base` resolved to `LABEL@COMMIT`; any other
/// selector as given. `nearest` accepts the nearest measured ancestor of the merge base.
pub fn resolve(
    db: &Db,
    spec: &str,
    git_dir: Option<&Path>,
    nearest: bool,
) -> anyhow::Result<String> {
    let Some(label) = spec.strip_suffix("@merge-base") else {
        return Ok(spec.to_string());
    };
    let dir = git_dir.unwrap_or(Path::new("."));
    if git(dir, &["rev-parse", "--git-dir"]).is_none() {
        bail!(
            "{spec}: {} is not a git checkout; run in the branch's checkout or give --git-dir",
            dir.display()
        );
    }
    let branch = [label.to_string(), format!("origin/{label}")]
        .into_iter()
        .find(|b| {
            git(dir, &["rev-parse", "--verify", "--quiet", "--end-of-options", &format!("{b}^{{commit}}")])
                .is_some()
        })
        .with_context(|| {
            format!(
                "{spec}: no branch {label} or origin/{label} in {} to take the merge base with (fetch it: git fetch origin {label})",
                dir.display()
            )
        })?;
    let base = git(dir, &["merge-base", "HEAD", &branch])
        .with_context(|| format!("{spec}: HEAD and {branch} share no commit"))?;
    let measured = measured_commits(db, label)?;
    if measured.is_empty() {
        bail!("{spec}: label '{label}' has no runs");
    }
    let stored =
        |sha: &str| -> Option<String> { measured.iter().find(|c| names_commit(c, sha)).cloned() };
    if let Some(c) = stored(&base) {
        return Ok(format!("{label}@{c}"));
    }
    let subject = |sha: &str| git(dir, &["log", "-1", "--format=%h %s", sha]).unwrap_or_default();
    let ancestors = git(
        dir,
        &[
            "rev-list",
            "--first-parent",
            &format!("--max-count={NEAREST_WITHIN}"),
            &base,
        ],
    )
    .unwrap_or_default();
    let found = ancestors
        .lines()
        .enumerate()
        .find_map(|(i, sha)| stored(sha).map(|c| (i, sha.to_string(), c)));
    match found {
        Some((i, sha, c)) if nearest => {
            say!(
                "compare: {spec}: {label} has no run at the merge base {}; comparing with its nearest measured ancestor {} ({i} commit(s) earlier)",
                subject(&base),
                subject(&sha)
            );
            Ok(format!("{label}@{c}"))
        }
        Some((i, sha, _)) => bail!(
            "{spec}: {label} has no run at the merge base {}; its nearest measured ancestor is {}, {i} commit(s) earlier: --nearest-measured compares with it",
            subject(&base),
            subject(&sha)
        ),
        None => bail!(
            "{spec}: {label} has no run at the merge base {} nor at its {NEAREST_WITHIN} first-parent ancestors",
            subject(&base)
        ),
    }
}

/// Whether a stored commit name is the commit `sha` (git's full name): the whole name,
/// or an abbreviation of at least [`MIN_ABBREV`] hex digits, as git itself abbreviates.
/// A shorter name (`--commit f`) names no commit: it would match one in sixteen.
fn names_commit(stored: &str, sha: &str) -> bool {
    let stored = stored.trim();
    stored.eq_ignore_ascii_case(sha)
        || (stored.len() >= MIN_ABBREV
            && stored.len() <= sha.len()
            && stored.bytes().all(|b| b.is_ascii_hexdigit())
            && sha[..stored.len()].eq_ignore_ascii_case(stored))
}

/// The shortest abbreviation of a commit name taken for it (git's `core.abbrev` floor).
const MIN_ABBREV: usize = 7;

fn measured_commits(db: &Db, label: &str) -> anyhow::Result<Vec<String>> {
    let sql = format!(
        "SELECT DISTINCT \"commit\" FROM runs WHERE label = {} AND \"commit\" IS NOT NULL",
        sql_str(label)
    );
    let mut stmt = db.conn.prepare(&sql)?;
    let rows = stmt
        .query_map([], |r| r.get::<_, String>(0))?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::names_commit;

    #[test]
    fn a_stored_commit_names_a_sha_only_in_seven_hex_digits_or_whole() {
        let sha = "f3a9c0d1e2b4a5968776655443322110ffeeddcc";
        assert!(names_commit(sha, sha));
        assert!(names_commit("f3a9c0d", sha));
        assert!(names_commit("F3A9C0D1", sha));
        for short in ["f", "f3", "f3a9c0", "", "f3a9c0x"] {
            assert!(!names_commit(short, sha), "{short:?}");
        }
        assert!(!names_commit("f3a9c0e", sha));
    }
}
