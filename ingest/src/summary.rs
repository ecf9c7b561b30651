//! Per-run summaries, written with every commit beside the raw measurements.
//!
//! One row per run and series (table, metric, variant, key): how many finite values the
//! run measured for it and their median, min, max, mean and sample variance of the
//! natural log. Charts, history and catalogs read these instead of the raw values; the
//! raw values stay the source of truth for `compare`. A summary file is sorted by
//! (table, metric, variant, key, run), in row groups of `ROW_GROUP` rows, so a reader
//! filtering on one series skips the rest of the file by its statistics.
//!
//! The same numbers can be computed from the raw rows in SQL (`reports::db` does, for
//! labels written before summaries existed); a test holds the two to each other.

use crate::model::Measurement;
use crate::schema::{measurements as m, summaries::*};
use arrow::array::{
    Array, ArrayRef, Float64Array, Float64Builder, Int64Builder, RecordBatch, StringArray,
    StringBuilder,
};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use std::sync::{Arc, LazyLock};

/// Rows per Parquet row group of a summary file: small enough that one series' rows
/// span few groups.
pub const ROW_GROUP: usize = 8192;

pub static SUMMARIES_SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    let s = |n: &str| Field::new(n, DataType::Utf8, false);
    let f = |n: &str, nullable| Field::new(n, DataType::Float64, nullable);
    Arc::new(Schema::new(vec![
        s(TABLE),
        s(METRIC),
        s(VARIANT),
        s(KEY),
        s(RUN_ID),
        s(KEY_ORDER),
        s(UNIT),
        s(DIRECTION),
        Field::new(N, DataType::Int64, false),
        f(MEDIAN, false),
        f(MIN, false),
        f(MAX, false),
        f(LOG_MEAN, true),
        f(LOG_VAR, true),
    ]))
});

/// One raw value, borrowed from a parsed run or a measurements batch.
#[derive(Clone, Copy)]
struct Value<'a> {
    table: &'a str,
    metric: &'a str,
    variant: &'a str,
    key: &'a str,
    run_id: &'a str,
    key_order: &'a str,
    unit: &'a str,
    direction: &'a str,
    value: f64,
}

impl Value<'_> {
    fn series(&self) -> (&str, &str, &str, &str, &str) {
        (self.table, self.metric, self.variant, self.key, self.run_id)
    }
}

/// Summaries of freshly parsed runs: `(run_id, measurements)`.
pub fn from_measurements(rows: &[(&str, &[Measurement])]) -> RecordBatch {
    let mut values = Vec::new();
    for (run_id, ms) in rows {
        for x in *ms {
            if let Some(v) = x.value.filter(|v| v.is_finite()) {
                values.push(Value {
                    table: x.table.as_str(),
                    metric: x.metric.as_str(),
                    variant: x.variant.as_str(),
                    key: &x.key,
                    run_id,
                    key_order: x.key_order.as_str(),
                    unit: x.unit.as_str(),
                    direction: x.direction.as_str(),
                    value: v,
                });
            }
        }
    }
    summarise(values)
}

/// Summaries of stored measurements (compaction rebuilds them from the merged files).
/// Batches lacking a column the summary needs (`key_order` before it existed) read it
/// as empty.
pub fn from_batches(batches: &[RecordBatch]) -> RecordBatch {
    let col = |b: &RecordBatch, name: &str| -> Option<StringArray> {
        b.column_by_name(name)
            .and_then(|c| c.as_any().downcast_ref::<StringArray>().cloned())
    };
    let cols: Vec<_> = batches
        .iter()
        .map(|b| {
            (
                [
                    m::TABLE,
                    m::METRIC,
                    m::VARIANT,
                    m::KEY,
                    m::RUN_ID,
                    m::KEY_ORDER,
                    m::UNIT,
                    m::DIRECTION,
                ]
                .map(|n| col(b, n)),
                b.column_by_name(m::VALUE)
                    .and_then(|c| c.as_any().downcast_ref::<Float64Array>().cloned()),
            )
        })
        .collect();
    let mut values = Vec::new();
    for (strs, value) in &cols {
        let Some(value) = value else { continue };
        let at = |c: usize, i: usize| strs[c].as_ref().map(|a| a.value(i)).unwrap_or("");
        for i in 0..value.len() {
            if value.is_null(i) || !value.value(i).is_finite() {
                continue;
            }
            values.push(Value {
                table: at(0, i),
                metric: at(1, i),
                variant: at(2, i),
                key: at(3, i),
                run_id: at(4, i),
                key_order: at(5, i),
                unit: at(6, i),
                direction: at(7, i),
                value: value.value(i),
            });
        }
    }
    summarise(values)
}

