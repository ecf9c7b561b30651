//! The devices perfdb knows the peaks of (`ingest/devices.toml`, plus a team's own
//! `[[device]]` entries in perfdb.toml), how a run is matched to one, and which peak a
//! value is held against.
//!
//! - [`Table`]: the devices; [`Table::resolve`] finds a run's device from what it names
//!   (`--device`, its `machine`, its arch), by exact identity, never by a guess.
//! - [`dtype`]: the data type a row's identity says it computes in.
//! - [`check`]: values above a device's peak, found at ingest.

pub mod check;
pub mod dtype;

use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::OnceLock;

pub use dtype::Dtype;

/// How far above its peak a value may sit before it is impossible: boost clocks run a
/// part above the clock its datasheet's figures assume.
pub const MARGIN: f64 = 0.05;

/// The `device` tag of a run whose output named a GPU the table does not have: its
/// arch is not read as a device.
pub const UNKNOWN: &str = "unknown";

/// The built-in table, as the repository ships it.
const BUILTIN: &str = include_str!("../../devices.toml");

/// One device and its dense peaks: TFLOPS per data type, memory bandwidth in TB/s.
#[derive(Debug, Clone, Deserialize, PartialEq, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Device {
    /// Short stable name (`h200`, `mi300x`): what `--device` takes and runs store.
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub vendor: String,
    #[serde(default)]
    pub arch: String,
    /// Exact strings (case and spacing aside) by which a run names this device.
    #[serde(default)]
    pub identities: Vec<String>,
    /// The document the figures come from.
    #[serde(default)]
    pub source: String,
    pub fp64: Option<f64>,
    pub fp32: Option<f64>,
    pub tf32: Option<f64>,
    pub bf16: Option<f64>,
    pub fp16: Option<f64>,
    pub fp8: Option<f64>,
    pub fp4: Option<f64>,
    /// TB/s.
    pub bandwidth: Option<f64>,
    /// Each figure as the document prints it.
    #[serde(default)]
    pub cited: BTreeMap<String, String>,
    /// AMD's formula for its figures: CUs x peak engine clock x FLOPs/clock/CU.
    #[serde(default)]
    pub formula: Option<Formula>,
}

#[derive(Debug, Clone, Deserialize, PartialEq, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Formula {
    pub cus: u32,
    pub clock_mhz: u32,
    pub flops_per_clock_cu: BTreeMap<String, u32>,
}

/// What a value is held against: a data type's compute peak, or memory bandwidth.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Quantity {
    Compute(Dtype),
    Bandwidth,
}

impl Quantity {
    pub fn name(self) -> &'static str {
        match self {
            Quantity::Compute(d) => d.name(),
            Quantity::Bandwidth => "bandwidth",
        }
    }
    pub fn unit(self) -> &'static str {
        match self {
            Quantity::Compute(_) => "TFLOPS",
            Quantity::Bandwidth => "TB/s",
        }
    }
    /// The quantity a stored value of this metric and canonical unit is held against,
    /// given the row's identity; `None` when it is no throughput or bandwidth, or its
    /// data type is not said.
    pub fn of(metric: &str, unit: &str, key: &[(String, String)]) -> Option<Quantity> {
        match (metric, unit) {
            (crate::model::metric::BANDWIDTH, "TB/s") => Some(Quantity::Bandwidth),
            (crate::model::metric::THROUGHPUT, "TFLOPS") => {
                dtype::of_key(key).map(Quantity::Compute)
            }
            _ => None,
        }
    }
}

/// Is a value of this metric and canonical unit held against a peak (when its device,
/// and for TFLOPS its data type, is known)?
pub fn holds_a_peak(metric: &str, unit: &str) -> bool {
    matches!(
        (metric, unit),
        (crate::model::metric::BANDWIDTH, "TB/s") | (crate::model::metric::THROUGHPUT, "TFLOPS")
    )
}

/// A value's ceiling on its device.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Peak {
    /// The device's id and name.
    pub device: String,
    pub device_name: String,
    /// `bf16`, `fp8`, ..., `bandwidth`.
    pub quantity: String,
    pub value: f64,
    pub unit: String,
    /// Above this a value is impossible on the device (the peak, the fastest data type
    /// the row may really have run in, plus [`MARGIN`]).
    pub limit: f64,
}

