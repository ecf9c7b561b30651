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

/// What a row's identity says about the work behind its values: its data type and, for
/// a GEMM, its work. Decoded once a key.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct KeyFacts {
    pub dtype: Option<super::Dtype>,
    pub flops: Option<f64>,
}

impl KeyFacts {
    pub fn of(pairs: &[(String, String)]) -> KeyFacts {
        KeyFacts {
            dtype: super::dtype::of_key(pairs),
            flops: gemm_flops(pairs),
        }
    }
}

/// The throughput in TFLOPS that `flops` of work done in `us` microseconds stands for.
pub fn implied_tflops(flops: f64, us: f64) -> f64 {
    flops / (us * 1e-6) / 1e12
}

/// The one rule every step holds a value to (ingest warns, compare makes the row
/// `invalid`, `detect` does not read it): a throughput or bandwidth above its ceiling,
/// or a GEMM latency shorter than its work takes at that ceiling.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limit {
    pub ceiling: super::Ceiling,
    /// For a latency, the work it is held against: the time is impossible when the
    /// throughput it implies is.
    pub work: Option<f64>,
}

impl Limit {
    /// The limit of a value of this metric and canonical unit, for a row of these
    /// facts, on `device`; `None` when nothing holds it (no peak for its quantity, a
    /// latency of no known work).
    pub fn of(device: &Device, metric: &str, unit: &str, facts: KeyFacts) -> Option<Limit> {
        if let Some(ceiling) = device.ceiling_of(metric, unit, facts.dtype) {
            return Some(Limit {
                ceiling,
                work: None,
            });
        }
        if metric == metric::LATENCY && unit == "us" {
            let work = facts.flops?;
            let ceiling = device.ceiling_of(metric::THROUGHPUT, "TFLOPS", facts.dtype)?;
            return Some(Limit {
                ceiling,
                work: Some(work),
            });
        }
        None
    }
    /// Can a value of this metric and unit be held to a device at all (so a step that
    /// finds none may skip the work of decoding its key)?
    pub fn may_hold(metric: &str, unit: &str) -> bool {
        super::holds_a_peak(metric, unit) || (metric == metric::LATENCY && unit == "us")
    }
    pub fn impossible(&self, v: f64) -> bool {
        match self.work {
            None => self.ceiling.impossible(v),
            // A time of zero or less is no time at all: a timer that never ran.
            Some(flops) => v <= 0.0 || self.ceiling.impossible(implied_tflops(flops, v)),
        }
    }
    /// Why `v` (printed by `column`) is impossible on `device`, or `None` when it is not.
    pub fn why(&self, device: &Device, column: &str, v: f64) -> Option<String> {
        if !self.impossible(v) {
            return None;
        }
        let p = self.ceiling.peak(device)?;
        let what = match self.work {
            None => format!("{column} {} {}", num(v), self.ceiling.quantity.unit()),
            Some(flops) => format!(
                "{column} {} us for 2·M·N·K = {flops:.3e} FLOPs implies {} TFLOPS, which",
                num(v),
                num(implied_tflops(flops, v))
            ),
        };
        Some(above(&p, &what))
    }
}

/// A row (its metric, unit and key) ready to be held to any device: its key decoded
/// once, and only when a value of its metric and unit can be held at all. What compare,
/// `detect`, the history and the overview read each value by.
#[derive(Debug, Clone, Copy)]
pub struct HeldRow<'a> {
    metric: &'a str,
    unit: &'a str,
    facts: KeyFacts,
}

impl<'a> HeldRow<'a> {
    /// `None` when nothing holds a value of this metric and unit.
    pub fn new(metric: &'a str, unit: &'a str, key: &[(String, String)]) -> Option<Self> {
        Limit::may_hold(metric, unit).then(|| HeldRow {
            metric,
            unit,
            facts: KeyFacts::of(key),
        })
    }
    /// [`HeldRow::new`] of a key as the warehouse stores it (JSON).
    pub fn of_json(metric: &'a str, unit: &'a str, key: &str) -> Option<Self> {
        Limit::may_hold(metric, unit).then(|| HeldRow {
            metric,
            unit,
            facts: KeyFacts::of(&key_from_json(key)),
        })
    }
    pub fn limit(&self, device: &Device) -> Option<Limit> {
        Limit::of(device, self.metric, self.unit, self.facts)
    }
    /// Whether `v` is a value `device` (when known) could have produced.
    pub fn possible(&self, device: Option<&Device>, v: f64) -> bool {
        device
            .and_then(|d| self.limit(d))
            .is_none_or(|l| !l.impossible(v))
    }
}

/// Every value of `measurements` (their keys in `keys`) that `device` cannot produce,
/// with its line.
pub fn impossible(measurements: &[Measurement], keys: &Keys, device: &Device) -> Vec<Impossible> {
    let mut out = Vec::new();
    let mut facts: HashMap<&str, KeyFacts> = HashMap::new();
    for m in measurements {
        let Some(v) = m.value else { continue };
        if !Limit::may_hold(&m.metric, &m.unit) {
            continue;
        }
        let text = keys.get(m.key);
        let f = *facts
            .entry(text)
            .or_insert_with(|| KeyFacts::of(&key_from_json(text)));
        let Some(limit) = Limit::of(device, &m.metric, &m.unit, f) else {
            continue;
        };
        if let Some(reason) = limit.why(device, m.column.as_str(), v) {
            out.push(Impossible {
                line: m.line as usize,
                reason,
            });
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
