//! A table's layout: each column's role (key, a variant's metric, a derived value), read
//! from its header and, where the header does not tell, from its cells.

use crate::formats::aiter_table::cells::cells;
use crate::formats::aiter_table::cells::is_separator;
use crate::formats::aiter_table::cells::is_separator_line;
use crate::formats::aiter_table::cells::split_cells;
use crate::formats::parser::ParseError;
use crate::formats::support::columns::{classify_header, ColumnRole};
use crate::formats::support::text::parse_ratio;
use crate::model::{metric, order_of, push_json_str, Direction, Name};
use std::borrow::Cow;
use std::collections::HashMap;

/// What a column is, with every name it needs already interned.
#[derive(Clone, Copy)]
pub(super) enum Role {
    /// Identity: the column's name and its `"name":` JSON prefix.
    Key {
        name: Name,
        prefix: Name,
    },
    Value(Template),
}

#[derive(Clone, Copy)]
pub(super) struct Template {
    pub(super) variant: Name,
    pub(super) metric: Name,
    pub(super) unit: Name,
    pub(super) column: Name,
    pub(super) direction: Direction,
    /// A primary measurement (checkAllclose verdicts apply), not a derived column.
    pub(super) measured: bool,
    /// Printed value times `factor` is the value in `unit` (1 when no conversion).
    pub(super) factor: f64,
    /// The unit the header printed, appended to `raw` when the value was converted.
    pub(super) printed: Name,
    /// Each cell prints its own unit (`8.18 ms`, `117.30 µs (2050.4 TFLOPs)`): the value
    /// is converted cell by cell, `factor` unused.
    pub(super) unit_cells: bool,
}

/// Note of a column whose meaning perfdb cannot tell.
pub(super) const UNCLASSIFIED_NOTE: &str = "unclassified column";

// FNV-1a for the header cache: it hashes short header names once per column of every
// table, where SipHash's setup costs ~2% of parsing (290 vs 295 MiB/s measured).
use crate::hash::Fnv;

impl Role {
    /// Classify a header; logs repeat the same headers, so each thread remembers them.
    pub(super) fn of(header: &str, numeric: bool) -> Role {
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

    pub(super) fn classify(header: &str, numeric: bool) -> Role {
        let value = |variant: &str, metric: &str, unit: &str, direction, measured| Template {
            variant: variant.into(),
            metric: metric.into(),
            unit: unit.into(),
            column: header.into(),
            direction,
            measured,
            factor: 1.0,
            printed: "".into(),
            unit_cells: false,
        };
        match classify_header(header, numeric) {
            ColumnRole::Key => {
                let mut prefix = String::new();
                push_json_str(&mut prefix, header);
                prefix.push(':');
                Role::Key {
                    name: header.into(),
                    prefix: prefix.into(),
                }
            }
            ColumnRole::Measure {
                variant,
                metric,
                unit,
                direction,
                factor,
                printed,
            } => Role::Value(Template {
                factor,
                printed: printed.as_str().into(),
                ..value(&variant, &metric, &unit, direction, true)
            }),
            ColumnRole::Derived {
                variant,
                metric,
                unit,
            } => Role::Value(value(&variant, &metric, &unit, Direction::None, false)),
            ColumnRole::Unclassified { .. } => {
                Role::Value(value("", metric::UNCLASSIFIED, "", Direction::None, false))
            }
        }
    }

    pub(super) fn is_key(&self) -> bool {
        matches!(self, Role::Key { .. })
    }

    pub(super) fn is_measured(&self) -> bool {
        matches!(self, Role::Value(t) if t.measured)
    }
}

/// A table's columns, worked out once per distinct header: each column's role, the key
/// columns in canonical order (by name) with their JSON prefixes, and the key's printed
/// order. Logs repeat the same header many times, so each thread remembers them.
pub(super) struct Layout {
    pub(super) columns: Vec<Role>,
    pub(super) key_cols: Vec<(usize, Name)>,
    pub(super) key_order: Name,
}

pub(super) type LayoutCache = HashMap<String, std::rc::Rc<Layout>, Fnv>;

thread_local! {
    static LAYOUTS: std::cell::RefCell<LayoutCache> = std::cell::RefCell::new(HashMap::default());
}

impl Layout {
    pub(super) fn new(columns: Vec<Role>) -> Layout {
        let mut keys: Vec<(usize, Name, Name)> = columns
            .iter()
            .enumerate()
            .filter_map(|(i, c)| match *c {
                Role::Key { name, prefix } => Some((i, name, prefix)),
                _ => None,
            })
            .collect();
        let key_order = order_of(keys.iter().map(|(_, n, _)| n.as_str()));
        keys.sort_by(|a, b| a.1.as_str().cmp(b.1.as_str()));
        Layout {
            columns,
            key_cols: keys.into_iter().map(|(i, _, p)| (i, p)).collect(),
            key_order,
        }
    }

