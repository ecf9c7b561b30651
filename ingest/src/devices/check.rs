//! Numbers a device cannot produce, found as a run is read: a throughput or bandwidth
//! above the device's peak (plus [`super::MARGIN`]; for a throughput of no known data
//! type, above its fastest type's), and a GEMM latency too short for its work (2·M·N·K
//! FLOPs, a lower bound for batched and MoE GEMMs) at that peak.

use super::{Device, Peak};
use crate::model::{key_from_json, metric, Keys, Measurement, Warning};
use std::collections::HashMap;

/// One value the device could not have produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Impossible {
    pub line: usize,
    pub reason: String,
}

impl From<Impossible> for Warning {
    fn from(i: Impossible) -> Warning {
        Warning {
            line: i.line,
            reason: i.reason,
        }
    }
}

/// `v` printed with the precision a peak is given in.
fn num(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

fn above(p: &Peak, what: &str) -> String {
    let of = if p.quantity == "bandwidth" {
        "memory bandwidth".to_string()
    } else {
        format!("dense {} peak", p.quantity)
    };
    format!(
        "{what} is above what the {} can do: its {of} is {} {unit}, at most {} {unit} with \
         boost clocks: not a number this device can produce",
        p.device_name,
        num(p.value),
        num(p.limit),
        unit = p.unit,
    )
}

/// The work of a GEMM row, 2·M·N·K FLOPs, when its key has integer M, N and K.
pub fn gemm_flops(key: &[(String, String)]) -> Option<f64> {
    let dim = |n: &str| {
        key.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(n))
            .and_then(|(_, v)| v.trim().parse::<u64>().ok())
    };
    Some(2.0 * dim("M")? as f64 * dim("N")? as f64 * dim("K")? as f64)
}

/// What a run's values share with the other values of their key: its cells, its data
/// type, its GEMM work. Decoded once a key.
struct KeyFacts {
    dtype: Option<super::Dtype>,
    flops: Option<f64>,
}

/// Every value of `measurements` (their keys in `keys`) that `device` cannot produce,
/// with its line.
pub fn impossible(measurements: &[Measurement], keys: &Keys, device: &Device) -> Vec<Impossible> {
    let mut out = Vec::new();
    let mut facts: HashMap<&str, KeyFacts> = HashMap::new();
    for m in measurements {
        let Some(v) = m.value else { continue };
        let text = keys.get(m.key);
        let f = facts.entry(text).or_insert_with(|| {
            let pairs = key_from_json(text);
            KeyFacts {
                dtype: super::dtype::of_key(&pairs),
                flops: gemm_flops(&pairs),
            }
        });
        let mut report = |c: super::Ceiling, what: String| {
            if let Some(p) = c.peak(device) {
                out.push(Impossible {
                    line: m.line as usize,
                    reason: above(&p, &what),
                });
            }
        };
        if let Some(c) = device.ceiling_of(&m.metric, &m.unit, f.dtype) {
            if c.impossible(v) {
                report(
                    c,
                    format!("{} {} {}", m.column.as_str(), num(v), c.quantity.unit()),
                );
            }
        }
        if m.metric.as_str() == metric::LATENCY && m.unit.as_str() == "us" && v > 0.0 {
            let ceiling = device.ceiling_of(metric::THROUGHPUT, "TFLOPS", f.dtype);
            if let (Some(flops), Some(c)) = (f.flops, ceiling) {
                let implied = flops / (v * 1e-6) / 1e12;
                if c.impossible(implied) {
                    report(
                        c,
                        format!(
                            "{} {} us for 2·M·N·K = {flops:.3e} FLOPs implies {} TFLOPS, which",
                            m.column.as_str(),
                            num(v),
                            num(implied)
                        ),
                    );
                }
            }
        }
    }
    out.sort_by_key(|i| i.line);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemm_work_needs_all_three_dimensions() {
        let k = |p: &[(&str, &str)]| -> Vec<(String, String)> {
            p.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        assert_eq!(
            gemm_flops(&k(&[("M", "8192"), ("N", "8192"), ("K", "8192")])),
            Some(2.0 * 8192f64.powi(3))
        );
        assert_eq!(
            gemm_flops(&k(&[("m", "2"), ("n", "3"), ("k", "4")])),
            Some(48.0)
        );
        assert_eq!(gemm_flops(&k(&[("M", "8192"), ("N", "8192")])), None);
        assert_eq!(gemm_flops(&k(&[("M", "x"), ("N", "1"), ("K", "1")])), None);
    }
}
