//! The one Arrow schema of the warehouse: column names as constants, and the conversion
//! of model records into record batches. Everything that reads or writes the warehouse
//! uses these names.
//!
//! The partition column `label` is not stored inside the files: it is the Hive path
//! segment `label=<label>/`, and readers add it back (`hive_partitioning`).

use crate::model::{Format, Keys, Measurement, Run, RunVerdict};
use arrow::array::{
    ArrayRef, Float64Builder, Int32Builder, Int64Builder, RecordBatch, StringBuilder,
    TimestampMicrosecondBuilder,
};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use std::sync::{Arc, LazyLock};

/// Hive partition column of both tables.
pub const LABEL: &str = "label";

pub mod runs {
    pub const RUN_ID: &str = "run_id";
    pub const INGESTED_AT: &str = "ingested_at";
    pub const SOURCE_PATH: &str = "source_path";
    pub const SOURCE_SHA256: &str = "source_sha256";
    pub const FORMAT: &str = "format";
    pub const COMMIT: &str = "commit";
    pub const COMMIT_TIME: &str = "commit_time";
    pub const ARCH: &str = "arch";
    pub const TAGS: &str = "tags";
    pub const TRIAL: &str = "trial";
    pub const VERDICT: &str = "verdict";
    pub const VERDICT_DETAIL: &str = "verdict_detail";
    pub const IMAGE_DIGEST: &str = "image_digest";
    pub const TOKEN: &str = "token";
    pub const N_MEASUREMENTS: &str = "n_measurements";
    pub const N_TABLES: &str = "n_tables";
}

pub mod measurements {
    pub const RUN_ID: &str = "run_id";
    pub const TABLE: &str = "table_name";
    pub const VARIANT: &str = "variant";
    pub const KEY: &str = "key";
    pub const KEY_ORDER: &str = "key_order";
    pub const METRIC: &str = "metric";
    pub const UNIT: &str = "unit";
    pub const DIRECTION: &str = "direction";
    pub const VALUE: &str = "value";
    pub const RAW: &str = "raw";
    pub const COLUMN: &str = "column_name";
    pub const NUMERICS: &str = "numerics";
    pub const LINE: &str = "line";
    pub const NOTE: &str = "note";
}

fn utf8(name: &str, nullable: bool) -> Field {
    Field::new(name, DataType::Utf8, nullable)
}

pub static RUNS_SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    use runs::*;
    Arc::new(Schema::new(vec![
        utf8(RUN_ID, false),
        Field::new(
            INGESTED_AT,
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            false,
        ),
        utf8(SOURCE_PATH, false),
        utf8(SOURCE_SHA256, false),
        utf8(FORMAT, false),
        utf8(COMMIT, true),
        Field::new(
            COMMIT_TIME,
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            true,
        ),
        utf8(ARCH, true),
        utf8(TAGS, false),
        Field::new(TRIAL, DataType::Int32, false),
        utf8(VERDICT, true),
        utf8(VERDICT_DETAIL, true),
        utf8(IMAGE_DIGEST, true),
        utf8(TOKEN, true),
        Field::new(N_MEASUREMENTS, DataType::Int64, false),
        Field::new(N_TABLES, DataType::Int32, false),
    ]))
});

pub static MEASUREMENTS_SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    use measurements::*;
    Arc::new(Schema::new(vec![
        utf8(RUN_ID, false),
        utf8(TABLE, false),
        utf8(VARIANT, false),
        utf8(KEY, false),
        utf8(KEY_ORDER, false),
        utf8(METRIC, false),
        utf8(UNIT, false),
        utf8(DIRECTION, false),
        Field::new(VALUE, DataType::Float64, true),
        utf8(RAW, false),
        utf8(COLUMN, false),
        utf8(NUMERICS, false),
        Field::new(LINE, DataType::Int32, false),
        utf8(NOTE, true),
    ]))
});

/// Tags as canonical JSON text (sorted by key).
pub fn tags_json(tags: &[(String, String)]) -> String {
    let mut sorted = tags.to_vec();
    sorted.sort();
    crate::model::key_to_json(&sorted)
}

