//! Triton's `perf_report(...).run(print_data=True)` stdout: for each benchmark a
//! `<plot_name>:` line, then the pandas `to_string()` of its results — an integer index
//! column, the `x_names` columns (printed as floats: `512.0`), and one column per line,
//! headed `<line_name> (<ylabel>)`:
//!
//! ```text
//! vector-add-performance:
//!           size  Triton (GB/s)  Torch (GB/s)
//! 0       4096.0      11.953308     11.377778
//! ```
//!
//! The plot name is the table, each line a variant, the x columns the key (integral
//! floats read as integers, so `512.0` matches `512`), and the ylabel the metric and unit
//! (`units::unit_of`; a ylabel that names no unit is kept as `unclassified`). Source:
//! `python/triton/testing.py` (`Mark._run`).

use super::{Format, ParseError, Parser};
use crate::model::{self, key_of, Direction, Measurement, Numerics, Parsed, Raw, Warning};

pub struct TritonPerfReport;

/// `<plot_name>:` alone on its line (Triton's plot names have no spaces).
fn title(line: &str) -> Option<&str> {
    let t = line.trim_end();
    let name = t.strip_suffix(':')?;
    (!name.is_empty()
        && !name.starts_with(char::is_whitespace)
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '+' | '/')))
    .then_some(name)
}

