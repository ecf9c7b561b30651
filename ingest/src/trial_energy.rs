//! A trial's GPU energy, measured by perfdb around the benchmark's process (NVML's
//! total-energy counter, read before and after) and stored beside what the benchmark
//! printed: one row a GPU, table `gpu`, variant `trial`, key `gpu=<index>`, metric
//! `energy` in J (lower is better), so `compare` and `ab` judge it like any time.
//!
//! The benchmark's own rows come from its output; this row comes from no line of it
//! (line 0) and its note says who measured it.

use crate::model::{key_of, Direction, Measurement, Numerics};
use crate::warehouse::Prepared;
use std::sync::Arc;

/// The table of the trial energy rows.
pub const TABLE: &str = "gpu";
/// Their variant: the whole trial's process, not one kernel.
pub const VARIANT: &str = "trial";
/// Their metric, in [`UNIT`].
pub const METRIC: &str = "energy";
pub const UNIT: &str = "J";
/// The note every energy row carries.
pub const NOTE: &str = "measured by perfdb: the GPU's energy counter over the trial's process";

/// Whether a row is a trial's energy row.
pub fn is_row(table: &str, variant: &str, metric: &str) -> bool {
    table == TABLE && variant == VARIANT && metric == METRIC
}

/// Adds the energy GPU `gpu` (its index, as the benchmark was given it) used during the
/// trial, in joules, to the run `p` (not to its further repetitions: the counter spans
/// the whole process).
pub fn add(p: &mut Prepared, gpu: &str, joules: f64) {
    let (key_json, key_order) = key_of(&[("gpu".to_string(), gpu.to_string())]);
    let keys = Arc::make_mut(&mut p.keys);
    let key = keys.push(&key_json);
    let raw = keys.raw_joined(&format!("{joules:.3}"), UNIT);
    p.measurements.push(Measurement {
        table: TABLE.into(),
        variant: VARIANT.into(),
        key,
        key_order,
        metric: METRIC.into(),
        unit: UNIT.into(),
        direction: Direction::Lower,
        value: Some(joules),
        raw,
        column: "nvml_total_energy".into(),
        numerics: Numerics::NotChecked,
        line: 0,
        note: Some(NOTE.into()),
    });
    match p.tables.iter_mut().find(|(t, _)| t == TABLE) {
        Some((_, n)) => *n += 1,
        None => p.tables.push((TABLE.to_string(), 1)),
    }
}
