//! `perfdb sql`: a person's own SQL over the warehouse. Read-only unless asked: every
//! statement in the text is classified by DuckDB itself (parsed and bound, not run)
//! before any of it runs, and only queries (`SELECT`, `FROM ...`, `WITH`, `VALUES`,
//! `DESCRIBE`, `SHOW`, `SUMMARIZE`, `EXPLAIN`) are accepted. The database is the
//! locked-down one every reader uses ([`Db::open`]), so a query can read the committed
//! files and nothing else.
//!
//! The kind of a statement is only in DuckDB's C API (`duckdb_prepared_statement_type`);
//! the Rust binding keeps it private. So the database is opened through the C API and
//! shared by the binding's connection (which runs the query) and one raw connection
//! (which classifies it).

use crate::db::{Db, DbError};
use duckdb::ffi;
use std::ffi::{CStr, CString};
use std::path::Path;
use std::sync::Arc;

/// A statement `perfdb sql` refused, and why.
#[derive(Debug, thiserror::Error)]
pub enum SqlError {
    #[error(
        "perfdb sql is read-only: statement {index} is {kind}, which can change files or settings; \
         pass --write to run it (what it writes is not part of the warehouse)"
    )]
    NotReadOnly { index: usize, kind: &'static str },
    #[error("{0}")]
    Invalid(String),
    #[error(
        "perfdb sql is read-only and reads only the warehouse's committed files: {0}; \
         pass --write to run it with file access (what it writes is not part of the warehouse)"
    )]
    Refused(String),
    #[error(transparent)]
    Db(#[from] DbError),
}

/// The warehouse's database, opened so its statements can be classified.
pub struct SqlDb {
    db: Option<Db>,
    raw_con: ffi::duckdb_connection,
    raw_db: ffi::duckdb_database,
}

impl SqlDb {
    /// The same database [`Db::open`] gives, with a classifying connection beside it.
    pub fn open(
        root: &Path,
        devices: &Arc<perfdb_ingest::devices::Table>,
    ) -> Result<SqlDb, DbError> {
        let mut raw_db: ffi::duckdb_database = std::ptr::null_mut();
        // SAFETY: a null path opens an in-memory database; `raw_db` is written on success.
        let rc = unsafe { ffi::duckdb_open(std::ptr::null(), &mut raw_db) };
        if rc != ffi::DuckDBSuccess {
            return Err(DbError::Unexpected(
                "cannot open an in-memory database".into(),
            ));
        }
        let mut this = SqlDb {
            db: None,
            raw_con: std::ptr::null_mut(),
            raw_db,
        };
        // SAFETY: `raw_db` is open; the connection is closed in `drop` before it.
        if unsafe { ffi::duckdb_connect(this.raw_db, &mut this.raw_con) } != ffi::DuckDBSuccess {
            return Err(DbError::Unexpected("cannot connect to the database".into()));
        }
        // SAFETY: `raw_db` stays open until `drop`, which drops this connection first
        // (`open_from_raw` does not close the database on drop).
        let conn = unsafe { duckdb::Connection::open_from_raw(this.raw_db)? };
        this.db = Some(Db::open_on(conn, root, devices)?);
        Ok(this)
    }

    pub fn db(&self) -> &Db {
        self.db.as_ref().expect("opened")
    }

