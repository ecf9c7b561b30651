//! What the committed summaries files hold, their series and their runs, kept for the
//! life of the process. A committed file never changes (every commit writes new names),
//! so after an ingest only the new files are read: the list of every series (catalogs,
//! pickers) and the files holding a few runs (a chart of one commit) no longer cost a
//! pass over every summary of the warehouse.

use super::error::DbError;
use super::series::SeriesEntry;
use super::sql::file_list;
use duckdb::Connection;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A catalog entry's identity: (table, metric, variant, key), as the catalog groups.
type EntryId = (String, String, String, String);

/// The series of the last set of files asked about, to add a later set's new files to.
struct SeriesOf {
    files: HashSet<PathBuf>,
    series: Vec<SeriesEntry>,
    by_id: HashMap<EntryId, usize>,
}

static SERIES: std::sync::LazyLock<Mutex<Option<SeriesOf>>> =
    std::sync::LazyLock::new(Default::default);

/// Per file: the runs it holds summaries of.
static RUNS_OF: std::sync::LazyLock<Mutex<HashMap<PathBuf, HashSet<String>>>> =
    std::sync::LazyLock::new(Default::default);

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Every series the summaries files `files` hold, each once: compared when any file
/// gives it a direction. When `files` holds every file of the last call (an ingest
/// since), only the others are read and their series added to the last answer; else
/// (a compaction replaced files) all of them are read.
pub fn series(conn: &Connection, files: &[PathBuf]) -> Result<Vec<SeriesEntry>, DbError> {
    let wanted: HashSet<PathBuf> = files.iter().cloned().collect();
    let mut memo = lock(&SERIES);
    let mut of = match memo.take() {
        Some(last) if last.files.is_subset(&wanted) => last,
        _ => SeriesOf {
            files: HashSet::new(),
            series: Vec::new(),
            by_id: HashMap::new(),
        },
    };
    let new: Vec<PathBuf> = files
        .iter()
        .filter(|f| !of.files.contains(*f))
        .cloned()
        .collect();
    if !new.is_empty() {
        let mut stmt = conn.prepare(&SeriesEntry::query(&format!(
            "read_parquet({})",
            file_list(&new)
        )))?;
        let rows = stmt.query_map([], SeriesEntry::from_row)?;
        for row in rows {
            let entry = row?;
            let id = (
                entry.table.clone(),
                entry.metric.clone(),
                entry.variant.clone(),
                entry.key.clone(),
            );
            match of.by_id.get(&id) {
                Some(&at) => {
                    let known = &mut of.series[at];
                    known.compared |= entry.compared;
                    if known.key_order.is_none() {
                        known.key_order = entry.key_order;
                    }
                }
                None => {
                    of.by_id.insert(id, of.series.len());
                    of.series.push(entry);
                }
            }
        }
        of.files.extend(new);
    }
    let out = of.series.clone();
    *memo = Some(of);
    Ok(out)
}

/// The list of a file DuckDB names in its `filename` column: always one of the files
/// asked for (were it spelled otherwise, the file's runs would silently be none).
fn of_file<'m, T>(per_file: &'m mut HashMap<PathBuf, T>, file: &str) -> Result<&'m mut T, DbError> {
    per_file
        .get_mut(Path::new(file))
        .ok_or_else(|| DbError::Unexpected(format!("DuckDB read {file}, which was not asked for")))
}

