//! `perfdb export`: a label's compared values in another tool's format (PyTorch's
//! benchmark database v3), read back by `perfdb ingest` to the same rows: the rows are
//! `perfdb_reports::query::export`'s, each record the format's own writer's.

use crate::cli::{ExportArgs, ExportFormat};
use crate::Exit;
use perfdb_ingest::formats::pytorch_v3::write;
use perfdb_reports::db::Db;
use perfdb_reports::query::export;
use std::io::Write;
use std::path::Path;

pub fn run(root: &Path, a: ExportArgs) -> anyhow::Result<Exit> {
    let db = Db::open(root, &super::device_table(None)?)?;
    let records = match a.format {
        ExportFormat::PytorchV3 => export::rows(&db, &a.label)?
            .iter()
            .map(|r| write::record(r, &a.label))
            .collect::<Vec<_>>(),
    };
    if records.is_empty() {
        anyhow::bail!(
            "label '{}' has no values with a direction to export (`perfdb runs --label {}` \
             lists its runs)",
            a.label,
            a.label
        );
    }
    let mut text = String::new();
    for r in &records {
        text.push_str(&perfdb_reports::json::line(r));
        text.push('\n');
    }
    match &a.out {
        Some(path) => {
            // Written whole, then moved into place: a reader never sees half a file.
            let tmp = path.with_extension("partial");
            std::fs::write(&tmp, &text).map_err(|e| anyhow::anyhow!("{}: {e}", tmp.display()))?;
            std::fs::rename(&tmp, path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
            say!(
                "wrote {} pytorch-v3 record(s) of label '{}' to {}",
                records.len(),
                a.label,
                path.display()
            );
        }
        None => std::io::stdout().lock().write_all(text.as_bytes())?,
    }
    Ok(Exit::Ok)
}