    /// The kind of each statement in `sql`, as DuckDB parses and binds it (`SELECT`,
    /// `COPY`, `ATTACH`...); an error when DuckDB cannot parse or bind one.
    pub fn kinds(&self, sql: &str) -> Result<Vec<&'static str>, SqlError> {
        let text = CString::new(sql)
            .map_err(|_| SqlError::Invalid("the query contains a NUL byte".into()))?;
        let mut extracted: ffi::duckdb_extracted_statements = std::ptr::null_mut();
        // SAFETY: `raw_con` is open; `extracted` is destroyed below on every path.
        let n =
            unsafe { ffi::duckdb_extract_statements(self.raw_con, text.as_ptr(), &mut extracted) };
        let result = (|| {
            if n == 0 {
                // SAFETY: `extracted` was filled by the call above.
                let e = unsafe { ffi::duckdb_extract_statements_error(extracted) };
                return Err(SqlError::Invalid(c_text(e, "the query cannot be parsed")));
            }
            (0..n)
                .map(|i| {
                    let mut stmt: ffi::duckdb_prepared_statement = std::ptr::null_mut();
                    // SAFETY: `i < n`; `stmt` is destroyed right after reading it.
                    unsafe {
                        let rc = ffi::duckdb_prepare_extracted_statement(
                            self.raw_con,
                            extracted,
                            i,
                            &mut stmt,
                        );
                        let out = if rc == ffi::DuckDBSuccess {
                            Ok(kind_name(ffi::duckdb_prepared_statement_type(stmt)))
                        } else {
                            let e = c_text(
                                ffi::duckdb_prepare_error(stmt),
                                "the query cannot be prepared",
                            );
                            Err(if e.starts_with("Permission Error") {
                                SqlError::Refused(e)
                            } else {
                                SqlError::Invalid(e)
                            })
                        };
                        ffi::duckdb_destroy_prepare(&mut stmt);
                        out
                    }
                })
                .collect()
        })();
        // SAFETY: destroyed once; null-safe in DuckDB.
        unsafe { ffi::duckdb_destroy_extracted(&mut extracted) };
        result
    }

    /// Refuse `sql` unless every statement in it only reads.
    pub fn check_read_only(&self, sql: &str) -> Result<(), SqlError> {
        for (i, kind) in self.kinds(sql)?.into_iter().enumerate() {
            if !READ_ONLY.contains(&kind) {
                return Err(SqlError::NotReadOnly { index: i + 1, kind });
            }
        }
        Ok(())
    }
}

impl Drop for SqlDb {
    fn drop(&mut self) {
        // The binding's connection first, then ours, then the database.
        self.db = None;
        // SAFETY: both were opened in `open` and are closed exactly once, here.
        unsafe {
            if !self.raw_con.is_null() {
                ffi::duckdb_disconnect(&mut self.raw_con);
            }
            ffi::duckdb_close(&mut self.raw_db);
        }
    }
}

/// The statement kinds that only read.
const READ_ONLY: [&str; 2] = ["SELECT", "EXPLAIN"];

