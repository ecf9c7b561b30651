//! aorta's triage `matrix.md` (sample 23).
//!
//! - `matrix.md`, the triage matrix of a sweep: one row per cell (the variant) of table
//!   `triage:<workload>`, keyed by its environment; `Mean step (ms)` is the step time
//!   (compared), `Failure rate`, `Failures` and `Iters` derived (kept, not compared),
//!   `Mitigations` and `Confound` kept as notes.

use crate::formats::parser::{ParseError, Parser};
use crate::formats::support::emit::{KeyLayout, Row, Spec};
use crate::formats::support::lines;
use crate::model::Format;
use crate::model::{metric, Name, Parsed};
use std::borrow::Cow;

pub struct AortaMatrix;

/// `| a | b |` -> [a, b], into `out` (cleared first); `false` when the line is no table
/// row.
fn md_cells<'a>(line: &'a str, out: &mut Vec<&'a str>) -> bool {
    out.clear();
    let Some(inner) = line
        .trim_ascii()
        .strip_prefix('|')
        .and_then(|l| l.strip_suffix('|'))
    else {
        return false;
    };
    crate::formats::support::for_each_cell(inner, b'|', |c| out.push(c));
    true
}

/// A cell's number under `spec`: `33%` -> 33 in a percent or derived column (never in
/// a measured one: `17012.4%` is no step time), `17012.4` -> 17012.4, `—`/`n/a` -> none.
fn number(cell: &str, spec: &Spec) -> Result<Option<f64>, ()> {
    use crate::formats::support::text::{parse_in, parse_ratio};
    if cell == "—" || cell == "–" {
        return Ok(None);
    }
    if spec.unit.as_str() == "%" {
        parse_ratio(cell).map_err(|_| ())
    } else {
        parse_in(cell, spec.metric.as_str()).map_err(|_| ())
    }
}

/// What a matrix column holds, worked out once per table.
enum MatrixColumn {
    /// `Environment`: the key.
    Key,
    /// `Mitigations`, `Confound`: text kept as a note.
    Note(Spec),
    /// `Mean step (ms)`, `Failure rate`: a number.
    Number(Spec),
    /// `Failures`, `Iters`: `1 / 3`, the count kept.
    Count(Spec),
    /// Anything else: a number kept unclassified, or text as a note.
    Other(Spec, Spec),
}

struct MatrixHeader {
    names: Vec<String>,
    cols: Vec<MatrixColumn>,
    env: Option<usize>,
    layout: KeyLayout,
}

impl MatrixHeader {
    fn new(cells: &[&str]) -> MatrixHeader {
        let cols = cells
            .iter()
            .map(|name| {
                let lower = name.to_ascii_lowercase();
                match lower.as_str() {
                    "environment" => MatrixColumn::Key,
                    "mitigations" | "confound" => {
                        MatrixColumn::Note(Spec::derived(metric::NOTE, "", name, None))
                    }
                    // Kept, not compared: 0% has no ratio, and a rate over 3 trials is
                    // not a timing.
                    "failure rate" => {
                        MatrixColumn::Number(Spec::derived("failure_rate", "%", name, None))
                    }
                    "failures" | "iters" => {
                        MatrixColumn::Count(Spec::derived(&lower, "", name, None))
                    }
                    _ => match lower
                        .strip_suffix(')')
                        .and_then(|l| l.rsplit_once('('))
                        .filter(|(_, u)| crate::formats::support::units::unit_of(u).is_some())
                    {
                        // `Mean step (ms)`: a time in its unit.
                        Some((what, unit)) => {
                            let metric = match what.trim() {
                                "mean step" => "step_time".to_string(),
                                w => w.replace(' ', "_"),
                            };
                            MatrixColumn::Number(Spec::measured(Some(&metric), unit, name))
                        }
                        None => MatrixColumn::Other(
                            Spec::derived(
                                metric::UNCLASSIFIED,
                                "",
                                name,
                                Some("unclassified column"),
                            ),
                            Spec::derived(metric::NOTE, "", name, None),
                        ),
                    },
                }
            })
            .collect();
        let env = cells
            .iter()
            .position(|c| c.eq_ignore_ascii_case("environment"));
        let layout = match env {
            Some(_) => KeyLayout::new(&["environment"]),
            None => KeyLayout::new::<&str>(&[]),
        };
        MatrixHeader {
            names: cells.iter().map(|c| c.to_string()).collect(),
            cols,
            env,
            layout,
        }
    }

