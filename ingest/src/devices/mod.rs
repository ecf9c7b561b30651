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
use std::sync::{Arc, OnceLock};

pub use dtype::Dtype;

/// How far above its peak a value may sit before it is impossible: boost clocks run a
/// part above the clock its datasheet's figures assume.
pub const MARGIN: f64 = 0.05;

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
    /// Every quantity, in display order: the data types, then bandwidth.
    pub const ALL: [Quantity; 8] = [
        Quantity::Compute(Dtype::Fp64),
        Quantity::Compute(Dtype::Fp32),
        Quantity::Compute(Dtype::Tf32),
        Quantity::Compute(Dtype::Bf16),
        Quantity::Compute(Dtype::Fp16),
        Quantity::Compute(Dtype::Fp8),
        Quantity::Compute(Dtype::Fp4),
        Quantity::Bandwidth,
    ];
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
        match held(metric, unit)? {
            Held::Bandwidth => Some(Quantity::Bandwidth),
            Held::Compute => dtype::of_key(key).map(Quantity::Compute),
        }
    }
}

/// What a value of a metric in its canonical unit is held against, if anything.
#[derive(Clone, Copy)]
enum Held {
    Compute,
    Bandwidth,
}

/// By its canonical unit, whatever the metric is named (`throughput`, or a PyTorch v3
/// record's `forward_tflops`): a rate in TFLOPS is held against compute, one in TB/s
/// against memory bandwidth. Derived values (a ratio, an error, a difference) are not.
fn held(metric: &str, unit: &str) -> Option<Held> {
    use crate::model::metric;
    if metric::is_derived(metric) || metric == metric::DIFFERENCE {
        return None;
    }
    match unit {
        "TB/s" => Some(Held::Bandwidth),
        "TFLOPS" => Some(Held::Compute),
        _ => None,
    }
}

/// Is a value of this metric and canonical unit held against a peak (when its device,
/// and for TFLOPS its data type, is known)?
pub fn holds_a_peak(metric: &str, unit: &str) -> bool {
    held(metric, unit).is_some()
}

/// The most a value can be on a device: the quantity whose limit applies (its data
/// type's, or with `fastest` the fastest type's when the value's is not said).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ceiling {
    pub quantity: Quantity,
    pub fastest: bool,
    pub limit: f64,
}

