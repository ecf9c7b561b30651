//! aiter logs with summary tables: `DataFrame.to_markdown(index=False)`
//! pipe tables after a `<op> summary (markdown):` title (or none), and the
//! `to_string(index=False)` whitespace fallback. `checkAllclose` verdicts printed before
//! a table attach to that table's variant; `[perf]` lines in the same log are kept too.

use super::perf_lines::parse_perf_line;
use super::{lines, Format, ParseError, Parser};
use crate::formats::support::columns::{classify_header, ColumnRole, KNOWN_VARIANTS};
use crate::formats::support::text::{
    find_marker, is_missing_token, parse_value, strip_aiter_prefix,
};
use crate::model::{
    key_from_json, key_of, metric, order_of, push_json_str, Direction, KeyId, Keys, Measurement,
    Name, Numerics, Parsed, Warning,
};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

pub struct AiterTables;

/// Name given to a table printed without a title.
pub const UNTITLED: &str = "untitled";

impl Parser for AiterTables {
    fn format(&self) -> Format {
        Format::AiterTable
    }
    fn sniff(&self, text: &str) -> bool {
        self.evidence(text) > crate::formats::Evidence::None
    }
    /// aiter's banner (`[aiter] <test> summary (markdown):`) is its signature; a pipe
    /// table's separator row (pandas' `|---:|`, GitHub's `| --- |` and `|:-:|`) only a
    /// marker, which other tools print too.
    fn evidence(&self, text: &str) -> crate::formats::Evidence {
        let b = text.as_bytes();
        if crate::formats::support::text::finder!("summary (markdown):")
            .find(b)
            .is_some()
        {
            return crate::formats::Evidence::Signature;
        }
        let separator = crate::formats::support::text::finder!("(markdown):")
            .find(b)
            .is_some()
            || crate::formats::support::text::finder!("|---")
                .find(b)
                .is_some()
            || crate::formats::support::text::finder!("|:-")
                .find(b)
                .is_some()
            || crate::formats::support::text::finder!("| --")
                .find_iter(b)
                .chain(crate::formats::support::text::finder!("| :-").find_iter(b))
                .any(|at| {
                    let start = text[..at].rfind('\n').map_or(0, |s| s + 1);
                    let end = text[at..].find('\n').map_or(text.len(), |e| at + e);
                    is_separator_line(&text[start..end])
                });
        if separator {
            crate::formats::Evidence::Marker
        } else {
            crate::formats::Evidence::None
        }
    }
    fn parse(&self, text: &str) -> Result<Parsed, ParseError> {
        let all: Vec<(usize, Cow<str>)> = lines(text).collect();
        let mut st = State::default();
        let mut i = 0;
        // Each pass of the loop consumes at least one line and never moves back, so a
        // log is read once: plain-text blocks are tried as a `to_string` table at most
        // once from their start, then skipped whole.
        while i < all.len() {
            let (no, line) = (&all[i].0, all[i].1.as_ref());
            // Table lines are most of a log: take them first.
            if line.trim_ascii_start().starts_with('|') {
                i = match st.pipe_table(&all, i) {
                    Ok(next) => next,
                    Err(TableError::Skip(e, next)) => {
                        st.warnings.push(Warning {
                            line: e.line,
                            reason: format!("{}; this block is skipped", e.reason),
                        });
                        next
                    }
                    // A table whose row cannot be read: storing the rest would make its
                    // rows look gone.
                    Err(TableError::Refuse(e)) => return Err(e),
                };
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
                if let Some(ms) = parse_perf_line(body, *no, &mut st.keys)? {
                    st.out.extend(ms);
                }
                i += 1;
                continue;
            }
            if msg.is_some() {
                if let Some(v) = check_allclose(body) {
                    st.verdicts.push((v.0, v.1, *no));
                }
                i += 1;
                continue;
            }
            if let Some(next) = calling_block(&all, i) {
                st.calls.push((i, next));
                i = next;
                continue;
            }
            i = match st.whitespace_table(&all, i) {
                Ok(next) | Err(next) => next,
            };
        }
        st.finish(&all)
    }
}