    pub(super) fn cache_key(header: &str, sep: &str, numbers: &[u8]) -> String {
        let mut k = String::with_capacity(header.len() + sep.len() + numbers.len() + 2);
        k.push_str(header.trim_ascii());
        k.push('\n');
        k.push_str(sep.trim_ascii());
        k.push('\n');
        k.extend(numbers.iter().map(|b| *b as char));
        k
    }

    pub(super) fn cached(header: &str, sep: &str, numbers: &[u8]) -> Option<std::rc::Rc<Layout>> {
        LAYOUTS.with(|c| {
            c.borrow()
                .get(&Self::cache_key(header, sep, numbers))
                .cloned()
        })
    }

    pub(super) fn cache(
        header: &str,
        sep: &str,
        numbers: &[u8],
        columns: Vec<Role>,
    ) -> std::rc::Rc<Layout> {
        let layout = std::rc::Rc::new(Layout::new(columns));
        LAYOUTS.with(|c| {
            let mut c = c.borrow_mut();
            if c.len() > 1024 {
                c.clear();
            }
            c.insert(Self::cache_key(header, sep, numbers), layout.clone());
        });
        layout
    }
}

/// For each column of a hand-written pipe table at `all[start]` (no column aligned
/// `---:`): `1` when its cells are numbers or missing tokens, fewer words among them
/// than numbers, `u` when they are numbers with their unit, of one quantity
/// ([`cell_with_unit`]), no more words among them, else `0`. Empty for a table whose separator aligns a column
/// right (pandas', tabulate's: alignment says which columns are numeric) or that has no
/// separator.
pub(super) fn numbers_by_cells(all: &[(usize, Cow<str>)], start: usize) -> Vec<u8> {
    let right_aligned = |c: &str| !c.starts_with(':') && c.ends_with(':');
    // pandas and tabulate mark their numeric columns `---:` (and text ones `:---`):
    // where a separator aligns any column right, alignment is trusted and no cell is
    // read (every log's table, on the parse's hot path).
    let Some(mut sep_cells) = all.get(start + 1).and_then(|(_, l)| cells(l)) else {
        return Vec::new();
    };
    if sep_cells.any(right_aligned) {
        return Vec::new();
    }
    let Some(sep) = all.get(start + 1).and_then(|(_, l)| split_cells(l)) else {
        return Vec::new();
    };
    if !is_separator(&sep) {
        return Vec::new();
    }
    // The rows: pipe lines up to the next table's header (a line followed by a
    // separator), as `pipe_table` reads them.
    let body = &all[start + 2..];
    let n_rows = (0..body.len())
        .take_while(|&k| {
            body[k].1.trim_ascii_start().starts_with('|')
                && !body.get(k + 1).is_some_and(|(_, n)| is_separator_line(n))
        })
        .count();
    let rows = || body[..n_rows].iter().map(|(_, l)| l.as_ref());
    sep.iter()
        .enumerate()
        .map(|(i, _)| {
            let (mut numbers, mut with_unit, mut units, mut words) = (0, None, 0, 0);
            let mut garbled = 0;
            for r in rows() {
                let Some(c) = cells(r).and_then(|mut c| c.nth(i)) else {
                    continue;
                };
                match parse_ratio(c) {
                    Ok(Some(_)) => numbers += 1,
                    Ok(None) => {}
                    Err(_) => match cell_with_unit(c) {
                        // Every cell a number with a unit of one quantity.
                        Some((_, u)) if with_unit.is_none_or(|m| m == u.metric) => {
                            with_unit = Some(u.metric);
                            units += 1;
                        }
                        Some(_) => return b'0',
                        None => {
                            words += 1;
                            garbled += usize::from(is_garbled_number(c));
                        }
                    },
                }
            }
            // Every word a number garbled in print (`1O.5`) under a header that names a
            // value when its cells are numbers (`triton`, `fwd time`): no other row says
            // the column is numeric (a table of one row), and reading it as a key would
            // put the garble into the row's identity. Read as numeric, the file is
            // refused at the cell.
            if numbers == 0 && units == 0 && words > 0 && garbled == words {
                let header = all.get(start).and_then(|(_, l)| cells(l)?.nth(i));
                if header.is_some_and(|h| !Role::of(h.trim(), true).is_key()) {
                    return b'1';
                }
            }
            // A few words among more numbers are garbled values of a numeric column,
            // not a text column: read so, the file is refused at the first of them
            // (`checks::unread_cells`) instead of the column becoming part of the key.
            match (numbers, units) {
                // A number with its unit is strong evidence: as many as the words do.
                (0, u) if u > 0 && u >= words => b'u',
                (n, 0) if n > words => b'1',
                _ => b'0',
            }
        })
        .collect()
}

/// A number garbled in print: digits with a letter `O`, `o`, `l` or `I` among them or
/// right after them (`1O.5`, `12.5O`, `3l2`), nothing else (`128x256`, `bf16`, `3.6.0`
/// are words of their own).
fn is_garbled_number(cell: &str) -> bool {
    let t = cell.trim_ascii();
    let b = t.as_bytes();
    let lookalike = |c: u8| matches!(c, b'O' | b'o' | b'l' | b'I');
    !b.is_empty()
        && (b[0].is_ascii_digit() || b[0] == b'.' || b[0] == b'-')
        && b.iter()
            .all(|&c| c.is_ascii_digit() || c == b'.' || c == b'-' || lookalike(c))
        && b.iter().any(|&c| lookalike(c))
        && b.iter().filter(|&&c| c == b'.').count() <= 1
}

/// `8.18 ms`, `117.30 µs (2050.4 TFLOPs)`, `**1.5ms**`: a cell that leads with a number
/// and the unit perfdb knows it in; what follows the unit is not read.
pub(super) fn cell_with_unit(cell: &str) -> Option<(f64, crate::formats::support::units::Unit)> {
    let t = cell.trim_ascii().trim_matches(['*', '`']).trim_ascii();
    let digits = crate::formats::support::text::number_prefix_len(t);
    if digits == 0 || digits == t.len() {
        return None;
    }
    let value: f64 = t[..digits].parse().ok()?;
    let unit = t[digits..]
        .trim_start()
        .split([' ', '(', ',', '*'])
        .next()?;
    let u = crate::formats::support::units::unit_of_any_case(unit)?;
    Some((value, u))
}

/// The role of column `i` of the table at `all[start]`, whose every cell prints a
/// number with its unit: a measurement of the variant its header names, in the
/// canonical unit of the cells' quantity, converted cell by cell.
pub(super) fn unit_cells_role(
    header: &str,
    all: &[(usize, Cow<str>)],
    start: usize,
    i: usize,
) -> Role {
    let unit = all[start + 2..]
        .iter()
        .find_map(|(_, l)| cell_with_unit(cells(l)?.nth(i)?))
        .map(|(_, u)| u)
        .expect("a column of unit cells has one");
    Role::Value(Template {
        variant: header.trim().into(),
        metric: unit.metric.into(),
        unit: unit.canonical.into(),
        column: header.into(),
        direction: unit.direction,
        measured: true,
        factor: 1.0,
        printed: "".into(),
        unit_cells: true,
    })
}

/// What a key cell that reads as a measurement is: a ratio (`1.31x`), a percentage
/// (`+49.2%`) or a number in exponent form (`1.5e-05`: a difference or an error, never a
/// shape). A rerun prints other values there, so such a column is never identity.
pub(super) fn measured_cell(cell: &str) -> Option<&'static str> {
    // Markdown emphasis around a cell (`**1.07x**`), and a measurement beside a name
    // (`**triton** (1.07x)`, `ck (12.3 us)`): the column is a result, not identity.
    let plain = cell.trim_ascii().trim_matches(['*', '_', '`']).trim_ascii();
    if let Some(kind) = measured_token(plain) {
        return Some(kind);
    }
    let mut rest = plain;
    while let Some(open) = rest.find('(') {
        let Some(close) = rest[open..].find(')') else {
            break;
        };
        let inner = rest[open + 1..open + close].trim_matches(['*', '_', '`']);
        if let Some(kind) = measured_token(inner) {
            return Some(kind);
        }
        rest = &rest[open + close + 1..];
    }
    None
}