impl Ceiling {
    pub fn impossible(&self, v: f64) -> bool {
        v > self.limit
    }
    /// The peak it comes from, named for a message.
    pub fn peak(&self, d: &Device) -> Option<Peak> {
        let p = d.peak(self.quantity)?;
        Some(if self.fastest {
            Peak {
                quantity: format!("fastest ({})", p.quantity),
                ..p
            }
        } else {
            p
        })
    }
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
    /// The figure as the table holds it (unchecked).
    fn raw(&self, q: Quantity) -> Option<f64> {
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
    }
    pub fn figure(&self, q: Quantity) -> Option<f64> {
        self.raw(q).filter(|v| v.is_finite() && *v > 0.0)
    }
    /// The peak a value of this metric, unit and key is a percent of: its data type's
    /// (when the key says it) or the memory bandwidth.
    pub fn peak_for(&self, metric: &str, unit: &str, key: &[(String, String)]) -> Option<Peak> {
        self.peak(Quantity::of(metric, unit, key)?)
    }
    /// The ceiling a value of this metric, unit and key cannot pass: its peak's limit,
    /// or for a throughput whose data type is not said, the limit of the device's
    /// fastest data type (no type does more; its percent stays unknown).
    pub fn limit_for(&self, metric: &str, unit: &str, key: &[(String, String)]) -> Option<Peak> {
        let held = held(metric, unit)?;
        self.ceiling(held, dtype::of_key(key))?.peak(self)
    }
    /// [`Device::limit_for`] for a value whose key's data type is known already, without
    /// allocating: what ingest checks every value of a run against.
    pub fn ceiling_of(&self, metric: &str, unit: &str, dtype: Option<Dtype>) -> Option<Ceiling> {
        self.ceiling(held(metric, unit)?, dtype)
    }
    fn ceiling(&self, held: Held, dtype: Option<Dtype>) -> Option<Ceiling> {
        let (q, fastest) = match (held, dtype) {
            (Held::Bandwidth, _) => (Quantity::Bandwidth, false),
            (Held::Compute, Some(d)) => (Quantity::Compute(d), false),
            (Held::Compute, None) => {
                let q = Quantity::ALL
                    .into_iter()
                    .filter(|q| *q != Quantity::Bandwidth)
                    .filter_map(|q| self.figure(q).map(|v| (q, v)))
                    .max_by(|a, b| a.1.total_cmp(&b.1))?
                    .0;
                (q, true)
            }
        };
        Some(Ceiling {
            quantity: q,
            fastest,
            limit: self.limit(q)?,
        })
    }
    /// Above this a value of `q` is impossible: the peak, or for fp32 the TF32 peak (a
    /// library may run an fp32 row on TF32 tensor cores), plus [`MARGIN`].
    fn limit(&self, q: Quantity) -> Option<f64> {
        let value = self.figure(q)?;
        let fastest = match q {
            Quantity::Compute(Dtype::Fp32) => self
                .figure(Quantity::Compute(Dtype::Tf32))
                .map_or(value, |t| t.max(value)),
            _ => value,
        };
        Some(fastest * (1.0 + MARGIN))
    }
    /// The peak `q` is held against on this device, `None` when the table has no
    /// figure for it; an fp32 row's percent is of the fp32 peak, its limit the TF32.
    pub fn peak(&self, q: Quantity) -> Option<Peak> {
        Some(Peak {
            device: self.id.clone(),
            device_name: self.name.clone(),
            quantity: q.name().to_string(),
            value: self.figure(q)?,
            unit: q.unit().to_string(),
            limit: self.limit(q)?,
        })
    }
    /// The figures the table has, in display order.
    pub fn figures(&self) -> Vec<(Quantity, f64)> {
        Quantity::ALL
            .into_iter()
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
    /// Every name a device is matched by (its id and identities), normalised, with the
    /// device's index: the user's entries first, so theirs win.
    names: Vec<(String, usize)>,
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
        Table::of(f.device, Vec::new())
    }
    fn of(devices: Vec<Device>, user: Vec<String>) -> Table {
        let mut names = Vec::new();
        let order = devices
            .iter()
            .enumerate()
            .filter(|(_, d)| user.contains(&d.id))
            .chain(
                devices
                    .iter()
                    .enumerate()
                    .filter(|(_, d)| !user.contains(&d.id)),
            );
        for (i, d) in order {
            for n in std::iter::once(&d.id).chain(&d.identities) {
                names.push((normalise(n), i));
            }
        }
        Table {
            devices,
            user,
            names,
        }
    }
    /// The built-in table with `extra` added or overriding by id.
    pub fn with(extra: Vec<Device>) -> Result<Table, String> {
        let f: File = toml::from_str(BUILTIN).expect("ingest/devices.toml parses");
        let (mut devices, mut user) = (f.device, Vec::new());
        refuse_twice_named(&extra)?;
        for d in extra {
            if d.id.trim().is_empty() {
                return Err(format!("[[device]] '{}': id is empty", d.name));
            }
            if let Some((q, v)) = Quantity::ALL.into_iter().find_map(|q| {
                d.raw(q)
                    .filter(|v| !(v.is_finite() && *v > 0.0))
                    .map(|v| (q, v))
            }) {
                return Err(format!(
                    "[[device]] {}: {} = {v} is not a peak (a positive number)",
                    d.id,
                    q.name()
                ));
            }
            user.push(d.id.clone());
            match devices.iter_mut().find(|x| x.id == d.id) {
                Some(x) => *x = d,
                None => devices.push(d),
            }
        }
        Ok(Table::of(devices, user))
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
        self.names
            .iter()
            .find(|(name, _)| *name == n)
            .map(|(_, i)| &self.devices[*i])
    }
    /// The device of a run being read: its `device` tag (`--device`), else its
    /// `machine` tag, else the GPU its output prints (nvbench, hipBLASLt), else its
    /// arch. A GPU the output prints and the table lacks is [`RunDevice::Unknown`]: its
    /// arch may be another part's too (an MI350X is a gfx950 like the MI355X).
    pub fn of_output(
        &self,
        device_tag: Option<&str>,
        machine_tag: Option<&str>,
        printed: Option<&str>,
        arch: Option<&str>,
    ) -> RunDevice<'_> {
        if device_tag.is_some_and(|d| !d.is_empty()) {
            return self
                .resolve(device_tag, None, None)
                .map_or(RunDevice::Unnamed, RunDevice::Known);
        }
        if let Some(d) = machine_tag.and_then(|m| self.named(m)) {
            return RunDevice::Known(d);
        }
        if let Some(product) = printed {
            return self
                .named(product)
                .map_or_else(|| RunDevice::Unknown(product.to_string()), RunDevice::Known);
        }
        arch.and_then(|a| self.named(a))
            .map_or(RunDevice::Unnamed, RunDevice::Known)
    }
    /// A stored run's device: what its `device` tag names (`--device`, what ingest
    /// matched, or the GPU its output printed), else what its `machine` tag names, else
    /// its arch.
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