/// A data row of `to_string()`: an integer index, then one token per column.
fn is_row(line: &str) -> bool {
    let mut tokens = line.split_whitespace();
    tokens
        .next()
        .is_some_and(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
        && tokens.next().is_some()
}

/// Does the line after a title look like a header with at least one `<line> (<ylabel>)`?
fn is_header(line: &str) -> bool {
    line.trim_end().ends_with(')') && line.contains(" (")
}

impl Parser for TritonPerfReport {
    fn format(&self) -> Format {
        Format::TritonPerfReport
    }
    fn sniff(&self, text: &str) -> bool {
        let lines: Vec<&str> = text.lines().take(2000).collect();
        lines.windows(3).any(|w| {
            title(w[0]).is_some()
                && is_header(w[1])
                && is_row(w[2])
                && w[2].split_whitespace().next() == Some("0")
        })
    }
    fn parse(&self, text: &str) -> Result<Parsed, ParseError> {
        let lines: Vec<&str> = text.lines().collect();
        let mut parsed = Parsed::default();
        let mut first_error: Option<ParseError> = None;
        let mut i = 0;
        while i + 2 < lines.len() {
            let Some(plot) = title(lines[i]) else {
                i += 1;
                continue;
            };
            if !is_header(lines[i + 1]) || !is_row(lines[i + 2]) {
                i += 1;
                continue;
            }
            let end = (i + 2..lines.len())
                .find(|&j| !is_row(lines[j]))
                .unwrap_or(lines.len());
            match table(plot, i + 2, lines[i + 1], &lines[i + 2..end]) {
                Ok(ms) => parsed.measurements.extend(ms),
                Err(e) => {
                    parsed.warnings.push(Warning {
                        line: e.line,
                        reason: format!("{plot}: {} (table skipped)", e.reason),
                    });
                    first_error.get_or_insert(e);
                }
            }
            i = end;
        }
        if parsed.measurements.is_empty() {
            return Err(first_error.unwrap_or_else(|| {
                ParseError::at(
                    0,
                    "no Triton perf_report table: no `<plot_name>:` line followed by a \
                     `<line> (<ylabel>)` header and index-numbered rows",
                )
            }));
        }
        Ok(parsed)
    }
}

/// Split the header at the columns' right edges, which the data rows give: every value
/// ends where its column does. `first_row` is the header's line number + 1.
fn columns(header: &str, rows: &[&str], first_row: usize) -> Result<Vec<String>, ParseError> {
    let ends = |row: &str| -> Vec<usize> {
        let mut out = Vec::new();
        let b = row.as_bytes();
        for j in 0..b.len() {
            if !b[j].is_ascii_whitespace() && (j + 1 == b.len() || b[j + 1].is_ascii_whitespace()) {
                out.push(j + 1);
            }
        }
        out
    };
    // pandas left-aligns the index (`9 ` then `10`): only the other columns' edges must
    // agree from row to row.
    let edges = ends(rows[0]);
    let mut index_end = edges.first().copied().unwrap_or(0);
    for (k, row) in rows.iter().enumerate().skip(1) {
        let e = ends(row);
        if e.get(1..) != edges.get(1..) {
            return Err(ParseError::at(
                first_row + k,
                "row not aligned with the first row's columns",
            ));
        }
        index_end = index_end.max(e[0]);
    }
    // The index column has no header; the others' names sit left of their edges.
    let mut out = Vec::new();
    let mut start = index_end;
    for &end in &edges[1..] {
        let name = header
            .get(start.min(header.len())..end.min(header.len()))
            .unwrap_or("")
            .trim();
        if name.is_empty() {
            return Err(ParseError::at(
                first_row - 1,
                format!("no header above the column ending at byte {end}"),
            ));
        }
        out.push(name.to_string());
        start = end;
    }
    if header.trim_end().len() > edges.last().copied().unwrap_or(0) {
        return Err(ParseError::at(
            first_row - 1,
            "header wider than its rows: a header the rows do not line up under",
        ));
    }
    Ok(out)
}

/// `Triton (GB/s)` -> (`Triton`, `GB/s`); an x column has no parenthesised ylabel.
fn line_and_ylabel(name: &str) -> Option<(&str, &str)> {
    let open = name.rfind(" (")?;
    let ylabel = name[open + 2..].strip_suffix(')')?;
    Some((name[..open].trim(), ylabel.trim()))
}

/// `512.0` -> `512`: pandas prints integral x values as floats.
fn key_cell(cell: &str) -> String {
    match cell.strip_suffix(".0") {
        Some(int)
            if !int.is_empty()
                && int
                    .trim_start_matches('-')
                    .bytes()
                    .all(|b| b.is_ascii_digit()) =>
        {
            int.to_string()
        }
        _ => cell.to_string(),
    }
}

fn table(
    plot: &str,
    first_row: usize,
    header: &str,
    rows: &[&str],
) -> Result<Vec<Measurement>, ParseError> {
    let cols = columns(header, rows, first_row + 1)?;
    let lines: Vec<(usize, &str, &str)> = cols
        .iter()
        .enumerate()
        .filter_map(|(c, col)| line_and_ylabel(col).map(|(l, y)| (c, l, y)))
        .collect();
    if lines.is_empty() {
        return Err(ParseError::at(
            first_row,
            "no `<line> (<ylabel>)` column in the header",
        ));
    }
    let x: Vec<usize> = (0..cols.len())
        .filter(|c| !lines.iter().any(|(l, ..)| l == c))
        .collect();
    // What each line column stores, worked out once per table (names are interned).
    struct LineColumn<'a> {
        c: usize,
        variant: model::Name,
        metric: model::Name,
        unit: model::Name,
        direction: Direction,
        /// To the canonical unit, when the ylabel's unit is not it.
        factor: Option<f64>,
        ylabel: &'a str,
        column: model::Name,
    }
    let line_columns: Vec<LineColumn> = lines
        .iter()
        .map(|&(c, line, ylabel)| {
            let (metric, unit, direction, factor) =
                match crate::units::unit_of(&ylabel.to_ascii_lowercase()) {
                    Some(u) => (
                        u.metric,
                        u.canonical,
                        u.direction,
                        (u.factor != 1.0).then_some(u.factor),
                    ),
                    None => (model::metric::UNCLASSIFIED, ylabel, Direction::None, None),
                };
            LineColumn {
                c,
                variant: line.into(),
                metric: metric.into(),
                unit: unit.into(),
                direction,
                factor,
                ylabel,
                column: cols[c].as_str().into(),
            }
        })
        .collect();
    let note: Option<model::Name> = Some("unclassified column".into());
    let table: model::Name = plot.into();
    let mut out = Vec::with_capacity(rows.len() * line_columns.len());
    let mut cells: Vec<&str> = Vec::with_capacity(cols.len() + 1);
    for (k, row) in rows.iter().enumerate() {
        let no = first_row + 1 + k;
        // The index, then one token per column (values have no spaces).
        cells.clear();
        cells.extend(row.split_whitespace().skip(1));
        if cells.len() != cols.len() {
            return Err(ParseError::at(
                no,
                format!("{} cells under {} columns", cells.len(), cols.len()),
            ));
        }
        let pairs: Vec<(String, String)> = x
            .iter()
            .map(|&c| (cols[c].clone(), key_cell(cells[c])))
            .collect();
        let (key, key_order) = key_of(&pairs);
        for lc in &line_columns {
            let cell = cells[lc.c];
            let value = crate::text::parse_value(cell).map_err(|_| {
                ParseError::at(
                    no,
                    format!("`{cell}` under `{}` is not a number", cols[lc.c]),
                )
            })?;
            let (value, raw) = match (lc.factor, value) {
                (Some(f), Some(v)) => (
                    Some(crate::units::to_canonical(v, f)),
                    Raw::new(&format!("{cell} {}", lc.ylabel)),
                ),
                _ => (value, Raw::new(cell)),
            };
            out.push(Measurement {
                table,
                variant: lc.variant,
                key: key.clone(),
                key_order,
                metric: lc.metric,
                unit: lc.unit,
                direction: lc.direction,
                value,
                raw,
                column: lc.column,
                numerics: Numerics::NotChecked,
                line: no as u32,
                note: if lc.direction == Direction::None {
                    note
                } else {
                    None
                },
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_left_aligned_index_of_more_than_ten_rows() {
        let header = "      M  Triton (TFLOPS)";
        let rows = [
            "0   1.0        10.000000",
            "9   2.0        10.000000",
            "10  3.0        10.000000",
        ];
        assert_eq!(columns(header, &rows, 3).unwrap(), ["M", "Triton (TFLOPS)"]);
        let bad = ["0   1.0        10.000000", "1   2.0       10.000000"];
        let e = columns(header, &bad, 3).unwrap_err();
        assert_eq!(
            (e.line, e.reason.as_str()),
            (4, "row not aligned with the first row's columns")
        );
    }

    #[test]
    fn columns_follow_the_rows_edges() {
        let header = "          size  Triton (GB/s)  Torch (GB/s)";
        let rows = ["0       4096.0      11.953308     11.377778"];
        let cols = columns(header, &rows, 3).unwrap();
        assert_eq!(cols, ["size", "Triton (GB/s)", "Torch (GB/s)"]);
        assert_eq!(line_and_ylabel("Triton (GB/s)"), Some(("Triton", "GB/s")));
        assert_eq!(line_and_ylabel("size"), None);
        assert_eq!(key_cell("4096.0"), "4096");
        assert_eq!(key_cell("0.5"), "0.5");
        assert!(title("matmul-performance-fp16:").is_some());
        assert!(title("gemm summary (markdown):").is_none());
    }
}
