//! `perfdb bisect`: from an alert (or two commits) to the commit that made the step. A
//! halving search over the range ([`search`]); each step checks a commit out in a git
//! worktree and builds it ([`git`]), then runs `ab`'s interleaved trials of it against
//! the good end (`super::trials::experiment`) and reads the watched rows' states into the
//! records of [`types`], printed by [`render`]. The result, stored with every alert of
//! the group, is read back by `perfdb alerts show` and the alert page
//! ([`perfdb_reports::alerts::bisected`]).

mod git;
mod render;
mod search;
mod types;
mod verdict;

pub use types::*;

use crate::cli::{AbArgs, BisectArgs};
use crate::Exit;
use anyhow::{bail, Context};
use clap::Parser;
use git::{short, Worktrees};
use perfdb_ingest::warehouse::Label;
use perfdb_reports::alerts::{self, AlertGroup, AlertView};
use perfdb_reports::db::Db;
use search::{Found, Search};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// A culprit whose step is under this share of the alert's leaves the rest to a later
/// commit: the search goes on past it.
const PART: f64 = 0.75;
/// Parts of one step searched at most.
const MAX_PARTS: usize = 3;

/// What the alert gives a bisect: its group (whose range and series the bisect takes:
/// a group has one bisect), how its runs were made.
struct FromAlert {
    alert: AlertView,
    group: AlertGroup,
    command: Option<String>,
    machine: Option<String>,
}

fn from_alert(root: &Path, prefix: &str) -> anyhow::Result<FromAlert> {
    let db = Db::open(root)
        .with_context(|| format!("cannot open the warehouse at {}", root.display()))?;
    let (alert, group) = alerts::find_group(&db, prefix)?;
    if alert.kind != alerts::AlertKind::Regression {
        bail!(
            "alert {} is about data that stopped arriving, not a step: nothing to bisect",
            alert.id
        );
    }
    // How its runs were made (the repository's own range is read by `git::range`).
    let c = alerts::confirm::confirmation(&db, &alert, None)?;
    Ok(FromAlert {
        command: c.bench_command.clone(),
        machine: c.machine.clone(),
        alert,
        group,
    })
}

/// What a bisect sets out with, resolved from the flags, the alert and git.
struct Plan {
    from: Option<FromAlert>,
    targets: Vec<perfdb_reports::alerts::notify::Target>,
    good: String,
    bad: String,
    /// After good, up to bad, oldest first.
    commits: Vec<String>,
    command: Vec<String>,
    watch: Watch,
    /// The group's id, or the two ends'.
    id: String,
}

fn plan(root: &Path, a: &BisectArgs) -> anyhow::Result<Plan> {
    // Targets are checked before any trial runs.
    let targets = perfdb_reports::alerts::notify::parse_targets(&a.notify)?;
    if !targets.is_empty() && a.alert.is_none() {
        bail!("--notify tells an alert's watchers: give the alert's id");
    }
    let from = match &a.alert {
        Some(p) => Some(from_alert(root, p)?),
        None => None,
    };
    let (good, bad) = match (&a.good, &a.bad, &from) {
        (Some(g), Some(b), _) => (g.clone(), b.clone()),
        (g, b, Some(f)) => (
            g.clone()
                .unwrap_or_else(|| f.group.last_good_commit.clone()),
            b.clone()
                .unwrap_or_else(|| f.group.first_bad_commit.clone()),
        ),
        _ => bail!("give an alert id, or both --good and --bad"),
    };
    // Whence each end came, for an error about it.
    let whence = |given: &Option<String>, which: &str, flag: &str| match given {
        Some(_) => String::new(),
        None => format!(" (the alert's {which} commit; {flag} names another)"),
    };
    let good = git::resolve(&a.repo, &good)
        .map_err(|e| anyhow::anyhow!("{e}{}", whence(&a.good, "last good", "--good")))?;
    let bad = git::resolve(&a.repo, &bad)
        .map_err(|e| anyhow::anyhow!("{e}{}", whence(&a.bad, "first bad", "--bad")))?;
    let commits = git::range(&a.repo, &good, &bad)?;
    if commits.is_empty() {
        bail!("{} and {} are the same commit", short(&good), short(&bad));
    }
    let command: Vec<String> = if !a.command.is_empty() {
        a.command.clone()
    } else if let Some(c) = from.as_ref().and_then(|f| f.command.clone()) {
        vec!["sh".into(), "-c".into(), c]
    } else {
        bail!("give the benchmark command after `--` (the alert's runs do not say how they were made)")
    };
    let watch = Watch {
        series: from
            .iter()
            .flat_map(|f| &f.group.alerts)
            .map(|m| Series {
                alert: m.id.clone(),
                table: m.table.clone(),
                variant: m.variant.clone(),
                key_text: m.key_text.clone(),
                metrics: m.metrics.clone(),
                ratio: m.ratio,
            })
            .collect(),
        texts: a.series.clone(),
    };
    let id = match &from {
        Some(f) => f.group.id.clone(),
        None => format!("{}-{}", &good[..8], &bad[..8]),
    };
    Ok(Plan {
        from,
        targets,
        good,
        bad,
        commits,
        command,
        watch,
        id,
    })
}

