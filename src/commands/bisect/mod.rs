//! `perfdb bisect`: from an alert (or two commits) to the commit that made the step. The
//! search, its verdicts, its record and how it reads are the library's
//! ([`perfdb_reports::bisect`]); this module is what the search asks of the machine
//! ([`Bench`], its `Measure`): a commit checked out in a git worktree and built
//! ([`git`], supervised as a trial is), then `ab`'s interleaved trials of it against
//! the other (`crate::trials::experiment`). The result is stored with every alert of the
//! group and told to the `--notify` targets.

mod build;
mod git;

use crate::cli::{AbArgs, BisectArgs, CompareFormat};
use crate::Exit;
use anyhow::{bail, Context};
use git::{short, Worktrees};
use perfdb_ingest::devices::Table;
use perfdb_ingest::kernel_identity::rows::Identities;
use perfdb_ingest::warehouse::Label;
use perfdb_reports::alerts::{self, AlertGroup, AlertView};
use perfdb_reports::bisect::Found;
use perfdb_reports::bisect::{Bisected, CommitInfo, Ended, Measure, Series, Step, Watch};
use perfdb_reports::db::Db;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// What the alert gives a bisect: its group (whose range and series the bisect takes:
/// a group has one bisect), how its runs were made.
struct FromAlert {
    alert: AlertView,
    group: AlertGroup,
    command: Option<String>,
    machine: Option<String>,
}

fn from_alert(root: &Path, devices: &Arc<Table>, prefix: &str) -> anyhow::Result<FromAlert> {
    let db = Db::open(root, devices)
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
    /// After good, up to bad, with their parents (bad last).
    graph: perfdb_reports::bisect::Graph,
    command: Vec<String>,
    watch: Watch,
    /// The group's id, or the two ends'.
    id: String,
}

fn plan(root: &Path, a: &BisectArgs, devices: &Arc<Table>) -> anyhow::Result<Plan> {
    // Targets are checked before any trial runs.
    let targets = perfdb_reports::alerts::notify::parse_targets(&a.notify)?;
    if !targets.is_empty() && a.alert.is_none() {
        bail!("--notify tells an alert's watchers: give the alert's id");
    }
    let from = match &a.alert {
        Some(p) => Some(from_alert(root, devices, p)?),
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
    let graph = git::range(&a.repo, &good, &bad)?;
    if graph.is_empty() {
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
        graph,
        command,
        watch,
        id,
    })
}

pub fn run(root: &Path, a: BisectArgs) -> anyhow::Result<Exit> {
    // The device table, made once: every step's trials are read against it.
    let devices = super::device_table(a.judge.config.as_deref())?;
    let p = plan(root, &a, &devices)?;
    // SIGINT/SIGTERM from here on stop what runs (a build, a trial) with its group; the
    // worktrees are removed and the steps so far printed (exit 130).
    crate::process::catch_interrupts();
    let label = format!("bisect-{}", p.id);
    Label::new(&label).map_err(|e| anyhow::anyhow!("label {label}: {e}"))?;
    // A new private folder: a name another user made in advance is never built in.
    let work = crate::private::fresh_dir(&format!("perfdb-bisect-{}", p.id))?;
    let mut trees = Worktrees::new(&a.repo, work)?;
    let mut bench = Bench {
        root,
        devices: &devices,
        a: &a,
        trees: &mut trees,
        built: Built::new(),
        good: p.good.clone(),
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
        identities: std::collections::HashMap::new(),
        verdicts: Vec::new(),
        ahead: build::Ahead::default(),
    };
    let mut out = Bisected {
        alert: p.from.as_ref().map(|f| f.alert.id.clone()),
        label,
        good: p.good.clone(),
        bad: p.bad.clone(),
        commits: p.graph.len(),
        watch: p.watch.clone(),
        parts: Vec::new(),
        range: None,
        ends: None,
        steps: Vec::new(),
        skipped: Vec::new(),
        gpu_seconds: 0.0,
        max_trials: a.max_trials,
    };
    let ended = perfdb_reports::bisect::run(&mut bench, &p.graph, &mut out);
    // Builds started ahead and not needed are stopped before their worktrees go.
    drop(bench);
    drop(trees);
    // A cancelled job (a signal, whatever it cut short): the steps so far, nothing
    // stored, and exit 130.
    if crate::process::interrupted().is_some() || matches!(ended, Ok(Ended::Interrupted)) {
        print(&out, a.format)?;
        return Ok(Exit::Interrupted);
    }
    ended?;
    finish(root, &a, &p, &out)
}