/// One value of [`measured_cell`]: a ratio, a percentage, a number in exponent form, or
/// a number followed by a unit (`12.3 us`, `1.5ms`, `117.30 µs (2050.4 TFLOPs)`).
pub(super) fn measured_token(cell: &str) -> Option<&'static str> {
    let t = cell.trim_ascii();
    if cell_with_unit(t).is_some() {
        return Some(metric::UNCLASSIFIED);
    }
    let c = t.as_bytes();
    let (&last, body) = c.split_last()?;
    let number = |b: &[u8]| {
        std::str::from_utf8(b).is_ok_and(|t| {
            let t = t.trim_ascii_end();
            !t.is_empty() && t.parse::<f64>().is_ok_and(f64::is_finite)
        })
    };
    match last {
        b'x' if number(body) => Some(metric::RATIO),
        b'%' if number(body) => Some(metric::UPLIFT),
        _ if c.iter().any(|b| matches!(b, b'e' | b'E'))
            && c.iter().all(|b| b.is_ascii_digit() || b".eE+-".contains(b))
            && number(c) =>
        {
            Some(metric::UNCLASSIFIED)
        }
        _ => None,
    }
}

/// `layout` with its key columns whose cells read as measurements ([`measured_cell`])
/// made derived values, or `None` when it has none.
pub(super) fn measured_keys(layout: &Layout, rows: &[(usize, &[&str])]) -> Option<Layout> {
    let kind_of = |c: usize| rows.iter().find_map(|(_, cells)| measured_cell(cells[c]));
    let demote: Vec<(usize, &'static str)> = layout
        .key_cols
        .iter()
        .filter_map(|(c, _)| kind_of(*c).map(|kind| (*c, kind)))
        .collect();
    if demote.is_empty() {
        return None;
    }
    let mut columns = layout.columns.clone();
    for (c, kind) in demote {
        let Role::Key { name, .. } = columns[c] else {
            continue;
        };
        columns[c] = Role::Value(Template {
            variant: "".into(),
            metric: kind.into(),
            unit: "".into(),
            column: name,
            direction: Direction::None,
            measured: false,
            factor: 1.0,
            printed: "".into(),
            unit_cells: false,
        });
    }
    Some(Layout::new(columns))
}

/// Why a pipe table was not read.
pub(super) enum TableError {
    /// The block is no table (a stray `|` line, a cut-off table, a header without its
    /// separator): skipped with a warning, the rest of the log read; where to go on.
    Skip(ParseError, usize),
    /// A table whose row cannot be read (a cell too few or too many): the file is refused.
    Refuse(ParseError),
}
