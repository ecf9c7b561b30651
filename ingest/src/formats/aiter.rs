//! aiter logs with summary tables (FORMATS.md §1): `DataFrame.to_markdown(index=False)`
//! pipe tables after a `<op> summary (markdown):` title (or none), and the
//! `to_string(index=False)` whitespace fallback. `checkAllclose` verdicts printed before
//! a table attach to that table's variant; `[perf]` lines in the same log are kept too.

use super::columns::{classify_header, ColumnRole};
use super::perf::parse_perf_line;
use super::{lines, Format, ParseError, Parser};
use crate::model::{push_json_str, Direction, Key, Measurement, Name, Numerics, Parsed, Raw};
use crate::text::{find_marker, has, is_missing_token, parse_value, strip_aiter_prefix};
use std::borrow::Cow;
use std::collections::HashMap;

pub struct AiterTables;

/// Name given to a table printed without a title.
pub const UNTITLED: &str = "untitled";

impl Parser for AiterTables {
    fn format(&self) -> Format {
        Format::AiterTable
    }
    fn sniff(&self, text: &str) -> bool {
        has(text, "(markdown):") || has(text, "|---") || has(text, "|:--")
    }
    fn parse(&self, text: &str) -> Result<Parsed, ParseError> {
        let all: Vec<(usize, Cow<str>)> = lines(text).collect();
        let mut st = State::default();
        let mut i = 0;
        while i < all.len() {
            let (no, line) = (&all[i].0, all[i].1.as_ref());
            // Table lines are most of a log: take them first.
            if line.trim_ascii_start().starts_with('|') {
                i = st.pipe_table(&all, i)?;
                continue;
            }
            let msg = strip_aiter_prefix(line);
            let body = msg.unwrap_or(line);
            if let Some(title) = table_title(body) {
                st.pending_title = Some(title);
                i += 1;
                continue;
            }
            if find_marker(body, "[perf]").is_some() {
                if let Some(ms) = parse_perf_line(body, *no)? {
                    st.out.extend(ms);
                }
                i += 1;
                continue;
            }
            if msg.is_some() {
                if let Some(v) = check_allclose(body) {
                    st.verdicts.push(v);
                }
                i += 1;
                continue;
            }
            if let Some(next) = st.whitespace_table(&all, i) {
                i = next;
                continue;
            }
            i += 1;
        }
        if st.out.is_empty() {
            return Err(ParseError::at(0, "no summary table with data rows found"));
        }
        Ok(Parsed {
            measurements: st.out,
            provenance: Default::default(),
        })
    }
}

#[derive(Default)]
struct State {
    out: Vec<Measurement>,
    pending_title: Option<String>,
    /// `checkAllclose` verdicts seen since the last table: (variant, verdict).
    verdicts: Vec<(String, Numerics)>,
    /// Tables seen so far by title, with their count (a log has a handful).
    titles_seen: Vec<(String, usize)>,
}

/// Can this line belong to a `to_string` table? Not blank, not a `[...]` log line, no
/// `|` and no ` = ` (the `log_args` blocks). One pass over the bytes.
fn may_be_whitespace_row(line: &str) -> bool {
    let b = line.trim_ascii().as_bytes();
    if b.is_empty() || b[0] == b'[' || memchr::memchr(b'|', b).is_some() {
        return false;
    }
    !memchr::memchr_iter(b'=', b).any(|i| i > 0 && b[i - 1] == b' ' && b.get(i + 1) == Some(&b' '))
}

/// `gemm_a16w16 summary (markdown):` -> `gemm_a16w16`; `X summary (dtype=bf16):` ->
/// `X (dtype=bf16)`; `%s (markdown):` -> `%s`.
fn table_title(body: &str) -> Option<String> {
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
    let t = crate::text::collapse_ws(&t);
    (!t.is_empty()).then_some(t)
}

/// `triton: gemm[checkAllclose atol=.. passed~]` -> (`triton`, Pass).
fn check_allclose(body: &str) -> Option<(String, Numerics)> {
    let p = find_marker(body, "[checkAllclose")?;
    let verdict = match super::perf::numerics_of_tail(&body[p..]) {
        Numerics::NotChecked => return None,
        v => v,
    };
    let head = body[..p].trim();
    let variant = head.split(':').next().unwrap_or("").trim();
    Some((variant.to_string(), verdict))
}