fn print(out: &Bisected, format: crate::cli::OutputFormat) -> anyhow::Result<()> {
    let text = perfdb_reports::bisect::render(out, format);
    super::print_out(&text)?;
    Ok(())
}

/// Store the result with every alert of the group (any of them shows it), print it, and
/// tell the targets.
fn finish(root: &Path, a: &BisectArgs, p: &Plan, out: &Bisected) -> anyhow::Result<Exit> {
    for m in p.from.iter().flat_map(|f| &f.group.alerts) {
        perfdb_reports::bisect::store::store(root, &m.id, out).map_err(anyhow::Error::msg)?;
    }
    print(out, a.format)?;
    if let Some(f) = &p.from {
        let failed = perfdb_reports::alerts::notify::deliver_bisect(
            &p.targets,
            &f.group,
            out,
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

/// What the search's steps run on: the repository's worktrees, their builds, and `ab`'s
/// trials.
struct Bench<'a> {
    root: &'a Path,
    devices: &'a Arc<Table>,
    a: &'a BisectArgs,
    trees: &'a mut Worktrees,
    built: Built,
    good: String,
    command: Vec<String>,
    label: String,
    logs: PathBuf,
    machine: Option<String>,
    watch: Watch,
    /// With `--affected`: each commit's identities (or why there are none), and the
    /// verdict of each commit measured, the good end's included.
    identities: std::collections::HashMap<String, Result<Identities, String>>,
    verdicts: Vec<(String, Found)>,
    /// `--build-ahead`: builds of the next candidates, running.
    ahead: build::Ahead,
}

impl Bench<'_> {
    /// The worktree of `sha`, built: Ok(Err(why)) when its build fails. A build
    /// started ahead is waited for.
    fn prepare(&mut self, sha: &str) -> anyhow::Result<Result<PathBuf, String>> {
        if let Some(r) = self.built.get(sha) {
            return Ok(r.clone());
        }
        let r = match self.ahead.take(sha) {
            Some(r) => {
                say!("bisect: {} was built ahead", short(sha));
                r?
            }
            None => {
                let tree = self.trees.checkout(sha)?;
                match self.build_of(sha)? {
                    None => Ok(tree),
                    Some(b) => b.run(tree, None)?,
                }
            }
        };
        self.built.insert(sha.to_string(), r.clone());
        Ok(r)
    }

    /// How `sha` is built (`--build`), its log's folder made; None without a build.
    fn build_of(&self, sha: &str) -> anyhow::Result<Option<build::Build>> {
        let Some(command) = &self.a.build else {
            return Ok(None);
        };
        std::fs::create_dir_all(&self.logs)
            .with_context(|| format!("cannot create {}", self.logs.display()))?;
        Ok(Some(build::Build {
            command: command.clone(),
            timeout: self.a.build_timeout,
            log: build::log_of(&self.logs, sha),
        }))
    }

    /// `ab`'s arguments for `sha`'s trials against `against`, built as a value: the
    /// bisect's own trial flags passed whole.
    fn ab_args(&self, against: &str, against_tree: PathBuf, sha: &str, tree: PathBuf) -> AbArgs {
        AbArgs {
            base: None,
            head: None,
            base_dir: Some(against_tree),
            head_dir: Some(tree),
            base_env: Vec::new(),
            head_env: Vec::new(),
            command: self.command.clone(),
            max_trials: self.a.max_trials,
            affected: false,
            max_time: None,
            logs: Some(self.logs.join(short(sha))),
            label_base: Some(self.label.clone()),
            label_head: Some(self.label.clone()),
            commit_base: Some(against.to_string()),
            commit_head: Some(sha.to_string()),
            machine: self.machine.clone(),
            trials: self.a.trials.clone(),
            judge: self.a.judge.clone(),
            format: CompareFormat::Table,
        }
    }
}

impl Bench<'_> {
    /// The identities of `sha`'s tree, from its identity pass (once a commit).
    fn identities(&mut self, sha: &str, tree: &Path) -> anyhow::Result<Option<Identities>> {
        if let Some(r) = self.identities.get(sha) {
            return Ok(r.as_ref().ok().cloned());
        }
        let meta = perfdb_ingest::model::RunMeta::default();
        let reading = crate::identity::Reading {
            name: "bisect identity pass",
            format: None,
            meta: &meta,
            devices: self.devices,
        };
        let env: Vec<(String, String)> = Vec::new();
        let got = match crate::identity::identity_pass(&self.command, Some(tree), &env, &reading)? {
            Some(p) => p.ids,
            None => Err("interrupted".to_string()),
        };
        if let Err(why) = &got {
            say!(
                "bisect: {}: no identity ({why}): its steps are timed",
                short(sha)
            );
        }
        self.identities.insert(sha.to_string(), got.clone());
        Ok(got.ok())
    }

    /// A measured commit whose identities equal `sha`'s, and its verdict.
    fn same_as_measured(
        &mut self,
        sha: &str,
        tree: &Path,
    ) -> anyhow::Result<Option<(String, Found)>> {
        if !self.a.affected {
            return Ok(None);
        }
        let good = self.good.clone();
        if !self.verdicts.iter().any(|(c, _)| *c == good) {
            if let Ok(Ok(t)) = self.prepare(&good) {
                self.identities(&good, &t)?;
            }
            self.verdicts.push((good, Found::Good));
        }
        let Some(mine) = self.identities(sha, tree)? else {
            return Ok(None);
        };
        Ok(self.verdicts.iter().find_map(|(c, found)| {
            let theirs = self.identities.get(c)?.as_ref().ok()?;
            crate::identity::same_code(&mine, theirs).then(|| (c.clone(), *found))
        }))
    }
}

