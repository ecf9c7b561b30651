//! The identity pass, shared by `perfdb run --affected` and `perfdb bisect --affected`:
//! the benchmark run once with the launch recorder (python/sitecustomize.py) first on
//! `PYTHONPATH` and `do_bench` calling once, and each row's identity read from what it
//! printed and kept (docs/affected.md).

use crate::process::{self as child, Echo, Ended};
use anyhow::Context;
use perfdb_ingest::devices::Table;
use perfdb_ingest::formats::Format;
use perfdb_ingest::kernel_identity::launches::{self, Pass};
use perfdb_ingest::kernel_identity::rows::{self, Identities};
use perfdb_ingest::model::RunMeta;
use std::path::{Path, PathBuf};
use std::time::Instant;

const SITECUSTOMIZE: &str = include_str!("python/sitecustomize.py");
const SELECT: &str = include_str!("python/perfdb_affected.py");

/// The recorder's files, in a folder of their own for this command, removed after it.
pub struct Hook {
    pub dir: PathBuf,
}

impl Hook {
    pub fn new() -> anyhow::Result<Hook> {
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
    pub fn kept(&self) -> PathBuf {
        self.dir.join("kept")
    }
    /// The command with the recorder's folder first on PYTHONPATH.
    pub fn command(&self, words: &[String]) -> std::process::Command {
        let mut cmd = std::process::Command::new(&words[0]);
        cmd.args(&words[1..]);
        cmd.env("PYTHONPATH", python_path_with(&[&self.dir]))
            .env("PYTHONUNBUFFERED", "1");
        cmd
    }
}

impl Drop for Hook {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// One pass's output and its wall seconds; `None` when interrupted (said).
pub fn pass(
    mut cmd: std::process::Command,
    echo: Echo,
    command_line: &str,
) -> anyhow::Result<Option<(child::Captured, f64)>> {
    let started = Instant::now();
    let out =
        child::run(&mut cmd, echo, None).with_context(|| format!("cannot run `{command_line}`"))?;
    if let Ended::Interrupted(sig) = out.ended {
        say!(
            "perfdb: {} received: `{command_line}` was stopped with every process it \
             started; nothing was stored",
            child::signal_name(sig)
        );
        return Ok(None);
    }
    let seconds = out.exited_at.duration_since(started).as_secs_f64();
    Ok(Some((out, seconds)))
}

/// What the identity pass's output is read as.
pub struct Reading<'a> {
    pub name: &'a str,
    pub format: Option<Format>,
    pub meta: &'a RunMeta,
    pub devices: &'a Table,
}

/// Every row's identity from the identity pass, or why there is none.
pub fn identities(pass: &Pass, ok: bool, r: &Reading, kept: &Path) -> Result<Identities, String> {
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
    let parsed = perfdb_ingest::prepare_bytes(r.name, &pass.output, r.format, r.meta, r.devices)
        .map_err(|e| format!("the identity pass's output could not be read: {e}"))?;
    if parsed.measurements.is_empty() {
        return Err("the identity pass printed no row".to_string());
    }
    rows::identify(&parsed.measurements, &parsed.keys, pass, kept).map_err(|e| e.to_string())
}

/// What an identity pass gave.
pub struct IdentityPass {
    /// The rows' identities, or why there are none.
    pub ids: Result<Identities, String>,
    /// Its wall seconds.
    pub seconds: f64,
    /// What it printed.
    pub output: Vec<u8>,
}

/// The identity pass of `words` (in `dir` when given, with `env` set); `None` when
/// interrupted.
pub fn identity_pass(
    words: &[String],
    dir: Option<&Path>,
    env: &[(String, String)],
    r: &Reading,
) -> anyhow::Result<Option<IdentityPass>> {
    let hook = Hook::new()?;
    let mut cmd = hook.command(words);
    if let Some(d) = dir {
        cmd.current_dir(d);
    }
    cmd.envs(env.iter().map(|(k, v)| (k, v)));
    cmd.env("PERFDB_IDENTITY_DIR", hook.kept())
        .env("PERFDB_PASS", "identity");
    let line = child::command_line(words);
    let Some((out, seconds)) = pass(cmd, Echo::Quiet, &line)? else {
        return Ok(None);
    };
    let recorded = launches::read_pass(&out.merged);
    let ids = identities(&recorded, out.status.success(), r, &hook.kept());
    Ok(Some(IdentityPass {
        ids,
        seconds,
        output: out.merged,
    }))
}

/// Whether two commits' identities are the same code: every row identified, the same
/// rows with the same identities, the same toolchain.
pub fn same_code(a: &Identities, b: &Identities) -> bool {
    let key = |ids: &Identities| {
        let mut v: Vec<(String, String, String, Option<String>)> = ids
            .rows
            .iter()
            .map(|r| {
                (
                    r.table.clone(),
                    r.variant.clone(),
                    r.key.clone(),
                    r.identity.clone(),
                )
            })
            .collect();
        v.sort();
        v
    };
    let all =
        |ids: &Identities| !ids.rows.is_empty() && ids.rows.iter().all(|r| r.identity.is_some());
    all(a) && all(b) && a.toolchain == b.toolchain && key(a) == key(b)
}

/// The rows to time, one a line (`table<TAB>variant<TAB>key=value<TAB>...`), written to
/// `dir/affected.tsv` for the benchmark's `perfdb_affected.wanted`.
pub fn selection_file<'a>(
    dir: &Path,
    rows: impl Iterator<Item = &'a rows::RowIdentity>,
) -> anyhow::Result<PathBuf> {
    let mut text = String::new();
    for row in rows {
        text.push_str(&row.table);
        text.push('\t');
        text.push_str(&row.variant);
        for (k, v) in perfdb_ingest::model::key_from_json(&row.key) {
            text.push_str(&format!("\t{k}={v}"));
        }
        text.push('\n');
    }
    let path = dir.join("affected.tsv");
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

/// The selection helper alone (`perfdb_affected.py`, no recorder) in `dir`, for
/// benchmarks run outside an identity pass; `dir`.
pub fn selection_helper(dir: &Path) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    std::fs::write(dir.join("perfdb_affected.py"), SELECT)
        .with_context(|| format!("cannot write into {}", dir.display()))?;
    Ok(dir.to_path_buf())
}

/// `dirs` first, in order, on the PYTHONPATH a command would inherit.
pub fn python_path_with<P: AsRef<Path>>(dirs: &[P]) -> std::ffi::OsString {
    let mut v = std::ffi::OsString::new();
    let inherited = std::env::var_os("PYTHONPATH").filter(|p| !p.is_empty());
    let parts = dirs.iter().map(|d| d.as_ref().as_os_str());
    for (i, part) in parts.chain(inherited.as_deref()).enumerate() {
        if i > 0 {
            v.push(":");
        }
        v.push(part);
    }
    v
}
