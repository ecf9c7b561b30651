//! A table row as measurements: its axis cells the key, each measured cell a value.

use crate::formats::nvbench_markdown::cells::read_cell;
use crate::formats::nvbench_markdown::cells::{axis_value, same_axis_value};
use crate::formats::nvbench_markdown::columns::Column;
use crate::formats::nvbench_markdown::LogState;
use crate::formats::parser::{Context, ParseError};
use crate::formats::support::emit::Row;
use crate::formats::support::emit::Spec;
use crate::model::Parsed;
use crate::model::Warning;
/// One table row: its key, its values, and the throttle count of its state.
pub(super) fn row(
    parsed: &mut Parsed,
    cx: &Context,
    (bench, device, several_devices): (&str, Option<&str>, bool),
    cols: &[Column],
    cells: &[&str],
    log: &mut [LogState],
    no: usize,
) -> Result<(), ParseError> {
    let mut key: Vec<(String, String)> = Vec::new();
    let mut printed_axes: Vec<(&str, &str)> = Vec::new();
    let mut variant = crate::model::DEFAULT_VARIANT.to_string();
    for (col, &cell) in cols.iter().zip(cells) {
        match col {
            Column::Axis(name) => {
                printed_axes.push((name, cell));
                let v = axis_value(cell).to_string();
                if cx.variant_axis == Some(name.as_str()) {
                    variant = v;
                } else {
                    key.push((name.clone(), v));
                }
            }
            Column::SkipReason if !cell.is_empty() => {
                parsed.warnings.push(Warning {
                    line: no,
                    reason: format!("{bench}: skipped by nvbench ({cell}): no values"),
                });
                return Ok(());
            }
            _ => {}
        }
    }
    if let (true, Some(d)) = (several_devices, device) {
        key.insert(0, ("device".to_string(), d.to_string()));
    }
    let r = Row::new(&mut parsed.keys, bench, &variant, &key, no);
    for (col, &cell) in cols.iter().zip(cells) {
        let Column::Value(spec, how) = col else {
            continue;
        };
        if cell.is_empty() {
            continue;
        }
        let value = read_cell(cell, *how).ok_or_else(|| {
            ParseError::at(
                no,
                format!(
                    "{bench}: {} is '{cell}', not a value nvbench prints",
                    spec.column
                ),
            )
        })?;
        parsed
            .measurements
            .push(r.put(&mut parsed.keys, spec, value, cell));
    }
    // The log's throttle warnings of this state, matched by benchmark and axis values.
    let state = log.iter_mut().find(|s| {
        s.bench == bench
            && s.axes.len() == printed_axes.len()
            && s.axes.iter().all(|(k, v)| {
                printed_axes
                    .iter()
                    .any(|(n, c)| n == k && same_axis_value(c, v))
            })
            && (!several_devices || s.device.is_some())
    });
    if let Some(s) = state {
        let n = std::mem::take(&mut s.throttled);
        if n > 0 {
            let note = match &s.lowest {
                Some((_, clock)) => format!("{n} throttle warnings, lowest ({clock})"),
                None => format!("{n} throttle warnings"),
            };
            let spec = Spec::derived("throttled", "", "Log", None);
            let m = r.put(&mut parsed.keys, &spec, Some(n as f64), &note);
            parsed.measurements.push(m);
        }
    }
    Ok(())
}