impl Measure for Bench<'_> {
    type Error = anyhow::Error;

    fn measure(&mut self, against: &str, sha: &str) -> anyhow::Result<Step> {
        let step = self.measure_trials(against, sha)?;
        if matches!(step.found, Found::Good | Found::Bad) && step.trials_a_side > 0 {
            self.verdicts.push((sha.to_string(), step.found));
        }
        Ok(step)
    }

    fn info(&mut self, sha: &str) -> anyhow::Result<CommitInfo> {
        git::info(&self.a.repo, sha)
    }

    fn interrupted(&self) -> bool {
        crate::process::interrupted().is_some()
    }

    fn progress(&mut self, line: &str) {
        say!("bisect: {line}");
    }

    /// `--build-ahead`: the next step's candidates built while this step's trials run.
    fn ahead(&mut self, commits: &[String]) -> anyhow::Result<()> {
        if !self.a.build_ahead {
            return Ok(());
        }
        for sha in commits {
            if self.built.contains_key(sha) || self.ahead.is_running(sha) {
                continue;
            }
            let Some(b) = self.build_of(sha)? else {
                return Ok(());
            };
            let tree = self.trees.checkout(sha)?;
            self.ahead.start(sha, tree, b);
        }
        Ok(())
    }
}

impl Bench<'_> {
    fn measure_trials(&mut self, against: &str, sha: &str) -> anyhow::Result<Step> {
        let mut step = Step::new(against, sha);
        // The side measured against is the good end or a culprit already measured: one
        // that does not build ends the bisect (it has nothing to stand on).
        let against_tree = self.prepare(against)?.map_err(|why| {
            let which = if against == self.good {
                "the good end"
            } else {
                "the part's start"
            };
            anyhow::anyhow!("{which} {} cannot be built: {why}", short(against))
        })?;
        let tree = match self.prepare(sha)? {
            Ok(t) => t,
            Err(why) => {
                step.why = Some(why);
                return Ok(step);
            }
        };
        let t0 = Instant::now();
        if let Some((same, found)) = self.same_as_measured(sha, &tree)? {
            step.found = found;
            step.seconds = t0.elapsed().as_secs_f64();
            step.why = Some(format!(
                "identity equal to {} ({found}): its verdict inherited, no trials",
                short(&same)
            ));
            return Ok(step);
        }
        let ab = self.ab_args(against, against_tree, sha, tree);
        let t0 = Instant::now();
        let ran = crate::trials::experiment(self.root, &ab, true, self.devices)?;
        step.seconds = t0.elapsed().as_secs_f64();
        let report = match ran {
            crate::trials::Ran::Compared { report, seq, .. } => {
                step.trials_a_side = seq.course.trials_per_arm;
                report
            }
            // A bisect's experiment runs no identity pass of its own (its steps do).
            crate::trials::Ran::NotCompared(_, what) | crate::trials::Ran::Unchanged(what) => {
                step.why = Some(what);
                return Ok(step);
            }
        };
        (step.found, step.why, step.evidence) = perfdb_reports::bisect::judge(&self.watch, &report);
        step.counters = perfdb_reports::bisect::watched_counters(&self.watch, &report);
        Ok(step)
    }
}
