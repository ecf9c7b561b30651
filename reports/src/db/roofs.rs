//! The roofs `perfdb devices measure` stored: what each device really reached (the
//! newest measurement of each), read for percent of peak, `perfdb devices` and the
//! roofline.

use super::{list_f64, run_device, Db, DbError, RUN_DEVICE_SQL};
use perfdb_ingest::devices;
use serde::Serialize;

/// The label `perfdb devices measure` stores its roofs under.
pub const LABEL: &str = "roofs";

/// One roof `perfdb devices measure` stored: the latest measurement of each device.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Measured {
    pub device: String,
    pub device_name: String,
    /// `bandwidth`, or a data type (`bf16`).
    pub quantity: String,
    /// The median of its timed repeats, in `unit` (TB/s or TFLOPS).
    pub value: f64,
    pub unit: String,
    /// The datasheet's figure for the same quantity, when the table has one.
    pub datasheet: Option<f64>,
    pub run_id: String,
    /// When it was stored (µs since the epoch).
    pub measured_at_us: i64,
}

impl Measured {
    /// `NVIDIA H200 SXM bf16: 712.4 TFLOPS measured, 72% of the datasheet's 989.5`.
    pub fn text(&self) -> String {
        let of = self
            .datasheet
            .map(|d| {
                format!(
                    ", {:.0}% of the datasheet's {}",
                    100.0 * self.value / d,
                    crate::fmt::num(d)
                )
            })
            .unwrap_or_default();
        format!(
            "{} {}: {} {} measured{of}",
            self.device_name,
            self.quantity,
            crate::fmt::num(self.value),
            self.unit
        )
    }
}

/// The roofs measured on each device (its latest `devices measure`), by device: each
/// the median of every repeat of that measurement. The repeats are stored as runs of
/// their own (`devices measure#2`...), one output: they are grouped by the output they
/// came from (its SHA-256) and their first run names the measurement.
pub fn measured(db: &Db) -> Result<Vec<Measured>, DbError> {
    let sql = format!(
        "SELECT min(r.run_id), max(epoch_us(r.ingested_at)), {RUN_DEVICE_SQL}, m.unit, m.key, list(m.value) \
         FROM measurements m JOIN runs r ON m.run_id = r.run_id \
         WHERE m.label = '{LABEL}' AND m.table_name = 'roofs' AND m.unit IN ('TFLOPS', 'TB/s') \
         AND m.value IS NOT NULL \
         GROUP BY r.source_sha256, r.tags, r.arch, m.unit, m.key ORDER BY 2 DESC, 1"
    );
    let mut stmt = db.conn.prepare(&sql).map_err(DbError::Query)?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?,
                run_device(&db.devices, r, 2)?,
                r.get::<_, String>(5)?,
                r.get::<_, String>(6)?,
                list_f64(r.get(7)?),
            ))
        })
        .map_err(DbError::Query)?;
    let mut out: Vec<Measured> = Vec::new();
    let mut latest: std::collections::HashMap<String, String> = Default::default();
    for row in rows {
        let (run, at, device, unit, key, values) = row.map_err(DbError::Query)?;
        let Some(d) = device else { continue };
        // Newest run first: a device's roofs are those of its newest run.
        if latest.entry(d.id.clone()).or_insert_with(|| run.clone()) != &run {
            continue;
        }
        let quantity = if unit == "TB/s" {
            devices::Quantity::Bandwidth
        } else {
            match devices::dtype::of_key(&perfdb_ingest::model::key_from_json(&key)) {
                Some(t) => devices::Quantity::Compute(t),
                None => continue,
            }
        };
        let mut v = values;
        if v.is_empty() {
            continue;
        }
        v.sort_by(f64::total_cmp);
        out.push(Measured {
            device: d.id.clone(),
            device_name: d.name.clone(),
            quantity: quantity.name().to_string(),
            value: crate::stats::median(&v),
            unit,
            datasheet: d.figure(quantity),
            run_id: run,
            measured_at_us: at,
        });
    }
    Ok(out)
}