/// What [`Table::of_output`] found.
#[derive(Debug, Clone, PartialEq)]
pub enum RunDevice<'a> {
    Known(&'a Device),
    /// The output names a GPU the table does not have (its name).
    Unknown(String),
    /// Nothing the run says names a device.
    Unnamed,
}

impl<'a> RunDevice<'a> {
    pub fn known(&self) -> Option<&'a Device> {
        match self {
            RunDevice::Known(d) => Some(*d),
            _ => None,
        }
    }
    /// The `device` tag ingest stores: the id, or the printed GPU the table lacks, so
    /// that a later reading takes neither the arch for it nor a guess, and a
    /// `[[device]]` added later for that name finds the run.
    pub fn tag(&self) -> Option<&str> {
        match self {
            RunDevice::Known(d) => Some(&d.id),
            RunDevice::Unknown(name) => Some(name),
            RunDevice::Unnamed => None,
        }
    }
}

/// Two of a team's entries with one id, or one name (an id or an identity, compared as
/// runs are matched): which one a run meant could not be told, so both are named.
fn refuse_twice_named(extra: &[Device]) -> Result<(), String> {
    let mut seen: Vec<(String, &str, &str)> = Vec::new();
    for d in extra {
        let mut own: Vec<String> = Vec::new();
        for name in std::iter::once(&d.id).chain(&d.identities) {
            let n = normalise(name);
            if n.is_empty() || own.contains(&n) {
                continue;
            }
            if let Some((_, id, first)) = seen.iter().find(|(m, _, _)| *m == n) {
                return Err(if *id == d.id.as_str() {
                    format!(
                        "[[device]] id '{}' is given twice: one entry a device",
                        d.id
                    )
                } else {
                    format!(
                        "[[device]] '{}' and [[device]] '{}' are both named '{name}' (as '{first}' in '{id}'): a run naming it could be either; keep the name on one",
                        id, d.id
                    )
                });
            }
            own.push(n.clone());
            seen.push((n, d.id.as_str(), name.as_str()));
        }
    }
    Ok(())
}