impl Peak {
    /// `v` as a percent of the peak.
    pub fn percent(&self, v: f64) -> f64 {
        100.0 * v / self.value
    }
    pub fn impossible(&self, v: f64) -> bool {
        v > self.limit
    }
}

impl Device {
    pub fn figure(&self, q: Quantity) -> Option<f64> {
        match q {
            Quantity::Bandwidth => self.bandwidth,
            Quantity::Compute(d) => match d {
                Dtype::Fp64 => self.fp64,
                Dtype::Fp32 => self.fp32,
                Dtype::Tf32 => self.tf32,
                Dtype::Bf16 => self.bf16,
                Dtype::Fp16 => self.fp16,
                Dtype::Fp8 => self.fp8,
                Dtype::Fp4 => self.fp4,
            },
        }
        .filter(|v| v.is_finite() && *v > 0.0)
    }
    /// The peak `q` is held against on this device, `None` when the table has no
    /// figure for it. An fp32 row may have run on TF32 tensor cores (a library's
    /// choice, not the row's): its percent is of the fp32 peak, its limit the faster.
    pub fn peak(&self, q: Quantity) -> Option<Peak> {
        let value = self.figure(q)?;
        let fastest = match q {
            Quantity::Compute(Dtype::Fp32) => self
                .figure(Quantity::Compute(Dtype::Tf32))
                .map_or(value, |t| t.max(value)),
            _ => value,
        };
        Some(Peak {
            device: self.id.clone(),
            device_name: self.name.clone(),
            quantity: q.name().to_string(),
            value,
            unit: q.unit().to_string(),
            limit: fastest * (1.0 + MARGIN),
        })
    }
    /// The figures the table has, in display order.
    pub fn figures(&self) -> Vec<(Quantity, f64)> {
        Dtype::ALL
            .iter()
            .map(|d| Quantity::Compute(*d))
            .chain([Quantity::Bandwidth])
            .filter_map(|q| self.figure(q).map(|v| (q, v)))
            .collect()
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    device: Vec<Device>,
}

/// The devices, built-in first; a user's entry with a built-in's id replaces it.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub devices: Vec<Device>,
    /// Ids of the entries that came from the user's configuration.
    pub user: Vec<String>,
}