pub fn runs_batch(rows: &[&Run]) -> RecordBatch {
    let n = rows.len();
    let mut run_id = StringBuilder::new();
    let mut at = TimestampMicrosecondBuilder::with_capacity(n).with_timezone("UTC");
    let mut path = StringBuilder::new();
    let mut sha = StringBuilder::new();
    let mut format = StringBuilder::new();
    let mut commit = StringBuilder::new();
    let mut commit_time = TimestampMicrosecondBuilder::with_capacity(n).with_timezone("UTC");
    let mut arch = StringBuilder::new();
    let mut tags = StringBuilder::new();
    let mut trial = Int32Builder::with_capacity(n);
    let mut verdict = StringBuilder::new();
    let mut detail = StringBuilder::new();
    let mut digest = StringBuilder::new();
    let mut token = StringBuilder::new();
    let mut nm = Int64Builder::with_capacity(n);
    let mut nt = Int32Builder::with_capacity(n);
    for r in rows {
        run_id.append_value(&r.run_id);
        at.append_value(r.ingested_at_us);
        path.append_value(&r.source_path);
        sha.append_value(&r.source_sha256);
        format.append_value(r.format.map_or(crate::NO_FORMAT, Format::name));
        commit.append_option(r.commit.as_deref());
        commit_time.append_value(r.commit_time_us);
        arch.append_option(r.arch.as_deref());
        tags.append_value(tags_json(&r.tags));
        trial.append_value(r.trial);
        verdict.append_option(r.verdict.map(RunVerdict::as_str));
        detail.append_option(r.verdict_detail.as_deref());
        digest.append_option(r.image_digest.as_deref());
        token.append_option(r.token.as_deref());
        nm.append_value(r.n_measurements);
        nt.append_value(r.n_tables);
    }
    let cols: Vec<ArrayRef> = vec![
        Arc::new(run_id.finish()),
        Arc::new(at.finish()),
        Arc::new(path.finish()),
        Arc::new(sha.finish()),
        Arc::new(format.finish()),
        Arc::new(commit.finish()),
        Arc::new(commit_time.finish()),
        Arc::new(arch.finish()),
        Arc::new(tags.finish()),
        Arc::new(trial.finish()),
        Arc::new(verdict.finish()),
        Arc::new(detail.finish()),
        Arc::new(digest.finish()),
        Arc::new(token.finish()),
        Arc::new(nm.finish()),
        Arc::new(nt.finish()),
    ];
    RecordBatch::try_new(RUNS_SCHEMA.clone(), cols).expect("runs batch matches RUNS_SCHEMA")
}

/// Measurements of several runs: `(run_id, measurements, their keys)`.
pub fn measurements_batch(rows: &[(&str, &[Measurement], &Keys)]) -> RecordBatch {
    let n: usize = rows.iter().map(|(_, m, _)| m.len()).sum();
    let mut run_id = StringBuilder::with_capacity(n, n * 16);
    let mut table = StringBuilder::with_capacity(n, n * 12);
    let mut variant = StringBuilder::with_capacity(n, n * 8);
    let mut key = StringBuilder::with_capacity(n, n * 48);
    let mut key_order = StringBuilder::with_capacity(n, n * 24);
    let mut metric = StringBuilder::with_capacity(n, n * 8);
    let mut unit = StringBuilder::with_capacity(n, n * 4);
    let mut direction = StringBuilder::with_capacity(n, n * 5);
    let mut value = Float64Builder::with_capacity(n);
    let mut raw = StringBuilder::with_capacity(n, n * 8);
    let mut column = StringBuilder::with_capacity(n, n * 10);
    let mut numerics = StringBuilder::with_capacity(n, n * 6);
    let mut line = Int32Builder::with_capacity(n);
    let mut note = StringBuilder::new();
    for (id, ms, keys) in rows {
        for m in *ms {
            run_id.append_value(id);
            table.append_value(m.table);
            variant.append_value(m.variant);
            key.append_value(keys.get(m.key));
            key_order.append_value(m.key_order);
            metric.append_value(m.metric);
            unit.append_value(m.unit);
            direction.append_value(m.direction.as_str());
            value.append_option(m.value);
            raw.append_value(keys.printed(m.raw));
            column.append_value(m.column);
            numerics.append_value(m.numerics.as_str());
            line.append_value(m.line as i32);
            note.append_option(m.note);
        }
    }
    let cols: Vec<ArrayRef> = vec![
        Arc::new(run_id.finish()),
        Arc::new(table.finish()),
        Arc::new(variant.finish()),
        Arc::new(key.finish()),
        Arc::new(key_order.finish()),
        Arc::new(metric.finish()),
        Arc::new(unit.finish()),
        Arc::new(direction.finish()),
        Arc::new(value.finish()),
        Arc::new(raw.finish()),
        Arc::new(column.finish()),
        Arc::new(numerics.finish()),
        Arc::new(line.finish()),
        Arc::new(note.finish()),
    ];
    RecordBatch::try_new(MEASUREMENTS_SCHEMA.clone(), cols)
        .expect("measurements batch matches MEASUREMENTS_SCHEMA")
}