/// The built-in table (`ingest/devices.toml`), parsed once: the table of a process
/// with no `[[device]]` entries. A process with entries builds its own
/// ([`Table::with`]) and passes it where runs are read; nothing installs it globally.
pub fn builtin() -> Arc<Table> {
    static BUILTIN: OnceLock<Arc<Table>> = OnceLock::new();
    BUILTIN.get_or_init(|| Arc::new(Table::builtin())).clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_entries_of_one_name_are_refused_naming_both() {
        let entry = |id: &str, identities: &[&str]| Device {
            id: id.into(),
            name: format!("GPU {id}"),
            vendor: String::new(),
            arch: String::new(),
            identities: identities.iter().map(|s| s.to_string()).collect(),
            source: String::new(),
            fp64: None,
            fp32: None,
            tf32: None,
            bf16: Some(100.0),
            fp16: None,
            fp8: None,
            fp4: None,
            bandwidth: None,
            cited: BTreeMap::new(),
            formula: None,
        };
        let err = Table::with(vec![entry("ours", &[]), entry("ours", &[])]).unwrap_err();
        assert!(err.contains("'ours' is given twice"), "{err}");
        let err =
            Table::with(vec![entry("a", &["Fleet GPU"]), entry("b", &["fleet-gpu"])]).unwrap_err();
        assert!(err.contains("'a'") && err.contains("'b'"), "{err}");
        assert!(Table::with(vec![entry("a", &["x"]), entry("b", &["y"])]).is_ok());
    }

    #[test]
    fn identities_match_exactly_not_by_substring() {
        let t = Table::builtin();
        assert_eq!(t.named("NVIDIA H200").unwrap().id, "h200");
        assert_eq!(t.named("nvidia  h200").unwrap().id, "h200");
        assert!(
            t.named("NVIDIA H200 NVL").is_none(),
            "the NVL part has other peaks"
        );
        for arch in ["sm_90", "cuda:9.0", "gfx942", "gfx950"] {
            assert!(t.named(arch).is_none(), "{arch} is more than one part's");
        }
        assert_eq!(
            t.named("MI300X-O").unwrap().id,
            "mi300x",
            "amd-smi's market_name"
        );
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
        assert_eq!(id(t.resolve(None, Some("box7"), Some("gfx942"))), None);
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
    fn a_printed_gpu_the_table_lacks_is_unknown_not_its_arch() {
        let t = Table::builtin();
        let d = |r: RunDevice| r.tag().map(String::from);
        let mi350x = t.of_output(None, None, Some("AMD Instinct MI350X"), Some("gfx950"));
        assert_eq!(d(mi350x), Some("mi350x".into()));
        let r9700 = t.of_output(None, None, Some("AMD Radeon AI PRO R9700"), Some("gfx950"));
        assert_eq!(r9700, RunDevice::Unknown("AMD Radeon AI PRO R9700".into()));
        // A machine tag that names no device is a class name: the printed GPU still says
        // the part, and an arch several parts share says none.
        let tagged = t.of_output(None, Some("ci-3"), Some("AMD Radeon VII"), Some("gfx942"));
        assert_eq!(tagged, RunDevice::Unknown("AMD Radeon VII".into()));
        let tagged = t.of_output(None, Some("ci-3"), Some("NVIDIA H200"), Some("sm_90"));
        assert_eq!(d(tagged), Some("h200".into()));
        assert_eq!(
            t.of_output(None, Some("ci-3"), None, Some("gfx942")),
            RunDevice::Unnamed
        );
        assert_eq!(
            t.of_output(None, None, None, Some("sm_90")),
            RunDevice::Unnamed
        );
        // Stored as its name, it names no device when read back, not the arch's.
        assert!(t
            .resolve(Some("AMD Radeon AI PRO R9700"), None, Some("gfx950"))
            .is_none());
    }

    #[test]
    fn a_throughput_of_no_known_type_is_held_only_to_the_fastest_type() {
        let t = Table::builtin();
        let h200 = t.get("h200").unwrap();
        let no_type = [("M".to_string(), "8192".to_string())];
        assert!(h200.peak_for("throughput", "TFLOPS", &no_type).is_none());
        let l = h200.limit_for("throughput", "TFLOPS", &no_type).unwrap();
        assert_eq!((l.value, l.quantity.as_str()), (1979.0, "fastest (fp8)"));
        assert!(!l.impossible(1500.0) && l.impossible(2100.0));
        assert!(h200.limit_for("latency", "us", &no_type).is_none());
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