/// Identities compare without case and with runs of spaces, `_` and `-` as one space.
fn normalise(s: &str) -> String {
    s.split(|c: char| c.is_whitespace() || c == '_' || c == '-')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

impl Table {
    pub fn builtin() -> Table {
        let f: File = toml::from_str(BUILTIN).expect("ingest/devices.toml parses");
        Table {
            devices: f.device,
            user: Vec::new(),
        }
    }
    /// The built-in table with `extra` added or overriding by id.
    pub fn with(extra: Vec<Device>) -> Result<Table, String> {
        let mut t = Table::builtin();
        for d in extra {
            if d.id.trim().is_empty() {
                return Err(format!("[[device]] '{}': id is empty", d.name));
            }
            let raw = [
                ("fp64", d.fp64),
                ("fp32", d.fp32),
                ("tf32", d.tf32),
                ("bf16", d.bf16),
                ("fp16", d.fp16),
                ("fp8", d.fp8),
                ("fp4", d.fp4),
                ("bandwidth", d.bandwidth),
            ];
            if let Some((q, Some(v))) = raw
                .iter()
                .find(|(_, v)| v.is_some_and(|v| !(v.is_finite() && v > 0.0)))
            {
                return Err(format!(
                    "[[device]] {}: {q} = {v} is not a peak (a positive number)",
                    d.id
                ));
            }
            t.user.push(d.id.clone());
            match t.devices.iter_mut().find(|x| x.id == d.id) {
                Some(x) => *x = d,
                None => t.devices.push(d),
            }
        }
        Ok(t)
    }
    pub fn get(&self, id: &str) -> Option<&Device> {
        self.devices.iter().find(|d| d.id == id)
    }
    /// The device a string names: its id or one of its identities. A user's entry is
    /// looked at before the built-in ones, so a team's `identities = ["gfx942"]` on an
    /// MI325X entry wins.
    pub fn named(&self, s: &str) -> Option<&Device> {
        let n = normalise(s);
        if n.is_empty() {
            return None;
        }
        let hit =
            |d: &&Device| normalise(&d.id) == n || d.identities.iter().any(|i| normalise(i) == n);
        let user = self.devices.iter().filter(|d| self.user.contains(&d.id));
        let builtin = self.devices.iter().filter(|d| !self.user.contains(&d.id));
        user.chain(builtin).find(hit)
    }
    /// A run's device: its `device` tag (given with `--device`), else what its `machine`
    /// tag names, else its arch, else none.
    pub fn resolve(
        &self,
        device: Option<&str>,
        machine: Option<&str>,
        arch: Option<&str>,
    ) -> Option<&Device> {
        if let Some(d) = device.filter(|d| !d.is_empty()) {
            return self.named(d);
        }
        machine
            .and_then(|m| self.named(m))
            .or_else(|| arch.and_then(|a| self.named(a)))
    }
}

static TABLE: OnceLock<Table> = OnceLock::new();

/// Set the process's table (the built-in one with perfdb.toml's `[[device]]`s). Once,
/// before the first [`table`]; a later call is refused.
pub fn configure(t: Table) -> Result<(), Table> {
    TABLE.set(t)
}

/// The process's table: the configured one, else the built-in one.
pub fn table() -> &'static Table {
    TABLE.get_or_init(Table::builtin)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identities_match_exactly_not_by_substring() {
        let t = Table::builtin();
        assert_eq!(t.named("NVIDIA H200").unwrap().id, "h200");
        assert_eq!(t.named("nvidia  h200").unwrap().id, "h200");
        assert!(
            t.named("NVIDIA H200 NVL").is_none(),
            "the NVL part has other peaks"
        );
        assert_eq!(t.named("gfx942").unwrap().id, "mi300x");
        assert!(t.named("sm_90").is_none() && t.named("cuda:9.0").is_none());
        assert_eq!(t.named("AMD Instinct MI300X OAM").unwrap().id, "mi300x");
    }

    #[test]
    fn resolve_prefers_device_then_machine_then_arch() {
        let t = Table::builtin();
        let id = |d: Option<&Device>| d.map(|d| d.id.clone());
        assert_eq!(
            id(t.resolve(Some("mi325x"), Some("MI300X"), Some("gfx942"))),
            Some("mi325x".into())
        );
        assert_eq!(
            id(t.resolve(None, Some("NVIDIA H200"), Some("sm_90"))),
            Some("h200".into())
        );
        assert_eq!(
            id(t.resolve(None, Some("box7"), Some("gfx942"))),
            Some("mi300x".into())
        );
        assert_eq!(id(t.resolve(None, Some("box7"), Some("cuda:9.0"))), None);
        assert_eq!(id(t.resolve(Some("nope"), None, Some("gfx942"))), None);
    }

    #[test]
    fn a_user_entry_overrides_and_wins_identities() {
        let mine: File = toml::from_str(
            r#"[[device]]
               id = "mi325x-ours"
               name = "our MI325X"
               identities = ["gfx942"]
               bf16 = 1307.4
               bandwidth = 6.0"#,
        )
        .unwrap();
        let t = Table::with(mine.device).unwrap();
        assert_eq!(t.named("gfx942").unwrap().id, "mi325x-ours");
        assert_eq!(t.named("MI300X").unwrap().id, "mi300x");
        let bad: File =
            toml::from_str("[[device]]\nid = \"x\"\nname = \"x\"\nbf16 = -1.0").unwrap();
        assert!(Table::with(bad.device).unwrap_err().contains("bf16 = -1"));
    }

    #[test]
    fn fp32_rows_may_reach_tf32_before_they_are_impossible() {
        let t = Table::builtin();
        let h200 = t.get("h200").unwrap();
        let p = h200.peak(Quantity::Compute(Dtype::Fp32)).unwrap();
        assert_eq!(p.value, 67.0);
        assert!(!p.impossible(300.0) && p.impossible(494.5 * 1.06));
        let bw = h200.peak(Quantity::Bandwidth).unwrap();
        assert!((bw.percent(4.27) - 88.96).abs() < 0.01);
        assert!(bw.impossible(5.1) && !bw.impossible(5.0));
    }
}
