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
//!
//! Before Triton 3.6 the columns were headed by the line names alone (`N  Triton  Torch
//! (native)  Torch (jit)`): the line names are the variants, whole (parentheses and
//! all), the x columns the leading ones whose every value is integral or a name, and
//! the unit comes from `--unit` as for `triton-csv` (without it the values are kept
//! `unclassified`, said once per table), unless every line name carries its unit after
//! a dash (`Triton-GB/s`, `Triton-TFlops-max`: Intel's triton_kernels_benchmark), which
//! then says it (a statistic after the unit is kept beside the value, not compared). A
//! table whose middle pandas elided (a `..` row, and a `[N rows x M columns]` footer)
//! is read around the gap, with a warning saying how many rows were not printed.
//!
//! A table printed without the index (Triton's 2026 prints, `to_string(index=False)`) is
//! read when its header is the labelled one (`M  N  K  cuBLAS (TFLOPS)  Triton
//! (TFLOPS)`) and its rows are numbers alone: without the index, only the labelled
//! header tells a perf report from another column of numbers, so an unlabelled one is
//! not taken.

use crate::formats::parser::{Context, Evidence, ParseError, Parser};
use crate::formats::support::emit::{key_number, KeyLayout, Spec};
use crate::formats::support::triton_lines::{labelled_lines, line_and_ylabel};
use crate::model::Format;
use crate::model::{metric, Name, Parsed, Warning};

pub struct TritonPerfReport;

/// `<plot_name>:` alone on its line (Triton's plot names have no spaces; its tutorials
/// name plots with `=`: `fused-attention-batch4-head32-d64-fwd-causal=True`).
fn title(line: &str) -> Option<&str> {
    let t = line.trim_end();
    let name = t.strip_suffix(':')?;
    (!name.is_empty()
        && !name.starts_with(char::is_whitespace)
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '+' | '/' | '=' | ',')))
    .then_some(name)
}

/// A line ending in `:` over a pandas header and a row indexed `0`, that [`title`] does
/// not take for a plot name: a table this reader would otherwise pass over unread.
fn untitled_table(lines: &[&str], i: usize) -> bool {
    lines[i].trim_end().ends_with(':')
        && title(lines[i]).is_none()
        && lines.get(i + 1).is_some_and(|h| is_header(h))
        && lines
            .get(i + 2)
            .is_some_and(|r| is_row(r) && r.split_whitespace().next() == Some("0"))
}

/// A data row of `to_string()`: an integer index, then one token per column. Looked at
/// byte by byte while the line is ASCII (every row pandas prints for numbers), with
/// Unicode's whitespace rules otherwise.
fn is_row(line: &str) -> bool {
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    let digits = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let after_digits = i;
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    match b.get(i) {
        // Everything before `i` is ASCII blanks and digits.
        Some(c) if c.is_ascii() => after_digits > digits && i > after_digits,
        None => false,
        Some(_) => is_row_unicode(line),
    }
}

