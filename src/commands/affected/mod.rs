//! `perfdb run --affected BASE -- CMD` and `perfdb run --identity -- CMD`: an identity
//! pass of the benchmark ([`crate::identity`]), each row's identity against BASE's, then a
//! timed pass of the rows that changed (named to the benchmark through PERFDB_AFFECTED),
//! stored as one run with every row's identity beside it (docs/affected.md).

mod judge;

use super::ingest::{options, report};
use crate::cli::RunArgs;
use crate::identity::{identity_pass, pass, Hook, IdentityPass, Reading};
use crate::process::{self as child, Echo};
use crate::Exit;
use anyhow::Context;
use perfdb_ingest::kernel_identity::rows::{self, Identities};
use perfdb_ingest::warehouse::Warehouse;
use perfdb_reports::affected::render::{self, Outcome};
use perfdb_reports::affected::{self as plan, Action, Plan};
use std::collections::BTreeSet;
use std::path::Path;

/// The identities stored with a run of `selector`: the newest run that has them.
fn base_identities(
    root: &Path,
    selector: &str,
    devices: &std::sync::Arc<perfdb_ingest::devices::Table>,
) -> anyhow::Result<Option<(String, Identities)>> {
    let db = perfdb_reports::db::Db::open(root, devices)?;
    let side = perfdb_reports::compare::select_runs(&db, selector).with_context(|| {
        format!(
            "--affected {selector}: no base (the first run records its identities with --identity)"
        )
    })?;
    let wh = Warehouse::new(root);
    for run in side.runs.iter().rev() {
        if let Some((bytes, at)) = wh.get_document(&Identities::document(run))? {
            let ids: Identities = serde_json::from_slice(&bytes)
                .with_context(|| format!("{at}: not an identity record"))?;
            return Ok(Some((run.to_string(), ids)));
        }
    }
    Ok(None)
}

/// The rows (table, variant, key) a parsed output holds.
fn printed(p: &perfdb_ingest::warehouse::Prepared) -> BTreeSet<(String, String, String)> {
    p.measurements
        .iter()
        .map(|m| {
            (
                m.table.as_str().to_string(),
                m.variant.as_str().to_string(),
                p.keys.get(m.key).to_string(),
            )
        })
        .collect()
}

pub fn run(root: &Path, a: RunArgs) -> anyhow::Result<Exit> {
    let opts = options(a.options)?;
    let command_line = child::command_line(&a.command);
    let name = a.name.clone().unwrap_or_else(|| command_line.clone());
    if !(0.0..=1.0).contains(&a.audit) {
        anyhow::bail!("--audit {}: a share from 0 to 1", a.audit);
    }
    if a.trials == 0 || (a.trials > 1 && opts.meta.commit.is_none()) {
        anyhow::bail!(
            "--trials {}: at least 1, and more than one needs --commit (the trials are the runs of the label at that commit)",
            a.trials
        );
    }
    let base = match &a.affected {
        Some(sel) => Some((sel.clone(), base_identities(root, sel, &opts.devices)?)),
        None => None,
    };
    child::catch_interrupts();
    say!("perfdb run: identity pass of `{command_line}`");
    let reading = Reading {
        name: &name,
        format: opts.format,
        meta: &opts.meta,
        devices: &opts.devices,
    };
    let Some(IdentityPass {
        ids: head,
        seconds: identity_seconds,
        output,
    }) = identity_pass(&a.command, None, &[], &reading)?
    else {
        return Ok(Exit::Interrupted);
    };
    let seed = opts
        .meta
        .commit
        .clone()
        .unwrap_or_else(|| command_line.clone());
    let base_ids = base
        .as_ref()
        .and_then(|(_, b)| b.as_ref().map(|(_, ids)| ids));
    let plan = match &head {
        Ok(h) => plan::plan(base_ids, h, a.audit, &seed, a.time_drift),
        Err(why) => Plan {
            forced: Some(why.clone()),
            rows: Vec::new(),
        },
    };
    if let Err(why) = &head {
        say!("perfdb run: {why}; every row is timed");
        let tail = String::from_utf8_lossy(&output);
        for line in tail
            .lines()
            .rev()
            .take(5)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
        {
            say!("  | {line}");
        }
    }
    let mut outcome = Outcome {
        base: base.as_ref().map(|(s, _)| s.clone()),
        head: None,
        head_runs: Vec::new(),
        plan,
        judged: Vec::new(),
        unasked: Vec::new(),
        missing: Vec::new(),
        identity_seconds,
        timed_seconds: None,
        row_seconds: base_ids.and_then(|b| b.row_seconds),
        saved_seconds: None,
        spread: Vec::new(),
        base_rows: base_ids.map(|b| b.rows.clone()).unwrap_or_default(),
    };
    let mut exit = Exit::Ok;
    if outcome.plan.timed().count() > 0 || outcome.plan.rows.is_empty() {
        let timed = Timed {
            root,
            opts: &opts,
            name: &name,
            command_line: &command_line,
            command: &a.command,
            trials: a.trials,
            stdout_only: a.stdout_only,
        };
        match timed.run(&mut outcome)? {
            Some(e) => exit = e,
            None => return Ok(Exit::Interrupted),
        }
    }
    outcome.saved_seconds = outcome
        .row_seconds
        .map(|per| per * outcome.plan.skipped().count() as f64 * a.trials as f64);
    if let (Ok(mut ids), Some(first)) = (head.clone(), outcome.head_runs.first()) {
        fill_measured_in(&mut ids, &outcome);
        ids.row_seconds = outcome.row_seconds;
        let bytes = serde_json::to_vec_pretty(&ids)?;
        Warehouse::new(root).put_document(&Identities::document(first), &bytes)?;
    }
    judge::finish(root, &opts, &mut outcome, head.as_ref().ok());
    print!("{}", render::text(&outcome));
    Ok(judge::exit(&outcome, exit))
}

