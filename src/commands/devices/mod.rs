//! `perfdb devices`: the device table runs are held against (`ingest/devices.toml` and
//! perfdb.toml's `[[device]]`), its coverage, and where each figure comes from.

use crate::cli::{DevicesAction, DevicesArgs, DevicesFormat, MeasureArgs};
use crate::Exit;
use anyhow::Context;
use perfdb_ingest::devices::Table;
use perfdb_ingest::formats::Format;
use perfdb_ingest::model::RunMeta;
use perfdb_ingest::warehouse::Warehouse;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

/// The microbenchmark `devices measure` runs.
const ROOFS: &str = include_str!("roofs.py");
/// The label measured roofs are stored under.
pub const LABEL: &str = perfdb_reports::db::roofs::LABEL;

pub fn run(root: &Path, a: DevicesArgs) -> anyhow::Result<Exit> {
    let t = super::device_table(a.config.as_deref())?;
    if let Some(DevicesAction::Measure(m)) = &a.action {
        return measure(root, m, t);
    }
    // What `devices measure` stored in this warehouse, when there is one.
    let measured = if root.join("runs").exists() {
        let db = perfdb_reports::db::Db::open(root, t)?;
        perfdb_reports::db::roofs::measured(&db)?
    } else {
        Vec::new()
    };
    let mut out = std::io::stdout().lock();
    if a.format == DevicesFormat::Json {
        let list: Vec<serde_json::Value> = t
            .devices
            .iter()
            .map(|d| {
                let mut v = serde_json::to_value(d).expect("a device serialises");
                v["from"] = if t.user.contains(&d.id) {
                    "perfdb.toml"
                } else {
                    "built-in"
                }
                .into();
                let m: Vec<_> = measured.iter().filter(|m| m.device == d.id).collect();
                if !m.is_empty() {
                    v["measured"] = serde_json::to_value(m).expect("a roof serialises");
                }
                v
            })
            .collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&list)?)?;
        return Ok(Exit::Ok);
    }
    write!(out, "{}", perfdb_reports::render::devices::text(t))?;
    if !measured.is_empty() {
        writeln!(
            out,
            "\nmeasured on this machine's GPUs (`perfdb devices measure`):"
        )?;
        for m in &measured {
            writeln!(out, "  {}", m.text())?;
        }
    }
    Ok(Exit::Ok)
}

/// `perfdb devices measure`: the bundled microbenchmark run on this machine's GPU, its
/// roofs stored under the label `roofs` with the GPU's name (its device), driver, clocks
/// and power limit, and printed beside the datasheet's.
fn measure(root: &Path, a: &MeasureArgs, devices: &'static Table) -> anyhow::Result<Exit> {
    let dir = perfdb_ingest::warehouse::location::fresh_private_dir("perfdb-roofs")
        .context("cannot make a private folder for the microbenchmark")?;
    let script = dir.join("roofs.py");
    std::fs::write(&script, ROOFS).context("cannot write the microbenchmark")?;
    let mut cmd = std::process::Command::new(&a.python);
    cmd.arg(&script);
    say!("devices measure: a 2 GiB copy and an 8192^3 product per data type through `{}` (a minute or two)", a.python);
    let out = crate::process::run(
        &mut cmd,
        crate::process::Echo::Quiet,
        Some(Instant::now() + a.timeout),
    );
    let _ = std::fs::remove_dir_all(&dir);
    let out = out.with_context(|| format!("cannot run `{}`", a.python))?;
    if !out.status.success() {
        anyhow::bail!(
            "the microbenchmark failed ({}): {}",
            match out.ended {
                crate::process::Ended::Deadline => "killed at its --timeout".to_string(),
                _ => format!(
                    "exit {}",
                    out.status
                        .code()
                        .map_or("by a signal".into(), |c| c.to_string())
                ),
            },
            String::from_utf8_lossy(&out.merged).trim()
        );
    }
    let mut tags = vec![("roofs".to_string(), "measured".to_string())];
    if let Some(g) = super::trials::GpuTool::find() {
        tags.extend(super::trials::environment::driver(g));
        if let Ok(state) = g.query() {
            tags.extend(state.tags("before"));
        }
    }
    let meta = RunMeta {
        label: LABEL.to_string(),
        tags,
        ..Default::default()
    };
    let wh = Warehouse::new(root);
    let reports = perfdb_ingest::ingest_bytes(
        &wh,
        "devices measure",
        &out.stdout,
        Some(Format::PytorchV3),
        &meta,
        devices,
    )
    .context("cannot write the warehouse")?;
    for r in &reports {
        if let Err(e) = &r.result {
            anyhow::bail!("the microbenchmark's output could not be read: {e}");
        }
    }
    let db = perfdb_reports::db::Db::open(root, devices)?;
    let roofs = perfdb_reports::db::roofs::measured(&db)?;
    let mut o = std::io::stdout().lock();
    for r in &roofs {
        writeln!(o, "{}", r.text())?;
    }
    if roofs.is_empty() {
        anyhow::bail!("the microbenchmark's GPU is not in the device table: its roofs are stored, nothing to hold them against (`perfdb devices`)");
    }
    Ok(Exit::Ok)
}
