//! Triton proton's profile (`proton.start(name)` ... `proton.finalize()` writes
//! `name.hatchet`): a JSON array, the call tree first (`frame`, `metrics`, `children`
//! from `ROOT`), then the devices (`{"CUDA": {"0": {"arch": "90", ...}}}`).
//!
//! Each node with metrics of its own (`count`, `time (ns)`, `bytes`, `flops16`...) is a
//! kernel: measurements of table `proton`, its frame name the variant, the scopes above
//! it (`scope/__proton_launch_metadata`) the key. `time (ns)` is the total over `count`
//! launches, stored in ns; `bytes` in bytes; `flops*` as counts. Scope nodes hold no
//! metrics; `device_id`/`device_type` name the device, not a counter. Older proton
//! (2024-25) spells its metrics `Count`, `Time (ns)`, `DeviceId`, `DeviceType`: read the
//! same. A kernel under several scopes is a kernel of each, each at its own line. One
//! device arch in the profile is the run's arch (`sm_90`, `gfx942`).

use super::Kernel;
use crate::formats::parser::{Evidence, ParseError, Parser};
use crate::formats::support::emit::lines_of;
use crate::model::Format;
use crate::model::Parsed;
use serde_json::Value;

pub struct ProtonHatchet;

impl Parser for ProtonHatchet {
    fn format(&self) -> Format {
        Format::ProtonHatchet
    }
    fn sniff(&self, text: &str) -> bool {
        // A JSON array of objects (`[{`), not a log line (`[aiter] ...`), before any scan.
        let Some(rest) = text.trim_start().strip_prefix('[') else {
            return false;
        };
        if !rest.trim_start().starts_with('{') {
            return false;
        }
        use crate::formats::support::text::finder;
        let b = text.as_bytes();
        finder!("\"frame\"").find(b).is_some()
            && finder!("\"ROOT\"").find(b).is_some()
            && finder!("\"children\"").find(b).is_some()
    }
    fn evidence(&self, text: &str) -> Evidence {
        super::signature_if(self.sniff(text))
    }
    fn parse(&self, text: &str) -> Result<Parsed, ParseError> {
        let v: Value = serde_json::from_str(text)
            .map_err(|e| ParseError::at(e.line(), format!("not JSON: {e}")))?;
        let parts = v.as_array().ok_or_else(|| {
            ParseError::at(
                1,
                "a proton profile is a JSON array (the tree, then the devices)",
            )
        })?;
        let tree = parts
            .first()
            .filter(|t| t.get("frame").is_some())
            .ok_or_else(|| {
                ParseError::at(1, "the first element holds no `frame`: not a proton tree")
            })?;
        let mut parsed = Parsed::default();
        let mut walked = Walked::default();
        walk(text, tree, &mut Vec::new(), &mut parsed, &mut walked)?;
        let kernels = walked.kernels;
        if kernels == 0 {
            return Err(ParseError::at(
                1,
                "a proton profile with no kernel: no node under ROOT holds a metric",
            ));
        }
        if let Some(arch) = parts.get(1).and_then(one_arch) {
            parsed.provenance.arch = Some(arch);
        }
        Ok(parsed)
    }
}

/// The one device arch a profile names, as perfdb writes archs.
fn one_arch(devices: &Value) -> Option<String> {
    let mut archs = std::collections::BTreeSet::new();
    for (backend, devs) in devices.as_object()? {
        for d in devs.as_object()?.values() {
            let a = d.get("arch")?.as_str()?.to_string();
            archs.insert(
                if backend == "CUDA" && a.chars().all(|c| c.is_ascii_digit()) {
                    format!("sm_{a}")
                } else {
                    a
                },
            );
        }
    }
    (archs.len() == 1).then(|| archs.into_iter().next().expect("one"))
}

/// What the walk has seen: kernels stored, and how often each frame name was met (its
/// next occurrence's line is the next one in the text).
#[derive(Default)]
struct Walked {
    kernels: usize,
    seen: std::collections::HashMap<String, usize>,
}

/// Whether a node's metric names the device (`device_id`, older `DeviceId`), not a
/// counter.
fn names_device(metric: &str) -> bool {
    let m: String = metric
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .to_ascii_lowercase();
    m == "deviceid" || m == "devicetype"
}

fn walk(
    text: &str,
    node: &Value,
    scopes: &mut Vec<String>,
    parsed: &mut Parsed,
    walked: &mut Walked,
) -> Result<(), ParseError> {
    let name = node
        .get("frame")
        .and_then(|f| f.get("name"))
        .and_then(Value::as_str)
        .ok_or_else(|| ParseError::at(1, "a node with no `frame.name`"))?;
    let root = scopes.is_empty() && name == "ROOT";
    let nth = walked.seen.entry(name.to_string()).or_insert(0);
    let lines = lines_of(text, &format!("\"{name}\""));
    let line = lines.get(*nth).or(lines.last()).copied().unwrap_or(1);
    *nth += 1;
    let metrics = node.get("metrics").and_then(Value::as_object);
    let own: Vec<(&String, &Value)> = metrics
        .into_iter()
        .flatten()
        .filter(|(k, _)| !names_device(k))
        .collect();
    if !root && !own.is_empty() {
        walked.kernels += 1;
        let k = Kernel {
            table: "proton",
            name,
            key: if scopes.is_empty() {
                Vec::new()
            } else {
                vec![("scope".into(), scopes.join("/"))]
            },
            line,
            settings: false,
        };
        for (metric, value) in own {
            let cell = match value {
                Value::Number(n) => n.to_string(),
                Value::Null => String::new(),
                Value::String(s) => s.clone(),
                other => {
                    return Err(ParseError::at(
                        line,
                        format!("metric {metric} of {name} is {other}, not a number"),
                    ))
                }
            };
            let (counter, unit) = match metric.to_ascii_lowercase().as_str() {
                "time (ns)" => ("time", "ns"),
                "bytes" => ("bytes", "byte"),
                "count" => ("count", ""),
                _ => (metric.as_str(), ""),
            };
            k.put(parsed, counter, unit, &cell)?;
        }
    }
    if let Some(children) = node.get("children").and_then(Value::as_array) {
        if !root {
            scopes.push(name.to_string());
        }
        for c in children {
            walk(text, c, scopes, parsed, walked)?;
        }
        if !root {
            scopes.pop();
        }
    }
    Ok(())
}