/// [`is_row`] by Unicode's whitespace rules.
fn is_row_unicode(line: &str) -> bool {
    let mut tokens = line.split_whitespace();
    tokens
        .next()
        .is_some_and(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
        && tokens.next().is_some()
}

/// A row of numbers alone, no index before them (`print_data` of a frame printed with
/// `index=False`): every token a number, two at least.
fn is_plain_row(line: &str) -> bool {
    let mut n = 0;
    for t in line.split_whitespace() {
        if crate::formats::support::text::parse_value(t).is_err() {
            return false;
        }
        n += 1;
    }
    n >= 2
}

/// A table printed without pandas' index (Triton's prints since 2026 and scripts that
/// print `df.to_string(index=False)`): numbers-only rows under a header whose line
/// columns all read `<line> (<ylabel>)` with one ylabel, as Triton 3.6 heads them. The
/// labelled header is what tells it from any other column of numbers.
fn unindexed(header: &str, row: &str) -> bool {
    // A row of numbers may look indexed (`8192  2525.9`): the header says, having a name
    // above every token (no index) or none above the first (pandas' index, under blank
    // header). Cheap checks first: this is asked of every table.
    let first_token_end = {
        let t = row.trim_start();
        row.len() - t.len() + t.find(char::is_whitespace).unwrap_or(t.len())
    };
    let header_start = header.len() - header.trim_start().len();
    header.contains(" (")
        && header_start < first_token_end
        && is_header(header)
        && is_plain_row(row)
        && columns(header, &[(2, row)], false)
            .is_ok_and(|(cols, _)| labelled_lines(&cols).is_some())
}

/// Does the line after a title look like a header: words, not an index-numbered row?
fn is_header(line: &str) -> bool {
    !line.trim().is_empty() && !is_row(line) && !is_elision(line)
}

/// pandas' row elision in a long frame: `..` under the index, `...` under every column.
fn is_elision(line: &str) -> bool {
    let mut tokens = line.split_whitespace();
    tokens.next() == Some("..") && tokens.all(|t| t == "...")
}

/// pandas' footer of an elided frame, `[98 rows x 4 columns]`: its row count.
fn footer_rows(line: &str) -> Option<usize> {
    let inner = line.trim().strip_prefix('[')?.strip_suffix(']')?;
    let (rows, _) = inner.split_once(" rows x ")?;
    rows.trim().parse().ok()
}

impl Parser for TritonPerfReport {
    fn format(&self) -> Format {
        Format::TritonPerfReport
    }
    fn sniff(&self, text: &str) -> bool {
        // Tried before the aiter tables on every log: look only where a line ends in `:`
        // (`\n` or `\r\n`).
        let b = text.as_bytes();
        for colon in memchr::memchr_iter(b':', b) {
            let after = match b.get(colon + 1) {
                Some(b'\n') => colon + 2,
                Some(b'\r') if b.get(colon + 2) == Some(&b'\n') => colon + 3,
                _ => continue,
            };
            let start = text[..colon].rfind('\n').map_or(0, |s| s + 1);
            let mut next = text[after..].lines();
            if let (Some(_), Some(header), Some(row)) =
                (title(&text[start..=colon]), next.next(), next.next())
            {
                if is_header(header) && is_row(row) && row.split_whitespace().next() == Some("0") {
                    return true;
                }
                if unindexed(header, row) {
                    return true;
                }
            }
        }
        false
    }

    /// A `<plot_name>:` line over a pandas header and a row indexed `0` is printed by
    /// Triton's `perf_report` alone: a signature, so a log that also holds another
    /// format's signature (aiter's banner) is refused, never read as half of itself.
    fn evidence(&self, text: &str) -> Evidence {
        if self.sniff(text) {
            Evidence::Signature
        } else {
            Evidence::None
        }
    }

    fn parse(&self, text: &str) -> Result<Parsed, ParseError> {
        self.parse_in(text, &Context::default())
    }

    fn parse_in(&self, text: &str, cx: &Context) -> Result<Parsed, ParseError> {
        let lines: Vec<&str> = text.lines().collect();
        let mut parsed = Parsed::sized_for(text, 25);
        let mut i = 0;
        // Each plot's first title line: a plot printed again is said, never pooled unsaid.
        let mut titled: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        while i + 2 < lines.len() {
            let Some(plot) = title(lines[i]) else {
                if untitled_table(&lines, i) {
                    return Err(ParseError::at(
                        i + 1,
                        format!(
                            "`{}` heads a table but is no plot name (Triton prints `<plot_name>:` with no spaces): its rows would go unread",
                            lines[i].trim()
                        ),
                    ));
                }
                i += 1;
                continue;
            };
            let bare = unindexed(lines[i + 1], lines[i + 2]);
            let indexed = !bare && is_header(lines[i + 1]) && is_row(lines[i + 2]);
            if !indexed && !bare {
                i += 1;
                continue;
            }
            let row_end = |from: usize| {
                (from..lines.len())
                    .find(|&j| {
                        if indexed {
                            !is_row(lines[j])
                        } else {
                            !is_plain_row(lines[j])
                        }
                    })
                    .unwrap_or(lines.len())
            };
            let mut end = row_end(i + 2);
            // Rows with their line numbers (1-based), read around pandas' `..` gaps.
            let mut rows: Vec<(usize, &str)> = (i + 2..end).map(|j| (j + 1, lines[j])).collect();
            while end < lines.len() && is_elision(lines[end]) {
                let gap = end;
                end = row_end(gap + 1);
                rows.extend((gap + 1..end).map(|j| (j + 1, lines[j])));
                let printed = rows.len();
                let total = lines[end..]
                    .iter()
                    .take(3)
                    .find_map(|l| footer_rows(l))
                    .filter(|t| *t >= printed);
                parsed.warnings.push(Warning {
                    line: gap + 1,
                    reason: match total {
                        Some(t) => format!(
                            "{plot}: pandas did not print {} of its {t} rows (`..`): those are not read",
                            t - printed
                        ),
                        None => format!(
                            "{plot}: pandas did not print some rows (`..`): those are not read"
                        ),
                    },
                });
            }
            match titled.get(plot) {
                Some(first) => parsed.warnings.push(Warning {
                    line: i + 1,
                    reason: format!(
                        "{plot}: printed again (first at line {first}): its rows are read as repeats of the first table's; if the two are different runs (a before and an after), ingest each as its own file"
                    ),
                }),
                None => {
                    titled.insert(plot, i + 1);
                }
            }
            // A table (title, header, numbered rows) that cannot be read refuses the
            // file: storing the others would make its rows read as missing.
            table(plot, lines[i + 1], &rows, indexed, cx.unit, &mut parsed)
                .map_err(|e| ParseError::at(e.line, format!("{plot}: {}", e.reason)))?;
            i = end;
        }
        if parsed.measurements.is_empty() {
            return Err(ParseError::at(
                0,
                "no Triton perf_report table: no `<plot_name>:` line followed by a \
                 header and index-numbered rows",
            ));
        }
        Ok(parsed)
    }
}

/// Where each whitespace-separated token of `row` starts and ends (bytes), into `out`.
fn spans(row: &str, out: &mut Vec<(usize, usize)>) {
    out.clear();
    let b = row.as_bytes();
    let mut j = 0;
    while j < b.len() {
        if b[j].is_ascii_whitespace() {
            j += 1;
            continue;
        }
        let start = j;
        while j < b.len() && !b[j].is_ascii_whitespace() {
            j += 1;
        }
        out.push((start, j));
    }
}

/// The header's column names and the columns' right edges (values are right-aligned under
/// their header; pandas left-aligns the index, so its width may vary row to row:
/// `9 ` then `10`). Rows come with their line numbers.
fn columns(
    header: &str,
    rows: &[(usize, &str)],
    indexed: bool,
) -> Result<(Vec<String>, Vec<usize>), ParseError> {
    let first_row = rows[0].0;
    let mut tokens = Vec::new();
    spans(rows[0].1, &mut tokens);
    let skip = usize::from(indexed);
    let edges: Vec<usize> = tokens.iter().skip(skip).map(|t| t.1).collect();
    let index_end = if indexed {
        rows.iter().map(|(_, r)| index_width(r)).max().unwrap_or(0)
    } else {
        0
    };
    let mut names = Vec::new();
    let mut start = index_end;
    for &end in &edges {
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
        names.push(name.to_string());
        start = end;
    }
    if header.trim_end().len() > edges.last().copied().unwrap_or(0) {
        return Err(ParseError::at(
            first_row - 1,
            "header wider than its rows: a header the rows do not line up under",
        ));
    }
    Ok((names, edges))
}

/// The length of a row's first token (its index), byte by byte while it is ASCII.
fn index_width(row: &str) -> usize {
    let b = row.as_bytes();
    let start = b
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(b.len());
    let len = b[start..]
        .iter()
        .position(|c| c.is_ascii_whitespace() || !c.is_ascii())
        .unwrap_or(b.len() - start);
    match b.get(start + len) {
        Some(c) if !c.is_ascii() => index_width_unicode(row),
        _ => len,
    }
}

/// [`index_width`] by Unicode's whitespace rules.
fn index_width_unicode(row: &str) -> usize {
    let r = row.trim_start();
    r.len() - r.trim_start_matches(|c: char| !c.is_whitespace()).len()
}

/// The values of one plot's table (its rows with their line numbers), appended to `out`.
fn table(
    plot: &str,
    header: &str,
    rows: &[(usize, &str)],
    indexed: bool,
    unit: Option<&str>,
    out: &mut Parsed,
) -> Result<(), ParseError> {
    let (cols, edges) = columns(header, rows, indexed)?;
    let skip = usize::from(indexed);
    let mut tokens: Vec<(usize, usize)> = Vec::with_capacity(cols.len() + 1);
    // Every row's cells, checked against the header once.
    let mut cells: Vec<&str> = Vec::with_capacity(rows.len() * cols.len());
    for (no, row) in rows {
        // One pass over the row: the index, then one token per column, each ending where
        // its column does.
        spans(row, &mut tokens);
        if tokens.len() != cols.len() + skip {
            return Err(ParseError::at(
                *no,
                format!("{} cells under {} columns", tokens.len() - skip, cols.len()),
            ));
        }
        if tokens[skip..].iter().zip(&edges).any(|(t, e)| t.1 != *e) {
            return Err(ParseError::at(
                *no,
                "row not aligned with the first row's columns",
            ));
        }
        cells.extend(tokens[skip..].iter().map(|t| &row[t.0..t.1]));
    }
    let width = cols.len();
    let (n_x, line_columns) = match labelled_lines(&cols) {
        Some(first_line) => {
            let specs = (first_line..width)
                .map(|c| match line_and_ylabel(&cols[c]) {
                    Some((line, ylabel)) => {
                        (c, Name::new(line), Spec::measured(None, ylabel, &cols[c]))
                    }
                    None => (
                        c,
                        Name::new(&cols[c]),
                        Spec::derived(metric::RATIO, "", &cols[c], None),
                    ),
                })
                .collect();
            (first_line, specs)
        }
        None => bare_lines(plot, &cols, &cells, rows[0].0, unit, out)?,
    };
    let layout = KeyLayout::new(&cols[..n_x].iter().map(String::as_str).collect::<Vec<_>>());
    let table = Name::new(plot);
    out.measurements.reserve(rows.len() * line_columns.len());
    let mut key: Vec<&str> = Vec::with_capacity(n_x);
    for ((no, _), cell) in rows.iter().zip(cells.chunks_exact(width)) {
        key.clear();
        key.extend(cell[..n_x].iter().map(|c| key_number(c)));
        let r = layout.row(&mut out.keys, table, table, &key, *no);
        for (c, variant, spec) in &line_columns {
            let text = cell[*c];
            let value = crate::formats::support::text::parse_in(text, spec.metric.as_str())
                .map_err(|_| {
                    let why = crate::formats::support::text::not_a_value(text);
                    ParseError::at(*no, format!("`{text}` under `{}` {why}", cols[*c]))
                })?;
            out.measurements
                .push(r.put_as(&mut out.keys, *variant, spec, value, text));
        }
    }
    Ok(())
}

/// A line column: its place, its variant, how its values are stored.
type LineColumn = (usize, Name, Spec);

/// `Triton-GB/s-min` -> (`Triton`, `GB/s`, its [`Unit`], `min`): a line name whose part
/// after a `-` is a unit perfdb knows, and what follows it (a statistic of the same
/// quantity).
///
/// [`Unit`]: crate::formats::support::units::Unit
type UnitInName<'a> = (
    &'a str,
    &'a str,
    crate::formats::support::units::Unit,
    Option<&'a str>,
);