pub fn run(root: &Path, a: BisectArgs) -> anyhow::Result<Exit> {
    let p = plan(root, &a)?;
    // SIGINT/SIGTERM from here on stop what runs (a build, a trial) with its group; the
    // worktrees are removed and the steps so far printed (exit 130).
    crate::process::catch_interrupts();
    let label = format!("bisect-{}", p.id);
    Label::new(&label).map_err(|e| anyhow::anyhow!("label {label}: {e}"))?;
    // A new private folder: a name another user made in advance is never built in.
    let work = super::private::fresh_dir(&format!("perfdb-bisect-{}", p.id))?;
    let mut trees = Worktrees::new(&a.repo, work)?;
    let ctx = Ctx {
        root,
        a: &a,
        command: p.command.clone(),
        label: label.clone(),
        logs: a
            .logs
            .clone()
            .unwrap_or_else(|| PathBuf::from("perfdb-bisect").join(&label)),
        machine: a
            .machine
            .clone()
            .or_else(|| p.from.as_ref().and_then(|f| f.machine.clone())),
        watch: p.watch.clone(),
    };
    let mut out = Bisected {
        alert: p.from.as_ref().map(|f| f.alert.id.clone()),
        label,
        good: p.good.clone(),
        bad: p.bad.clone(),
        commits: p.commits.len(),
        watch: p.watch.clone(),
        parts: Vec::new(),
        range: None,
        ends: None,
        steps: Vec::new(),
        skipped: Vec::new(),
        gpu_seconds: 0.0,
        max_trials: a.max_trials,
    };
    let interrupted = ctx.search(&mut trees, &p, &mut out)?;
    drop(trees);
    if interrupted {
        // A cancelled job: the steps so far, nothing stored, and exit 130.
        print(&out, a.format)?;
        return Ok(Exit::Interrupted);
    }
    finish(root, &a, &p, &out)
}

fn print(out: &Bisected, format: crate::cli::BisectFormat) -> anyhow::Result<()> {
    let text = render::render(out, format);
    super::print_out(&text)?;
    Ok(())
}

/// Store the result with every alert of the group (any of them shows it), print it, and
/// tell the targets.
fn finish(root: &Path, a: &BisectArgs, p: &Plan, out: &Bisected) -> anyhow::Result<Exit> {
    let value = serde_json::to_value(out)?;
    for m in p.from.iter().flat_map(|f| &f.group.alerts) {
        perfdb_reports::alerts::bisected::store(root, &m.id, &value)
            .context("cannot store the result with the alert")?;
    }
    print(out, a.format)?;
    if let Some(f) = &p.from {
        let failed = perfdb_reports::alerts::notify::deliver_bisect(
            &p.targets,
            &f.group,
            &value,
            perfdb_reports::alerts::notify::TIMEOUT,
        );
        for (t, e) in &failed {
            say!("bisect: could not tell {t}: {e}");
        }
        if !failed.is_empty() {
            return Ok(Exit::Error);
        }
    }
    Ok(if out.parts.is_empty() {
        Exit::Inconclusive
    } else {
        Exit::Ok
    })
}

/// Worktrees and builds made so far, by sha: the tree, or why it did not build.
type Built = std::collections::HashMap<String, Result<PathBuf, String>>;

/// What every step shares.
struct Ctx<'a> {
    root: &'a Path,
    a: &'a BisectArgs,
    command: Vec<String>,
    label: String,
    logs: PathBuf,
    machine: Option<String>,
    watch: Watch,
}

/// `ab`'s arguments, parsed as its command line is.
#[derive(Parser)]
struct AbLine {
    #[command(flatten)]
    ab: AbArgs,
}