#[derive(Default)]
struct State {
    out: Vec<Measurement>,
    /// The keys of `out`.
    keys: Keys,
    pending_title: Option<String>,
    /// `checkAllclose` verdicts seen since the last table: (message prefix, verdict, line).
    verdicts: Vec<(String, Numerics, usize)>,
    /// The `calling test_x(...)` blocks seen since the last table, as line ranges of
    /// the log: parsed only when a repeated title needs them.
    calls: Vec<(usize, usize)>,
    /// Every table emitted, in order.
    tables: Vec<TableSpan>,
    warnings: Vec<Warning>,
    /// Columns already reported as unclassified (once per file).
    reported: HashSet<String>,
    /// Failed checks of a variant no table of the log measures: the run failed.
    run_failures: Vec<String>,
}

/// One emitted table: its title, its values in `State::out`, and the arguments every
/// `calling` block before it shared.
struct TableSpan {
    title: String,
    values: std::ops::Range<usize>,
    header_line: usize,
    calls: Vec<(usize, usize)>,
}

/// Variants that are the reference a check compares against (`torch`, `torch_mm`,
/// `ref`): an unattributed numerics failure is never theirs.
const REFERENCE_VARIANTS: &[&str] = &["torch", "ref", "reference", "baseline", "golden", "native"];

/// Does `name` name `variant`: equal, or `variant` followed by `_`, `-`, `.` or a space
/// (`ck_gemm` names `ck`), ignoring case?
fn names_variant(name: &str, variant: &str) -> bool {
    let (n, v) = (name.as_bytes(), variant.as_bytes());
    !v.is_empty()
        && n.len() >= v.len()
        && n[..v.len()].eq_ignore_ascii_case(v)
        && (n.len() == v.len() || matches!(n[v.len()], b'_' | b'-' | b'.' | b' '))
}

fn is_reference(variant: &str) -> bool {
    REFERENCE_VARIANTS.iter().any(|r| names_variant(variant, r))
}

/// Does a check's message name a variant perfdb knows (`ck: ...`, `asm_moe: ...`)?
fn names_known_variant(prefix: &str) -> bool {
    KNOWN_VARIANTS.iter().any(|v| names_variant(prefix, v))
}

/// A failed check of a variant that no table of the log measures is the run's failure:
/// there is no value to mark, and dropping it would read as a pass.
fn absent_variant_failure(prefix: &str, line: usize) -> String {
    format!("line {line}: checkAllclose failed for '{prefix}', which no table of this log measures")
}

/// Why a value is marked failed without a verdict naming it.
const UNATTRIBUTED: &str = "unattributed numerics failure";

/// The text after `calling test_x(` on a line, if it starts such a block.
fn calling_start(line: &str) -> Option<&str> {
    let rest = line.trim_ascii_start().strip_prefix("calling ")?;
    let open = rest.find('(')?;
    (!rest[..open].contains(char::is_whitespace)).then(|| &rest[open + 1..])
}

/// `calling test_gemm(M = 1,\n  N = 4096, ...)` (aiter's `log_args`, one argument a
/// line) starting at `all[start]`: the index after its last line. Nothing is copied.
fn calling_block(all: &[(usize, Cow<str>)], start: usize) -> Option<usize> {
    let first = calling_start(&all[start].1)?;
    let mut end = start + 1;
    let mut depth = 1i32 + paren_balance(first);
    // At most a few dozen arguments; a block that never closes is not a call.
    while depth > 0 && end < all.len() && end - start < 256 {
        let l = all[end].1.as_ref();
        if l.trim_ascii_start().starts_with('[') || l.trim_ascii_start().starts_with('|') {
            break;
        }
        depth += paren_balance(l);
        end += 1;
    }
    Some(end)
}

