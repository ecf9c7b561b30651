//! `perfdb run --affected BASE -- CMD` and `perfdb run --identity -- CMD`: an identity
//! pass of the benchmark (the launch recorder of `python/sitecustomize.py` first on
//! `PYTHONPATH`, `do_bench` calling once), each row's identity against BASE's, then a
//! timed pass of the rows that changed (named to the benchmark through PERFDB_AFFECTED),
//! stored as one run with every row's identity beside it (docs/affected.md).

mod judge;

use super::ingest::{options, report};
use crate::cli::RunArgs;
use crate::process::{self as child, shell_word, Echo, Ended};
use crate::Exit;
use anyhow::Context;
use perfdb_ingest::kernel_identity::launches::{self, Pass};
use perfdb_ingest::kernel_identity::rows::{self, Identities};
use perfdb_ingest::warehouse::Warehouse;
use perfdb_reports::affected::render::{self, Outcome};
use perfdb_reports::affected::{self as plan, Action, Plan};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

const SITECUSTOMIZE: &str = include_str!("python/sitecustomize.py");
const SELECT: &str = include_str!("python/perfdb_affected.py");

/// The recorder's files, in a folder of their own for this command, removed after it.
struct Hook {
    dir: PathBuf,
}

impl Hook {
    fn new() -> anyhow::Result<Hook> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir =
            std::env::temp_dir().join(format!("perfdb-identity-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(dir.join("kept"))
            .with_context(|| format!("cannot create {}", dir.display()))?;
        std::fs::write(dir.join("sitecustomize.py"), SITECUSTOMIZE)?;
        std::fs::write(dir.join("perfdb_affected.py"), SELECT)?;
        Ok(Hook { dir })
    }
    fn kept(&self) -> PathBuf {
        self.dir.join("kept")
    }
    /// The command with the recorder's folder first on PYTHONPATH.
    fn command(&self, words: &[String]) -> std::process::Command {
        let mut cmd = std::process::Command::new(&words[0]);
        cmd.args(&words[1..]);
        let path = match std::env::var_os("PYTHONPATH") {
            Some(p) if !p.is_empty() => {
                let mut v = self.dir.clone().into_os_string();
                v.push(":");
                v.push(p);
                v
            }
            _ => self.dir.clone().into_os_string(),
        };
        cmd.env("PYTHONPATH", path).env("PYTHONUNBUFFERED", "1");
        cmd
    }
}

impl Drop for Hook {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// One pass's output and its wall seconds; `None` when interrupted (said).
fn pass(
    mut cmd: std::process::Command,
    echo: Echo,
    command_line: &str,
) -> anyhow::Result<Option<(child::Captured, f64)>> {
    let started = Instant::now();
    let out =
        child::run(&mut cmd, echo, None).with_context(|| format!("cannot run `{command_line}`"))?;
    if let Ended::Interrupted(sig) = out.ended {
        say!(
            "perfdb run: {} received: `{command_line}` was stopped with every process it \
             started; nothing was stored",
            child::signal_name(sig)
        );
        return Ok(None);
    }
    let seconds = out.exited_at.duration_since(started).as_secs_f64();
    Ok(Some((out, seconds)))
}

/// Every row's identity from the identity pass, or why there is none.
fn identities(
    pass: &Pass,
    ok: bool,
    name: &str,
    opts: &super::ingest::Options,
    kept: &Path,
) -> Result<Identities, String> {
    if !ok {
        return Err("the identity pass failed".to_string());
    }
    if !pass.ready {
        return Err(format!(
            "the launch recorder did not start (is Triton importable by the benchmark's Python?){}",
            pass.errors
                .first()
                .map_or(String::new(), |e| format!(": {e}"))
        ));
    }
    let parsed =
        perfdb_ingest::prepare_bytes(name, &pass.output, opts.format, &opts.meta, &opts.devices)
            .map_err(|e| format!("the identity pass's output could not be read: {e}"))?;
    if parsed.measurements.is_empty() {
        return Err("the identity pass printed no row".to_string());
    }
    rows::identify(&parsed.measurements, &parsed.keys, pass, kept).map_err(|e| e.to_string())
}

/// The identities stored with a run of `selector`: the newest run that has them.
fn base_identities(
    root: &Path,
    selector: &str,
    devices: &std::sync::Arc<perfdb_ingest::devices::Table>,
) -> anyhow::Result<Option<(String, Identities)>> {
    let db = perfdb_reports::db::Db::open(root, devices)?;
    let side = perfdb_reports::compare::select_runs(&db, selector)?;
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

/// The rows (table, variant, key) an output holds.
fn printed(
    name: &str,
    output: &[u8],
    opts: &super::ingest::Options,
) -> BTreeSet<(String, String, String)> {
    let Ok(p) = perfdb_ingest::prepare_bytes(name, output, opts.format, &opts.meta, &opts.devices)
    else {
        return BTreeSet::new();
    };
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

/// The rows to time, one a line, as `perfdb_affected.wanted` reads them.
fn affected_file(dir: &Path, plan: &Plan) -> anyhow::Result<PathBuf> {
    let mut text = String::new();
    for p in plan.timed() {
        text.push_str(&p.row.table);
        text.push('\t');
        text.push_str(&p.row.variant);
        for (k, v) in perfdb_ingest::model::key_from_json(&p.row.key) {
            text.push_str(&format!("\t{k}={v}"));
        }
        text.push('\n');
    }
    let path = dir.join("affected.tsv");
    std::fs::write(&path, text)?;
    Ok(path)
}

pub fn run(root: &Path, a: RunArgs) -> anyhow::Result<Exit> {
    let opts = options(a.options)?;
    let command_line = a
        .command
        .iter()
        .map(|w| shell_word(w))
        .collect::<Vec<_>>()
        .join(" ");
    let name = a.name.clone().unwrap_or_else(|| command_line.clone());
    if !(0.0..=1.0).contains(&a.audit) {
        anyhow::bail!("--audit {}: a share from 0 to 1", a.audit);
    }
    let base = match &a.affected {
        Some(sel) => Some((sel.clone(), base_identities(root, sel, &opts.devices)?)),
        None => None,
    };
    child::catch_interrupts();
    let hook = Hook::new()?;
    let mut cmd = hook.command(&a.command);
    cmd.env("PERFDB_IDENTITY_DIR", hook.kept())
        .env("PERFDB_PASS", "identity");
    say!("perfdb run: identity pass of `{command_line}`");
    let Some((out, identity_seconds)) = pass(cmd, Echo::Quiet, &command_line)? else {
        return Ok(Exit::Interrupted);
    };
    let recorded = launches::read_pass(&out.merged);
    let head = identities(&recorded, out.status.success(), &name, &opts, &hook.kept());
    let seed = opts
        .meta
        .commit
        .clone()
        .unwrap_or_else(|| command_line.clone());
    let base_ids = base
        .as_ref()
        .and_then(|(_, b)| b.as_ref().map(|(_, ids)| ids));
    let plan = match &head {
        Ok(h) => plan::plan(base_ids, h, a.audit, &seed),
        Err(why) => Plan {
            forced: Some(why.clone()),
            rows: Vec::new(),
        },
    };
    if let Err(why) = &head {
        say!("perfdb run: {why}; every row is timed");
        let tail = String::from_utf8_lossy(&out.merged);
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
        base: base
            .as_ref()
            .map_or_else(|| "(none: --identity)".to_string(), |(s, _)| s.clone()),
        base_run: base
            .as_ref()
            .and_then(|(_, b)| b.as_ref().map(|(r, _)| r.clone())),
        head_run: None,
        plan,
        judged: Vec::new(),
        unasked: Vec::new(),
        missing: Vec::new(),
        identity_seconds,
        timed_seconds: None,
        row_seconds: base_ids.and_then(|b| b.row_seconds),
        saved_seconds: None,
        base_rows: base_ids.map(|b| b.rows.clone()).unwrap_or_default(),
    };
    let every = outcome.plan.forced.is_some() || outcome.plan.skipped().count() == 0;
    let mut exit = Exit::Ok;
    if outcome.plan.timed().count() > 0 || outcome.plan.rows.is_empty() {
        let mut cmd = hook.command(&a.command);
        if !every {
            cmd.env("PERFDB_AFFECTED", affected_file(&hook.dir, &outcome.plan)?);
        }
        let Some((out, seconds)) = pass(cmd, Echo::AsIs, &command_line)? else {
            return Ok(Exit::Interrupted);
        };
        outcome.timed_seconds = Some(seconds);
        let output = if a.stdout_only {
            &out.stdout
        } else {
            &out.merged
        };
        let got = printed(&name, output, &opts);
        let (run_id, e) = store_timed(root, &opts, &name, &command_line, output, &out, seconds)?;
        exit = e;
        outcome.head_run = run_id;
        note_printed(&mut outcome, &got, seconds);
    }
    outcome.saved_seconds = outcome
        .row_seconds
        .map(|per| per * outcome.plan.skipped().count() as f64);
    if let (Ok(mut ids), Some(h)) = (head, &outcome.head_run) {
        fill_measured_in(&mut ids, &outcome);
        ids.row_seconds = outcome.row_seconds;
        let bytes = serde_json::to_vec_pretty(&ids)?;
        Warehouse::new(root).put_document(&Identities::document(h), &bytes)?;
    }
    if let Some(h) = outcome.head_run.clone() {
        outcome.judged = judge::judge(root, &opts.devices, &outcome, &h);
    }
    print!("{}", render::text(&outcome));
    Ok(judge::exit(&outcome, exit))
}

/// Which rows the timed pass printed: asked ones missing, unasked ones timed anyway;
/// the seconds a row took.
fn note_printed(o: &mut Outcome, got: &BTreeSet<(String, String, String)>, seconds: f64) {
    let id = |r: &rows::RowIdentity| (r.table.clone(), r.variant.clone(), r.key.clone());
    for p in &o.plan.rows {
        let here = got.contains(&id(&p.row));
        match (&p.action, here) {
            (Action::Time(_), false) => o.missing.push(p.row.name()),
            (Action::Skip { .. }, true) => o.unasked.push(p.row.name()),
            _ => {}
        }
    }
    if !got.is_empty() {
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
            _ if o.unasked.contains(&name) => o.head_run.clone(),
            Some(Action::Skip { run, .. }) => Some(run.clone()),
            _ => o.head_run.clone(),
        };
    }
}

/// Ingest the timed pass as one run (as `perfdb run` does); its id and exit.
fn store_timed(
    root: &Path,
    opts: &super::ingest::Options,
    name: &str,
    command_line: &str,
    output: &[u8],
    out: &child::Captured,
    seconds: f64,
) -> anyhow::Result<(Option<String>, Exit)> {
    let mut meta = opts.meta.clone();
    let code = out.status.code();
    meta.tags
        .push(("command".to_string(), command_line.to_string()));
    meta.tags.push((
        "exit_code".to_string(),
        code.map_or_else(|| "signal".to_string(), |c| c.to_string()),
    ));
    meta.tags
        .push(("duration_s".to_string(), format!("{seconds:.3}")));
    if !out.status.success() {
        meta.failed = Some(match code {
            Some(c) => format!("command exited with code {c}"),
            None => "command was killed by a signal".to_string(),
        });
    }
    let wh = Warehouse::new(root);
    let reports = perfdb_ingest::ingest_bytes(&wh, name, output, opts.format, &meta, &opts.devices)
        .with_context(|| format!("cannot write the warehouse at {}", root.display()))?;
    let exit = report(root, &opts.label, &reports)?;
    let run = reports
        .iter()
        .find_map(|r| r.result.as_ref().ok().map(|i| i.run_id.clone()));
    if exit != Exit::Ok {
        return Ok((run, exit));
    }
    if let Some(why) = meta.failed {
        say!("error: `{command_line}`: {why}; stored as a failed run");
        return Ok((run, Exit::Regression));
    }
    Ok((run, Exit::Ok))
}