fn summarise(mut values: Vec<Value>) -> RecordBatch {
    values.sort_unstable_by(|a, b| a.series().cmp(&b.series()));
    let n = values.len();
    let (mut table, mut metric, mut variant, mut key, mut run_id) = (
        StringBuilder::with_capacity(n, n * 8),
        StringBuilder::with_capacity(n, n * 8),
        StringBuilder::with_capacity(n, n * 8),
        StringBuilder::with_capacity(n, n * 48),
        StringBuilder::with_capacity(n, n * 16),
    );
    let (mut key_order, mut unit, mut direction) = (
        StringBuilder::with_capacity(n, n * 24),
        StringBuilder::with_capacity(n, n * 4),
        StringBuilder::with_capacity(n, n * 5),
    );
    let mut count = Int64Builder::with_capacity(n);
    let [mut median, mut min, mut max, mut log_mean, mut log_var] =
        std::array::from_fn(|_| Float64Builder::with_capacity(n));
    let mut scratch: Vec<f64> = Vec::new();
    for group in values.chunk_by(|a, b| a.series() == b.series()) {
        let first = group[0];
        table.append_value(first.table);
        metric.append_value(first.metric);
        variant.append_value(first.variant);
        key.append_value(first.key);
        run_id.append_value(first.run_id);
        key_order.append_value(first.key_order);
        unit.append_value(first.unit);
        direction.append_value(first.direction);
        scratch.clear();
        scratch.extend(group.iter().map(|v| v.value));
        scratch.sort_unstable_by(f64::total_cmp);
        let k = scratch.len();
        count.append_value(k as i64);
        median.append_value(if k % 2 == 1 {
            scratch[k / 2]
        } else {
            (scratch[k / 2 - 1] + scratch[k / 2]) / 2.0
        });
        min.append_value(scratch[0]);
        max.append_value(scratch[k - 1]);
        // Logs only of positive values: a series with a zero or negative value has none.
        if scratch[0] > 0.0 {
            let mean = scratch.iter().map(|v| v.ln()).sum::<f64>() / k as f64;
            log_mean.append_value(mean);
            log_var.append_option((k > 1).then(|| {
                scratch.iter().map(|v| (v.ln() - mean).powi(2)).sum::<f64>() / (k - 1) as f64
            }));
        } else {
            log_mean.append_null();
            log_var.append_null();
        }
    }
    let cols: Vec<ArrayRef> = vec![
        Arc::new(table.finish()),
        Arc::new(metric.finish()),
        Arc::new(variant.finish()),
        Arc::new(key.finish()),
        Arc::new(run_id.finish()),
        Arc::new(key_order.finish()),
        Arc::new(unit.finish()),
        Arc::new(direction.finish()),
        Arc::new(count.finish()),
        Arc::new(median.finish()),
        Arc::new(min.finish()),
        Arc::new(max.finish()),
        Arc::new(log_mean.finish()),
        Arc::new(log_var.finish()),
    ];
    RecordBatch::try_new(SUMMARIES_SCHEMA.clone(), cols)
        .expect("summaries batch matches SUMMARIES_SCHEMA")
}