fn unit_in_name(name: &str) -> Option<UnitInName<'_>> {
    let mut at = 0;
    while let Some(dash) = name[at..].find('-') {
        let start = at + dash + 1;
        let rest = &name[start..];
        let (unit, stat) = match rest.split_once('-') {
            Some((u, s)) => (u, Some(s)),
            None => (rest, None),
        };
        if let Some(u) = crate::formats::support::units::unit_of_any_case(unit).filter(|_| dash > 0)
        {
            return Some((&name[..start - 1], unit, u, stat.filter(|s| !s.is_empty())));
        }
        at = start;
    }
    None
}

/// What each line column of a header from before Triton 3.6 (line names alone) stores:
/// the x columns are the leading ones whose every value is integral, each other column a
/// variant under its whole name, in `--unit` (else unclassified, said once).
fn bare_lines(
    plot: &str,
    cols: &[String],
    cells: &[&str],
    first_row: usize,
    unit: Option<&str>,
    out: &mut Parsed,
) -> Result<(usize, Vec<LineColumn>), ParseError> {
    let width = cols.len();
    // An x column holds integral values (`4096.0`) or names (`llama-7b`: `x_vals` of
    // strings); a line column holds measured numbers.
    let x_like = |c: usize| {
        let mut values = cells[c..].iter().step_by(width);
        values.all(|v| match crate::formats::support::text::parse_value(v) {
            Ok(Some(v)) => v.fract() == 0.0,
            Ok(None) => false,
            Err(_) => true,
        })
    };
    let n_x = (0..width - 1).take_while(|&c| x_like(c)).count();
    if n_x == 0 {
        return Err(ParseError::at(
            first_row.saturating_sub(1),
            "no x column: the first column holds fractional numbers (an x column holds \
             integral values or names), and the header has no `<line> (<ylabel>)` columns",
        ));
    }
    // Line names that carry their unit (`Triton-GB/s`, `XeTLA-TFlops-min`: Intel's
    // triton_kernels_benchmark) say it, whatever --unit says.
    let named: Option<Vec<LineColumn>> = (n_x..width)
        .map(|c| {
            let (variant, unit, u, stat) = unit_in_name(&cols[c])?;
            let spec = match stat {
                None => Spec::measured(None, unit, &cols[c]),
                Some(stat) => {
                    Spec::measured(Some(&format!("{}_{stat}", u.metric)), unit, &cols[c]).kept()
                }
            };
            Some((c, Name::new(variant), spec))
        })
        .collect();
    if let Some(named) = named {
        return Ok((n_x, named));
    }
    if unit.is_none() {
        out.warnings.push(Warning {
            line: first_row.saturating_sub(1),
            reason: format!(
                "{plot}: printed before Triton 3.6 (no `(<ylabel>)` in the header): values kept \
                 unclassified (not compared); give --unit (e.g. --unit TFLOPS) to measure them"
            ),
        });
    }
    let specs = (n_x..width)
        .map(|c| {
            let spec = match unit {
                Some(unit) => Spec::measured(None, unit, &cols[c]),
                None => Spec::derived(
                    metric::UNCLASSIFIED,
                    "",
                    &cols[c],
                    Some("no ylabel in the header; give --unit"),
                ),
            };
            (c, Name::new(&cols[c]), spec)
        })
        .collect();
    Ok((n_x, specs))
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
        let numbered: Vec<(usize, &str)> =
            rows.iter().enumerate().map(|(k, r)| (3 + k, *r)).collect();
        assert_eq!(
            columns(header, &numbered, true).unwrap().0,
            ["M", "Triton (TFLOPS)"]
        );
        let text = format!(
            "{}\n",
            [
                "matmul:",
                header,
                "0   1.0        10.000000",
                "9   2.0        10.000000",
                "10  3.0        10.000000",
            ]
            .join("\n")
        );
        assert_eq!(TritonPerfReport.parse(&text).unwrap().measurements.len(), 3);
        let bad = "matmul:\n      M  Triton (TFLOPS)\n0   1.0        10.000000\n1   2.0       10.000000\n";
        let e = TritonPerfReport.parse(bad).unwrap_err();
        assert_eq!(
            (e.line, e.reason.as_str()),
            (4, "matmul: row not aligned with the first row's columns")
        );
    }

    #[test]
    fn rows_are_told_byte_by_byte_as_by_unicode_rules() {
        for line in [
            "0       4096.0      11.953308",
            "  12  1.0",
            "12",
            "12   ",
            "x 1",
            "1x 2",
            "",
            "   ",
            "3\u{a0}4",
            "\u{3000}7 1.0",
            "7\u{3000}1.0",
            "7 é",
            "-1 2",
        ] {
            assert_eq!(is_row(line), is_row_unicode(line), "{line:?}");
            assert_eq!(index_width(line), index_width_unicode(line), "{line:?}");
        }
    }

    #[test]
    fn columns_follow_the_rows_edges() {
        let header = "          size  Triton (GB/s)  Torch (GB/s)";
        let rows = [(3, "0       4096.0      11.953308     11.377778")];
        let (cols, edges) = columns(header, &rows, true).unwrap();
        assert_eq!(cols, ["size", "Triton (GB/s)", "Torch (GB/s)"]);
        assert_eq!(edges, [14, 29, 43]);
        assert_eq!(line_and_ylabel("Triton (GB/s)"), Some(("Triton", "GB/s")));
        assert_eq!(line_and_ylabel("size"), None);
        assert_eq!(key_number("4096.0"), "4096");
        assert_eq!(key_number("0.5"), "0.5");
        assert!(title("matmul-performance-fp16:").is_some());
        assert!(title("gemm summary (markdown):").is_none());
        assert_eq!(
            title("fused-attention-batch4-head32-d64-fwd-causal=True:"),
            Some("fused-attention-batch4-head32-d64-fwd-causal=True")
        );
    }

    const TABLE: &str = "     N_CTX     Triton\n0   1024.0  10.189903\n1   2048.0  12.383941\n";

    #[test]
    fn a_table_under_no_plot_name_refuses_the_file_at_its_line() {
        let text = format!("vector-add:\n{TABLE}\nresults for N_CTX = 2048 (causal):\n{TABLE}");
        let e = TritonPerfReport.parse(&text).unwrap_err();
        assert_eq!(e.line, 6, "{e}");
        assert!(e.reason.contains("is no plot name"), "{e}");
    }

    #[test]
    fn a_table_without_the_index_reads_under_a_labelled_header() {
        let text = "matmul-performance-fp16:\n      M       N       K  cuBLAS (TFLOPS)  Triton (TFLOPS)\n  256.0   256.0   256.0         4.096000         4.096000\n  512.0   512.0   512.0        26.214401        23.831273\n";
        assert!(TritonPerfReport.sniff(text));
        let p = TritonPerfReport.parse(text).unwrap();
        let got: Vec<(String, String, Option<f64>, u32)> = p
            .measurements
            .iter()
            .map(|m| (m.variant.to_string(), p.key(m).to_string(), m.value, m.line))
            .collect();
        assert_eq!(got.len(), 4);
        assert_eq!(
            got[3],
            (
                "Triton".into(),
                "{\"K\":\"512\",\"M\":\"512\",\"N\":\"512\"}".into(),
                Some(23.831273),
                4
            )
        );
        assert_eq!(p.measurements[0].unit.as_str(), "TFLOPS");
        // Unlabelled, a column of numbers under a title is no perf report.
        let bare = "sizes:\n      M       N\n  256.0   256.0\n";
        assert!(!TritonPerfReport.sniff(bare));
    }

    #[test]
    fn a_plot_printed_twice_is_said_never_pooled_unsaid() {
        let text = format!("softmax:\n{TABLE}softmax:\n{TABLE}");
        let p = TritonPerfReport.parse(&text).unwrap();
        assert_eq!(p.measurements.len(), 4);
        let w: Vec<_> = p
            .warnings
            .iter()
            .filter(|w| w.reason.contains("printed again"))
            .collect();
        assert_eq!(w.len(), 1, "{:?}", p.warnings);
        assert_eq!(w[0].line, 5);
        assert!(w[0].reason.contains("first at line 1"), "{}", w[0].reason);
    }
}
