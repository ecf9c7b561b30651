//! The comparison of values held in memory: each side's rows with their trials, judged
//! by the same steps as [`super::compare`] from step 3 on (matching, deciding,
//! summarising). Replays of recorded trials, simulations of the stopping rule and the
//! experiment's unit tests compare this way, with no warehouse to write.

use super::load::{Loaded, Value};
use super::{build_report, CompareError, MatchedBy, Options, Report, SideInfo};
use perfdb_ingest::model::SeriesKey;
use perfdb_ingest::model::{key_to_json, Direction, Numerics};
use std::collections::BTreeMap;

/// One row as one side measured it: its identity and one value a trial.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryRow {
    pub table: String,
    pub variant: String,
    /// Key columns in source order.
    pub key: Vec<(String, String)>,
    pub metric: String,
    pub unit: String,
    pub direction: Direction,
    pub values: Vec<f64>,
}

impl MemoryRow {
    /// A latency row (`us`, lower is better) of `variant` keyed by `key`.
    pub fn latency(variant: &str, key: &[(&str, &str)], values: Vec<f64>) -> MemoryRow {
        MemoryRow {
            table: "memory".to_string(),
            variant: variant.to_string(),
            key: key
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            metric: "latency".to_string(),
            unit: "us".to_string(),
            direction: Direction::Lower,
            values,
        }
    }
}

fn loaded(rows: &[MemoryRow]) -> Loaded {
    let mut out = Loaded::with_counters(BTreeMap::new());
    for r in rows {
        let mut sorted = r.key.clone();
        sorted.sort();
        let key = key_to_json(&sorted);
        let order: Vec<&str> = r.key.iter().map(|(k, _)| k.as_str()).collect();
        out.orders.insert(
            (r.table.clone(), key.clone()),
            serde_json::to_string(&order).expect("names serialise"),
        );
        let values = r
            .values
            .iter()
            .map(|v| Value {
                value: Some(*v),
                numerics: Numerics::NotChecked,
                gpu: None,
            })
            .collect();
        out.rows.insert(
            SeriesKey {
                table: r.table.clone(),
                variant: r.variant.clone(),
                key,
                metric: r.metric.clone(),
                unit: r.unit.clone(),
            },
            (r.direction, values),
        );
    }
    out
}

fn side(name: &str) -> SideInfo {
    SideInfo {
        selector: name.to_string(),
        matched_by: MatchedBy::Label,
        runs: Vec::new(),
        labels: vec![name.to_string()],
        commits: Vec::new(),
        failed_runs: Vec::new(),
        archs: Vec::new(),
        image_digests: Vec::new(),
        machines: Vec::new(),
        methods: Vec::new(),
        devices: Vec::new(),
        gpu_tags: Vec::new(),
        profiled_runs: 0,
        profiled_run_ids: Vec::new(),
        not_timed: Vec::new(),
        identity_runs: Vec::new(),
    }
}

/// Compare `base` against `head` as `compare` would had each side's trials been read
/// from the warehouse (sides named `base` and `head`).
pub fn compare_values(
    base: &[MemoryRow],
    head: &[MemoryRow],
    opt: &Options,
) -> Result<Report, CompareError> {
    // No side names a device here (its `devices` are empty): the table is never read.
    build_report(
        side("base"),
        side("head"),
        loaded(base),
        loaded(head),
        opt,
        &perfdb_ingest::devices::builtin(),
    )
}
