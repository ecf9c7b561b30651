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

use crate::hash::Fx;
use crate::warehouse::schema::{measurements as m, summaries::*};
use arrow::array::{
    Array, ArrayRef, Float64Array, Float64Builder, Int64Builder, RecordBatch, StringArray,
    UInt32Array,
};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use std::collections::HashMap;
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

/// Summaries of stored measurements (compaction rebuilds them from the merged files; a
/// run's values may span several of the reader's batches, so they are summarised as one).
pub fn from_batches(batches: &[RecordBatch]) -> RecordBatch {
    match batches {
        [] => RecordBatch::new_empty(SUMMARIES_SCHEMA.clone()),
        [one] => from_batch(one),
        many => {
            let schema = Arc::new(Schema::new(
                USED.iter()
                    .map(|(name, dt)| Field::new(*name, dt.clone(), true))
                    .collect::<Vec<_>>(),
            ));
            let parts: Vec<RecordBatch> = many.iter().map(|b| used(b, &schema)).collect();
            let all = arrow::compute::concat_batches(&schema, &parts)
                .expect("every part has the schema it was built for");
            from_batch(&all)
        }
    }
}

/// The measurement columns a summary reads.
const USED: [(&str, DataType); 9] = [
    (m::TABLE, DataType::Utf8),
    (m::METRIC, DataType::Utf8),
    (m::VARIANT, DataType::Utf8),
    (m::KEY, DataType::Utf8),
    (m::RUN_ID, DataType::Utf8),
    (m::KEY_ORDER, DataType::Utf8),
    (m::UNIT, DataType::Utf8),
    (m::DIRECTION, DataType::Utf8),
    (m::VALUE, DataType::Float64),
];

/// `b`'s columns in `USED`, as `schema` types them; a column a file written before it
/// existed lacks reads as `"[]"` (`key_order`) or empty.
fn used(b: &RecordBatch, schema: &SchemaRef) -> RecordBatch {
    let n = b.num_rows();
    let cols = USED
        .iter()
        .map(|(name, dt)| match b.column_by_name(name) {
            Some(c) => arrow::compute::cast(c, dt).expect("text and numbers cast to themselves"),
            None if *dt == DataType::Utf8 => Arc::new(StringArray::from(vec![
                if *name == m::KEY_ORDER {
                    "[]"
                } else {
                    ""
                };
                n
            ])) as ArrayRef,
            None => arrow::array::new_null_array(dt, n),
        })
        .collect();
    RecordBatch::try_new(schema.clone(), cols).expect("columns built for the schema")
}

/// A text column of `b`, or one of empty texts (`[]` for the key order) where an older
/// file lacks it.
fn text_column(b: &RecordBatch, name: &str) -> StringArray {
    match b
        .column_by_name(name)
        .and_then(|c| c.as_any().downcast_ref::<StringArray>())
    {
        Some(a) => a.clone(),
        None => StringArray::from(vec![
            if name == m::KEY_ORDER { "[]" } else { "" };
            b.num_rows()
        ]),
    }
}

/// The statistics of each (run, series) group, a column each, in the summaries' order.
struct Stats {
    count: Int64Builder,
    median: Float64Builder,
    min: Float64Builder,
    max: Float64Builder,
    log_mean: Float64Builder,
    log_var: Float64Builder,
    scratch: Vec<f64>,
}

impl Stats {
    fn with_capacity(n: usize) -> Stats {
        let [median, min, max, log_mean, log_var] =
            std::array::from_fn(|_| Float64Builder::with_capacity(n));
        Stats {
            count: Int64Builder::with_capacity(n),
            median,
            min,
            max,
            log_mean,
            log_var,
            scratch: Vec::new(),
        }
    }

    /// A group of one value (one trial): itself, its log when positive, no variance.
    fn push_one(&mut self, v: f64) {
        self.count.append_value(1);
        self.median.append_value(v);
        self.min.append_value(v);
        self.max.append_value(v);
        self.log_mean.append_option((v > 0.0).then(|| v.ln()));
        self.log_var.append_null();
    }