/// The trimmed cells of `| a | b |`; `None` when the line is not closed by `|`.
fn cells(line: &str) -> Option<impl Iterator<Item = &str>> {
    let inner = line.trim_ascii().strip_prefix('|')?.strip_suffix('|')?;
    Some(super::split_bytes(inner, b'|').map(str::trim_ascii))
}

fn split_cells(line: &str) -> Option<Vec<&str>> {
    cells(line).map(Iterator::collect)
}

/// `|---:|:---|` without allocating: every cell is `:?-{3,}:?`. (A row of `-` cells,
/// tabulate's missing values, has one dash a cell and is not a separator.)
fn is_separator_line(line: &str) -> bool {
    let t = line.trim_ascii().as_bytes();
    let Some(inner) = t.strip_prefix(b"|").and_then(|x| x.strip_suffix(b"|")) else {
        return false;
    };
    inner
        .split(|b| *b == b'|')
        .all(|cell| is_separator_cell(cell.trim_ascii()))
}

fn is_separator_cell(c: &[u8]) -> bool {
    let c = c.strip_prefix(b":").unwrap_or(c);
    let c = c.strip_suffix(b":").unwrap_or(c);
    c.len() >= 3 && c.iter().all(|b| *b == b'-')
}

fn is_separator(cells: &[&str]) -> bool {
    !cells.is_empty() && cells.iter().all(|c| is_separator_cell(c.as_bytes()))
}

/// What a column is, with every name it needs already interned.
#[derive(Clone, Copy)]
enum Role {
    /// Identity: the column's `"name":` JSON prefix.
    Key(Name),
    Value(Template),
}

#[derive(Clone, Copy)]
struct Template {
    variant: Name,
    metric: Name,
    unit: Name,
    column: Name,
    direction: Direction,
    /// A primary measurement (checkAllclose verdicts apply), not a derived column.
    measured: bool,
}

/// FNV-1a for the header cache: it hashes short header names once per column of every
/// table, where SipHash's setup costs ~2% of parsing (290 vs 295 MiB/s measured).
#[derive(Default)]
struct FnvHasher(u64);

impl std::hash::Hasher for FnvHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for b in bytes {
            h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

type Fnv = std::hash::BuildHasherDefault<FnvHasher>;

impl Role {
    /// Classify a header; logs repeat the same headers, so each thread remembers them.
    fn of(header: &str, numeric: bool) -> Role {
        thread_local! {
            static SEEN: std::cell::RefCell<HashMap<String, [Option<Role>; 2], Fnv>> =
                std::cell::RefCell::new(HashMap::default());
        }
        SEEN.with(|seen| {
            if let Some(Some(r)) = seen.borrow().get(header).map(|r| r[numeric as usize]) {
                return r;
            }
            let role = Role::classify(header, numeric);
            let mut seen = seen.borrow_mut();
            if seen.len() > 4096 {
                seen.clear();
            }
            seen.entry(header.to_string()).or_insert([None, None])[numeric as usize] = Some(role);
            role
        })
    }

    fn classify(header: &str, numeric: bool) -> Role {
        let value = |variant: &str, metric: &str, unit: &str, direction, measured| {
            Role::Value(Template {
                variant: variant.into(),
                metric: metric.into(),
                unit: unit.into(),
                column: header.into(),
                direction,
                measured,
            })
        };
        match classify_header(header, numeric) {
            ColumnRole::Key => {
                let mut prefix = String::new();
                push_json_str(&mut prefix, header);
                prefix.push(':');
                Role::Key(prefix.into())
            }
            ColumnRole::Measure {
                variant,
                metric,
                unit,
                direction,
            } => value(&variant, &metric, &unit, direction, true),
            ColumnRole::Derived {
                variant,
                metric,
                unit,
            } => value(&variant, &metric, &unit, Direction::None, false),
        }
    }

    fn is_key(&self) -> bool {
        matches!(self, Role::Key(_))
    }

    fn is_measured(&self) -> bool {
        matches!(self, Role::Value(t) if t.measured)
    }
}

impl State {
    fn take_table_name(&mut self) -> String {
        let base = self
            .pending_title
            .take()
            .unwrap_or_else(|| UNTITLED.to_string());
        let n = match self.titles_seen.iter_mut().find(|(t, _)| *t == base) {
            Some((_, n)) => {
                *n += 1;
                *n
            }
            None => {
                self.titles_seen.push((base.clone(), 1));
                1
            }
        };
        if n == 1 {
            base
        } else {
            format!("{base}#{n}")
        }
    }