/// The summaries files of `files` that hold any of `runs`; each file's runs are read
/// once for the life of the process.
pub fn files_holding(
    conn: &Connection,
    files: &[PathBuf],
    runs: &[String],
) -> Result<Vec<PathBuf>, DbError> {
    let new: Vec<PathBuf> = {
        let known = lock(&RUNS_OF);
        files
            .iter()
            .filter(|f| !known.contains_key(*f))
            .cloned()
            .collect()
    };
    if !new.is_empty() {
        let mut stmt = conn.prepare(&format!(
            "SELECT DISTINCT filename, run_id FROM read_parquet({}, filename = true)",
            file_list(&new)
        ))?;
        let mut per_file: HashMap<PathBuf, HashSet<String>> =
            new.iter().map(|f| (f.clone(), HashSet::new())).collect();
        for row in stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get(1)?)))? {
            let (file, run) = row?;
            of_file(&mut per_file, &file)?.insert(run);
        }
        let mut known = lock(&RUNS_OF);
        // Files of earlier states (replaced by a compaction) are forgotten.
        let current: HashSet<&PathBuf> = files.iter().collect();
        known.retain(|f, _| current.contains(f));
        for (file, set) in per_file {
            known.insert(file, set);
        }
    }
    // Each file's few runs looked up among the wanted ones (not every wanted run in
    // every file: a selection can be thousands of runs).
    let wanted: HashSet<&str> = runs.iter().map(String::as_str).collect();
    let known = lock(&RUNS_OF);
    Ok(files
        .iter()
        .filter(|f| {
            known
                .get(*f)
                .is_some_and(|set| set.iter().any(|r| wanted.contains(r.as_str())))
        })
        .cloned()
        .collect())
}

#[cfg(test)]
mod tests {
    use crate::db::Db;
    use perfdb_ingest::model::{key_of, Direction, Measurement, Numerics, Parsed, RunMeta};
    use perfdb_ingest::pipeline::prepare;
    use perfdb_ingest::warehouse::Warehouse;

    /// One commit of `runs` runs under `label`; run `i` measures two shapes of two
    /// variants, latency (compared) and a note-like count (not), values told apart by
    /// `seed`.
    fn commit(dir: &std::path::Path, label: &str, seed: usize, runs: usize) {
        let prepared = (0..runs)
            .map(|i| {
                let mut measurements = Vec::new();
                let mut keys = perfdb_ingest::model::Keys::default();
                for (m, n) in [("1", "64"), ("2", "128")] {
                    let (key, key_order) =
                        key_of(&[("N".to_string(), n.to_string()), ("M".into(), m.into())]);
                    for variant in ["a", "b"] {
                        for (metric, direction) in
                            [("latency", Direction::Lower), ("iters", Direction::None)]
                        {
                            measurements.push(Measurement {
                                table: "t".into(),
                                variant: variant.into(),
                                key: keys.push(&key),
                                key_order,
                                metric: metric.into(),
                                unit: "us".into(),
                                direction,
                                value: Some((seed * 100 + i) as f64),
                                raw: keys.raw("1"),
                                column: "c".into(),
                                numerics: Numerics::NotChecked,
                                line: 1,
                                note: None,
                            });
                        }
                    }
                }
                let parsed = Parsed {
                    measurements,
                    keys,
                    ..Default::default()
                };
                let meta = RunMeta {
                    label: label.into(),
                    ..Default::default()
                };
                prepare(
                    "x",
                    format!("{label} {seed} {i}").as_bytes(),
                    Some(perfdb_ingest::model::Format::PerfLines),
                    parsed,
                    &meta,
                    &perfdb_ingest::devices::builtin(),
                )
            })
            .collect();
        Warehouse::new(dir).commit(prepared).unwrap();
    }

    fn sorted_series(db: &Db) -> Vec<String> {
        let mut v: Vec<String> = db
            .series()
            .unwrap()
            .iter()
            .map(|s| {
                format!(
                    "{} {} {} {} {:?} {}",
                    s.table, s.metric, s.variant, s.key, s.key_order, s.compared
                )
            })
            .collect();
        v.sort();
        v
    }

    /// The same list as one pass of SQL over the view.
    fn series_by_sql(db: &Db) -> Vec<String> {
        let mut stmt = db
            .conn
            .prepare(
                "SELECT table_name, metric, variant, key, any_value(key_order), bool_or(direction <> 'none') \
                 FROM summaries GROUP BY ALL",
            )
            .unwrap();
        let mut v: Vec<String> = stmt
            .query_map([], |r| {
                Ok(format!(
                    "{} {} {} {} {:?} {}",
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, Option<String>>(4)?,
                    r.get::<_, bool>(5)?
                ))
            })
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        v.sort();
        v
    }