    /// One group's values (two or more): their count, median, extremes and the mean and
    /// variance of their logs (only of positive values: a group with a zero or negative
    /// value has none).
    fn push(&mut self, values: impl Iterator<Item = f64>) {
        let v = &mut self.scratch;
        v.clear();
        v.extend(values);
        let k = v.len();
        self.count.append_value(k as i64);
        v.sort_unstable_by(f64::total_cmp);
        self.median.append_value(if k % 2 == 1 {
            v[k / 2]
        } else {
            (v[k / 2 - 1] + v[k / 2]) / 2.0
        });
        self.min.append_value(v[0]);
        self.max.append_value(v[k - 1]);
        if v[0] > 0.0 {
            let mean = v.iter().map(|v| v.ln()).sum::<f64>() / k as f64;
            self.log_mean.append_value(mean);
            self.log_var.append_value(
                v.iter().map(|v| (v.ln() - mean).powi(2)).sum::<f64>() / (k - 1) as f64,
            );
        } else {
            self.log_mean.append_null();
            self.log_var.append_null();
        }
    }

    fn finish(mut self) -> [ArrayRef; 6] {
        [
            Arc::new(self.count.finish()),
            Arc::new(self.median.finish()),
            Arc::new(self.min.finish()),
            Arc::new(self.max.finish()),
            Arc::new(self.log_mean.finish()),
            Arc::new(self.log_var.finish()),
        ]
    }
}

