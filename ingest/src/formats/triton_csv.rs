//! Triton's `save_path` CSV.
//!
//! - **Triton** `perf_report(..., save_path=DIR)` writes `DIR/<plot_name>.csv` with
//!   `df.to_csv(float_format="%.6f", index=False)`: the `x_names` columns, then one column
//!   per line, every number with six decimals, NaN as an empty cell. The file name is the
//!   table. Since Triton 3.6 the line columns carry the ylabel as the printed form does
//!   (`Triton (TFLOPS)`): the unit comes from there. Before, the CSV carries none, so it
//!   comes from `--unit` (else the values are kept `unclassified`: stored, never
//!   compared), and nothing marks where the x columns end: they are the leading columns
//!   whose every value is integral (`512.000000`, or `4096.0` from Triton versions
//!   before `float_format`; Triton's x values are sizes), the rest are lines.

use super::support::csv::{cells, file_table, float_cell, header_and_records};
use super::support::emit::{key_number, KeyLayout, Spec};
use crate::formats::parser::{Context, ParseError, Parser};
use crate::formats::support::text::parse_value;
use crate::formats::support::triton_lines::{labelled_lines, line_and_ylabel};
use crate::model::Format;
use crate::model::{metric, Name, Parsed, Warning};
use std::borrow::Cow;

pub struct TritonCsv;

impl Parser for TritonCsv {
    fn format(&self) -> Format {
        Format::TritonCsv
    }
    fn sniff(&self, text: &str) -> bool {
        let mut ls = text.lines().filter(|l| !l.trim().is_empty());
        let Some(header) = ls.next() else {
            return false;
        };
        // Detection asks this of every log's first line: most have no comma.
        if memchr::memchr(b',', header.as_bytes()).is_none() {
            return false;
        }
        let names = cells(header);
        if names.len() < 2 || names.iter().any(|n| n.is_empty() || parse_value(n).is_ok()) {
            return false;
        }
        // The first 50 rows all float numbers or empty cells, and at least one with as
        // many cells as the header (a short row is the parser's to report).
        let mut rows = 0;
        for l in ls.take(50) {
            let c = cells(l);
            if !c.iter().all(|c| c.is_empty() || float_cell(c)) {
                return false;
            }
            rows += usize::from(c.len() == names.len());
        }
        rows > 0
    }
    fn parse(&self, text: &str) -> Result<Parsed, ParseError> {
        self.parse_in(text, &Context::default())
    }
    fn parse_in(&self, text: &str, cx: &Context) -> Result<Parsed, ParseError> {
        let (header_no, header, records) = header_and_records(text)?;
        let names = cells(&header);
        let width = names.len();
        // Every row's cells and values, parsed once, kept in two flat lists (`width` per
        // row) rather than two lists per row.
        // Reserved from the text's size (a `%.6f` cell and its comma are 8 bytes or more;
        // capped, so a huge file reserves at most 16 MB a list up front): regrowing the
        // lists cost 4% of the parse.
        let cells_guess = (text.len() / 8).min(1 << 20);
        let mut nos: Vec<usize> = Vec::with_capacity(cells_guess / 4);
        let mut cells_: Vec<&str> = Vec::with_capacity(cells_guess);
        let mut values: Vec<Option<f64>> = Vec::with_capacity(cells_guess);
        for (no, l) in records {
            let l = match l {
                Cow::Borrowed(l) => l,
                // A cleaned line (CI prefix, escapes): no Triton CSV has one.
                Cow::Owned(_) => return Err(ParseError::at(no, "not a CSV row")),
            };
            let before = cells_.len();
            crate::formats::support::for_each_cell(l, b',', |c| cells_.push(c));
            if cells_.len() - before != width {
                return Err(ParseError::at(
                    no,
                    format!("{} cells under {} columns", cells_.len() - before, width),
                ));
            }
            for cell in &cells_[before..] {
                values.push(
                    parse_value(cell)
                        .map_err(|_| ParseError::at(no, format!("`{cell}` is not a number")))?,
                );
            }
            nos.push(no);
        }
        if nos.is_empty() {
            return Err(ParseError::at(header_no, "a header and no rows"));
        }
        // The x columns: the leading columns before Triton 3.6's `<line> (<ylabel>)`
        // columns, else the leading columns whose every value is integral.
        // Only a header whose lines all carry the plot's one ylabel has them: otherwise a
        // parenthesised word is part of a line's name (`Torch (native)`).
        let labelled = labelled_lines(&names);
        let ylabels: Vec<Option<(&str, &str)>> = names
            .iter()
            .enumerate()
            .map(|(i, n)| {
                labelled
                    .filter(|&f| i >= f)
                    .and_then(|_| line_and_ylabel(n))
            })
            .collect();
        let integral = |c: usize| {
            values[c..]
                .iter()
                .step_by(width)
                .all(|v| v.is_some_and(|v| v.fract() == 0.0))
        };
        let n_x =
            labelled.unwrap_or_else(|| (0..width - 1).take_while(|&c| integral(c)).count().max(1));
        let table = file_table(cx, "triton");
        let mut parsed = Parsed::sized_for(text, 24);
        if cx.unit.is_none() && ylabels[n_x..].iter().any(Option::is_none) {
            parsed.warnings.push(Warning {
                line: 0,
                reason: "a Triton CSV has no ylabel: values kept unclassified (not compared); \
                         give --unit (e.g. --unit TFLOPS) to measure them"
                    .to_string(),
            });
        }
        let lines_ = line_specs(&names[n_x..], &ylabels[n_x..], cx.unit);
        parsed.measurements.reserve(nos.len() * lines_.len());
        let layout = KeyLayout::new(&names[..n_x]);
        let table = Name::new(table);
        let mut key: Vec<&str> = Vec::with_capacity(n_x);
        for ((no, r), values) in nos
            .iter()
            .zip(cells_.chunks_exact(width))
            .zip(values.chunks_exact(width))
        {
            key.clear();
            key.extend(r[..n_x].iter().map(|c| key_number(c)));
            let row = layout.row(&mut parsed.keys, table, table, &key, *no);
            for (k, (variant, spec)) in lines_.iter().enumerate() {
                let c = n_x + k;
                parsed.measurements.push(row.put_as(
                    &mut parsed.keys,
                    *variant,
                    spec,
                    values[c],
                    r[c],
                ));
            }
        }
        Ok(parsed)
    }
}

/// Each line column's variant and spec: its name and the ylabel's unit (Triton 3.6),
/// else its name in `--unit`, else kept unclassified.
fn line_specs(
    names: &[Cow<str>],
    ylabels: &[Option<(&str, &str)>],
    unit: Option<&str>,
) -> Vec<(Name, Spec)> {
    names
        .iter()
        .zip(ylabels)
        .map(|(n, ylabel)| match (ylabel, unit) {
            (Some((line, ylabel)), _) => (Name::new(line), Spec::measured(None, ylabel, n)),
            (None, Some(unit)) => (Name::new(n), Spec::measured(None, unit, n)),
            (None, None) => (
                Name::new(n),
                Spec::derived(
                    metric::UNCLASSIFIED,
                    "",
                    n,
                    Some("no ylabel in the CSV; give --unit"),
                ),
            ),
        })
        .collect()
}
