//! DuckDB over the warehouse: an in-memory database with views `runs`, `measurements`,
//! `summaries` (per run and series) and the alert tables, over exactly the Parquet files
//! the Delta logs list as committed.

mod error;
mod facts;
mod peaks;
pub mod roofs;

pub use peaks::{one_device, run_device};
mod series;
mod sql;

pub use error::DbError;
pub use series::{series_key, series_key_sql, SeriesEntry, SeriesId};
pub(crate) use sql::file_list;
pub use sql::{
    json_has_pair, list_f64, sql_str, MACHINE_CLASS_SQL, MACHINE_TAG_SQL, METHOD_TAG_SQL,
    RUN_DEVICE_SQL,
};

use duckdb::Connection;
use perfdb_ingest::devices::Table;
use perfdb_ingest::warehouse::schema::{self, MEASUREMENTS_SCHEMA, RUNS_SCHEMA};
use perfdb_ingest::warehouse::Warehouse;
use sql::{flat_view_sql, summaries_select, summaries_view_sql, view_sql};
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
    /// Each measurements and summaries file with the range of its runs' ingest times
    /// when it names one (compacted files), to read only the files holding a few runs.
    ranges: std::sync::Arc<Ranges>,
    /// The device table the runs are read against (`Config::device_table`).
    pub devices: Arc<Table>,
    /// The warehouse it was opened on: its documents are read there.
    pub root: PathBuf,
}

/// The measurements files, and the ingest-time range of each file that names one.
#[derive(Default)]
struct Ranges {
    measurements: Vec<PathBuf>,
    of: std::collections::HashMap<PathBuf, (i64, i64)>,
}

impl Ranges {
    /// Of `files`, those that may hold a run ingested at one of `times`: every file
    /// without a range, and those whose range holds one.
    fn holding(&self, files: &[PathBuf], times: &[i64]) -> Vec<PathBuf> {
        files
            .iter()
            .filter(|f| {
                self.of
                    .get(*f)
                    .is_none_or(|(lo, hi)| times.iter().any(|t| lo <= t && t <= hi))
            })
            .cloned()
            .collect()
    }
}

/// The points of the runs `filter` selects (a SQL condition on `runs r`): each commit,
/// or the label for runs without one, in history order (commit time, then first
/// ingest, then name), as the history chart, `detect` and the overview order them.
pub fn history_points(db: &Db, filter: &str) -> Result<Vec<String>, DbError> {
    let mut stmt = db.conn.prepare(&format!(
        "SELECT coalesce(r.\"commit\", r.label) AS point, min(epoch_us(r.commit_time)), \
                min(epoch_us(r.ingested_at)) \
         FROM runs r WHERE {filter} GROUP BY point"
    ))?;
    let mut points: Vec<(String, Option<i64>, i64)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<Result<_, _>>()?;
    points.sort_by(|a, b| {
        (a.1.is_none(), a.1, a.2)
            .cmp(&(b.1.is_none(), b.1, b.2))
            .then_with(|| a.0.cmp(&b.0))
    });
    Ok(points.into_iter().map(|p| p.0).collect())
}

/// The SHA-256 of the file each of `runs` was read from (`runs.source_sha256`).
pub fn source_hashes(db: &Db, runs: &[String]) -> Result<Vec<String>, DbError> {
    if runs.is_empty() {
        return Ok(Vec::new());
    }
    let list = runs
        .iter()
        .map(|r| sql_str(r))
        .collect::<Vec<_>>()
        .join(", ");
    let mut stmt = db.conn.prepare(&format!(
        "SELECT source_sha256 FROM runs WHERE run_id IN ({list})"
    ))?;
    let hashes = stmt
        .query_map([], |r| r.get::<_, String>(0))?
        .collect::<Result<_, _>>()?;
    Ok(hashes)
}

/// A fingerprint of the warehouse's committed state at `root` (`None`: nothing
/// committed yet): it changes whenever a commit lands, so a reader knows when what it
/// read is stale (the web app's caches).
pub fn state_signature(root: &std::path::Path) -> Option<u64> {
    Warehouse::new(root).state_signature()
}

impl Db {
    /// Open the warehouse at `root` (an empty or missing warehouse gives empty views),
    /// locked down: DuckDB may read the committed Parquet files and nothing else on disk
    /// or the network (no `read_text`, `COPY ... TO`, `ATTACH`, `INSTALL`, `LOAD`), and
    /// that setting cannot be changed back by a later statement. Every reader uses this.
    /// `devices` is the table a run's device is found in (`Config::device_table`).
    pub fn open(root: &Path, devices: &Arc<Table>) -> Result<Db, DbError> {
        Db::open_on(Connection::open_in_memory()?, root, devices)
    }

    /// [`Db::open`] on a connection to a fresh in-memory database.
    pub fn open_on(conn: Connection, root: &Path, devices: &Arc<Table>) -> Result<Db, DbError> {
        let (db, files) = Db::define(conn, root, devices)?;
        let mut t = std::time::Instant::now();
        db.lock_down(&files)?;
        perfdb_ingest::timing::trace("open: lock down", &mut t);
        Ok(db)
    }

