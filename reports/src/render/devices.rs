//! `perfdb devices` as text: the device table, its coverage, and each figure's source.

use super::{terminal_lines, Column};
use perfdb_ingest::devices::{self, Device, Dtype, Quantity, Table};
use std::fmt::Write;

/// One device as `perfdb devices --format json` lists it: its entry, where it came
/// from, and the roofs `devices measure` stored for it.
#[derive(serde::Serialize)]
pub struct DeviceJson<'a> {
    #[serde(flatten)]
    pub device: &'a Device,
    /// `built-in`, or `perfdb.toml` for a user's entry.
    pub from: &'static str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub measured: Vec<&'a crate::db::roofs::Measured>,
}

/// The table as JSON, each device with the roofs measured for it.
pub fn json(t: &Table, measured: &[crate::db::roofs::Measured]) -> String {
    let list: Vec<DeviceJson> = t
        .devices
        .iter()
        .map(|d| DeviceJson {
            device: d,
            from: if t.user.contains(&d.id) {
                "perfdb.toml"
            } else {
                "built-in"
            },
            measured: measured.iter().filter(|m| m.device == d.id).collect(),
        })
        .collect();
    crate::json::pretty(&list)
}

fn fig(d: &Device, q: Quantity) -> String {
    d.figure(q).map_or("-".to_string(), |v| {
        if q == Quantity::Bandwidth {
            format!("{v}")
        } else {
            format!("{v:.1}")
        }
    })
}

const COLUMNS: &[Column<Device>] = &[
    Column::left("id", |d: &Device| d.id.clone()),
    Column::left("name", |d: &Device| d.name.clone()),
    Column::left("arch", |d: &Device| d.arch.clone()),
    Column::right("fp64", |d: &Device| fig(d, Quantity::Compute(Dtype::Fp64))),
    Column::right("fp32", |d: &Device| fig(d, Quantity::Compute(Dtype::Fp32))),
    Column::right("tf32", |d: &Device| fig(d, Quantity::Compute(Dtype::Tf32))),
    Column::right("bf16", |d: &Device| fig(d, Quantity::Compute(Dtype::Bf16))),
    Column::right("fp16", |d: &Device| fig(d, Quantity::Compute(Dtype::Fp16))),
    Column::right("fp8", |d: &Device| fig(d, Quantity::Compute(Dtype::Fp8))),
    Column::right("fp4", |d: &Device| fig(d, Quantity::Compute(Dtype::Fp4))),
    Column::right("TB/s", |d: &Device| fig(d, Quantity::Bandwidth)),
];

/// The table as `perfdb devices` prints it.
pub fn text(t: &Table) -> String {
    let mut s = String::new();
    for line in terminal_lines(COLUMNS, &t.devices) {
        let _ = writeln!(s, "{line}");
    }
    let _ = writeln!(
        s,
        "\nDense peak TFLOPS per data type and memory bandwidth in TB/s; `-`: no figure, so \
         no percent of peak.\nA value more than {:.0}% above its peak is impossible on the device \
         (a warning at ingest, `invalid` in compare, never an alert).",
        100.0 * devices::MARGIN
    );
    let _ = writeln!(
        s,
        "\nA run's device: `ingest --device`, else its machine tag, else the GPU its output prints,\nelse its arch, when it is one of these names (case and -/_ aside):"
    );
    for d in &t.devices {
        let _ = writeln!(s, "  {:<15} {}", d.id, d.identities.join(", "));
    }
    let _ = writeln!(s, "\nSources:");
    for d in &t.devices {
        let from = if t.user.contains(&d.id) {
            format!("perfdb.toml; {}", d.source)
        } else {
            d.source.clone()
        };
        let _ = writeln!(s, "  {:<15} {from}", d.id);
    }
    s
}