/// Column names of the per-run summaries (`crate::warehouse::summary`), partitioned by label like
/// the measurements they summarise.
pub mod summaries {
    pub const TABLE: &str = "table_name";
    pub const METRIC: &str = "metric";
    pub const VARIANT: &str = "variant";
    pub const KEY: &str = "key";
    pub const RUN_ID: &str = "run_id";
    pub const KEY_ORDER: &str = "key_order";
    pub const UNIT: &str = "unit";
    pub const DIRECTION: &str = "direction";
    pub const N: &str = "n";
    pub const MEDIAN: &str = "median";
    pub const MIN: &str = "min";
    pub const MAX: &str = "max";
    pub const LOG_MEAN: &str = "log_mean";
    pub const LOG_VAR: &str = "log_var";
}

pub mod alerts {
    pub const ALERT_ID: &str = "alert_id";
    pub const FINGERPRINT: &str = "fingerprint";
    pub const LABEL: &str = "label";
    pub const TABLE: &str = "table_name";
    pub const VARIANT: &str = "variant";
    pub const KEY: &str = "key";
    pub const KEY_TEXT: &str = "key_text";
    pub const MACHINE: &str = "machine";
    pub const LAST_GOOD: &str = "last_good_commit";
    pub const FIRST_BAD: &str = "first_bad_commit";
    pub const METRICS: &str = "metrics";
    pub const RATIO: &str = "ratio";
    pub const P: &str = "p";
    pub const RUNS: &str = "runs";
    pub const CREATED_AT: &str = "created_at";
    pub const STATUS: &str = "status";
    pub const AT: &str = "changed_at";
    pub const WHO: &str = "who";
    pub const NOTE: &str = "note";
    pub const TARGET: &str = "target";
    pub const DELIVERED_AT: &str = "delivered_at";
    pub const HTTP_STATUS: &str = "http_status";
    pub const ATTEMPTS: &str = "attempts";
}

pub static ALERT_DELIVERY_SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    use alerts::*;
    Arc::new(Schema::new(vec![
        utf8(ALERT_ID, false),
        utf8(TARGET, false),
        utc_us(DELIVERED_AT),
        Field::new(HTTP_STATUS, DataType::Int32, false),
        Field::new(ATTEMPTS, DataType::Int32, false),
    ]))
});

