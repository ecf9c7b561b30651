//! `perfdb status`: the overview in the terminal, worst first.

use crate::cli::{StatusArgs, TableFormat};
use crate::Exit;
use perfdb_reports::db::Db;
use perfdb_reports::overview::{overview, Ask};
use perfdb_reports::render::overview::table;
use std::path::Path;

pub fn run(root: &Path, a: StatusArgs) -> anyhow::Result<Exit> {
    let config = perfdb_reports::config::Config::load_or_default(a.config.as_deref())?;
    let db = Db::open(root, &config.device_table())?;
    let ask = Ask {
        label: a.label,
        machine: a.machine,
        commits: a.commits,
        table: a.table,
        variant: a.variant,
        metric: a.metric,
    };
    let mut o = overview(&db, &ask, &config.detect)?;
    let total = o.rows.len();
    if a.limit > 0 {
        o.rows.truncate(a.limit);
    }
    let text = match a.format {
        TableFormat::Json => perfdb_reports::json::pretty(&o),
        TableFormat::Table | TableFormat::Csv => {
            table(&o, total, matches!(a.format, TableFormat::Csv))
        }
    };
    super::print_out(&text)?;
    Ok(Exit::Ok)
}
