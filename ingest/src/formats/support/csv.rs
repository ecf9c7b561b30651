//! What the CSV formats share: splitting a record (quoted cells), a file's header and
//! records, the table a file-named format takes from its source, pandas' float cells,
//! and a header laid out once into stored columns and the key.

use crate::formats::parser::{Context, ParseError};
use crate::formats::support::emit::{KeyLayout, Spec};
use crate::formats::support::lines;
use crate::formats::support::text::parse_in;
use crate::model::{metric, Name, Parsed};
use std::borrow::Cow;

/// Split one CSV record; `"..."` cells may hold commas and `""`. Cells borrow from the
/// line unless quoting made them differ.
pub(crate) fn cells(line: &str) -> Vec<Cow<'_, str>> {
    let mut out = Vec::new();
    cells_into(line, &mut out);
    out
}

/// [`cells`] into `out` (cleared first): one list for every record of a file.
pub(crate) fn cells_into<'a>(line: &'a str, out: &mut Vec<Cow<'a, str>>) {
    out.clear();
    if memchr::memchr(b'"', line.as_bytes()).is_none() {
        crate::formats::support::for_each_cell(line, b',', |c| out.push(Cow::Borrowed(c)));
        return;
    }
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(Cow::Owned(std::mem::take(&mut cur).trim().to_string())),
            c => cur.push(c),
        }
    }
    out.push(Cow::Owned(cur.trim().to_string()));
}

/// Numbered lines of a text, cleaned.
pub(crate) type Lines<'a> = Box<dyn Iterator<Item = (usize, Cow<'a, str>)> + 'a>;

/// A CSV's first non-empty line (its header, with its line number) and the non-empty
/// lines after it.
pub(crate) fn header_and_records(
    text: &str,
) -> Result<(usize, Cow<'_, str>, Lines<'_>), ParseError> {
    let mut records = lines(text).filter(|(_, l)| !l.trim().is_empty());
    let (no, header) = records
        .next()
        .ok_or_else(|| ParseError::at(0, "empty CSV: no header"))?;
    Ok((no, header, Box::new(records)))
}

/// The table a file-named format takes from its source: `dir/matmul-fp16.csv` ->
/// `matmul-fp16`.
pub(crate) fn file_table<'a>(cx: &Context<'a>, default: &'a str) -> &'a str {
    std::path::Path::new(cx.source)
        .file_stem()
        .and_then(|s| s.to_str())
        .filter(|s| !s.is_empty())
        .unwrap_or(default)
}

/// A number pandas wrote for a float column: digits, a point, decimals (six with
/// Triton's `float_format="%.6f"`; as few as one from Triton versions without it).
pub(crate) fn float_cell(cell: &str) -> bool {
    let c = cell.strip_prefix('-').unwrap_or(cell);
    match c.split_once('.') {
        Some((int, frac)) => {
            !int.is_empty()
                && int.bytes().all(|b| b.is_ascii_digit())
                && !frac.is_empty()
                && frac.bytes().all(|b| b.is_ascii_digit())
        }
        None => false,
    }
}

/// A CSV header laid out once: how each column is stored (`None`: part of the key) and
/// the key's layout.
pub(crate) struct Columns {
    pub(crate) names: Vec<String>,
    pub(crate) specs: Vec<Option<Spec>>,
    /// A column's own variant, where it is not the header's (a ROCm bench's CPU
    /// reference columns).
    variants: Vec<Option<Name>>,
    /// The key columns' places in a record, in the order `layout` numbers them.
    key_cols: Vec<usize>,
    pub(crate) layout: KeyLayout,
}

impl Columns {
    pub(crate) fn new(names: Vec<String>, classify: impl Fn(&str) -> Option<Spec>) -> Columns {
        let specs: Vec<Option<Spec>> = names.iter().map(|n| classify(n)).collect();
        let key_names: Vec<&str> = names
            .iter()
            .zip(&specs)
            .filter(|(_, s)| s.is_none())
            .map(|(n, _)| n.as_str())
            .collect();
        Columns {
            layout: KeyLayout::new(&key_names),
            key_cols: (0..names.len()).filter(|c| specs[*c].is_none()).collect(),
            variants: vec![None; names.len()],
            specs,
            names,
        }
    }

    /// Give the measured columns `variant_of` names a variant of their own.
    pub(crate) fn with_variants(
        mut self,
        variant_of: impl Fn(&str) -> Option<&'static str>,
    ) -> Columns {
        for (c, n) in self.names.iter().enumerate() {
            if self.specs[c].is_some() {
                self.variants[c] = variant_of(n).map(Name::new);
            }
        }
        self
    }

    /// One record's values (its cells as many as the header's), appended to `out`: notes
    /// as text, every other stored column as a number.
    pub(crate) fn record(
        &self,
        table: Name,
        variant: Name,
        cells: &[Cow<str>],
        no: usize,
        out: &mut Parsed,
    ) -> Result<(), ParseError> {
        let row = self.layout.row_by(
            &mut out.keys,
            table,
            variant,
            |k| &cells[self.key_cols[k]],
            no,
        );
        for (((n, v), spec), own) in self
            .names
            .iter()
            .zip(cells)
            .zip(&self.specs)
            .zip(&self.variants)
        {
            let Some(spec) = spec else { continue };
            let value = if spec.metric.as_str() == metric::NOTE {
                None
            } else {
                parse_in(v, spec.metric.as_str())
                    .map_err(|_| ParseError::at(no, format!("`{v}` under `{n}` is not a number")))?
            };
            out.measurements.push(match own {
                Some(variant) => row.put_as(&mut out.keys, *variant, spec, value, v),
                None => row.put(&mut out.keys, spec, value, v),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_cells_keep_their_commas() {
        assert_eq!(cells("a, b ,c"), ["a", "b", "c"]);
        assert_eq!(
            cells(r#"1,"x, y","say ""hi""""#),
            ["1", "x, y", r#"say "hi""#]
        );
    }
}
