//! SQL the readers share: the views over the tables' files, quoting, and the
//! machine-class expressions.

use perfdb_ingest::warehouse::schema;
use perfdb_ingest::warehouse::summary::SUMMARIES_SCHEMA;
use std::path::PathBuf;

/// SQL for a run's `machine` tag (from `r.tags`, the JSON perfdb writes), `''` without one.
pub const MACHINE_TAG_SQL: &str =
    "coalesce(regexp_extract(r.tags, '\"machine\":\"([^\"]*)\"', 1), '')";

/// SQL for what names a run's device: its `device` tag, its `machine` tag and its
/// arch (each `''` without one), read with [`super::run_device`].
pub const RUN_DEVICE_SQL: &str =
    "coalesce(regexp_extract(r.tags, '\"device\":\"([^\"]*)\"', 1), ''), \
     coalesce(regexp_extract(r.tags, '\"machine\":\"([^\"]*)\"', 1), ''), coalesce(r.arch, '')";

/// SQL for a run's `method` tag (how its values were measured), `''` without one.
pub const METHOD_TAG_SQL: &str =
    "coalesce(regexp_extract(r.tags, '\"method\":\"([^\"]*)\"', 1), '')";

/// SQL for a run's machine class: `arch/tag`, or the tag alone without an arch; the tag
/// is `default` when the run has none; a run that says how it was measured (`method`)
/// adds that (`sm_90/default/nvbench:cold`). History, detect and charts never mix
/// classes, so never pool two methods.
pub const MACHINE_CLASS_SQL: &str = "concat_ws('/', nullif(r.arch, ''), coalesce(nullif(regexp_extract(r.tags, '\"machine\":\"([^\"]*)\"', 1), ''), 'default'), nullif(regexp_extract(r.tags, '\"method\":\"([^\"]*)\"', 1), ''))";