    /// Parse the pipe table whose header is at `all[start]`; returns the next index.
    fn pipe_table(&mut self, all: &[(usize, Cow<str>)], start: usize) -> Result<usize, ParseError> {
        let (hno, hline) = (all[start].0, all[start].1.as_ref());
        let header = split_cells(hline)
            .ok_or_else(|| ParseError::at(hno, "table header is cut off (no closing '|')"))?;
        let sep = all
            .get(start + 1)
            .and_then(|(_, l)| split_cells(l))
            .filter(|c| is_separator(c));
        let Some(sep) = sep else {
            return Err(ParseError::at(
                hno,
                "table header is not followed by a `|---|` separator row (truncated table?)",
            ));
        };
        if sep.len() != header.len() {
            return Err(ParseError::at(
                hno + 1,
                format!(
                    "separator has {} cells, header has {}",
                    sep.len(),
                    header.len()
                ),
            ));
        }
        // `---:` is numeric; tabulate's plain `---` also right-aligns numbers.
        let columns: Vec<Role> = header
            .iter()
            .zip(&sep)
            .map(|(h, s)| Role::of(h, !s.starts_with(':') || s.ends_with(':')))
            .collect();
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
                .ok_or_else(|| ParseError::at(no, "table row is cut off (no closing '|')"))?;
            let before = cells_flat.len();
            cells_flat.extend(row);
            let n = cells_flat.len() - before;
            if n != columns.len() {
                return Err(ParseError::at(
                    no,
                    format!(
                        "row has {n} cells, the header at line {hno} has {}",
                        columns.len()
                    ),
                ));
            }
            row_starts.push((no, before));
            j += 1;
        }
        let rows: Vec<(usize, &[&str])> = row_starts
            .iter()
            .map(|(no, at)| (*no, &cells_flat[*at..*at + columns.len()]))
            .collect();
        if rows.is_empty() {
            return Err(ParseError::at(
                hno,
                "table has a header but no rows (truncated table?)",
            ));
        }
        let table = self.take_table_name();
        self.emit(&table, &columns, &rows);
        Ok(j)
    }

