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
use std::sync::Arc;
use std::time::Instant;

/// The microbenchmark `devices measure` runs.
const ROOFS: &str = include_str!("../../../scripts/roofs.py");
/// The label measured roofs are stored under.
pub const LABEL: &str = perfdb_reports::db::roofs::LABEL;

pub fn run(root: &Path, a: DevicesArgs) -> anyhow::Result<Exit> {
    let t = super::device_table(a.config.as_deref())?;
    if let Some(DevicesAction::Measure(m)) = &a.action {
        return measure(root, m, &t);
    }
    // What `devices measure` stored in this warehouse, when there is one.
    let measured = if root.join("runs").exists() {
        let db = perfdb_reports::db::Db::open(root, &t)?;
        perfdb_reports::db::roofs::measured(&db)?
    } else {
        Vec::new()
    };
    // Names and sources come from perfdb.toml: printed through `print_out`, which shows
    // a control character in them escaped, never raw.
    let mut out = String::new();
    if a.format == DevicesFormat::Json {
        super::print_out(&perfdb_reports::render::devices::json(&t, &measured))?;
        return Ok(Exit::Ok);
    }
    out.push_str(&perfdb_reports::render::devices::text(&t));
    if !measured.is_empty() {
        out.push_str("\nmeasured on this machine's GPUs (`perfdb devices measure`):\n");
        for m in &measured {
            out.push_str(&format!("  {}\n", m.text()));
        }
    }
    super::print_out(&out)?;
    Ok(Exit::Ok)
}

/// `perfdb devices measure`: the bundled microbenchmark run on this machine's GPU, its
/// roofs stored under the label `roofs` with the GPU's name (its device), driver, clocks
/// and power limit, and printed beside the datasheet's.
fn measure(root: &Path, a: &MeasureArgs, devices: &Arc<Table>) -> anyhow::Result<Exit> {
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
    // Checked before anything is stored: the GPU is one the table knows, each roof (the
    // median of its repeats) is possible on it.
    check_roofs(&out.stdout, devices)?;
    let mut tags = vec![("roofs".to_string(), "measured".to_string())];
    if let Some(g) = crate::trials::GpuTool::find() {
        tags.extend(crate::trials::environment::driver(g));
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

/// A measured roof above this share of the datasheet's is no roof the GPU has: a timer
/// or a copy that did not happen.
const MOST_OF_DATASHEET: f64 = 1.05;

/// The microbenchmark's output checked before it is stored: its GPU known to the device
/// table (else an error naming it), each roof's median over its repeats above zero and
/// within [`MOST_OF_DATASHEET`] of the datasheet's figure.
fn check_roofs(stdout: &[u8], devices: &Arc<Table>) -> anyhow::Result<()> {
    let text = String::from_utf8_lossy(stdout);
    let (_, parsed) = perfdb_ingest::formats::parse(&text, Some(Format::PytorchV3))
        .map_err(|e| anyhow::anyhow!("the microbenchmark's output could not be read: {e}"))?;
    let gpu = parsed
        .trial_provenance
        .first()
        .unwrap_or(&parsed.provenance)
        .machine
        .clone()
        .unwrap_or_default();
    let Some(device) = devices.of_output(None, None, Some(&gpu), None).known() else {
        anyhow::bail!(
            "the microbenchmark ran on `{}`, a GPU the device table does not know: nothing was \
             stored; add it as a [[device]] in perfdb.toml (`perfdb devices` lists the table)",
            gpu.escape_debug()
        );
    };
    for (quantity, unit, median) in roof_medians(&parsed) {
        let datasheet = device.figure(quantity);
        let impossible = !(median.is_finite() && median > 0.0)
            || datasheet.is_some_and(|d| median > d * MOST_OF_DATASHEET);
        if impossible {
            anyhow::bail!(
                "the microbenchmark measured {} {} for {} on {}, {}: no roof this GPU has; \
                 nothing was stored",
                perfdb_reports::fmt::num(median),
                unit,
                quantity.name(),
                device.name,
                match datasheet {
                    Some(d) => format!(
                        "{:.0}% of the datasheet's {} {unit}",
                        100.0 * median / d,
                        perfdb_reports::fmt::num(d)
                    ),
                    None => "and the datasheet has no figure to hold it to".to_string(),
                }
            );
        }
    }
    Ok(())
}

/// Each roof in the microbenchmark's output: its quantity, unit and the median of its
/// repeats (every trial of the output).
fn roof_medians(
    parsed: &perfdb_ingest::model::Parsed,
) -> Vec<(perfdb_ingest::devices::Quantity, String, f64)> {
    use perfdb_ingest::devices::{dtype, Quantity};
    let mut by: std::collections::BTreeMap<(String, String), Vec<f64>> = Default::default();
    let trials = std::iter::once(&parsed.measurements).chain(parsed.repetitions.iter());
    for m in trials.flatten() {
        if matches!(&*m.unit, "TFLOPS" | "TB/s") {
            by.entry((m.unit.to_string(), parsed.key(m).to_string()))
                .or_default()
                .push(m.value.unwrap_or(f64::NAN));
        }
    }
    by.into_iter()
        .filter_map(|((unit, key), mut v)| {
            let quantity = if unit == "TB/s" {
                Quantity::Bandwidth
            } else {
                Quantity::Compute(dtype::of_key(&perfdb_ingest::model::key_from_json(&key))?)
            };
            v.sort_by(f64::total_cmp);
            Some((quantity, unit, perfdb_reports::stats::median(&v)))
        })
        .collect()
}
