//! The fields TokenSpeed's kernel probe prints, shared by its stdout lines (`ts-probe`)
//! and its export (`ts-export`): which field is which metric, the numerics flag, units.

use crate::model::{metric, Direction, Keys, Numerics, Raw};

/// Table name when no `TS_KERNEL_INFO: ... op=` line precedes the records.
pub const DEFAULT_TABLE: &str = "ts_kernel";

/// (field, metric, unit, direction) of the numeric fields a METRIC line carries.
pub(crate) fn field_metric(field: &str) -> Option<(&'static str, &'static str, Direction)> {
    let lat = |m| Some((m, "us", Direction::Lower));
    match field {
        "median_latency_us" => lat(metric::LATENCY),
        "p90_latency_us" => lat("latency_p90"),
        "p99_latency_us" => lat("latency_p99"),
        "min_latency_us" => lat("latency_min"),
        "max_latency_us" => lat("latency_max"),
        "mean_latency_us" => lat("latency_mean"),
        "tflops" => Some((metric::THROUGHPUT, "TFLOPS", Direction::Higher)),
        "bandwidth_gb_s" => Some((metric::BANDWIDTH, "GB/s", Direction::Higher)),
        "max_abs_diff" => Some(("error_max_abs", "", Direction::None)),
        "max_rel_diff" => Some(("error_max_rel", "", Direction::None)),
        _ => None,
    }
}

pub(crate) fn numerics_of(v: &str) -> Result<Numerics, String> {
    match v {
        "True" | "true" => Ok(Numerics::Pass),
        "False" | "false" => Ok(Numerics::Fail),
        "None" | "null" => Ok(Numerics::NotChecked),
        other => Err(format!(
            "numerics_passed must be True, False or None, got '{other}'"
        )),
    }
}

/// A value in a unit the probe prints (`GB/s`) moved to the canonical unit of its
/// metric; the raw text gets the printed unit when the value was converted.
pub(crate) fn canonical(
    keys: &mut Keys,
    unit: &'static str,
    value: Option<f64>,
    printed: &str,
) -> (&'static str, Option<f64>, Raw) {
    match crate::formats::support::units::unit_of_any_case(unit) {
        Some(u) if u.factor != 1.0 && value.is_some() => (
            u.canonical,
            value.map(|v| crate::formats::support::units::to_canonical(v, u.factor)),
            keys.raw_joined(printed, unit),
        ),
        Some(u) => (u.canonical, value, keys.raw(printed)),
        None => (unit, value, keys.raw(printed)),
    }
}
