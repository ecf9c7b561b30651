//! git, run one way for everything perfdb asks of it (a commit's time, a range of
//! commits, the merge base, a bisect's worktrees): `git -C DIR ARGS...`, its output
//! trimmed, its failure with git's own words. Callers put `--end-of-options` before a
//! commit name read from outside, so a name is never taken for an option.

use std::path::Path;
use std::process::{Command, Stdio};

/// git could not be run, or said no.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("git {command} in {dir}: {why}")]
pub struct GitError {
    /// The subcommand (`rev-list`).
    pub command: String,
    pub dir: String,
    /// git's stderr, or why it could not start.
    pub why: String,
}

/// `git -C dir args...`: its stdout, trimmed, or what went wrong.
pub fn run(dir: &Path, args: &[&str]) -> Result<String, GitError> {
    let fail = |why: String| GitError {
        command: args.first().unwrap_or(&"").to_string(),
        dir: dir.display().to_string(),
        why,
    };
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| fail(format!("cannot run git: {e}")))?;
    if !out.status.success() {
        return Err(fail(
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Whether `git -C dir args...` succeeds (`merge-base --is-ancestor`, `rev-parse`).
pub fn succeeds(dir: &Path, args: &[&str]) -> bool {
    run(dir, args).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_carries_the_subcommand_and_gits_words() {
        let dir = std::env::temp_dir();
        let e = run(
            &dir,
            &["rev-parse", "--verify", "--end-of-options", "no-such-rev-x"],
        )
        .unwrap_err();
        assert_eq!(e.command, "rev-parse");
        assert!(!succeeds(&dir, &["rev-parse", "--verify", "no-such-rev-x"]));
    }
}
