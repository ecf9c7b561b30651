//! A commit's worktree built: now, when its step needs it, or ahead (`--build-ahead`):
//! the next step's candidates (one if this step is good, one if bad) built on spare
//! cores while this step's trials run, so a bisect whose builds dominate waits for
//! fewer of them. A build started ahead and never needed is stopped with its process
//! group when the bisect ends.

use anyhow::Context;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The built tree, or why the commit did not build.
pub type Built = Result<PathBuf, String>;

/// How a build runs: its shell command, its deadline in seconds, its log file.
#[derive(Clone)]
pub struct Build {
    pub command: String,
    pub timeout: u64,
    pub log: PathBuf,
}

impl Build {
    /// Runs the build in `tree`, supervised as a trial is: a process group of its own,
    /// stopped whole at its deadline, on SIGINT/SIGTERM or when `cancel` is set; a
    /// background child it leaves never holding it.
    pub fn run(&self, tree: PathBuf, cancel: Option<&AtomicBool>) -> anyhow::Result<Built> {
        let limit = Duration::from_secs(self.timeout);
        let out = crate::process::run_cancellable(
            std::process::Command::new("sh")
                .args(["-c", &self.command])
                .current_dir(&tree),
            crate::process::Echo::Quiet,
            Some(Instant::now() + limit),
            cancel,
        )
        .with_context(|| format!("cannot run the build command `{}`", self.command))?;
        let log = &self.log;
        std::fs::write(log, &out.merged)
            .with_context(|| format!("cannot write {}", log.display()))?;
        Ok(match out.ended {
            crate::process::Ended::Exited if out.status.success() => Ok(tree),
            crate::process::Ended::Exited => Err(format!(
                "the build exited with {} (log: {})",
                out.status,
                log.display()
            )),
            crate::process::Ended::Deadline => Err(format!(
                "the build ran past --build-timeout ({} s) and was stopped with every \
                 process it started (log: {})",
                self.timeout,
                log.display()
            )),
            crate::process::Ended::Interrupted(sig) => Err(format!(
                "the build was stopped by {}",
                crate::process::signal_name(sig)
            )),
        })
    }
}

/// Builds running ahead, by sha.
#[derive(Default)]
pub struct Ahead {
    cancel: Arc<AtomicBool>,
    running: HashMap<String, JoinHandle<anyhow::Result<Built>>>,
}

impl Ahead {
    pub fn is_running(&self, sha: &str) -> bool {
        self.running.contains_key(sha)
    }

    /// Starts `build` of `sha` in `tree` on a thread of its own.
    pub fn start(&mut self, sha: &str, tree: PathBuf, build: Build) {
        let cancel = self.cancel.clone();
        let handle = std::thread::spawn(move || build.run(tree, Some(&cancel)));
        self.running.insert(sha.to_string(), handle);
    }

    /// The build of `sha` started ahead, waited for; `None` when none was started.
    pub fn take(&mut self, sha: &str) -> Option<anyhow::Result<Built>> {
        let handle = self.running.remove(sha)?;
        Some(
            handle
                .join()
                .unwrap_or_else(|_| Err(anyhow::anyhow!("a build started ahead panicked"))),
        )
    }
}

impl Drop for Ahead {
    /// Builds never needed are stopped, and waited for: none outlives the bisect's
    /// worktrees.
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::SeqCst);
        for (_, h) in self.running.drain() {
            let _ = h.join();
        }
    }
}

/// The log of `sha`'s build under `logs`.
pub fn log_of(logs: &Path, sha: &str) -> PathBuf {
    logs.join(format!("build-{}.log", super::git::short(sha)))
}