    /// Try the `to_string(index=False)` fallback at `all[start]`: a block of non-empty
    /// lines whose columns are separated by all-blank character columns, with at least
    /// one measurement column whose cells are all numbers or missing tokens.
    fn whitespace_table(&mut self, all: &[(usize, Cow<str>)], start: usize) -> Option<usize> {
        let mut end = start;
        while end < all.len() && may_be_whitespace_row(&all[end].1) {
            end += 1;
        }
        if end - start < 2 {
            return None;
        }
        let block: Vec<&str> = all[start..end].iter().map(|(_, l)| l.as_ref()).collect();
        let width = block.iter().map(|l| l.len()).max()?;
        if block.iter().any(|l| !l.is_ascii()) {
            return None;
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
            return None;
        }
        let cell = |l: &str, (s, e): (usize, usize)| -> String {
            l.get(s..e.min(l.len())).unwrap_or("").trim().to_string()
        };
        let header: Vec<String> = spans.iter().map(|sp| cell(block[0], *sp)).collect();
        if header.iter().any(|h| h.is_empty()) {
            return None;
        }
        let body: Vec<Vec<String>> = block[1..]
            .iter()
            .map(|l| spans.iter().map(|sp| cell(l, *sp)).collect())
            .collect();
        let columns: Vec<Role> = header
            .iter()
            .enumerate()
            .map(|(c, h)| Role::of(h, body.iter().all(|r| parse_value(&r[c]).is_ok())))
            .collect();
        let measure_cols: Vec<usize> = (0..columns.len())
            .filter(|c| !columns[*c].is_key())
            .collect();
        if !measure_cols.iter().any(|c| columns[*c].is_measured()) {
            return None;
        }
        if body
            .iter()
            .any(|r| measure_cols.iter().any(|c| parse_value(&r[*c]).is_err()))
        {
            return None;
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
        let table = self.take_table_name();
        self.emit(&table, &columns, &rows);
        Some(end)
    }

    fn emit(&mut self, table: &str, columns: &[Role], rows: &[(usize, &[&str])]) {
        let verdicts = std::mem::take(&mut self.verdicts);
        // The verdicts of one variant, in order: one per row when the counts agree.
        let verdicts_of = |variant: &str| -> Vec<Numerics> {
            verdicts
                .iter()
                .filter(|(name, _)| name.eq_ignore_ascii_case(variant))
                .map(|(_, n)| *n)
                .collect()
        };
        let numerics_for = |mine: &[Numerics], row: usize| -> Numerics {
            if mine.is_empty() {
                Numerics::NotChecked
            } else if mine.len() == rows.len() {
                mine[row]
            } else {
                // Cannot tell which row a verdict belongs to: the worst one applies to all.
                mine.iter().fold(Numerics::Pass, |a, b| a.worst(*b))
            }
        };
        let table: Name = table.into();
        // Per column: its template and, for measurements, its variant's verdicts.
        let outs: Vec<Option<(Template, Option<Vec<Numerics>>)>> = columns
            .iter()
            .map(|c| match *c {
                Role::Key(_) => None,
                Role::Value(t) => Some((t, t.measured.then(|| verdicts_of(&t.variant)))),
            })
            .collect();
        self.out
            .reserve(rows.len() * outs.iter().filter(|o| o.is_some()).count());
        for (r, (no, cells)) in rows.iter().enumerate() {
            let mut json = String::with_capacity(96);
            json.push('{');
            for (c, v) in columns.iter().zip(cells.iter()) {
                let Role::Key(name) = *c else { continue };
                if json.len() > 1 {
                    json.push(',');
                }
                json.push_str(&name);
                push_json_str(&mut json, if is_missing_token(v) { "None" } else { v });
            }
            json.push('}');
            let key: Key = json.into();
            for (o, raw) in outs.iter().zip(cells.iter()) {
                let Some((t, checks)) = o else { continue };
                self.out.push(Measurement {
                    table,
                    variant: t.variant,
                    key: key.clone(),
                    metric: t.metric,
                    unit: t.unit,
                    direction: t.direction,
                    value: parse_value(raw).ok().flatten(),
                    raw: Raw::new(raw),
                    column: t.column,
                    numerics: match checks {
                        Some(mine) => numerics_for(mine, r),
                        None => Numerics::NotChecked,
                    },
                    line: *no as u32,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles() {
        assert_eq!(
            table_title("gemm_a16w16 summary (markdown):").as_deref(),
            Some("gemm_a16w16")
        );
        assert_eq!(table_title("mha summary:").as_deref(), Some("mha"));
        assert_eq!(
            table_title("mha summary (dtype=torch.bfloat16):").as_deref(),
            Some("mha (dtype=torch.bfloat16)")
        );
        assert_eq!(table_title("%s (markdown):").as_deref(), Some("%s"));
        assert_eq!(table_title("calling test_gemm(M = 1,"), None);
        assert_eq!(table_title("delta:"), None);
    }

    #[test]
    fn verdicts() {
        assert_eq!(
            check_allclose("triton: gemm[checkAllclose atol=0.02 rtol=0.02 passed~]"),
            Some(("triton".into(), Numerics::Pass))
        );
        assert_eq!(
            check_allclose("ck: [checkAllclose atol=0.01 rtol=0.01 failed!]"),
            Some(("ck".into(), Numerics::Fail))
        );
    }
}

#[cfg(test)]
mod separator_tests {
    use super::*;

    #[test]
    fn separators_and_dash_rows() {
        assert!(is_separator_line("|-----:|:---------------|----:|"));
        assert!(is_separator_line("  |---|---|  "));
        assert!(!is_separator_line("|    - |    - |"));
        assert!(!is_separator_line("| 1 | 2 |"));
        assert!(!is_separator_line("|---|---"));
        // A table whose cells are `-` (missing) parses as rows, not as a new header.
        let text = "| M | ck us |\n|---:|---:|\n| 1 | - |\n| 2 | 3.5 |\n";
        let p = AiterTables.parse(text).unwrap();
        assert_eq!(p.measurements.len(), 2);
        assert_eq!(p.measurements[0].value, None);
        assert_eq!(p.measurements[1].value, Some(3.5));
    }
}
