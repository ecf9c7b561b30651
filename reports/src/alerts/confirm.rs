//! From an alert to its confirmation: the commit range the step lies in, which of its
//! commits were measured, the `perfdb ab` command that would confirm the step on one
//! machine (the two commits' builds interleaved), and `git bisect` hints when commits
//! in the range were not measured (docs/alerts.md, "Confirming an alert").

use crate::alerts::{AlertKind, AlertView};
use crate::db::{sql_str, Db, DbError, MACHINE_TAG_SQL};
use serde::Serialize;
use std::path::Path;

/// One commit of an alert's range.
#[derive(Debug, Clone, Serialize)]
pub struct RangeCommit {
    pub commit: String,
    /// Whether the label has runs at it.
    pub measured: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct Confirmation {
    /// Last good .. first bad, both included, oldest first: from git when a checkout
    /// was given (every commit between), else the label's measured commits.
    pub range: Vec<RangeCommit>,
    /// Whether `range` lists every commit between (read from git).
    pub from_git: bool,
    /// Commits between the two that have no runs (git only).
    pub unmeasured: usize,
    /// The benchmark command the alert's runs were made with (`perfdb run`'s and `perfdb
    /// ab`'s `command` tag), when they say.
    pub bench_command: Option<String>,
    /// `perfdb ab` over two worktrees of the last good and the first bad commit.
    pub ab_command: String,
    /// Shell lines that set up the worktrees the command runs in.
    pub worktrees: Vec<String>,
    /// The `perfdb bisect` command (and `git bisect` by hand) when commits between were
    /// not measured.
    pub bisect: Vec<String>,
    /// The `machine` tag of the alert's runs, when they carry one.
    pub machine: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfirmError {
    #[error(transparent)]
    Db(#[from] DbError),
    #[error("git in {dir}: {why}")]
    Git { dir: String, why: String },
    /// A commit stored before names were checked at ingest, which no hint may carry.
    #[error("commit `{name}` of the alert: {why}; no command is printed for it")]
    Commit { name: String, why: &'static str },
}

impl From<duckdb::Error> for ConfirmError {
    fn from(e: duckdb::Error) -> Self {
        ConfirmError::Db(DbError::Query(e))
    }
}

/// A shell word: bare when it is safe, else single-quoted.
fn sh(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// What to run when commits of the range were not measured: `git bisect` by hand, and
/// `perfdb bisect`, which does it all.
fn bisect_hints(
    a: &AlertView,
    good: &str,
    bad: &str,
    unmeasured: usize,
    bench: &str,
) -> Vec<String> {
    let short = |c: &str| c.chars().take(12).collect::<String>();
    let mut bisect = Vec::new();
    if unmeasured > 0 {
        bisect.push(format!(
            "{unmeasured} commit(s) between {} and {} were not measured: bisect them",
            short(good),
            short(bad)
        ));
        bisect.push(format!("git bisect start {} {}", sh(bad), sh(good)));
        bisect.push(format!(
            "# at each step: build, then `perfdb run --label bisect --commit $(git rev-parse HEAD) -- {bench}` and `perfdb compare {} bisect`; `git bisect good` or `git bisect bad` by its verdict",
            short(good)
        ));
        bisect.push(format!(
            "# or all of it, on this machine: perfdb bisect {} --repo . --build '<the build command>' -- {bench}",
            sh(&a.id)
        ));
    }
    bisect
}

/// The commits `git rev-list` gives from `good` (excluded) to `bad`, oldest first.
fn git_range(dir: &Path, good: &str, bad: &str) -> Result<Vec<String>, ConfirmError> {
    let fail = |why: String| ConfirmError::Git {
        dir: dir.display().to_string(),
        why,
    };
    // Commit names are data, never options, whatever a file said.
    let range = format!("{good}..{bad}");
    let list = crate::git::run(
        dir,
        &[
            "rev-list",
            "--reverse",
            "--ancestry-path",
            "--end-of-options",
            &range,
        ],
    )
    .map_err(|e| fail(e.why))?;
    Ok(list.lines().map(str::to_string).collect())
}

/// The command and the `machine` tag the alert's runs were made with, when perfdb ran
/// them (the tag read from the runs, not parsed back out of the class string, whose
/// parts are optional).
fn how_run(db: &Db, a: &AlertView) -> Result<(Option<String>, Option<String>), ConfirmError> {
    let run_ids: Vec<String> = a
        .runs
        .as_array()
        .map(|v| v.iter().filter_map(|r| r.as_str().map(sql_str)).collect())
        .unwrap_or_default();
    Ok(if run_ids.is_empty() {
        (None, None)
    } else {
        let mut stmt = db.conn.prepare(&format!(
            "SELECT nullif(regexp_extract(r.tags, '\"command\":\"((?:[^\"\\\\]|\\\\.)*)\"', 1), ''), \
                    nullif({MACHINE_TAG_SQL}, '') \
             FROM runs r WHERE r.run_id IN ({}) ORDER BY 1 NULLS LAST LIMIT 1",
            run_ids.join(", ")
        ))?;
        let found: Vec<(Option<String>, Option<String>)> = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        let (c, m) = found.into_iter().next().unwrap_or_default();
        (
            c.map(|c| serde_json::from_str::<String>(&format!("\"{c}\"")).unwrap_or(c)),
            m,
        )
    })
}

/// How to confirm alert `a`: its range (with `git_dir`, every commit between), the
/// `perfdb ab` command and bisect hints.
pub fn confirmation(
    db: &Db,
    a: &AlertView,
    git_dir: Option<&Path>,
) -> Result<Confirmation, ConfirmError> {
    // The label's measured commits, in history order.
    let measured = crate::db::history_points(
        db,
        &format!(
            "r.label = {} AND r.\"commit\" IS NOT NULL",
            sql_str(&a.label)
        ),
    )?;
    let is_measured = |c: &str| {
        measured
            .iter()
            .any(|m| m == c || (c.len() >= 7 && (m.starts_with(c) || c.starts_with(m.as_str()))))
    };
    let (good, bad) = (&a.last_good_commit, &a.first_bad_commit);
    for c in [good, bad] {
        if let Some(why) = perfdb_ingest::model::commit_name_problem(c) {
            return Err(ConfirmError::Commit {
                name: c.escape_debug().to_string(),
                why,
            });
        }
    }
    let (range, from_git) = match git_dir {
        Some(dir) => {
            let mut r = vec![RangeCommit {
                commit: good.clone(),
                measured: is_measured(good),
            }];
            r.extend(git_range(dir, good, bad)?.into_iter().map(|c| RangeCommit {
                measured: is_measured(&c),
                commit: c,
            }));
            (r, true)
        }
        None => {
            let from = measured.iter().position(|c| c == good);
            let to = measured.iter().position(|c| c == bad);
            let r = match (from, to) {
                (Some(f), Some(t)) if f <= t => measured[f..=t].to_vec(),
                _ => vec![good.clone(), bad.clone()],
            };
            (
                r.into_iter()
                    .map(|c| RangeCommit {
                        commit: c,
                        measured: true,
                    })
                    .collect(),
                false,
            )
        }
    };
    let unmeasured = if from_git {
        range.iter().filter(|c| !c.measured).count()
    } else {
        0
    };
    let (bench_command, machine_tag) = how_run(db, a)?;
    let short = |c: &str| c.chars().take(12).collect::<String>();
    let (base_dir, head_dir) = (
        format!("../perfdb-base-{}", short(good)),
        format!("../perfdb-head-{}", short(bad)),
    );
    let worktrees = vec![
        format!("git worktree add {} {}", sh(&base_dir), sh(good)),
        format!("git worktree add {} {}", sh(&head_dir), sh(bad)),
        "# build each worktree as CI does, then:".to_string(),
    ];
    let bench = bench_command
        .clone()
        .unwrap_or_else(|| "<the benchmark command, as CI runs it>".to_string());
    let mut ab = format!(
        "perfdb ab --base-dir {} --head-dir {} --commit-base {} --commit-head {}",
        sh(&base_dir),
        sh(&head_dir),
        sh(good),
        sh(bad)
    );
    if let Some(m) = &machine_tag {
        ab.push_str(&format!(" --machine {}", sh(m)));
    }
    ab.push_str(" --max-trials 20 -- ");
    ab.push_str(&bench);
    let bisect = bisect_hints(a, good, bad, unmeasured, &bench);
    Ok(Confirmation {
        range,
        from_git,
        unmeasured,
        bench_command,
        ab_command: if a.kind == AlertKind::Stale {
            format!(
                "# a stale alert: no step to confirm; see why the data stopped after {}",
                short(good)
            )
        } else {
            ab
        },
        worktrees,
        bisect,
        machine: machine_tag,
    })
}

/// The confirmation as text lines for `perfdb alerts show`.
pub fn render_text(c: &Confirmation) -> String {
    let mut s = String::from("confirm:\n");
    let range: Vec<String> = c
        .range
        .iter()
        .map(|r| {
            let short: String = r.commit.chars().take(12).collect();
            if r.measured {
                short
            } else {
                format!("{short} (not measured)")
            }
        })
        .collect();
    s.push_str(&format!(
        "  range: {}{}\n",
        range.join(" .. "),
        if c.from_git {
            ""
        } else {
            " (measured commits; --git-dir lists every commit between)"
        }
    ));
    for w in &c.worktrees {
        s.push_str(&format!("  {w}\n"));
    }
    s.push_str(&format!("  {}\n", c.ab_command));
    for b in &c.bisect {
        s.push_str(&format!("  {b}\n"));
    }
    s
}