    /// Open the warehouse with DuckDB's file and network access left on, for
    /// `perfdb sql --write` (an export with `COPY ... TO`).
    pub fn open_unrestricted(root: &Path, devices: &Arc<Table>) -> Result<Db, DbError> {
        Ok(Db::define(Connection::open_in_memory()?, root, devices)?.0)
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
    fn define(
        conn: Connection,
        root: &Path,
        devices: &Arc<Table>,
    ) -> Result<(Db, Vec<PathBuf>), DbError> {
        let mut t = std::time::Instant::now();
        let wh = Warehouse::new(root);
        // One read of the logs for every table (each read is six snapshots; on a remote
        // warehouse, GETs).
        let c = wh.committed()?;
        perfdb_ingest::timing::trace("open: committed", &mut t);
        let (runs, ms) = (wh.local_all(&c.runs)?, wh.local_all(&c.measurements)?);
        perfdb_ingest::timing::trace("open: local", &mut t);
        // Warehouse files never change once committed (new names per commit): their
        // footers can be kept between queries.
        conn.execute_batch("SET parquet_metadata_cache = true")?;
        conn.execute_batch(&view_sql("runs", &runs, &RUNS_SCHEMA))?;
        perfdb_ingest::timing::trace("open: runs", &mut t);
        conn.execute_batch(&view_sql("measurements", &ms, &MEASUREMENTS_SCHEMA))?;
        perfdb_ingest::timing::trace("open: measurements", &mut t);
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
        perfdb_ingest::timing::trace("open: rest", &mut t);
        let n_files = runs.len() + ms.len();
        let summary_files = bare.is_empty().then(|| std::sync::Arc::new(sums.clone()));
        let mut ranges = Ranges {
            measurements: ms.clone(),
            of: Default::default(),
        };
        for (rel, r) in &c.ingested {
            ranges.of.insert(wh.local(rel)?, *r);
        }
        let files = [runs, ms, sums, bare, alerts, status, delivery].concat();
        let db = Db {
            conn,
            n_files,
            series: Default::default(),
            summary_files,
            ranges: std::sync::Arc::new(ranges),
            devices: devices.clone(),
            root: root.to_path_buf(),
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
            ranges: self.ranges.clone(),
            devices: self.devices.clone(),
            root: self.root.clone(),
        })
    }

    /// Every series of the warehouse (see `SeriesEntry`), from the summaries.
    pub fn series(&self) -> Result<std::sync::Arc<Vec<SeriesEntry>>, DbError> {
        if let Some(s) = self.series.get() {
            return Ok(s.clone());
        }
        if let Some(files) = &self.summary_files {
            let rows = std::sync::Arc::new(facts::series(&self.conn, files)?);
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
    /// tell (see [`facts`]); else the whole `summaries` view. A selection of one
    /// commit's runs then reads one file, not every summary of the warehouse.
    pub fn summaries_of_runs(&self, runs: &[String]) -> Result<String, DbError> {
        let Some(files) = &self.summary_files else {
            return Ok("summaries".into());
        };
        // Compacted files by their ingest-time ranges; the others by their runs, read
        // once per process.
        let times = if self.ranges.of.is_empty() {
            Vec::new()
        } else {
            self.selection_table("_times_sel", runs)?;
            self.ingest_times("_times_sel")?
        };
        let candidates = self.ranges.holding(files, &times);
        let (ranged, bare): (Vec<PathBuf>, Vec<PathBuf>) = candidates
            .into_iter()
            .partition(|f| self.ranges.of.contains_key(f));
        let mut holding = facts::files_holding(&self.conn, &bare, runs)?;
        holding.extend(ranged);
        Ok(format!("({})", summaries_select(&holding, &[])))
    }

    /// The `measurements` rows of the runs `runs` (and of any other run sharing their
    /// files) as a query to read `FROM`: the files without an ingest-time range, and
    /// the compacted files whose range holds one of the runs' ingest times. A
    /// comparison of one commit in a year of data then reads one compacted file and
    /// the files ingested since the last compaction, not fifty.
    pub fn measurements_of_runs(&self, runs: &[String]) -> Result<String, DbError> {
        if self.ranges.of.is_empty() {
            return Ok("measurements".into());
        }
        self.selection_table("_times_sel", runs)?;
        self.measurements_of_selection("_times_sel")
    }

    /// [`Db::measurements_of_runs`] of the runs a [`Db::selection_table`] holds (a
    /// reader that joins against that table loads its runs once).
    pub fn measurements_of_selection(&self, selection: &str) -> Result<String, DbError> {
        let all = &self.ranges.measurements;
        if self.ranges.of.is_empty() {
            return Ok("measurements".into());
        }
        let files = self.ranges.holding(all, &self.ingest_times(selection)?);
        if files.len() == all.len() {
            return Ok("measurements".into());
        }
        let body = sql::view_select(&files, &MEASUREMENTS_SCHEMA);
        Ok(format!("({body})"))
    }

    /// The distinct ingest times (microseconds) of the runs of the selection table.
    fn ingest_times(&self, selection: &str) -> Result<Vec<i64>, DbError> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT DISTINCT epoch_us(ingested_at) FROM runs \
             WHERE run_id IN (SELECT run_id FROM {selection})"
        ))?;
        let times = stmt
            .query_map([], |r| r.get::<_, i64>(0))?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(times)
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
