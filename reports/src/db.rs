//! DuckDB over the warehouse: an in-memory database with views `runs`, `measurements`,
//! `summaries` (per run and series) and the alert tables, over exactly the Parquet files
//! the Delta logs list as committed.

use duckdb::Connection;
use perfdb_ingest::schema::{self, MEASUREMENTS_SCHEMA, RUNS_SCHEMA};
use perfdb_ingest::summary::SUMMARIES_SCHEMA;
use perfdb_ingest::warehouse::{Warehouse, WarehouseError};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error(transparent)]
    Warehouse(#[from] WarehouseError),
    #[error("query failed: {0}")]
    Query(#[from] duckdb::Error),
    #[error("unexpected query result: {0}")]
    Unexpected(String),
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

/// A connection with the `runs` and `measurements` views defined.
pub struct Db {
    pub conn: Connection,
    pub n_files: usize,
    /// Every series, computed once per opened warehouse state (one pass over the
    /// summaries), shared by clones: catalogs and pickers read it.
    pub series: std::sync::Arc<std::sync::OnceLock<std::sync::Arc<Vec<SeriesEntry>>>>,
    /// The committed summaries files; `None` when some measurements files have no
    /// summary file (the view computes theirs), so per-file facts cannot stand in.
    summary_files: Option<std::sync::Arc<Vec<PathBuf>>>,
}

/// SQL for a run's `machine` tag (from `r.tags`, the JSON perfdb writes), `''` without one.
pub const MACHINE_TAG_SQL: &str =
    "coalesce(regexp_extract(r.tags, '\"machine\":\"([^\"]*)\"', 1), '')";

/// SQL for a run's machine class: `arch/tag`, or the tag alone without an arch; the tag
/// is `default` when the run has none. History, detect and charts never mix classes.
pub const MACHINE_CLASS_SQL: &str = "concat_ws('/', nullif(r.arch, ''), coalesce(nullif(regexp_extract(r.tags, '\"machine\":\"([^\"]*)\"', 1), ''), 'default'))";

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

fn duck_type(dt: &arrow::datatypes::DataType) -> &'static str {
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
fn empty_view(schema: &arrow::datatypes::Schema) -> String {
    let mut cols: Vec<String> = schema
        .fields()
        .iter()
        .map(|f| format!("NULL::{} AS \"{}\"", duck_type(f.data_type()), f.name()))
        .collect();
    cols.push(format!("NULL::VARCHAR AS {}", schema::LABEL));
    format!("SELECT {} WHERE false", cols.join(", "))
}

fn view_sql(name: &str, files: &[PathBuf], schema: &arrow::datatypes::Schema) -> String {
    let body = if files.is_empty() {
        empty_view(schema)
    } else {
        format!(
            // union_by_name: files written before a column was added (key_order, note)
            // read as NULL in it instead of failing the view.
            "SELECT * FROM read_parquet({}, hive_partitioning = true, hive_types = {{'{}': VARCHAR}}, union_by_name = true)",
            file_list(files),
            schema::LABEL
        )
    };
    format!("CREATE OR REPLACE VIEW {name} AS {body}")
}

/// The `summaries` view: the summary files, and for measurements files without one the
/// same numbers computed from their raw values (`perfdb_ingest::summary` defines them).
fn summaries_view_sql(sums: &[PathBuf], bare: &[PathBuf]) -> String {
    format!(
        "CREATE OR REPLACE VIEW summaries AS {}",
        summaries_select(sums, bare)
    )
}

/// The `summaries` view's query over these files.
fn summaries_select(sums: &[PathBuf], bare: &[PathBuf]) -> String {
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
fn flat_view_sql(name: &str, files: &[PathBuf], schema: &arrow::datatypes::Schema) -> String {
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

impl Db {
    /// Open the warehouse at `root` (an empty or missing warehouse gives empty views),
    /// locked down: DuckDB may read the committed Parquet files and nothing else on disk
    /// or the network (no `read_text`, `COPY ... TO`, `ATTACH`, `INSTALL`, `LOAD`), and
    /// that setting cannot be changed back by a later statement. Every reader uses this.
    pub fn open(root: &Path) -> Result<Db, DbError> {
        Db::open_on(Connection::open_in_memory()?, root)
    }

    /// [`Db::open`] on a connection to a fresh in-memory database.
    pub fn open_on(conn: Connection, root: &Path) -> Result<Db, DbError> {
        let (db, files) = Db::define(conn, root)?;
        let mut t = std::time::Instant::now();
        db.lock_down(&files)?;
        perfdb_ingest::trace("open: lock down", &mut t);
        Ok(db)
    }

    /// Open the warehouse with DuckDB's file and network access left on, for
    /// `perfdb sql --write` (an export with `COPY ... TO`).
    pub fn open_unrestricted(root: &Path) -> Result<Db, DbError> {
        Ok(Db::define(Connection::open_in_memory()?, root)?.0)
    }

    /// Only the committed files stay readable; external access off; settings locked.
    fn lock_down(&self, files: &[PathBuf]) -> Result<(), DbError> {
        if !files.is_empty() {
            self.conn
                .execute_batch(&format!("SET allowed_paths = {}", file_list(files)))?;
        }
        self.conn.execute_batch(
            "SET enable_external_access = false; SET autoinstall_known_extensions = false; \
             SET autoload_known_extensions = false; SET lock_configuration = true",
        )?;
        Ok(())
    }

    /// The views over the committed files, on `conn`; also every file they read.
    fn define(conn: Connection, root: &Path) -> Result<(Db, Vec<PathBuf>), DbError> {
        let mut t = std::time::Instant::now();
        let wh = Warehouse::new(root);
        // One read of the logs for every table (each read is six snapshots; on a remote
        // warehouse, GETs).
        let c = wh.committed()?;
        perfdb_ingest::trace("open: committed", &mut t);
        let (runs, ms) = (wh.local_all(&c.runs)?, wh.local_all(&c.measurements)?);
        perfdb_ingest::trace("open: local", &mut t);
        // Warehouse files never change once committed (new names per commit): their
        // footers can be kept between queries.
        conn.execute_batch("SET parquet_metadata_cache = true")?;
        conn.execute_batch(&view_sql("runs", &runs, &RUNS_SCHEMA))?;
        perfdb_ingest::trace("open: runs", &mut t);
        conn.execute_batch(&view_sql("measurements", &ms, &MEASUREMENTS_SCHEMA))?;
        perfdb_ingest::trace("open: measurements", &mut t);
        let (sums, bare) = wh.summaries_of(&c)?;
        conn.execute_batch(&summaries_view_sql(&sums, &bare))?;
        let (alerts, status, delivery) = (
            wh.local_all(&c.alerts)?,
            wh.local_all(&c.alert_status)?,
            wh.local_all(&c.alert_delivery)?,
        );
        // Every claim and answer; `alert_delivery` the delivered (2xx) ones.
        conn.execute_batch(&flat_view_sql(
            "alert_delivery_log",
            &delivery,
            &schema::ALERT_DELIVERY_SCHEMA,
        ))?;
        conn.execute_batch(
            "CREATE OR REPLACE VIEW alert_delivery AS \
             SELECT * FROM alert_delivery_log WHERE http_status BETWEEN 200 AND 299",
        )?;
        conn.execute_batch(&flat_view_sql(
            "alert_revisions",
            &alerts,
            &schema::ALERTS_SCHEMA,
        ))?;
        // An alert is its newest revision, created when its first was.
        conn.execute_batch(
            "CREATE OR REPLACE VIEW alerts AS \
             SELECT * EXCLUDE (created_at, _first, _rn), _first AS created_at, created_at AS revised_at \
             FROM (SELECT *, min(created_at) OVER (PARTITION BY alert_id) AS _first, \
                          row_number() OVER (PARTITION BY alert_id ORDER BY created_at DESC, fingerprint DESC) AS _rn \
                   FROM alert_revisions) WHERE _rn = 1",
        )?;
        conn.execute_batch(&flat_view_sql(
            "alert_status",
            &status,
            &schema::ALERT_STATUS_SCHEMA,
        ))?;
        perfdb_ingest::trace("open: rest", &mut t);
        let n_files = runs.len() + ms.len();
        let summary_files = bare.is_empty().then(|| std::sync::Arc::new(sums.clone()));
        let files = [runs, ms, sums, bare, alerts, status, delivery].concat();
        let db = Db {
            conn,
            n_files,
            series: Default::default(),
            summary_files,
        };
        Ok((db, files))
    }

    /// Another connection to the same in-memory database (views and caches shared).
    pub fn try_clone(&self) -> Result<Db, DbError> {
        Ok(Db {
            conn: self.conn.try_clone()?,
            n_files: self.n_files,
            series: self.series.clone(),
            summary_files: self.summary_files.clone(),
        })
    }

    /// Every series of the warehouse (see `SeriesEntry`), from the summaries.
    pub fn series(&self) -> Result<std::sync::Arc<Vec<SeriesEntry>>, DbError> {
        if let Some(s) = self.series.get() {
            return Ok(s.clone());
        }
        if let Some(files) = &self.summary_files {
            let rows = std::sync::Arc::new(crate::facts::series(&self.conn, files)?);
            let _ = self.series.set(rows.clone());
            return Ok(rows);
        }
        let mut stmt = self.conn.prepare(&SeriesEntry::query("summaries"))?;
        let rows = stmt
            .query_map([], SeriesEntry::from_row)?
            .collect::<Result<Vec<_>, _>>()?;
        let rows = std::sync::Arc::new(rows);
        let _ = self.series.set(rows.clone());
        Ok(rows)
    }

    /// The summaries of the runs `runs` (and of any other run sharing their files) as a
    /// query to read `FROM`: only the files holding them, where the per-file facts can
    /// tell (see [`crate::facts`]); else the whole `summaries` view. A selection of one
    /// commit's runs then reads one file, not every summary of the warehouse.
    pub fn summaries_of_runs(&self, runs: &[String]) -> Result<String, DbError> {
        let Some(files) = &self.summary_files else {
            return Ok("summaries".into());
        };
        let holding = crate::facts::files_holding(&self.conn, files, runs)?;
        Ok(format!("({})", summaries_select(&holding, &[])))
    }

    /// (Re)create the temporary table `name(run_id)` holding `runs`, to join against.
    pub fn selection_table(&self, name: &str, runs: &[String]) -> Result<(), DbError> {
        self.conn.execute_batch(&format!(
            "CREATE OR REPLACE TEMP TABLE {name}(run_id VARCHAR)"
        ))?;
        let mut app = self.conn.appender(name)?;
        for r in runs {
            app.append_row([r.as_str()])?;
        }
        Ok(())
    }

    /// Run `sql` and return its schema and Arrow record batches.
    pub fn query(
        &self,
        sql: &str,
    ) -> Result<(arrow::datatypes::SchemaRef, Vec<arrow::array::RecordBatch>), DbError> {
        let mut stmt = self.conn.prepare(sql)?;
        let arrow = stmt.query_arrow([])?;
        let schema = arrow.get_schema();
        let batches: Vec<_> = arrow.collect();
        Ok((schema, batches))
    }
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
