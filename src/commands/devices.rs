//! `perfdb devices`: the device table runs are held against (`ingest/devices.toml` and
//! perfdb.toml's `[[device]]`), its coverage, and where each figure comes from.

use crate::cli::{DevicesArgs, DevicesFormat};
use crate::Exit;
use perfdb_ingest::devices;
use std::io::Write;

pub fn run(a: DevicesArgs) -> anyhow::Result<Exit> {
    perfdb_reports::config::Config::load_or_default(a.config.as_deref())?;
    let t = devices::table();
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
                v
            })
            .collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&list)?)?;
        return Ok(Exit::Ok);
    }
    write!(out, "{}", perfdb_reports::render::devices::text(t))?;
    Ok(Exit::Ok)
}