pub fn alert_delivery_batch(rows: &[crate::model::Delivery]) -> RecordBatch {
    let mut id = StringBuilder::new();
    let mut target = StringBuilder::new();
    let mut at = TimestampMicrosecondBuilder::with_capacity(rows.len()).with_timezone("UTC");
    let mut status = Int32Builder::with_capacity(rows.len());
    let mut attempts = Int32Builder::with_capacity(rows.len());
    for r in rows {
        id.append_value(&r.alert_id);
        target.append_value(&r.target);
        at.append_value(r.delivered_at_us);
        status.append_value(r.http_status);
        attempts.append_value(r.attempts);
    }
    let cols: Vec<ArrayRef> = vec![
        Arc::new(id.finish()),
        Arc::new(target.finish()),
        Arc::new(at.finish()),
        Arc::new(status.finish()),
        Arc::new(attempts.finish()),
    ];
    RecordBatch::try_new(ALERT_DELIVERY_SCHEMA.clone(), cols)
        .expect("alert delivery batch matches ALERT_DELIVERY_SCHEMA")
}

fn utc_us(name: &str) -> Field {
    Field::new(
        name,
        DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        false,
    )
}

pub static ALERTS_SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    use alerts::*;
    Arc::new(Schema::new(vec![
        utf8(ALERT_ID, false),
        utf8(FINGERPRINT, false),
        utf8(LABEL, false),
        utf8(TABLE, false),
        utf8(VARIANT, false),
        utf8(KEY, false),
        utf8(KEY_TEXT, false),
        utf8(MACHINE, false),
        utf8(LAST_GOOD, false),
        utf8(FIRST_BAD, false),
        utf8(METRICS, false),
        Field::new(RATIO, DataType::Float64, false),
        Field::new(P, DataType::Float64, false),
        utf8(RUNS, false),
        utc_us(CREATED_AT),
    ]))
});

pub static ALERT_STATUS_SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    use alerts::*;
    Arc::new(Schema::new(vec![
        utf8(ALERT_ID, false),
        utf8(STATUS, false),
        utc_us(AT),
        utf8(WHO, false),
        utf8(NOTE, false),
    ]))
});

pub fn alerts_batch(rows: &[crate::model::AlertRecord]) -> RecordBatch {
    let s = |f: fn(&crate::model::AlertRecord) -> &str| -> ArrayRef {
        let mut b = StringBuilder::new();
        for r in rows {
            b.append_value(f(r));
        }
        Arc::new(b.finish())
    };
    let mut ratio = Float64Builder::with_capacity(rows.len());
    let mut p = Float64Builder::with_capacity(rows.len());
    let mut at = TimestampMicrosecondBuilder::with_capacity(rows.len()).with_timezone("UTC");
    for r in rows {
        ratio.append_value(r.ratio);
        p.append_value(r.p);
        at.append_value(r.created_at_us);
    }
    let cols: Vec<ArrayRef> = vec![
        s(|r| &r.alert_id),
        s(|r| &r.fingerprint),
        s(|r| &r.label),
        s(|r| &r.table),
        s(|r| &r.variant),
        s(|r| &r.key),
        s(|r| &r.key_text),
        s(|r| &r.machine),
        s(|r| &r.last_good_commit),
        s(|r| &r.first_bad_commit),
        s(|r| &r.metrics),
        Arc::new(ratio.finish()),
        Arc::new(p.finish()),
        s(|r| &r.runs),
        Arc::new(at.finish()),
    ];
    RecordBatch::try_new(ALERTS_SCHEMA.clone(), cols).expect("alerts batch matches ALERTS_SCHEMA")
}

pub fn alert_status_batch(rows: &[crate::model::StatusChange]) -> RecordBatch {
    let s = |f: fn(&crate::model::StatusChange) -> &str| -> ArrayRef {
        let mut b = StringBuilder::new();
        for r in rows {
            b.append_value(f(r));
        }
        Arc::new(b.finish())
    };
    let mut at = TimestampMicrosecondBuilder::with_capacity(rows.len()).with_timezone("UTC");
    for r in rows {
        at.append_value(r.at_us);
    }
    let cols: Vec<ArrayRef> = vec![
        s(|r| &r.alert_id),
        s(|r| r.status.as_str()),
        Arc::new(at.finish()),
        s(|r| &r.who),
        s(|r| &r.note),
    ];
    RecordBatch::try_new(ALERT_STATUS_SCHEMA.clone(), cols)
        .expect("alert status batch matches ALERT_STATUS_SCHEMA")
}