/// The `name = value` arguments of the calling block `all[start..end]`.
fn calling_args(all: &[(usize, Cow<str>)], (start, end): (usize, usize)) -> Vec<(String, String)> {
    let mut text = calling_start(&all[start].1).unwrap_or("").to_string();
    for (_, l) in &all[start + 1..end] {
        text.push('\n');
        text.push_str(l);
    }
    let inner = match text.rfind(')') {
        Some(p) => &text[..p],
        None => text.as_str(),
    };
    let mut args = Vec::new();
    for piece in split_top_level(inner) {
        if let Some((k, v)) = piece.split_once('=') {
            let (k, v) = (k.trim(), crate::formats::support::text::collapse_ws(v));
            if !k.is_empty() && !k.contains(char::is_whitespace) {
                args.push((k.to_string(), v));
            }
        }
    }
    args
}

fn paren_balance(s: &str) -> i32 {
    s.bytes()
        .map(|b| match b {
            b'(' | b'[' | b'{' => 1,
            b')' | b']' | b'}' => -1,
            _ => 0,
        })
        .sum()
}

/// Split at commas outside brackets: `a = (1, 2), b = 3` -> [`a = (1, 2)`, ` b = 3`].
fn split_top_level(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut from) = (0i32, 0);
    for (i, b) in s.bytes().enumerate() {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b',' if depth == 0 => {
                out.push(&s[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[from..]);
    out
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
    let t = crate::formats::support::text::collapse_ws(&t);
    (!t.is_empty()).then_some(t)
}

/// `triton: gemm[checkAllclose atol=.. passed~]` -> (`triton`, Pass).
fn check_allclose(body: &str) -> Option<(String, Numerics)> {
    let p = find_marker(body, "[checkAllclose")?;
    let verdict = match super::perf_lines::numerics_of_tail(&body[p..]) {
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
    Some(crate::formats::split_bytes(inner, b'|').map(str::trim_ascii))
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
    let aligned = c.first() == Some(&b':') || c.last() == Some(&b':');
    let c = c.strip_prefix(b":").unwrap_or(c);
    let c = c.strip_suffix(b":").unwrap_or(c);
    // GitHub takes `:-:` (an alignment colon and one dash); plain cells need three.
    c.len() >= if aligned { 1 } else { 3 } && c.iter().all(|b| *b == b'-')
}

fn is_separator(cells: &[&str]) -> bool {
    !cells.is_empty() && cells.iter().all(|c| is_separator_cell(c.as_bytes()))
}

/// What a column is, with every name it needs already interned.
#[derive(Clone, Copy)]
enum Role {
    /// Identity: the column's name and its `"name":` JSON prefix.
    Key {
        name: Name,
        prefix: Name,
    },
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
    /// Printed value times `factor` is the value in `unit` (1 when no conversion).
    factor: f64,
    /// The unit the header printed, appended to `raw` when the value was converted.
    printed: Name,
    /// Each cell prints its own unit (`8.18 ms`, `117.30 µs (2050.4 TFLOPs)`): the value
    /// is converted cell by cell, `factor` unused.
    unit_cells: bool,
}

/// Note of a column whose meaning perfdb cannot tell.
const UNCLASSIFIED_NOTE: &str = "unclassified column";

// FNV-1a for the header cache: it hashes short header names once per column of every
// table, where SipHash's setup costs ~2% of parsing (290 vs 295 MiB/s measured).
use crate::hash::Fnv;

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

    fn is_key(&self) -> bool {
        matches!(self, Role::Key { .. })
    }

    fn is_measured(&self) -> bool {
        matches!(self, Role::Value(t) if t.measured)
    }
}

/// A table's columns, worked out once per distinct header: each column's role, the key
/// columns in canonical order (by name) with their JSON prefixes, and the key's printed
/// order. Logs repeat the same header many times, so each thread remembers them.
struct Layout {
    columns: Vec<Role>,
    key_cols: Vec<(usize, Name)>,
    key_order: Name,
}

type LayoutCache = HashMap<String, std::rc::Rc<Layout>, Fnv>;

thread_local! {
    static LAYOUTS: std::cell::RefCell<LayoutCache> = std::cell::RefCell::new(HashMap::default());
}

impl Layout {
    fn new(columns: Vec<Role>) -> Layout {
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

    fn cache_key(header: &str, sep: &str, numbers: &[u8]) -> String {
        let mut k = String::with_capacity(header.len() + sep.len() + numbers.len() + 2);
        k.push_str(header.trim_ascii());
        k.push('\n');
        k.push_str(sep.trim_ascii());
        k.push('\n');
        k.extend(numbers.iter().map(|b| *b as char));
        k
    }

    fn cached(header: &str, sep: &str, numbers: &[u8]) -> Option<std::rc::Rc<Layout>> {
        LAYOUTS.with(|c| {
            c.borrow()
                .get(&Self::cache_key(header, sep, numbers))
                .cloned()
        })
    }

    fn cache(header: &str, sep: &str, numbers: &[u8], columns: Vec<Role>) -> std::rc::Rc<Layout> {
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
fn numbers_by_cells(all: &[(usize, Cow<str>)], start: usize) -> Vec<u8> {
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
            for r in rows() {
                let Some(c) = cells(r).and_then(|mut c| c.nth(i)) else {
                    continue;
                };
                match parse_value(c) {
                    Ok(Some(_)) => numbers += 1,
                    Ok(None) => {}
                    Err(_) => match cell_with_unit(c) {
                        // Every cell a number with a unit of one quantity.
                        Some((_, u)) if with_unit.is_none_or(|m| m == u.metric) => {
                            with_unit = Some(u.metric);
                            units += 1;
                        }
                        Some(_) => return b'0',
                        None => words += 1,
                    },
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

/// `8.18 ms`, `117.30 µs (2050.4 TFLOPs)`, `**1.5ms**`: a cell that leads with a number
/// and the unit perfdb knows it in; what follows the unit is not read.
fn cell_with_unit(cell: &str) -> Option<(f64, crate::formats::support::units::Unit)> {
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
fn unit_cells_role(header: &str, all: &[(usize, Cow<str>)], start: usize, i: usize) -> Role {
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
fn measured_cell(cell: &str) -> Option<&'static str> {
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
fn measured_token(cell: &str) -> Option<&'static str> {
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
fn measured_keys(layout: &Layout, rows: &[(usize, &[&str])]) -> Option<Layout> {
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
enum TableError {
    /// The block is no table (a stray `|` line, a cut-off table, a header without its
    /// separator): skipped with a warning, the rest of the log read; where to go on.
    Skip(ParseError, usize),
    /// A table whose row cannot be read (a cell too few or too many): the file is refused.
    Refuse(ParseError),
}

impl State {
    /// Parse the pipe table whose header is at `all[start]`; returns the next index, or
    /// why the block is not a table and the index after it.
    fn pipe_table(&mut self, all: &[(usize, Cow<str>)], start: usize) -> Result<usize, TableError> {
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
    fn header_roles(
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
    fn whitespace_table(
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
            .map(|(c, h)| Role::of(h, body.iter().all(|r| parse_value(&r[c]).is_ok())))
            .collect();
        let measure_cols: Vec<usize> = (0..columns.len())
            .filter(|c| !columns[*c].is_key())
            .collect();
        if !measure_cols.iter().any(|c| columns[*c].is_measured()) {
            return Err(skip());
        }
        if body
            .iter()
            .any(|r| measure_cols.iter().any(|c| parse_value(&r[*c]).is_err()))
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

    /// Which variant a verdict's message names: the longest measured variant it starts
    /// with (`ck_gemm` -> `ck`), or `None`.
    fn named_variant(prefix: &str, variants: &[Name]) -> Option<Name> {
        variants
            .iter()
            .filter(|v| names_variant(prefix, v))
            .max_by_key(|v| v.len())
            .copied()
    }

    fn emit(&mut self, header_line: usize, layout: &Layout, rows: &[(usize, &[&str])]) {
        let demoted = measured_keys(layout, rows);
        let layout = demoted.as_ref().unwrap_or(layout);
        let columns = &layout.columns;
        let title = self
            .pending_title
            .take()
            .unwrap_or_else(|| UNTITLED.to_string());
        let calls = std::mem::take(&mut self.calls);
        let verdicts = std::mem::take(&mut self.verdicts);
        let measured: Vec<Name> = columns
            .iter()
            .filter_map(|c| match c {
                Role::Value(t) if t.measured => Some(t.variant),
                _ => None,
            })
            .collect();
        // Each verdict goes to the variant its message names; a failure that names none
        // fails every variant but the reference.
        let mut named: Vec<(Name, Numerics)> = Vec::new();
        let mut unattributed_fail = false;
        for (prefix, verdict, line) in &verdicts {
            match Self::named_variant(prefix, &measured) {
                Some(v) => named.push((v, *verdict)),
                None if *verdict != Numerics::Fail => {}
                None if names_known_variant(prefix) => self
                    .run_failures
                    .push(absent_variant_failure(prefix, *line)),
                None => unattributed_fail = true,
            }
        }
        // The verdicts of one variant, in order: one per row when the counts agree.
        let verdicts_of = |variant: Name| -> Vec<Numerics> {
            named
                .iter()
                .filter(|(v, _)| *v == variant)
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
        let table: Name = title.as_str().into();
        // Per column: its template, for measurements its variant's verdicts, and
        // whether an unattributed failure applies to it.
        type Out = Option<(Template, Option<Vec<Numerics>>, bool, Option<Name>)>;
        let outs: Vec<Out> = columns
            .iter()
            .map(|c| match *c {
                Role::Key { .. } => None,
                Role::Value(t) => Some((
                    t,
                    t.measured.then(|| verdicts_of(t.variant)),
                    t.measured && unattributed_fail && !is_reference(&t.variant),
                    (&*t.metric == metric::UNCLASSIFIED).then(|| Name::new(UNCLASSIFIED_NOTE)),
                )),
            })
            .collect();
        for (t, ..) in outs.iter().flatten() {
            if &*t.metric == metric::UNCLASSIFIED && self.reported.insert(t.column.to_string()) {
                self.warnings.push(Warning {
                    line: header_line,
                    reason: format!(
                        "column '{}': numeric, but no unit, no quantity word (latency, time, \
                         bw, throughput) and no known variant prefix; stored as metric '{}', \
                         not compared and not part of the row identity",
                        t.column,
                        metric::UNCLASSIFIED
                    ),
                });
            }
        }
        // Key cells in canonical order (by name): the same cells printed in another
        // column order give the same key.
        let (key_cols, key_order) = (&layout.key_cols, layout.key_order);
        let start = self.out.len();
        self.out
            .reserve(rows.len() * outs.iter().filter(|o| o.is_some()).count());
        for (r, (no, cells)) in rows.iter().enumerate() {
            let json = self.keys.text_mut();
            json.push('{');
            for (i, (c, prefix)) in key_cols.iter().enumerate() {
                if i > 0 {
                    json.push(',');
                }
                json.push_str(prefix);
                let v = cells[*c];
                push_json_str(json, if is_missing_token(v) { "None" } else { v });
            }
            json.push('}');
            let key = self.keys.finish();
            for (o, raw) in outs.iter().zip(cells.iter()) {
                let Some((t, checks, escalated, column_note)) = o else {
                    continue;
                };
                let mut value = if t.unit_cells {
                    cell_with_unit(raw)
                        .map(|(v, u)| crate::formats::support::units::to_canonical(v, u.factor))
                } else {
                    parse_value(raw).ok().flatten()
                };
                let raw = if t.factor != 1.0 {
                    value =
                        value.map(|v| crate::formats::support::units::to_canonical(v, t.factor));
                    self.keys.raw_joined(raw, &t.printed)
                } else {
                    self.keys.raw(raw)
                };
                let (numerics, note) = if *escalated {
                    (Numerics::Fail, Some(Name::new(UNATTRIBUTED)))
                } else {
                    let n = match checks {
                        Some(mine) => numerics_for(mine, r),
                        None => Numerics::NotChecked,
                    };
                    (n, *column_note)
                };
                self.out.push(Measurement {
                    table,
                    variant: t.variant,
                    key,
                    key_order,
                    metric: t.metric,
                    unit: t.unit,
                    direction: t.direction,
                    value,
                    raw,
                    column: t.column,
                    numerics,
                    line: *no as u32,
                    note,
                });
            }
        }
        self.tables.push(TableSpan {
            title,
            values: start..self.out.len(),
            header_line,
            calls,
        });
    }

    /// After the last line: verdicts no table followed, repeated titles, and the result.
    fn finish(mut self, all: &[(usize, Cow<str>)]) -> Result<Parsed, ParseError> {
        self.apply_trailing_verdicts();
        self.name_repeated_tables(all);
        if self.out.is_empty() {
            // Nothing usable: the first skipped block says why, else there was no table.
            return Err(match self.warnings.first() {
                Some(w) => {
                    ParseError::at(w.line, w.reason.trim_end_matches("; this block is skipped"))
                }
                None => ParseError::at(0, "no summary table with data rows found"),
            });
        }
        let mut provenance = crate::model::Provenance::default();
        if !self.run_failures.is_empty() {
            provenance.verdict = Some(crate::model::RunVerdict::Fail);
            provenance.verdict_detail = Some(self.run_failures.join("; "));
        }
        Ok(Parsed {
            measurements: self.out,
            keys: self.keys,
            provenance,
            warnings: self.warnings,
            ..Parsed::default()
        })
    }

    /// A failed check printed after the last table belongs to the run: to the variant it
    /// names, else to every variant but the reference.
    fn apply_trailing_verdicts(&mut self) {
        let fails: Vec<(String, usize)> = std::mem::take(&mut self.verdicts)
            .into_iter()
            .filter(|(_, v, _)| *v == Numerics::Fail)
            .map(|(p, _, line)| (p, line))
            .collect();
        if fails.is_empty() {
            return;
        }
        let mut measured: Vec<Name> = Vec::new();
        for m in &self.out {
            if m.direction != Direction::None && !measured.contains(&m.variant) {
                measured.push(m.variant);
            }
        }
        for (prefix, line) in fails {
            let target = Self::named_variant(&prefix, &measured);
            if target.is_none() && names_known_variant(&prefix) {
                self.run_failures
                    .push(absent_variant_failure(&prefix, line));
                continue;
            }
            for m in self
                .out
                .iter_mut()
                .filter(|m| m.direction != Direction::None)
            {
                let hit = match target {
                    Some(v) => m.variant == v,
                    None => !is_reference(&m.variant),
                };
                if hit {
                    m.numerics = Numerics::Fail;
                    if target.is_none() {
                        m.note = Some(Name::new(UNATTRIBUTED));
                    }
                }
            }
        }
    }

    /// Logs print one title per loop iteration (dtype, bias, layout). Copies share the
    /// title when their rows are told apart by their keys; else by the `calling`
    /// arguments that differ between them (added to the key); else, as a last resort,
    /// by position (`title#2`), which `compare` refuses to trust when the counts differ.
    fn name_repeated_tables(&mut self, all: &[(usize, Cow<str>)]) {
        let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
        for (i, t) in self.tables.iter().enumerate() {
            match groups.iter_mut().find(|(title, _)| *title == t.title) {
                Some((_, g)) => g.push(i),
                None => groups.push((t.title.clone(), vec![i])),
            }
        }
        for (title, group) in groups.into_iter().filter(|(_, g)| g.len() > 1) {
            if self.rows_unique(&group, &[]) {
                continue;
            }
            let shared: Vec<Vec<(String, String)>> = group
                .iter()
                .map(|t| {
                    let calls: Vec<Vec<(String, String)>> = self.tables[*t]
                        .calls
                        .iter()
                        .map(|c| calling_args(all, *c))
                        .collect();
                    shared_args(&calls)
                })
                .collect();
            let extra = self.distinguishing_args(&group, &shared);
            if !extra.is_empty() && self.rows_unique(&group, &extra) {
                for (t, cells) in group.iter().zip(&extra) {
                    self.add_key_cells(*t, cells);
                }
                continue;
            }
            for (n, t) in group.iter().enumerate().skip(1) {
                let name = Name::new(&format!("{title}#{}", n + 1));
                let range = self.tables[*t].values.clone();
                for m in &mut self.out[range] {
                    m.table = name;
                }
            }
            let lines: Vec<String> = group
                .iter()
                .map(|t| self.tables[*t].header_line.to_string())
                .collect();
            self.warnings.push(Warning {
                line: self.tables[group[0]].header_line,
                reason: format!(
                    "table '{title}' is printed {} times (lines {}) with the same rows and \
                     nothing that tells the copies apart; they are named '{title}', \
                     '{title}#2', ... by position, and compare is inconclusive on them \
                     when the other side printed a different number",
                    group.len(),
                    lines.join(", ")
                ),
            });
        }
    }

    /// Are (variant, key, column) unique over the tables of `group`, with `extra[i]`
    /// added to the key of the i-th table?
    fn rows_unique(&self, group: &[usize], extra: &[Vec<(String, String)>]) -> bool {
        // (variant, key, column, the cells added to the key)
        type RowIdentity<'a> = (Name, &'a str, Name, Option<&'a [(String, String)]>);
        let mut seen: HashSet<RowIdentity> = HashSet::new();
        group.iter().enumerate().all(|(i, t)| {
            let cells = extra.get(i).map(Vec::as_slice);
            self.out[self.tables[*t].values.clone()]
                .iter()
                .all(|m| seen.insert((m.variant, self.keys.get(m.key), m.column, cells)))
        })
    }

    /// The `calling` arguments every copy of a table shares within itself but that
    /// differ between copies, and are not already key columns: per table, the cells.
    /// `shared[i]` holds the arguments the calls before the i-th table of `group` share.
    fn distinguishing_args(
        &self,
        group: &[usize],
        shared: &[Vec<(String, String)>],
    ) -> Vec<Vec<(String, String)>> {
        let first = &self.tables[group[0]];
        let key_names: Vec<String> = self.out[first.values.clone()]
            .first()
            .map(|m| {
                key_from_json(self.keys.get(m.key))
                    .into_iter()
                    .map(|(k, _)| k)
                    .collect()
            })
            .unwrap_or_default();
        let names: Vec<&String> = shared[0]
            .iter()
            .map(|(k, _)| k)
            .filter(|k| !key_names.contains(k))
            .filter(|k| {
                let values: Vec<Option<&String>> = shared
                    .iter()
                    .map(|args| args.iter().find(|(n, _)| n == *k).map(|(_, v)| v))
                    .collect();
                values.iter().all(Option::is_some) && values.iter().any(|v| *v != values[0])
            })
            .collect();
        if names.is_empty() {
            return Vec::new();
        }
        shared
            .iter()
            .map(|args| {
                names
                    .iter()
                    .filter_map(|n| args.iter().find(|(k, _)| k == *n).cloned())
                    .collect()
            })
            .collect()
    }

    fn add_key_cells(&mut self, table: usize, cells: &[(String, String)]) {
        let range = self.tables[table].values.clone();
        let mut rekeyed: HashMap<KeyId, (KeyId, Name)> = HashMap::new();
        let keys = &mut self.keys;
        for m in &mut self.out[range] {
            let (key, order) = *rekeyed.entry(m.key).or_insert_with(|| {
                let mut pairs = key_from_json(keys.get(m.key));
                pairs.extend(cells.iter().cloned());
                let (key, _) = key_of(&pairs);
                let key = keys.push(&key);
                let names: Vec<String> = serde_json::from_str(&m.key_order).unwrap_or_default();
                let order = order_of(
                    names
                        .iter()
                        .map(String::as_str)
                        .chain(cells.iter().map(|(k, _)| k.as_str())),
                );
                (key, order)
            });
            m.key = key;
            m.key_order = order;
        }
    }
}

/// The arguments every call in `calls` passed with the same value.
fn shared_args(calls: &[Vec<(String, String)>]) -> Vec<(String, String)> {
    let Some((first, rest)) = calls.split_first() else {
        return Vec::new();
    };
    first
        .iter()
        .filter(|(k, v)| {
            rest.iter()
                .all(|c| c.iter().any(|(k2, v2)| k2 == k && v2 == v))
        })
        .cloned()
        .collect()
}

/// Where a broken pipe-table block starting at `start` ends: after its `|` lines, or
/// at the next header that a separator follows (a good table printed right after it).
fn block_end(all: &[(usize, Cow<str>)], start: usize) -> usize {
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
