//! What bisect asks of git: commits by name, the range between two, a commit's subject
//! and author, and a worktree a commit is checked out (and built) in.

use anyhow::{bail, Context};
use perfdb_reports::bisect::{CommitInfo, Graph};
use perfdb_reports::git;
use std::path::{Path, PathBuf};

/// The full sha `rev` names (a sha, a prefix, a branch or tag).
pub fn resolve(repo: &Path, rev: &str) -> anyhow::Result<String> {
    git::run(
        repo,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            &format!("{rev}^{{commit}}"),
        ],
    )
    .map_err(|_| anyhow::anyhow!("no commit '{rev}' in {}", repo.display()))
}

/// The commits `bad` reaches that `good` does not (`git rev-list good..bad`, as `git
/// bisect` searches them: side branches and merges included), with their parents,
/// every parent before its children and `bad` last.
pub fn range(repo: &Path, good: &str, bad: &str) -> anyhow::Result<Graph> {
    if !git::succeeds(repo, &["merge-base", "--is-ancestor", good, bad]) {
        bail!(
            "the good commit {} is not an ancestor of the bad commit {}: nothing to bisect between them",
            short(good),
            short(bad)
        );
    }
    let list = git::run(
        repo,
        &[
            "rev-list",
            "--topo-order",
            "--reverse",
            "--parents",
            &format!("{good}..{bad}"),
        ],
    )?;
    let graph = Graph::from_rev_list(&list)
        .filter(|g| g.commits.last().is_some_and(|c| c == bad) || g.is_empty())
        .ok_or_else(|| {
            anyhow::anyhow!(
                "git rev-list printed the range {}..{} in an order bisect cannot read",
                short(good),
                short(bad)
            )
        })?;
    Ok(graph)
}

/// The commit as a person reads it in a culprit line. Its fields are split on NUL, the
/// one byte git never prints in a subject or a name.
pub fn info(repo: &Path, sha: &str) -> anyhow::Result<CommitInfo> {
    let out = git::run(
        repo,
        &["log", "-1", "--format=%H%x00%s%x00%an <%ae>%x00%cI", sha],
    )?;
    let f: Vec<&str> = out.split('\0').collect();
    if f.len() != 4 {
        bail!(
            "git log printed an unexpected line for {sha}: {}",
            out.escape_debug()
        );
    }
    Ok(CommitInfo {
        sha: f[0].to_string(),
        subject: f[1].to_string(),
        author: f[2].to_string(),
        date: f[3].to_string(),
    })
}

pub fn short(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
}

/// Worktrees of one bisect, removed (with `git worktree prune`) when dropped.
pub struct Worktrees {
    repo: PathBuf,
    dir: PathBuf,
    made: Vec<PathBuf>,
}

impl Worktrees {
    pub fn new(repo: &Path, dir: PathBuf) -> anyhow::Result<Worktrees> {
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        Ok(Worktrees {
            repo: repo.to_path_buf(),
            dir,
            made: Vec::new(),
        })
    }

    /// A detached worktree of `sha` (made once).
    pub fn checkout(&mut self, sha: &str) -> anyhow::Result<PathBuf> {
        let path = self.dir.join(short(sha));
        if !self.made.contains(&path) {
            let p = path.to_string_lossy().to_string();
            git::run(
                &self.repo,
                &["worktree", "add", "--detach", "--force", &p, sha],
            )?;
            self.made.push(path.clone());
        }
        Ok(path)
    }
}

impl Drop for Worktrees {
    fn drop(&mut self) {
        for p in &self.made {
            let p = p.to_string_lossy();
            let _ = git::run(&self.repo, &["worktree", "remove", "--force", &p]);
        }
        let _ = git::run(&self.repo, &["worktree", "prune"]);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