impl Ctx<'_> {
    /// The search, part by part, into `out`; true when a signal cut it short.
    fn search(&self, trees: &mut Worktrees, p: &Plan, out: &mut Bisected) -> anyhow::Result<bool> {
        let mut built = Built::new();
        let good_tree = self.prepare(trees, &mut built, &p.good)?;
        if crate::process::interrupted().is_some() {
            return Ok(true);
        }
        let good_tree = good_tree.map_err(|why| {
            anyhow::anyhow!("the good end {} cannot be built: {why}", short(&p.good))
        })?;
        // The ends first: a bad end that is not worse than the good one here ends the
        // bisect with no culprit (exit 3), whatever the alert said.
        let ends = self.verify_ends(trees, &mut built, p, &good_tree, out)?;
        if crate::process::interrupted().is_some() {
            return Ok(true);
        }
        let Some(ends_evidence) = ends else {
            return Ok(false);
        };
        let (mut against, mut against_tree) = (p.good.clone(), good_tree);
        let mut rest: &[String] = &p.commits;
        for _ in 0..MAX_PARTS {
            let mut s = Search::new(rest.len());
            let mut evidence_of = std::collections::HashMap::new();
            while let Some(i) = s.next() {
                let sha = &rest[i];
                let (lo, hi) = s.range();
                say!(
                    "bisect: step {}: {} \"{}\" ({} commit(s) open after {})",
                    out.steps.len() + 1,
                    short(sha),
                    git::info(&self.a.repo, sha)
                        .map(|c| c.subject)
                        .unwrap_or_default(),
                    hi - lo.map_or(0, |g| g + 1),
                    short(lo.map_or(&against, |g| &rest[g]))
                );
                let step = self.step(trees, &mut built, &against, &against_tree, sha)?;
                say!(
                    "bisect: {} {} ({} trials a side, {:.0} s){}",
                    short(sha),
                    step.found,
                    step.trials_a_side,
                    step.seconds,
                    step.why
                        .as_deref()
                        .map(|w| format!(": {w}"))
                        .unwrap_or_default()
                );
                out.gpu_seconds += step.seconds;
                let found = step.found;
                if found == Found::Skip {
                    out.skipped.push(sha.clone());
                }
                evidence_of.insert(i, step.evidence.clone());
                out.steps.push(step);
                if crate::process::interrupted().is_some() {
                    return Ok(true);
                }
                s.record(i, found);
            }
            let Some(c) = s.culprit() else {
                let (g, b) = s.range();
                out.range = Some((
                    g.map_or(against.clone(), |g| rest[g].clone()),
                    rest[b].clone(),
                ));
                return Ok(false);
            };
            // The bad end, never stepped: its evidence is the ends' trials (first part),
            // or its own trials against the part's start (a later part): a culprit is
            // never named on the alert's word alone.
            let evidence = match evidence_of.remove(&c) {
                Some(e) => e,
                None if against == p.good && c + 1 == rest.len() => ends_evidence.clone(),
                None => {
                    let sha = &rest[c];
                    let step = self.step(trees, &mut built, &against, &against_tree, sha)?;
                    out.gpu_seconds += step.seconds;
                    if crate::process::interrupted().is_some() {
                        return Ok(true);
                    }
                    if step.found != Found::Bad {
                        // Not worse than the part's start after all: no culprit here.
                        out.range = Some((against.clone(), sha.clone()));
                        out.steps.push(step);
                        return Ok(false);
                    }
                    step.evidence
                }
            };
            // The culprit's share of the alerts' step: the watched rows' median.
            let shares: Vec<f64> = evidence.iter().filter_map(|e| e.share).collect();
            let share = (!shares.is_empty()).then(|| perfdb_reports::stats::median(&shares));
            out.parts.push(Part {
                culprit: git::info(&self.a.repo, &rest[c])?,
                share,
                evidence,
            });
            let covered: f64 = out.parts.iter().filter_map(|p| p.share).sum();
            // Less than the step, with commits after it: search on from this culprit.
            if c + 1 >= rest.len() || share.is_none() || covered >= PART {
                return Ok(false);
            }
            against = rest[c].clone();
            let tree = self.prepare(trees, &mut built, &against)?;
            if crate::process::interrupted().is_some() {
                return Ok(true);
            }
            against_tree = tree.map_err(|why| anyhow::anyhow!("{why}"))?;
            rest = &rest[c + 1..];
        }
        Ok(false)
    }

    /// The bad end measured against the good one, into `out.ends`: its evidence when it
    /// is worse there (the search goes on), `None` when it is not or could not be told.
    fn verify_ends(
        &self,
        trees: &mut Worktrees,
        built: &mut Built,
        p: &Plan,
        good_tree: &Path,
        out: &mut Bisected,
    ) -> anyhow::Result<Option<Vec<Evidence>>> {
        say!(
            "bisect: the ends: {} against {}",
            short(&p.bad),
            short(&p.good)
        );
        let ends = self.step(trees, built, &p.good, good_tree, &p.bad)?;
        say!(
            "bisect: the ends: {}{}",
            ends.found,
            ends.why
                .as_deref()
                .map(|w| format!(": {w}"))
                .unwrap_or_default()
        );
        out.gpu_seconds += ends.seconds;
        let evidence = (ends.found == Found::Bad).then(|| ends.evidence.clone());
        out.ends = Some(ends);
        Ok(evidence)
    }

    /// The worktree of `sha`, built: Ok(Err(why)) when its build fails.
    fn prepare(
        &self,
        trees: &mut Worktrees,
        built: &mut Built,
        sha: &str,
    ) -> anyhow::Result<Result<PathBuf, String>> {
        if let Some(r) = built.get(sha) {
            return Ok(r.clone());
        }
        let tree = trees.checkout(sha)?;
        let r = match &self.a.build {
            None => Ok(tree),
            Some(cmd) => {
                let log = self.logs.join(format!("build-{}.log", short(sha)));
                std::fs::create_dir_all(&self.logs)
                    .with_context(|| format!("cannot create {}", self.logs.display()))?;
                // Supervised as a trial is: a process group of its own, stopped whole
                // at its deadline or on SIGINT/SIGTERM, a background child it leaves
                // never holding the step.
                let limit = std::time::Duration::from_secs(self.a.build_timeout);
                let out = crate::process::run(
                    std::process::Command::new("sh")
                        .args(["-c", cmd])
                        .current_dir(&tree),
                    crate::process::Echo::Quiet,
                    Some(Instant::now() + limit),
                )
                .with_context(|| format!("cannot run the build command `{cmd}`"))?;
                std::fs::write(&log, &out.merged)
                    .with_context(|| format!("cannot write {}", log.display()))?;
                match out.ended {
                    crate::process::Ended::Exited if out.status.success() => Ok(tree),
                    crate::process::Ended::Exited => Err(format!(
                        "the build exited with {} (log: {})",
                        out.status,
                        log.display()
                    )),
                    crate::process::Ended::Deadline => Err(format!(
                        "the build ran past --build-timeout ({} s) and was stopped with every \
                         process it started (log: {})",
                        self.a.build_timeout,
                        log.display()
                    )),
                    crate::process::Ended::Interrupted(sig) => Err(format!(
                        "the build was stopped by {}",
                        crate::process::signal_name(sig)
                    )),
                }
            }
        };
        built.insert(sha.to_string(), r.clone());
        Ok(r)
    }

    fn step(
        &self,
        trees: &mut Worktrees,
        built: &mut Built,
        against: &str,
        against_tree: &Path,
        sha: &str,
    ) -> anyhow::Result<Step> {
        let mut step = Step {
            commit: sha.to_string(),
            against: against.to_string(),
            found: Found::Skip,
            why: None,
            trials_a_side: 0,
            seconds: 0.0,
            evidence: Vec::new(),
        };
        let tree = match self.prepare(trees, built, sha)? {
            Ok(t) => t,
            Err(why) => {
                step.why = Some(why);
                return Ok(step);
            }
        };
        let mut line: Vec<String> = [
            "ab",
            "--base-dir",
            &against_tree.to_string_lossy(),
            "--head-dir",
            &tree.to_string_lossy(),
            "--commit-base",
            against,
            "--commit-head",
            sha,
            "--label-base",
            &self.label,
            "--label-head",
            &self.label,
            "--max-trials",
            &self.a.max_trials.to_string(),
            "--warmup",
            &self.a.warmup.to_string(),
            "--logs",
            &self.logs.join(short(sha)).to_string_lossy(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        if let Some(seed) = self.a.seed {
            line.extend(["--seed".into(), seed.to_string()]);
        }
        line.push("--".into());
        line.extend(self.command.iter().cloned());
        let mut ab = AbLine::try_parse_from(&line)
            .map_err(|e| anyhow::anyhow!("the step's ab arguments: {e}"))?
            .ab;
        ab.judge = self.a.judge.clone();
        ab.machine = self.machine.clone();
        ab.quiet = self.a.quiet;
        ab.no_gpu_state = self.a.no_gpu_state;
        ab.input_format = self.a.input_format;
        let t0 = Instant::now();
        let ran = super::trials::experiment(self.root, &ab, true)?;
        step.seconds = t0.elapsed().as_secs_f64();
        let report = match ran {
            super::trials::Ran::Compared { report, seq, .. } => {
                step.trials_a_side = seq.course.trials_per_arm;
                report
            }
            super::trials::Ran::NotCompared(_) => {
                step.why = Some("a trial failed or nothing was compared (see above)".into());
                return Ok(step);
            }
        };
        let (found, why, evidence) = self.judge(&report);
        step.found = found;
        step.why = why;
        step.evidence = evidence;
        Ok(step)
    }
}
