//! Step 3b: each row held against its device's peak (`ingest::devices`). A row gets
//! the ceiling its percent of peak is read against; a row with a trial the device
//! cannot produce (above the peak by more than boost clocks allow) is `invalid`: never
//! an improvement, never a regression.

use super::{Row, SideInfo, Verdict};
use perfdb_ingest::devices::check::{implied_tflops, HeldRow};
use perfdb_ingest::devices::{Device, Table};

/// The one device a side's runs name in `table`, if they name one.
fn device<'t>(side: &SideInfo, table: &'t Table) -> Option<&'t Device> {
    match side.devices.as_slice() {
        [one] => table.get(one),
        _ => None,
    }
}

/// Why a side's trials are impossible on its device, if one is: the rule ingest warns
/// by (`devices::check::Limit`), for throughputs, bandwidths and GEMM latencies alike.
fn impossible(row: &Row, d: Option<&Device>, values: &[Option<f64>], side: &str) -> Option<String> {
    let d = d?;
    let limit = HeldRow::new(&row.metric, &row.unit, &row.key)?.limit(d)?;
    let v = values
        .iter()
        .flatten()
        .copied()
        .find(|v| limit.impossible(*v))?;
    let p = limit.ceiling.peak(d)?;
    let tail = format!(
        "the {}'s {} peak ({:.1} {unit}; at most {:.1} with boost clocks): impossible on this device",
        p.device_name,
        p.quantity,
        p.value,
        p.limit,
        unit = p.unit,
    );
    Some(match limit.work {
        None => format!("a {side} trial ({v:.1} {}) is above {tail}", p.unit),
        Some(flops) => format!(
            "a {side} trial ({v:.1} us for 2·M·N·K = {flops:.3e} FLOPs) implies {:.1} {}, above {tail}",
            implied_tflops(flops, v),
            p.unit
        ),
    })
}

/// Give each row its peak, and make invalid each row a side's device cannot produce.
pub(super) fn hold(rows: &mut [Row], base: &SideInfo, head: &SideInfo, table: &Table) {
    let (bd, hd) = (device(base, table), device(head, table));
    if bd.is_none() && hd.is_none() {
        return;
    }
    for row in rows.iter_mut() {
        row.peak = hd
            .or(bd)
            .and_then(|d| d.peak_for(&row.metric, &row.unit, &row.key));
        let why = impossible(row, bd, &row.base.values, "base")
            .or_else(|| impossible(row, hd, &row.head.values, "head"));
        if let Some(reason) = why {
            if row.verdict != Verdict::Invalid {
                row.verdict = Verdict::Invalid;
                row.p = None;
                row.p_beyond = None;
                row.reason = reason;
            }
        }
    }
}

/// Each row with a peak, also against what `perfdb devices measure` reached on its device
/// for the same quantity (one read, only when some row has a peak).
pub(super) fn hold_to_measured(
    db: &crate::db::Db,
    rows: &mut [Row],
) -> Result<(), crate::db::DbError> {
    if !rows.iter().any(|r| r.peak.is_some()) {
        return Ok(());
    }
    let measured = crate::db::roofs::measured(db)?;
    for row in rows.iter_mut() {
        let Some(p) = &row.peak else { continue };
        row.measured_peak = measured
            .iter()
            .find(|m| m.device == p.device && m.quantity == p.quantity && m.unit == p.unit)
            .map(|m| m.value);
    }
    Ok(())
}
