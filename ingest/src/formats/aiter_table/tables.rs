//! Finding a table: pipe tables (pandas' and hand-written), the whitespace fallback,
//! titles and separators, and where a table ends.

use crate::formats::aiter_table::cells::cells;
use crate::formats::aiter_table::cells::is_separator;
use crate::formats::aiter_table::cells::is_separator_line;
use crate::formats::aiter_table::cells::split_cells;
use crate::formats::aiter_table::layout::numbers_by_cells;
use crate::formats::aiter_table::layout::unit_cells_role;
use crate::formats::aiter_table::layout::Layout;
use crate::formats::aiter_table::layout::Role;
use crate::formats::aiter_table::layout::TableError;
use crate::formats::aiter_table::State;
use crate::formats::parser::ParseError;
use crate::formats::support::text::parse_ratio;
use std::borrow::Cow;

/// Can this line belong to a `to_string` table? Not blank, not a `[...]` log line, no
/// `|` and no ` = ` (the `log_args` blocks). One pass over the bytes.
pub(super) fn may_be_whitespace_row(line: &str) -> bool {
    let b = line.trim_ascii().as_bytes();
    if b.is_empty() || b[0] == b'[' || memchr::memchr(b'|', b).is_some() {
        return false;
    }
    !memchr::memchr_iter(b'=', b).any(|i| i > 0 && b[i - 1] == b' ' && b.get(i + 1) == Some(&b' '))
}

/// `gemm_a16w16 summary (markdown):` -> `gemm_a16w16`; `X summary (dtype=bf16):` ->
/// `X (dtype=bf16)`; `%s (markdown):` -> `%s`.
pub(super) fn table_title(body: &str) -> Option<String> {
    let t = body.trim_ascii().strip_suffix(':')?;
    let is_md = t.ends_with("(markdown)");
    let t = t.strip_suffix("(markdown)").unwrap_or(t).trim_end();
    if !is_md && !t.contains(" summary") && !t.ends_with("summary") {
        return None;
    }
    if t.contains('|') || t.is_empty() {
        return None;
    }
    let t = match t.find(" summary") {
        Some(p) => format!("{}{}", &t[..p], &t[p + " summary".len()..]),
        None => t.to_string(),
    };
    let t = crate::formats::support::text::collapse_ws(&t);
    (!t.is_empty()).then_some(t)
}

/// Where a broken pipe-table block starting at `start` ends: after its `|` lines, or
/// at the next header that a separator follows (a good table printed right after it).
pub(super) fn block_end(all: &[(usize, Cow<str>)], start: usize) -> usize {
    let mut j = start + 1;
    if all.get(j).is_some_and(|(_, l)| is_separator_line(l)) {
        j += 1;
    }
    while j < all.len()
        && all[j].1.trim_ascii_start().starts_with('|')
        && !all.get(j + 1).is_some_and(|(_, n)| is_separator_line(n))
    {
        j += 1;
    }
    j
}

impl State {
    /// Parse the pipe table whose header is at `all[start]`; returns the next index, or
    /// why the block is not a table and the index after it.
    pub(super) fn pipe_table(
        &mut self,
        all: &[(usize, Cow<str>)],
        start: usize,
    ) -> Result<usize, TableError> {
        let fail = |e: ParseError| TableError::Skip(e, block_end(all, start));
        let (hno, hline) = (all[start].0, all[start].1.as_ref());
        let sep_line = all.get(start + 1).map(|(_, l)| l.as_ref()).unwrap_or("");
        let numbers = numbers_by_cells(all, start);
        let layout = match Layout::cached(hline, sep_line, &numbers) {
            Some(l) => l,
            None => Layout::cache(
                hline,
                sep_line,
                &numbers,
                self.header_roles(all, start, &numbers, fail)?,
            ),
        };
        let columns = &layout.columns;
        // Every row's cells in one vector (one allocation per table, not per row; it
        // shows in the parse benchmark): (line, first cell) per row.
        let mut cells_flat: Vec<&str> = Vec::new();
        let mut row_starts: Vec<(usize, usize)> = Vec::new();
        let mut j = start + 2;
        while j < all.len() {
            let (no, l) = (all[j].0, all[j].1.as_ref());
            if !l.trim_start().starts_with('|') {
                break;
            }
            // A header followed by its separator starts the next table (tables printed
            // back to back, one per dtype loop, have no title line between them).
            let next_is_separator = all.get(j + 1).is_some_and(|(_, n)| is_separator_line(n));
            if next_is_separator {
                break;
            }
            let row = cells(l)
                .ok_or_else(|| fail(ParseError::at(no, "table row is cut off (no closing '|')")))?;
            let before = cells_flat.len();
            cells_flat.extend(row);
            let n = cells_flat.len() - before;
            if n != columns.len() {
                let e = ParseError::at(
                    no,
                    format!(
                        "row has {n} cells, the header at line {hno} has {}",
                        columns.len()
                    ),
                );
                // Too few cells on the table's last line: the log was cut there (a
                // cut-off table, skipped as documented). Anywhere else the row is
                // garbled and the file cannot be read.
                let last = all
                    .get(j + 1)
                    .is_none_or(|(_, n)| !n.trim_start().starts_with('|'));
                return Err(if n < columns.len() && last {
                    fail(e)
                } else {
                    TableError::Refuse(e)
                });
            }
            row_starts.push((no, before));
            j += 1;
        }
        let rows: Vec<(usize, &[&str])> = row_starts
            .iter()
            .map(|(no, at)| (*no, &cells_flat[*at..*at + columns.len()]))
            .collect();
        if rows.is_empty() {
            return Err(fail(ParseError::at(
                hno,
                "table has a header but no rows (truncated table?)",
            )));
        }
        self.emit(hno, &layout, &rows);
        Ok(j)
    }

