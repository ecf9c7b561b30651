//! `perfdb runs` and `perfdb sql`.

use crate::cli::{RunsArgs, SqlArgs};
use crate::Exit;
use perfdb_reports::db::{sql_str, Db};
use perfdb_reports::query::sql::SqlDb;
use perfdb_reports::query::table::{render, TableFormat};
use std::path::Path;

fn print_query(root: &Path, sql: &str, format: TableFormat) -> anyhow::Result<Exit> {
    print_result(&Db::open(root, &super::device_table(None)?)?, sql, format)
}

fn print_result(db: &Db, sql: &str, format: TableFormat) -> anyhow::Result<Exit> {
    let (schema, batches) = db.query(sql)?;
    let text = render(&schema, &batches, format)?;
    super::print_out(&text)?;
    Ok(Exit::Ok)
}

pub fn runs(root: &Path, a: RunsArgs) -> anyhow::Result<Exit> {
    let mut conds = Vec::new();
    if let Some(l) = &a.label {
        conds.push(format!("label = {}", sql_str(l)));
    }
    if let Some(c) = &a.commit {
        conds.push(format!("starts_with(\"commit\", {})", sql_str(c)));
    }
    for (k, v) in super::parse_pairs(&a.tags, "--tag")? {
        conds.push(perfdb_reports::db::json_has_pair("tags", &k, &v));
    }
    let filter = if conds.is_empty() {
        String::new()
    } else {
        format!("WHERE {}", conds.join(" AND "))
    };
    let sql = format!(
        "SELECT run_id, label, trial, format, \"commit\", arch, tags, verdict, n_measurements AS \"values\", n_tables AS \"tables\", \
         strftime(ingested_at, '%Y-%m-%d %H:%M:%S') AS ingested, source_path \
         FROM runs {filter} ORDER BY ingested_at, label, trial"
    );
    print_query(root, &sql, a.format)
}

pub fn sql(root: &Path, a: SqlArgs) -> anyhow::Result<Exit> {
    let devices = super::device_table(None)?;
    if a.write {
        return print_result(&Db::open_unrestricted(root, &devices)?, &a.query, a.format);
    }
    let db = SqlDb::open(root, &devices)?;
    // The device table is always there; percent of peak when the query asks for it.
    db.db()
        .peak_views(a.query.to_ascii_lowercase().contains("percent_of_peak"))?;
    db.check_read_only(&a.query)?;
    print_result(db.db(), &a.query, a.format)
}
