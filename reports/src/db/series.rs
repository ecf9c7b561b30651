//! The series the warehouse holds, one catalog row each, and what names one series on
//! one machine class.

use perfdb_ingest::model::SeriesKey;

/// A series' five columns of the table `alias` (a view's or a file's: `s`, `m`), as
/// [`series_key`] reads them.
pub fn series_key_sql(alias: &str) -> String {
    ["table_name", "variant", "key", "metric", "unit"]
        .map(|c| format!("{alias}.{c}"))
        .join(", ")
}

/// The [`SeriesKey`] of a result row whose columns `at..at + 5` are
/// [`series_key_sql`]'s.
pub fn series_key(r: &duckdb::Row, at: usize) -> duckdb::Result<SeriesKey> {
    Ok(SeriesKey {
        table: r.get(at)?,
        variant: r.get(at + 1)?,
        key: r.get(at + 2)?,
        metric: r.get(at + 3)?,
        unit: r.get(at + 4)?,
    })
}

/// One series as detect and noise examine it: a series on one machine class.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SeriesId {
    pub series: SeriesKey,
    pub machine: String,
}

/// One series the warehouse holds: (table, metric, variant, canonical key), with the
/// key's printed cell order and whether the metric is compared (has a direction).
#[derive(Debug, Clone)]
pub struct SeriesEntry {
    pub table: String,
    pub metric: String,
    pub variant: String,
    pub key: String,
    pub key_order: Option<String>,
    pub compared: bool,
}

impl SeriesEntry {
    /// The query listing the series of `from` (a view, or `read_parquet` of summaries
    /// files), one row each, as [`SeriesEntry::from_row`] reads them.
    pub(crate) fn query(from: &str) -> String {
        format!(
            "SELECT table_name, metric, variant, key, any_value(key_order), \
                    bool_or(direction <> 'none') \
             FROM {from} GROUP BY table_name, metric, variant, key"
        )
    }
    pub(crate) fn from_row(r: &duckdb::Row) -> duckdb::Result<SeriesEntry> {
        Ok(SeriesEntry {
            table: r.get(0)?,
            metric: r.get(1)?,
            variant: r.get(2)?,
            key: r.get(3)?,
            key_order: r.get(4)?,
            compared: r.get(5)?,
        })
    }
}