    /// The roles of the columns of the pipe table whose header is at `all[start]`.
    pub(super) fn header_roles(
        &self,
        all: &[(usize, Cow<str>)],
        start: usize,
        numbers: &[u8],
        fail: impl Fn(ParseError) -> TableError,
    ) -> Result<Vec<Role>, TableError> {
        let (hno, hline) = (all[start].0, all[start].1.as_ref());
        let header = split_cells(hline).ok_or_else(|| {
            fail(ParseError::at(
                hno,
                "table header is cut off (no closing '|')",
            ))
        })?;
        let sep = all
            .get(start + 1)
            .and_then(|(_, l)| split_cells(l))
            .filter(|c| is_separator(c));
        let Some(sep) = sep else {
            return Err(fail(ParseError::at(
                hno,
                "table header is not followed by a `|---|` separator row (truncated table?)",
            )));
        };
        if sep.len() != header.len() {
            return Err(fail(ParseError::at(
                hno + 1,
                format!(
                    "separator has {} cells, header has {}",
                    sep.len(),
                    header.len()
                ),
            )));
        }
        // `---:` is numeric (pandas and tabulate right-align numbers); any other column
        // is numeric when its cells are ([`numbers_by_cells`]): hand-written tables
        // align by taste.
        Ok(header
            .iter()
            .zip(&sep)
            .enumerate()
            .map(|(i, (h, s))| {
                let numeric = match numbers.get(i) {
                    Some(b'1') => true,
                    Some(b'u') => return unit_cells_role(h, all, start, i),
                    Some(b'0') => false,
                    _ => !s.starts_with(':') || s.ends_with(':'),
                };
                Role::of(h, numeric)
            })
            .collect())
    }

    /// Try the `to_string(index=False)` fallback at `all[start]`: a block of non-empty
    /// lines whose columns are separated by all-blank character columns, with at least
    /// one measurement column whose cells are all numbers or missing tokens. When the
    /// block is no table, `Err` gives where to go on: the next title inside the block,
    /// else the block's end, so no line is tried twice.
    pub(super) fn whitespace_table(
        &mut self,
        all: &[(usize, Cow<str>)],
        start: usize,
    ) -> Result<usize, usize> {
        let mut end = start;
        while end < all.len() && may_be_whitespace_row(&all[end].1) {
            end += 1;
        }
        let skip = || {
            (start + 1..end)
                .find(|k| table_title(&all[*k].1).is_some())
                .unwrap_or(end)
                .max(start + 1)
        };
        if end - start < 2 {
            return Err(skip());
        }
        let block: Vec<&str> = all[start..end].iter().map(|(_, l)| l.as_ref()).collect();
        let width = block.iter().map(|l| l.len()).max().unwrap_or(0);
        if block.iter().any(|l| !l.is_ascii()) {
            return Err(skip());
        }
        let blank: Vec<bool> = (0..width)
            .map(|p| {
                block
                    .iter()
                    .all(|l| l.as_bytes().get(p).is_none_or(|b| *b == b' '))
            })
            .collect();
        let mut spans = Vec::new();
        let mut p = 0;
        while p < width {
            if blank[p] {
                p += 1;
                continue;
            }
            let s = p;
            while p < width && !blank[p] {
                p += 1;
            }
            spans.push((s, p));
        }
        if spans.len() < 2 {
            return Err(skip());
        }
        let cell = |l: &str, (s, e): (usize, usize)| -> String {
            l.get(s..e.min(l.len())).unwrap_or("").trim().to_string()
        };
        let header: Vec<String> = spans.iter().map(|sp| cell(block[0], *sp)).collect();
        if header.iter().any(|h| h.is_empty()) {
            return Err(skip());
        }
        let body: Vec<Vec<String>> = block[1..]
            .iter()
            .map(|l| spans.iter().map(|sp| cell(l, *sp)).collect())
            .collect();
        let columns: Vec<Role> = header
            .iter()
            .enumerate()
            .map(|(c, h)| Role::of(h, body.iter().all(|r| parse_ratio(&r[c]).is_ok())))
            .collect();
        let measure_cols: Vec<usize> = (0..columns.len())
            .filter(|c| !columns[*c].is_key())
            .collect();
        if !measure_cols.iter().any(|c| columns[*c].is_measured()) {
            return Err(skip());
        }
        if body
            .iter()
            .any(|r| measure_cols.iter().any(|c| parse_ratio(&r[*c]).is_err()))
        {
            return Err(skip());
        }
        let cell_refs: Vec<Vec<&str>> = body
            .iter()
            .map(|r| r.iter().map(String::as_str).collect())
            .collect();
        let rows: Vec<(usize, &[&str])> = cell_refs
            .iter()
            .enumerate()
            .map(|(k, r)| (all[start + 1 + k].0, r.as_slice()))
            .collect();
        self.emit(all[start].0, &Layout::new(columns), &rows);
        Ok(end)
    }
}