    fn runs_of(db: &Db, label: &str) -> Vec<String> {
        let mut stmt = db
            .conn
            .prepare("SELECT run_id FROM runs WHERE label = ? ORDER BY run_id")
            .unwrap();
        stmt.query_map([label], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    }

    /// The medians of `runs` read from `src` (the view, or the files holding them).
    fn medians(db: &Db, src: &str, runs: &[String]) -> Vec<(String, String, f64)> {
        numbers(db, src, runs, "median")
    }

    /// `column` of each row of `runs` in `src`, with its run and series, sorted.
    fn numbers(db: &Db, src: &str, runs: &[String], column: &str) -> Vec<(String, String, f64)> {
        db.selection_table("facts_sel", runs).unwrap();
        let mut stmt = db
            .conn
            .prepare(&format!(
                "SELECT run_id, key || variant || metric, {column} FROM {src} \
                 WHERE run_id IN (SELECT run_id FROM facts_sel) ORDER BY ALL"
            ))
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    }

    #[test]
    fn facts_read_once_per_file_agree_with_a_pass_over_the_view() {
        let dir = tempfile::tempdir().unwrap();
        commit(dir.path(), "main", 1, 3);
        commit(dir.path(), "pr", 2, 2);
        let db = Db::open(dir.path(), &perfdb_ingest::devices::builtin()).unwrap();
        assert_eq!(sorted_series(&db), series_by_sql(&db));
        assert_eq!(sorted_series(&db).len(), 8);
        // One commit's runs: only its file, and the same values as the whole view.
        let pr = runs_of(&db, "pr");
        let src = db.summaries_of_runs(&pr).unwrap();
        assert_ne!(src, "summaries");
        assert_eq!(medians(&db, &src, &pr), medians(&db, "summaries", &pr));
        assert_eq!(medians(&db, &src, &pr).len(), 2 * 8);
        let files = |src: &str| src.matches(".parquet").count();
        assert_eq!(files(&src), 1, "{src}");

        // After another commit, the files read before come from memory and the new one
        // is read: still the view's answers.
        commit(dir.path(), "main", 3, 2);
        let db = Db::open(dir.path(), &perfdb_ingest::devices::builtin()).unwrap();
        assert_eq!(sorted_series(&db), series_by_sql(&db));
        let main = runs_of(&db, "main");
        assert_eq!(main.len(), 5);
        let src = db.summaries_of_runs(&main).unwrap();
        assert_eq!(files(&src), 2, "{src}");
        assert_eq!(medians(&db, &src, &main), medians(&db, "summaries", &main));
        // A compaction replaces files: the series are read again, and the runs of the
        // merged files found in them.
        Warehouse::new(dir.path())
            .compact(std::time::Duration::ZERO)
            .unwrap();
        let db = Db::open(dir.path(), &perfdb_ingest::devices::builtin()).unwrap();
        assert_eq!(sorted_series(&db), series_by_sql(&db));
        let src = db.summaries_of_runs(&main).unwrap();
        assert_eq!(medians(&db, &src, &main), medians(&db, "summaries", &main));
        assert_eq!(medians(&db, &src, &main).len(), 5 * 8);
        assert_eq!(files(&src), 1, "main's two files merged: {src}");
        // Runs no file holds: no file, no rows.
        let none = db.summaries_of_runs(&["nope".to_string()]).unwrap();
        assert_eq!(files(&none), 0);
        assert!(medians(&db, &none, &["nope".to_string()]).is_empty());
    }

    /// The runs of the newest ingest of `label`.
    fn newest_runs(db: &Db, label: &str) -> Vec<String> {
        let mut stmt = db
            .conn
            .prepare(
                "SELECT run_id FROM runs WHERE label = ? AND ingested_at = \
                 (SELECT max(ingested_at) FROM runs WHERE label = ?) ORDER BY run_id",
            )
            .unwrap();
        stmt.query_map([label, label], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    }

    /// The values of `runs` read from `src` (the view, or the files that may hold them).
    fn values(db: &Db, src: &str, runs: &[String]) -> Vec<(String, String, f64)> {
        numbers(db, src, runs, "value")
    }

    #[test]
    fn compacted_files_are_read_by_their_runs_ingest_times() {
        let dir = tempfile::tempdir().unwrap();
        let wh = Warehouse::new(dir.path());
        // Six ingests of 16 rows, compacted into files of at most 48: two files of
        // three ingests each, each tagged with its runs' ingest times.
        for seed in 1..=6 {
            commit(dir.path(), "main", seed, 2);
        }
        wh.compact_to(std::time::Duration::ZERO, 48).unwrap();
        let c = wh.committed().unwrap();
        assert_eq!(c.measurements.len(), 2, "{:?}", c.measurements);
        assert_eq!(c.ingested.len(), 4, "both tables' files: {:?}", c.ingested);
        let ranges: Vec<(i64, i64)> = c.measurements.iter().map(|m| c.ingested[m]).collect();
        let (a, b) = (ranges[0].min(ranges[1]), ranges[0].max(ranges[1]));
        assert!(a.0 <= a.1 && a.1 < b.0 && b.0 <= b.1, "{ranges:?}");
        let files = |src: &str| src.matches(".parquet").count();

        // The newest ingest's runs: one compacted file, the same values as the view.
        let db = Db::open(dir.path(), &perfdb_ingest::devices::builtin()).unwrap();
        let newest = newest_runs(&db, "main");
        assert_eq!(newest.len(), 2);
        let src = db.measurements_of_runs(&newest).unwrap();
        assert_eq!(files(&src), 1, "{src}");
        assert_eq!(
            values(&db, &src, &newest),
            values(&db, "measurements", &newest)
        );
        assert_eq!(values(&db, &src, &newest).len(), 2 * 8);
        let sums = db.summaries_of_runs(&newest).unwrap();
        assert_eq!(files(&sums), 1, "{sums}");
        assert_eq!(
            medians(&db, &sums, &newest),
            medians(&db, "summaries", &newest)
        );
        // Every run: every file (the whole view).
        let all = runs_of(&db, "main");
        assert_eq!(db.measurements_of_runs(&all).unwrap(), "measurements");

        // An ingest since: its file has no range and is read beside the compacted one.
        commit(dir.path(), "main", 7, 2);
        let db = Db::open(dir.path(), &perfdb_ingest::devices::builtin()).unwrap();
        let latest = newest_runs(&db, "main");
        let src = db.measurements_of_runs(&latest).unwrap();
        assert_eq!(files(&src), 1, "only the new, unranged file: {src}");
        assert_eq!(values(&db, &src, &latest).len(), 2 * 8);
        let src = db.measurements_of_runs(&newest).unwrap();
        assert_eq!(files(&src), 2, "{src}");
        assert_eq!(
            values(&db, &src, &newest),
            values(&db, "measurements", &newest)
        );

        // Compacting again leaves the two files of 48 rows (half the bound or more) and
        // the one new file alone; two new files are merged, not the year before them.
        wh.compact_to(std::time::Duration::ZERO, 48).unwrap();
        let again = wh.committed().unwrap();
        let mut kept = again.measurements.clone();
        kept.sort();
        let mut before = c.measurements.clone();
        before.extend(wh_new_file(&again, &c));
        before.sort();
        assert_eq!(kept, before);
        commit(dir.path(), "main", 8, 2);
        wh.compact_to(std::time::Duration::ZERO, 48).unwrap();
        let last = wh.committed().unwrap();
        assert_eq!(last.measurements.len(), 3, "{:?}", last.measurements);
        for m in &c.measurements {
            assert!(last.measurements.contains(m), "{m} was rewritten");
        }
        let db = Db::open(dir.path(), &perfdb_ingest::devices::builtin()).unwrap();
        let every = runs_of(&db, "main");
        assert_eq!(every.len(), 16);
        assert_eq!(values(&db, "measurements", &every).len(), 16 * 8);
    }

    /// The measurements files of `now` that `then` did not list.
    fn wh_new_file(
        now: &perfdb_ingest::warehouse::Committed,
        then: &perfdb_ingest::warehouse::Committed,
    ) -> Vec<String> {
        now.measurements
            .iter()
            .filter(|m| !then.measurements.contains(m))
            .cloned()
            .collect()
    }
}
