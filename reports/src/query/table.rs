//! Printing query results (`perfdb sql`, `perfdb runs`) as a table, CSV or JSON lines.

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;

/// How rows are printed (`--format` of `runs`, `sql` and `status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TableFormat {
    Table,
    Csv,
    Json,
}

#[derive(Debug, thiserror::Error)]
#[error("cannot render the result: {0}")]
pub struct RenderError(#[from] arrow::error::ArrowError);

/// Render `batches` (with `schema`, so an empty result still shows its columns).
pub fn render(
    schema: &SchemaRef,
    batches: &[RecordBatch],
    format: TableFormat,
) -> Result<String, RenderError> {
    let batches = &batches
        .iter()
        .map(utc_as_offset)
        .collect::<Result<Vec<_>, _>>()?;
    match format {
        TableFormat::Table => {
            if batches.iter().all(|b| b.num_rows() == 0) {
                let empty = RecordBatch::new_empty(schema.clone());
                return Ok(format!(
                    "{}\n(0 rows)\n",
                    arrow::util::pretty::pretty_format_batches(&[empty])?
                ));
            }
            let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
            Ok(format!(
                "{}\n({rows} row{})\n",
                arrow::util::pretty::pretty_format_batches(batches)?,
                if rows == 1 { "" } else { "s" }
            ))
        }
        TableFormat::Csv => {
            let mut buf = Vec::new();
            {
                let mut w = arrow::csv::WriterBuilder::new()
                    .with_header(true)
                    .build(&mut buf);
                if batches.is_empty() {
                    w.write(&RecordBatch::new_empty(schema.clone()))?;
                }
                for b in batches {
                    w.write(&flatten_nested(b)?)?;
                }
            }
            Ok(String::from_utf8_lossy(&buf).into_owned())
        }
        TableFormat::Json => {
            let mut buf = Vec::new();
            {
                let mut w = arrow::json::LineDelimitedWriter::new(&mut buf);
                for b in batches {
                    w.write(b)?;
                }
                w.finish()?;
            }
            Ok(crate::json::escaped(
                String::from_utf8_lossy(&buf).into_owned(),
            ))
        }
    }
}

/// DuckDB hands `TIMESTAMPTZ` columns over as timestamps in the zone named `UTC`, and
/// arrow prints a named zone only with its time-zone database, which perfdb leaves
/// out: the same instants, labelled `+00:00`, print everywhere (`...T08:00:00Z`).
fn utc_as_offset(b: &RecordBatch) -> Result<RecordBatch, RenderError> {
    use arrow::datatypes::{DataType, Field, Schema};
    let utc = |t: &DataType| matches!(t, DataType::Timestamp(_, Some(tz)) if matches!(&**tz, "UTC" | "Etc/UTC" | "GMT" | "Z"));
    if !b.schema().fields().iter().any(|f| utc(f.data_type())) {
        return Ok(b.clone());
    }
    let mut fields = Vec::new();
    let mut cols = Vec::new();
    for (f, c) in b.schema().fields().iter().zip(b.columns()) {
        match f.data_type() {
            DataType::Timestamp(unit, Some(_)) if utc(f.data_type()) => {
                let to = DataType::Timestamp(*unit, Some("+00:00".into()));
                cols.push(arrow::compute::cast(c, &to)?);
                fields.push(Field::new(f.name(), to, f.is_nullable()));
            }
            _ => {
                cols.push(c.clone());
                fields.push(f.as_ref().clone());
            }
        }
    }
    Ok(RecordBatch::try_new(
        std::sync::Arc::new(Schema::new(fields)),
        cols,
    )?)
}

/// CSV has no nested types: print list and struct cells as text (`[1.0, 2.0]`).
fn flatten_nested(b: &RecordBatch) -> Result<RecordBatch, RenderError> {
    use arrow::array::{ArrayRef, StringBuilder};
    use arrow::datatypes::{DataType, Field, Schema};
    use arrow::util::display::{ArrayFormatter, FormatOptions};
    let nested = |t: &DataType| t.is_nested();
    if !b.schema().fields().iter().any(|f| nested(f.data_type())) {
        return Ok(b.clone());
    }
    let mut fields = Vec::new();
    let mut cols: Vec<ArrayRef> = Vec::new();
    for (f, c) in b.schema().fields().iter().zip(b.columns()) {
        if nested(f.data_type()) {
            let fmt = ArrayFormatter::try_new(c.as_ref(), &FormatOptions::default())?;
            let mut sb = StringBuilder::new();
            for i in 0..c.len() {
                if c.is_null(i) {
                    sb.append_null();
                } else {
                    sb.append_value(fmt.value(i).to_string());
                }
            }
            fields.push(Field::new(f.name(), DataType::Utf8, true));
            cols.push(std::sync::Arc::new(sb.finish()));
        } else {
            fields.push(f.as_ref().clone());
            cols.push(c.clone());
        }
    }
    Ok(RecordBatch::try_new(
        std::sync::Arc::new(Schema::new(fields)),
        cols,
    )?)
}

/// Rows as plain text columns, left-aligned and two spaces apart, under `head` (left
/// out when empty); trailing spaces trimmed.
pub fn aligned(head: &[String], rows: &[Vec<String>]) -> String {
    let lines: Vec<&[String]> = std::iter::once(head)
        .filter(|h| !h.is_empty())
        .chain(rows.iter().map(Vec::as_slice))
        .collect();
    let columns = lines.iter().map(|l| l.len()).max().unwrap_or(0);
    let width: Vec<usize> = (0..columns)
        .map(|i| {
            lines
                .iter()
                .filter_map(|l| l.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for l in lines {
        let mut line = String::new();
        for (i, c) in l.iter().enumerate() {
            line.push_str(&format!("{c:<w$}  ", w = width[i]));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