fn c_text(p: *const std::os::raw::c_char, otherwise: &str) -> String {
    if p.is_null() {
        return otherwise.to_string();
    }
    // SAFETY: DuckDB returns a NUL-terminated string owned by the statement.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

fn kind_name(t: ffi::duckdb_statement_type) -> &'static str {
    match t {
        ffi::duckdb_statement_type_DUCKDB_STATEMENT_TYPE_SELECT => "SELECT",
        ffi::duckdb_statement_type_DUCKDB_STATEMENT_TYPE_EXPLAIN => "EXPLAIN",
        ffi::duckdb_statement_type_DUCKDB_STATEMENT_TYPE_INSERT => "INSERT",
        ffi::duckdb_statement_type_DUCKDB_STATEMENT_TYPE_UPDATE => "UPDATE",
        ffi::duckdb_statement_type_DUCKDB_STATEMENT_TYPE_DELETE => "DELETE",
        ffi::duckdb_statement_type_DUCKDB_STATEMENT_TYPE_CREATE => "CREATE",
        ffi::duckdb_statement_type_DUCKDB_STATEMENT_TYPE_ALTER => "ALTER",
        ffi::duckdb_statement_type_DUCKDB_STATEMENT_TYPE_DROP => "DROP",
        ffi::duckdb_statement_type_DUCKDB_STATEMENT_TYPE_COPY => "COPY",
        ffi::duckdb_statement_type_DUCKDB_STATEMENT_TYPE_COPY_DATABASE => "COPY DATABASE",
        ffi::duckdb_statement_type_DUCKDB_STATEMENT_TYPE_EXPORT => "EXPORT",
        ffi::duckdb_statement_type_DUCKDB_STATEMENT_TYPE_ATTACH => "ATTACH",
        ffi::duckdb_statement_type_DUCKDB_STATEMENT_TYPE_DETACH => "DETACH",
        ffi::duckdb_statement_type_DUCKDB_STATEMENT_TYPE_LOAD => "LOAD/INSTALL",
        ffi::duckdb_statement_type_DUCKDB_STATEMENT_TYPE_SET
        | ffi::duckdb_statement_type_DUCKDB_STATEMENT_TYPE_VARIABLE_SET => "SET",
        ffi::duckdb_statement_type_DUCKDB_STATEMENT_TYPE_PRAGMA => "PRAGMA",
        ffi::duckdb_statement_type_DUCKDB_STATEMENT_TYPE_CALL => "CALL",
        ffi::duckdb_statement_type_DUCKDB_STATEMENT_TYPE_TRANSACTION => "a transaction statement",
        ffi::duckdb_statement_type_DUCKDB_STATEMENT_TYPE_VACUUM => "VACUUM",
        ffi::duckdb_statement_type_DUCKDB_STATEMENT_TYPE_ANALYZE => "ANALYZE",
        ffi::duckdb_statement_type_DUCKDB_STATEMENT_TYPE_MERGE_INTO => "MERGE INTO",
        ffi::duckdb_statement_type_DUCKDB_STATEMENT_TYPE_MULTI => "a multi-part statement",
        ffi::duckdb_statement_type_DUCKDB_STATEMENT_TYPE_PREPARE
        | ffi::duckdb_statement_type_DUCKDB_STATEMENT_TYPE_EXECUTE => "PREPARE/EXECUTE",
        _ => "a statement of another kind",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_pass_and_statements_that_change_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let db = SqlDb::open(dir.path(), &perfdb_ingest::devices::builtin()).unwrap();
        for q in [
            "SELECT count(*) FROM runs",
            "FROM measurements LIMIT 1",
            "WITH a AS (SELECT 1) SELECT * FROM a",
            "DESCRIBE runs",
            "SUMMARIZE SELECT 1",
            "EXPLAIN SELECT 1",
            "SELECT 1; SELECT 2",
        ] {
            db.check_read_only(q).unwrap_or_else(|e| panic!("{q}: {e}"));
        }
        for (q, kind) in [
            ("SET threads = 1", "SET"),
            ("CREATE TEMP TABLE t AS SELECT 1", "CREATE"),
            ("SELECT 1; CREATE TEMP TABLE t AS SELECT 1", "CREATE"),
        ] {
            match db.check_read_only(q) {
                Err(SqlError::NotReadOnly { kind: k, .. }) => assert_eq!(k, kind, "{q}"),
                other => panic!("{q}: {other:?}"),
            }
        }
        // What touches a file other than the committed ones is refused by its kind or,
        // when DuckDB binds it (COPY, read_text), by the locked-down database.
        for q in [
            "COPY (SELECT 1) TO 'x.csv'",
            "SELECT 1; COPY (SELECT 1) TO 'x.csv'",
            "ATTACH 'x.db'",
            "INSTALL httpfs",
            "EXPORT DATABASE 'out'",
            "SELECT * FROM read_text('/etc/hostname')",
        ] {
            match db.check_read_only(q) {
                Err(SqlError::Refused(m)) => assert!(m.contains("Permission"), "{q}: {m}"),
                Err(SqlError::NotReadOnly { kind, .. }) => {
                    assert!(
                        ["ATTACH", "LOAD/INSTALL", "EXPORT"].contains(&kind),
                        "{q}: {kind}"
                    )
                }
                other => panic!("{q}: {other:?}"),
            }
        }
        assert!(matches!(
            db.check_read_only("SELEC 1"),
            Err(SqlError::Invalid(m)) if m.contains("syntax")
        ));
    }
}
