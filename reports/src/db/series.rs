//! The series the warehouse holds, one catalog row each, and what names one series on
//! one machine class.

/// One series as detect and noise examine it: a row's identity on one machine class.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SeriesId {
    pub table: String,
    pub variant: String,
    /// The key's canonical JSON.
    pub key: String,
    pub metric: String,
    pub unit: String,
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