    /// The key of a row of the environment `env` (none when the table has no
    /// Environment column).
    fn key(&self, keys: &mut crate::model::Keys, env: &str) -> crate::model::KeyId {
        match self.env {
            Some(_) => self.layout.key(keys, &[env]),
            None => self.layout.key::<&str>(keys, &[]),
        }
    }
}

impl Parser for AortaMatrix {
    fn format(&self) -> Format {
        Format::AortaMatrix
    }
    fn sniff(&self, text: &str) -> bool {
        crate::formats::support::text::finder!("# Triage Matrix")
            .find(text.as_bytes())
            .is_some()
            && crate::formats::support::text::has(text, "| Cell")
    }
    fn parse(&self, text: &str) -> Result<Parsed, ParseError> {
        let mut parsed = Parsed::sized_for(text, 10);
        let mut table = Name::new("triage:aorta");
        // The last table's header, laid out (a sweep's matrices print the same one), and
        // whether the line before was of its table.
        let mut header: Option<MatrixHeader> = None;
        let mut in_table = false;
        // The key of the last row: rows of one environment share it.
        let mut last_key: Option<(String, crate::model::KeyId)> = None;
        // One list of cells for the rows read straight from the text (nearly all).
        let mut buf: Vec<&str> = Vec::new();
        // The variant names of the last table's rows, by position: a sweep's matrices
        // list the same cells in the same order, so a name is rarely looked up.
        let mut variants: Vec<Name> = Vec::new();
        let mut row_at = 0;
        for (no, line) in lines(text) {
            let start = line.trim_start();
            if let Some(title) = matrix_title(start) {
                if let Some(t) = title {
                    table = t;
                }
                continue;
            }
            let mut owned = Vec::new();
            let cells = match &line {
                Cow::Borrowed(l) => {
                    if !md_cells(l, &mut buf) {
                        in_table = false;
                        continue;
                    }
                    &buf
                }
                Cow::Owned(l) => {
                    if !md_cells(l, &mut owned) {
                        in_table = false;
                        continue;
                    }
                    &owned
                }
            };
            if cells
                .first()
                .is_some_and(|c| c.eq_ignore_ascii_case("cell"))
            {
                if !header
                    .as_ref()
                    .is_some_and(|h| h.names.iter().eq(cells.iter().copied()))
                {
                    header = Some(MatrixHeader::new(cells));
                }
                in_table = true;
                last_key = None;
                row_at = 0;
                continue;
            }
            let Some(h) = header.as_ref().filter(|_| in_table) else {
                continue;
            };
            if cells
                .iter()
                .all(|c| c.bytes().all(|b| matches!(b, b'-' | b':')))
            {
                continue;
            }
            if cells.len() != h.names.len() {
                return Err(ParseError::at(
                    no,
                    format!("{} cells under {} columns", cells.len(), h.names.len()),
                ));
            }
            let env = h.env.map_or("", |i| cells[i]);
            let key = match &last_key {
                Some((e, key)) if e == env => *key,
                _ => {
                    let key = h.key(&mut parsed.keys, env);
                    last_key = Some((env.to_string(), key));
                    key
                }
            };
            let variant = variant_at(&mut variants, row_at, cells[0]);
            row_at += 1;
            let row = Row {
                table,
                variant,
                key,
                key_order: h.layout.order,
                line: no as u32,
            };
            for ((name, cell), col) in h.names.iter().zip(cells).zip(&h.cols).skip(1) {
                let Some((spec, value)) = cell_value(col, name, cell, no)? else {
                    continue;
                };
                parsed
                    .measurements
                    .push(row.put_as(&mut parsed.keys, variant, spec, value, cell));
            }
        }
        if parsed.measurements.is_empty() {
            return Err(ParseError::at(
                0,
                "no triage matrix row: no `| Cell | ... |` table with rows",
            ));
        }
        Ok(parsed)
    }
}

