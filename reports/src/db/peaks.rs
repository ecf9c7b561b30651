//! The device table and percent of peak as SQL (`perfdb sql`): a `devices` table (one
//! row per device and quantity, with its source) and a `percent_of_peak` view (every
//! TFLOPS and TB/s value of a run on a known device whose data type its key says, told
//! by the unit whatever the metric is named, derived values aside).
//! Runs are matched to devices, and keys to data types, by the same code ingest and
//! compare use: the matches are computed here and handed to DuckDB as tables.

use super::{Db, DbError, RUN_DEVICE_SQL};
use perfdb_ingest::devices::{Device, Dtype, Quantity, Table};

/// The device a run names in `table`, from the three columns of [`RUN_DEVICE_SQL`]
/// starting at column `at` of `row`.
pub fn run_device<'t>(
    table: &'t Table,
    row: &duckdb::Row,
    at: usize,
) -> duckdb::Result<Option<&'t Device>> {
    let (tag, machine, arch): (String, String, String) =
        (row.get(at)?, row.get(at + 1)?, row.get(at + 2)?);
    Ok(table.resolve(Some(&tag), Some(&machine), Some(&arch)))
}

/// The one device every run names, if they all name the same one.
pub fn one_device<'t>(runs: impl IntoIterator<Item = Option<&'t Device>>) -> Option<&'t Device> {
    let mut runs = runs.into_iter();
    let first = runs.next()??;
    runs.all(|d| d.is_some_and(|d| d.id == first.id))
        .then_some(first)
}

impl Db {
    /// Create the `devices` table; with `percent`, also `percent_of_peak` (it reads every
    /// run and each distinct TFLOPS key once).
    pub fn peak_views(&self, percent: bool) -> Result<(), DbError> {
        let t = &*self.devices;
        self.conn.execute_batch(
            "CREATE OR REPLACE TABLE devices(device VARCHAR, name VARCHAR, vendor VARCHAR, \
             arch VARCHAR, quantity VARCHAR, peak DOUBLE, unit VARCHAR, impossible_above DOUBLE, \
             source VARCHAR)",
        )?;
        {
            let mut app = self.conn.appender("devices")?;
            for d in &t.devices {
                for (q, _) in d.figures() {
                    let p = d.peak(q).expect("a figure has a peak");
                    app.append_row(duckdb::params![
                        d.id, d.name, d.vendor, d.arch, p.quantity, p.value, p.unit, p.limit,
                        d.source
                    ])?;
                }
            }
        }
        if !percent {
            return Ok(());
        }
        self.conn.execute_batch(
            "CREATE OR REPLACE TABLE run_devices(run_id VARCHAR, device VARCHAR); \
             CREATE OR REPLACE TABLE key_dtypes(\"key\" VARCHAR, dtype VARCHAR);",
        )?;
        let runs: Vec<(String, Option<&Device>)> = {
            let sql = format!("SELECT run_id, {RUN_DEVICE_SQL} FROM runs r");
            let mut stmt = self.conn.prepare(&sql)?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, run_device(&self.devices, r, 1)?)))?;
            rows.collect::<Result<_, _>>()?
        };
        {
            let mut app = self.conn.appender("run_devices")?;
            for (run, d) in &runs {
                if let Some(d) = d {
                    app.append_row([run.as_str(), d.id.as_str()])?;
                }
            }
        }
        let keys: Vec<String> = {
            let mut stmt = self.conn.prepare(
                "SELECT DISTINCT \"key\" FROM measurements WHERE unit = 'TFLOPS' AND direction <> 'none'",
            )?;
            let rows = stmt.query_map([], |r| r.get(0))?;
            rows.collect::<Result<_, _>>()?
        };
        {
            let mut app = self.conn.appender("key_dtypes")?;
            for k in &keys {
                let pairs = perfdb_ingest::model::key_from_json(k);
                if let Some(Quantity::Compute(d)) = Quantity::of("throughput", "TFLOPS", &pairs) {
                    app.append_row([k.as_str(), Dtype::name(d)])?;
                }
            }
        }
        self.conn.execute_batch(
            "CREATE OR REPLACE VIEW percent_of_peak AS \
             SELECT m.run_id, m.label, m.table_name, m.variant, m.\"key\", m.metric, m.value, m.unit, \
                    d.device, d.quantity, d.peak, 100 * m.value / d.peak AS percent_of_peak, \
                    m.value > d.impossible_above AS impossible, m.line \
             FROM measurements m JOIN run_devices rd USING (run_id) \
             LEFT JOIN key_dtypes k ON k.\"key\" = m.\"key\" \
             JOIN devices d ON d.device = rd.device AND d.quantity = CASE \
                  WHEN m.unit = 'TB/s' THEN 'bandwidth' \
                  WHEN m.unit = 'TFLOPS' THEN k.dtype END \
             WHERE m.value IS NOT NULL AND m.direction <> 'none'",
        )?;
        Ok(())
    }
}
