//! A label's series as `perfdb export` writes them: one row a table, variant, key,
//! metric, commit, machine and source format, its trials in order, read from the
//! warehouse as Arrow (the writer is the format's own, beside its reader).

use crate::db::{sql_str, Db, DbError, MACHINE_TAG_SQL, METHOD_TAG_SQL};
use arrow::array::{Array, Float64Array, Int64Array, ListArray, StringArray};
use perfdb_ingest::formats::pytorch_v3::write::{key_in_order, ExportRow};

/// Every directed value of `label` (a latency, a throughput), grouped into series.
pub fn rows(db: &Db, label: &str) -> Result<Vec<ExportRow>, DbError> {
    let sql = format!(
        "SELECT m.table_name, m.variant, m.key, m.key_order, m.metric, m.unit, \
                r.\"commit\", nullif(epoch_us(r.commit_time), 0) AS commit_time_us, \
                nullif({MACHINE_TAG_SQL}, '') AS machine, r.format AS source_format, r.arch, \
                nullif({METHOD_TAG_SQL}, '') AS method, \
                list(m.value ORDER BY r.trial, r.run_id) AS vals \
         FROM measurements m JOIN runs r USING (run_id) \
         WHERE r.label = {} AND m.direction IN ('lower', 'higher') AND m.value IS NOT NULL \
         GROUP BY ALL ORDER BY ALL",
        sql_str(label)
    );
    let (_, batches) = db.query(&sql)?;
    let mut out = Vec::new();
    for b in &batches {
        let text = |i: usize| -> Result<StringArray, DbError> {
            let cast = arrow::compute::cast(b.column(i), &arrow::datatypes::DataType::Utf8)
                .map_err(|e| DbError::Unexpected(format!("export column {i}: {e}")))?;
            Ok(cast
                .as_any()
                .downcast_ref::<StringArray>()
                .cloned()
                .expect("cast to Utf8"))
        };
        let cols: Vec<StringArray> = [0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11]
            .into_iter()
            .map(text)
            .collect::<Result<_, _>>()?;
        let [table, variant, key, order, metric, unit, commit, machine, format, arch, method] =
            &cols[..]
        else {
            unreachable!("eleven text columns")
        };
        let time = arrow::compute::cast(b.column(7), &arrow::datatypes::DataType::Int64)
            .map_err(|e| DbError::Unexpected(format!("export commit time: {e}")))?;
        let time = time.as_any().downcast_ref::<Int64Array>().expect("cast");
        let lists = b
            .column(12)
            .as_any()
            .downcast_ref::<ListArray>()
            .ok_or_else(|| DbError::Unexpected("export values are not a list".into()))?;
        let opt = |a: &StringArray, i: usize| (!a.is_null(i)).then(|| a.value(i).to_string());
        for i in 0..b.num_rows() {
            let values = lists.value(i);
            let values = values
                .as_any()
                .downcast_ref::<Float64Array>()
                .ok_or_else(|| DbError::Unexpected("export values are not DOUBLE".into()))?;
            out.push(ExportRow {
                table: table.value(i).to_string(),
                variant: variant.value(i).to_string(),
                key: key_in_order(key.value(i), opt(order, i).as_deref()),
                metric: metric.value(i).to_string(),
                unit: unit.value(i).to_string(),
                commit: opt(commit, i),
                commit_time_us: (!time.is_null(i)).then(|| time.value(i)),
                machine: opt(machine, i),
                source_format: opt(format, i),
                arch: opt(arch, i),
                method: opt(method, i),
                values: values.iter().flatten().collect(),
            });
        }
    }
    Ok(out)
}