/// The doubles of a DuckDB LIST value (other items skipped).
pub fn list_f64(v: duckdb::types::Value) -> Vec<f64> {
    match v {
        duckdb::types::Value::List(items) => items
            .into_iter()
            .filter_map(|x| match x {
                duckdb::types::Value::Double(d) => Some(d),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// A SQL string literal.
pub fn sql_str(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

pub(crate) fn file_list(files: &[PathBuf]) -> String {
    let items: Vec<String> = files
        .iter()
        .map(|p| sql_str(&p.to_string_lossy()))
        .collect();
    format!("[{}]", items.join(", "))
}

pub(crate) fn duck_type(dt: &arrow::datatypes::DataType) -> &'static str {
    use arrow::datatypes::DataType::*;
    match dt {
        Utf8 => "VARCHAR",
        Int32 => "INTEGER",
        Int64 => "BIGINT",
        Float64 => "DOUBLE",
        Timestamp(_, _) => "TIMESTAMPTZ",
        _ => "VARCHAR",
    }
}

/// `SELECT NULL::T AS c, ... , NULL::VARCHAR AS label WHERE false`: an empty view with
/// the schema, for a warehouse with no files yet.
pub(crate) fn empty_view(schema: &arrow::datatypes::Schema) -> String {
    let mut cols: Vec<String> = schema
        .fields()
        .iter()
        .map(|f| format!("NULL::{} AS \"{}\"", duck_type(f.data_type()), f.name()))
        .collect();
    cols.push(format!("NULL::VARCHAR AS {}", schema::LABEL));
    format!("SELECT {} WHERE false", cols.join(", "))
}

pub(crate) fn view_sql(name: &str, files: &[PathBuf], schema: &arrow::datatypes::Schema) -> String {
    format!(
        "CREATE OR REPLACE VIEW {name} AS {}",
        view_select(files, schema)
    )
}

/// The query of a partitioned table's view over `files`.
pub(crate) fn view_select(files: &[PathBuf], schema: &arrow::datatypes::Schema) -> String {
    if files.is_empty() {
        empty_view(schema)
    } else {
        format!(
            // union_by_name: files written before a column was added (key_order, note)
            // read as NULL in it instead of failing the view.
            "SELECT * FROM read_parquet({}, hive_partitioning = true, hive_types = {{'{}': VARCHAR}}, union_by_name = true)",
            file_list(files),
            schema::LABEL
        )
    }
}

/// The `summaries` view: the summary files, and for measurements files without one the
/// same numbers computed from their raw values (`perfdb_ingest::warehouse::summary` defines them).
pub(crate) fn summaries_view_sql(sums: &[PathBuf], bare: &[PathBuf]) -> String {
    format!(
        "CREATE OR REPLACE VIEW summaries AS {}",
        summaries_select(sums, bare)
    )
}

/// The `summaries` view's query over these files.
pub(crate) fn summaries_select(sums: &[PathBuf], bare: &[PathBuf]) -> String {
    let mut parts = Vec::new();
    let names: Vec<String> = SUMMARIES_SCHEMA
        .fields()
        .iter()
        .map(|f| format!("\"{}\"", f.name()))
        .collect();
    let cols = format!("{}, {}", names.join(", "), schema::LABEL);
    if !sums.is_empty() {
        parts.push(format!(
            "SELECT {cols} FROM read_parquet({}, hive_partitioning = true, hive_types = {{'{}': VARCHAR}})",
            file_list(sums),
            schema::LABEL
        ));
    }
    if !bare.is_empty() {
        parts.push(format!(
            "SELECT table_name, metric, variant, key, run_id, coalesce(any_value(key_order), '[]') AS key_order, \
                    any_value(unit) AS unit, any_value(direction) AS direction, count(*) AS n, \
                    median(value) AS median, min(value) AS min, max(value) AS max, \
                    CASE WHEN min(value) > 0 THEN avg(ln(greatest(value, 1e-300))) END AS log_mean, \
                    CASE WHEN min(value) > 0 AND count(*) > 1 THEN var_samp(ln(greatest(value, 1e-300))) END AS log_var, \
                    {label} \
             FROM read_parquet({}, hive_partitioning = true, hive_types = {{'{label}': VARCHAR}}, union_by_name = true) \
             WHERE isfinite(value) GROUP BY table_name, metric, variant, key, run_id, {label}",
            file_list(bare),
            label = schema::LABEL
        ));
    }
    if parts.is_empty() {
        empty_view(&SUMMARIES_SCHEMA)
    } else {
        parts.join(" UNION ALL ")
    }
}

/// A view over unpartitioned files (the alert tables), empty with the schema when none.
pub(crate) fn flat_view_sql(
    name: &str,
    files: &[PathBuf],
    schema: &arrow::datatypes::Schema,
) -> String {
    let body = if files.is_empty() {
        let cols: Vec<String> = schema
            .fields()
            .iter()
            .map(|f| format!("NULL::{} AS \"{}\"", duck_type(f.data_type()), f.name()))
            .collect();
        format!("SELECT {} WHERE false", cols.join(", "))
    } else {
        format!(
            "SELECT * FROM read_parquet({}, union_by_name = true)",
            file_list(files)
        )
    };
    format!("CREATE OR REPLACE VIEW {name} AS {body}")
}

/// SQL true when the JSON object text in `column` (as perfdb writes it: compact, unique
/// keys) holds the pair `k: v`. Works without DuckDB's json extension, which the bundled
/// build does not include (and could not download here). Inside a JSON string a quote
/// is escaped, so `"k":"v"` between `{`/`,` and `,`/`}` can only be a real pair.
pub fn json_has_pair(column: &str, k: &str, v: &str) -> String {
    let pair = format!(
        "{}:{}",
        serde_json::Value::String(k.to_string()),
        serde_json::Value::String(v.to_string())
    );
    let alts: Vec<String> = ["{", ","]
        .iter()
        .flat_map(|pre| {
            [",", "}"].map(|post| {
                format!(
                    "contains({column}, {})",
                    sql_str(&format!("{pre}{pair}{post}"))
                )
            })
        })
        .collect();
    format!("({})", alts.join(" OR "))
}