/// The variant of the table's row `at` named `cell`: the name the last table's row there
/// had when it is the same (a sweep's matrices list the same cells in the same order),
/// else a new one in its place.
fn variant_at(variants: &mut Vec<Name>, at: usize, cell: &str) -> Name {
    match variants.get(at) {
        Some(v) if v.as_str() == cell => *v,
        _ => {
            let v = Name::new(cell);
            variants.truncate(at);
            variants.push(v);
            v
        }
    }
}

/// A `# Triage Matrix — WORKLOAD` title line: `Some(None)` when it names no workload.
fn matrix_title(start: &str) -> Option<Option<Name>> {
    // One byte first: most lines are table rows.
    let w = (start.as_bytes().first() == Some(&b'#'))
        .then(|| start.strip_prefix("# Triage Matrix"))
        .flatten()?;
    let w = w.trim().trim_start_matches(['-', '—']).trim();
    Some((!w.is_empty()).then(|| Name::new(&format!("triage:{w}"))))
}

/// A cell's value under its column: a number, a count before its slash, a note; `None`
/// for a key column.
fn cell_value<'a>(
    col: &'a MatrixColumn,
    name: &str,
    cell: &str,
    no: usize,
) -> Result<Option<(&'a Spec, Option<f64>)>, ParseError> {
    let bad = || ParseError::at(no, format!("`{cell}` under `{name}` is not a number"));
    Ok(Some(match col {
        MatrixColumn::Key => return Ok(None),
        MatrixColumn::Note(spec) => (spec, None),
        MatrixColumn::Number(spec) => (spec, number(cell, spec).map_err(|_| bad())?),
        MatrixColumn::Count(spec) => {
            // `1 / 3`, `3/3`: the count before the slash (`n/a` is no count).
            let slash = memchr::memchr(b'/', cell.as_bytes());
            let value = match slash {
                Some(at) if !crate::formats::support::text::is_missing_token(cell) => {
                    number(crate::formats::support::text::trim(&cell[..at]), spec)
                        .map_err(|_| bad())?
                }
                _ => number(cell, spec).map_err(|_| bad())?,
            };
            (spec, value)
        }
        MatrixColumn::Other(spec, note) => match number(cell, spec) {
            Ok(v) => (spec, v),
            Err(()) => (note, None),
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_matrix_is_read_under_its_own_header() {
        // Two sweeps with one header, then a third with its columns in another order.
        let head = "| Cell | Environment | Mean step (ms) |\n|---|---|---|\n";
        let other = "| Cell | Mean step (ms) | Environment |\n|---|---|---|\n";
        let text = format!(
            "# Triage Matrix - a\n\n{head}| c1 | local | 10.5 |\n\n# Triage Matrix - b\n\n\
             {head}| c1 | local | 11.5 |\n\n# Triage Matrix - c\n\n{other}| c1 | 12.5 | remote |\n"
        );
        let p = AortaMatrix.parse(&text).unwrap();
        let got: Vec<(&str, &str, Option<f64>)> = p
            .measurements
            .iter()
            .map(|m| (m.table.as_str(), p.keys.get(m.key), m.value))
            .collect();
        assert_eq!(
            got,
            [
                ("triage:a", r#"{"environment":"local"}"#, Some(10500.0)),
                ("triage:b", r#"{"environment":"local"}"#, Some(11500.0)),
                ("triage:c", r#"{"environment":"remote"}"#, Some(12500.0)),
            ]
        );
        // A row after the table ended (a blank line) is under no header: not read.
        let loose =
            format!("# Triage Matrix - a\n\n{head}| c1 | local | 10.5 |\n\n| c2 | local | 9 |\n");
        assert_eq!(AortaMatrix.parse(&loose).unwrap().measurements.len(), 1);
    }
}