/// The timed passes: what they run and where they are stored.
struct Timed<'a> {
    root: &'a Path,
    opts: &'a super::ingest::Options,
    name: &'a str,
    command_line: &'a str,
    command: &'a [String],
    trials: usize,
    stdout_only: bool,
}

impl Timed<'_> {
    /// `--trials` timed passes of the rows the plan times (every row when it times them
    /// all), each stored as a run; the exit of storing them, `None` when interrupted.
    fn run(&self, outcome: &mut Outcome) -> anyhow::Result<Option<Exit>> {
        let opts = self.opts;
        let every = outcome.plan.forced.is_some() || outcome.plan.skipped().count() == 0;
        let hook = Hook::new()?;
        let affected = (!every)
            .then(|| {
                crate::identity::selection_file(&hook.dir, outcome.plan.timed().map(|p| &p.row))
            })
            .transpose()?;
        let (mut seconds, mut got, mut exit) = (0.0, BTreeSet::new(), Exit::Ok);
        for trial in 0..self.trials {
            let mut cmd = hook.command(self.command);
            if let Some(f) = &affected {
                cmd.env("PERFDB_AFFECTED", f);
            }
            if self.trials > 1 {
                say!("perfdb run: timed pass {} of {}", trial + 1, self.trials);
            }
            let Some((out, s)) = pass(cmd, Echo::AsIs, self.command_line)? else {
                return Ok(None);
            };
            seconds += s;
            let output = if self.stdout_only {
                &out.stdout
            } else {
                &out.merged
            };
            let (run_id, e) = store_timed(self, output, &out, s, &mut got)?;
            outcome.head_runs.extend(run_id);
            if e != Exit::Ok {
                exit = e;
                break;
            }
        }
        outcome.timed_seconds = Some(seconds);
        outcome.head = match (&opts.meta.commit, outcome.head_runs.first()) {
            (Some(c), Some(_)) => Some(format!("{}@{c}", opts.label.as_str())),
            (None, Some(r)) => Some(format!("run:{r}")),
            _ => None,
        };
        note_printed(outcome, &got, seconds / self.trials as f64);
        Ok(Some(exit))
    }
}

/// Which rows the timed passes printed: asked ones missing, unasked ones timed anyway;
/// the seconds a row took in one pass that timed every row.
fn note_printed(o: &mut Outcome, got: &BTreeSet<(String, String, String)>, seconds: f64) {
    let id = |r: &rows::RowIdentity| (r.table.clone(), r.variant.clone(), r.key.clone());
    for p in &o.plan.rows {
        let here = got.contains(&id(&p.row));
        match (&p.action, here) {
            (Action::Time(_), false) => o.missing.push(p.row.name()),
            (Action::Skip { .. } | Action::Drift { .. }, true) => o.unasked.push(p.row.name()),
            _ => {}
        }
    }
    // A row's cost from a pass that timed every row (a partial pass is mostly the
    // process's start); else the base's figure stands.
    let every = o.plan.rows.iter().all(|p| got.contains(&id(&p.row)));
    if every && !got.is_empty() {
        o.row_seconds = Some(seconds / got.len() as f64);
    }
}

/// Each row's `measured_in`: the run that timed it, or the run it is filled from.
fn fill_measured_in(ids: &mut Identities, o: &Outcome) {
    for row in &mut ids.rows {
        let name = row.name();
        let planned = o.plan.rows.iter().find(|p| p.row.same_row(row));
        row.measured_in = match planned.map(|p| &p.action) {
            _ if o.missing.contains(&name) => None,
            _ if o.unasked.contains(&name) => o.head.clone(),
            Some(Action::Skip { run, .. } | Action::Drift { run, .. }) => Some(run.clone()),
            _ => o.head.clone(),
        };
    }
}

/// Ingest one timed pass as one run (as `perfdb run` does), the rows it printed added to
/// `got`; its id and exit.
fn store_timed(
    t: &Timed,
    output: &[u8],
    out: &child::Captured,
    seconds: f64,
    got: &mut BTreeSet<(String, String, String)>,
) -> anyhow::Result<(Option<String>, Exit)> {
    let opts = t.opts;
    let mut meta = opts.meta.clone();
    super::ingest::note_command(&mut meta, t.command_line, out, seconds);
    // Its identity record may list rows it did not time: compare reads it.
    meta.tags
        .push(("identity".to_string(), "recorded".to_string()));
    let prepared = perfdb_ingest::prepare_bytes(t.name, output, opts.format, &meta, &opts.devices);
    if let Ok(p) = &prepared {
        got.extend(printed(p));
    }
    let wh = Warehouse::new(t.root);
    let reports = perfdb_ingest::ingest_prepared(&wh, t.name, prepared)
        .with_context(|| format!("cannot write the warehouse at {}", t.root.display()))?;
    let exit = report(t.root, &opts.label, &reports)?;
    let run = reports
        .iter()
        .find_map(|r| r.result.as_ref().ok().map(|i| i.run_id.clone()));
    if exit != Exit::Ok {
        return Ok((run, exit));
    }
    if let Some(why) = meta.failed {
        say!("error: `{}`: {why}; stored as a failed run", t.command_line);
        return Ok((run, Exit::Regression));
    }
    Ok((run, Exit::Ok))
}