/// Summaries of one measurements batch (as `schema::measurements_batch` builds it or a
/// file holds it). The text columns are taken from the first value of each run and
/// series (arrow's `take`), only the statistics are computed.
pub fn from_batch(b: &RecordBatch) -> RecordBatch {
    let text = |name: &str| text_column(b, name);
    let (table, metric, variant, key, run_id) = (
        text(m::TABLE),
        text(m::METRIC),
        text(m::VARIANT),
        text(m::KEY),
        text(m::RUN_ID),
    );
    let values = b
        .column_by_name(m::VALUE)
        .and_then(|c| c.as_any().downcast_ref::<Float64Array>().cloned())
        .unwrap_or_else(|| Float64Array::from(vec![None::<f64>; b.num_rows()]));
    // A batch holds many runs of few series: group by series with a hash map, order the
    // few series by name and each series' values by run, instead of sorting every value.
    let mut run_rank: HashMap<&str, u32, Fx> = HashMap::default();
    let finite: Vec<usize> = (0..b.num_rows())
        .filter(|&i| values.is_valid(i) && values.value(i).is_finite())
        .collect();
    for &i in &finite {
        run_rank.entry(run_id.value(i)).or_insert(0);
    }
    let mut run_ids: Vec<&str> = run_rank.keys().copied().collect();
    run_ids.sort_unstable();
    for (r, id) in run_ids.iter().enumerate() {
        run_rank.insert(id, r as u32);
    }
    // (table, metric, variant, key) -> the series' position in `series`.
    type SeriesName<'a> = (&'a str, &'a str, &'a str, &'a str);
    let mut index: HashMap<SeriesName, usize, Fx> = HashMap::default();
    let mut series: Vec<Vec<(u32, u32)>> = Vec::new();
    for &i in &finite {
        let next = series.len();
        let s = *index
            .entry((
                table.value(i),
                metric.value(i),
                variant.value(i),
                key.value(i),
            ))
            .or_insert(next);
        if s == next {
            series.push(Vec::new());
        }
        series[s].push((run_rank[run_id.value(i)], i as u32));
    }
    let mut order: Vec<(&SeriesName, &usize)> = index.iter().collect();
    order.sort_unstable();
    let n = (order.len() * run_ids.len()).min(finite.len());
    let mut first = Vec::with_capacity(n);
    let mut stats = Stats::with_capacity(n);
    for (_, &s) in order {
        let list = &mut series[s];
        // Values arrive run by run: usually already in order, and then this is one pass.
        list.sort_by_key(|(run, _)| *run);
        for group in list.chunk_by(|a, b| a.0 == b.0) {
            first.push(group[0].1);
            match group {
                [(_, i)] => stats.push_one(values.value(*i as usize)),
                _ => stats.push(group.iter().map(|(_, i)| values.value(*i as usize))),
            }
        }
    }
    let first = UInt32Array::from(first);
    let take = |a: &StringArray| -> ArrayRef {
        arrow::compute::take(a, &first, None).expect("indices are rows of the batch")
    };
    let cols: Vec<ArrayRef> = vec![
        take(&table),
        take(&metric),
        take(&variant),
        take(&key),
        take(&run_id),
        take(&text(m::KEY_ORDER)),
        take(&text(m::UNIT)),
        take(&text(m::DIRECTION)),
    ]
    .into_iter()
    .chain(stats.finish())
    .collect();
    RecordBatch::try_new(SUMMARIES_SCHEMA.clone(), cols)
        .expect("summaries batch matches SUMMARIES_SCHEMA")
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::Int64Array;

    fn batch(cols: Vec<(&str, ArrayRef)>) -> RecordBatch {
        RecordBatch::try_from_iter(cols).unwrap()
    }
    fn text(v: &[&str]) -> ArrayRef {
        Arc::new(StringArray::from(v.to_vec()))
    }

    #[test]
    fn a_run_split_over_batches_is_summarised_once_and_old_files_read() {
        // Written before key_order existed, and a reader's batch boundary inside run r1.
        let old = batch(vec![
            ("run_id", text(&["r1", "r1"])),
            ("table_name", text(&["t", "t"])),
            ("variant", text(&["v", "v"])),
            ("key", text(&["{\"M\":\"1\"}", "{\"M\":\"1\"}"])),
            ("metric", text(&["latency", "latency"])),
            ("unit", text(&["us", "us"])),
            ("direction", text(&["lower", "lower"])),
            ("value", Arc::new(Float64Array::from(vec![1.0, 3.0]))),
        ]);
        let new = batch(vec![
            ("run_id", text(&["r1", "r2", "r2", "r2"])),
            ("table_name", text(&["t", "t", "t", "t"])),
            ("variant", text(&["v", "v", "v", "v"])),
            (
                "key",
                text(&[
                    "{\"M\":\"1\"}",
                    "{\"M\":\"1\"}",
                    "{\"M\":\"2\"}",
                    "{\"M\":\"2\"}",
                ]),
            ),
            (
                "key_order",
                text(&["[\"M\"]", "[\"M\"]", "[\"M\"]", "[\"M\"]"]),
            ),
            (
                "metric",
                text(&["latency", "latency", "latency", "latency"]),
            ),
            ("unit", text(&["us", "us", "us", "us"])),
            ("direction", text(&["lower", "lower", "lower", "lower"])),
            (
                "value",
                Arc::new(Float64Array::from(vec![
                    Some(2.0),
                    Some(4.0),
                    Some(-1.0),
                    None,
                ])),
            ),
        ]);
        let s = from_batches(&[old, new]);
        assert_eq!(s.schema(), *SUMMARIES_SCHEMA);
        let col = |n: &str| s.column_by_name(n).unwrap().clone();
        let strs = |n: &str| {
            let c = col(n);
            let a = c.as_any().downcast_ref::<StringArray>().unwrap();
            (0..a.len())
                .map(|i| a.value(i).to_string())
                .collect::<Vec<_>>()
        };
        let f64s = |n: &str| {
            let c = col(n);
            let a = c.as_any().downcast_ref::<Float64Array>().unwrap();
            (0..a.len())
                .map(|i| a.is_valid(i).then(|| a.value(i)))
                .collect::<Vec<_>>()
        };
        // Sorted by series, then run: (M=1, r1), (M=1, r2), (M=2, r2).
        assert_eq!(strs("run_id"), ["r1", "r2", "r2"]);
        assert_eq!(strs("key_order"), ["[]", "[\"M\"]", "[\"M\"]"]);
        let n = col("n");
        let n = n.as_any().downcast_ref::<Int64Array>().unwrap();
        assert_eq!(n.values().to_vec(), [3, 1, 1]);
        assert_eq!(f64s("median"), [Some(2.0), Some(4.0), Some(-1.0)]);
        assert_eq!(f64s("min"), [Some(1.0), Some(4.0), Some(-1.0)]);
        assert_eq!(f64s("max"), [Some(3.0), Some(4.0), Some(-1.0)]);
        let lm = f64s("log_mean");
        assert!((lm[0].unwrap() - (6f64).ln() / 3.0).abs() < 1e-12);
        assert_eq!(lm[1], Some(4f64.ln()));
        assert_eq!(lm[2], None, "no log of a negative value");
        let lv = f64s("log_var");
        let logs = [0.0, 2f64.ln(), 3f64.ln()];
        let mean = logs.iter().sum::<f64>() / 3.0;
        let var = logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / 2.0;
        assert!((lv[0].unwrap() - var).abs() < 1e-12);
        assert_eq!((lv[1], lv[2]), (None, None), "one value has no variance");
    }
}
