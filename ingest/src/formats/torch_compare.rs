//! `torch.utils.benchmark.Compare` printouts (`torch/utils/benchmark/utils/compare.py`):
//!
//! ```text
//! [-------------- Ops --------------]
//!                     |   mm   |  add
//! 1 threads: ------------------------
//!       [64, 64]      |  21.5  |  7.9
//!       [1024, 1024]  |  56.6 (! 12%)  |  8.0
//!
//! Times are in microseconds (us).
//! ```
//!
//! The label is the table, each description (column) a variant, the thread count and
//! the row's sub-label (with its `(env)` when one is printed) the key; the footer gives
//! the unit for the whole table. `colorize()`'s escapes are stripped; a `(! XX%)` mark
//! (IQR above 10% of the median) stays on the value as a noise note. Anything else in
//! the text (a `Measurement` repr) is not a Compare table and is ignored.

use crate::formats::parser::{ParseError, Parser};
use crate::formats::support::emit::{KeyLayout, Spec};
use crate::formats::support::lines;
use crate::formats::support::text::trim;
use crate::model::Format;
use crate::model::{Name, Parsed, Warning};
use std::borrow::Cow;
use std::ops::Range;

pub struct TorchCompare;

/// `[---- label ----]` -> `label`.
fn title(line: &str) -> Option<&str> {
    let t = trim(line);
    let inner = t.strip_prefix('[')?.strip_suffix(']')?;
    // Compare centres ` label ` in dashes; a label as wide as the table gets none:
    // `[ attention (attn_bias=...) ]`.
    let padded = (inner.starts_with('-') && inner.ends_with('-'))
        || (inner.starts_with(' ') && inner.ends_with(' '));
    let label = trim(inner.trim_matches('-'));
    (padded && !label.is_empty()).then_some(label)
}

/// `Times are in microseconds (us).` -> `us`.
fn footer_unit(line: &str) -> Option<&str> {
    let rest = line.trim().strip_prefix("Times are in ")?;
    let open = rest.rfind('(')?;
    let unit = rest[open + 1..].strip_suffix(").")?;
    Some(unit)
}

/// `4 threads: -----` -> `4`.
fn threads(line: &str) -> Option<&str> {
    let (n, rest) = line.trim().split_once(' ')?;
    (n.bytes().all(|b| b.is_ascii_digit()) && rest.starts_with("thread"))
        .then_some(n)
        .filter(|_| rest.contains(':'))
}

/// A cell: its number and whether `(! XX%)` marks it noisy (with the percent).
fn cell(text: &str) -> Result<(Option<f64>, Option<&str>), ()> {
    let t = trim(text);
    let (num, warn) =
        // A cell is a few bytes: a byte loop, not a `memchr` call.
        match t.bytes().position(|b| b == b'(').filter(|&at| t[at..].starts_with("(!")) {
            Some(at) => (
                trim(&t[..at]),
                Some(trim(t[at + 2..].trim_end_matches(')'))),
            ),
            None => (t, None),
        };
    crate::formats::support::text::parse_value(num)
        .map(|v| (v, warn))
        .map_err(|_| ())
}

/// Rows of one table waiting for the footer that names their unit.
struct Pending<'a> {
    label: String,
    variants: Vec<String>,
    title_line: usize,
    /// The `N threads:` groups seen so far; rows name theirs by index.
    groups: Vec<String>,
    rows: Vec<PendingRow<'a>>,
}

/// A row of a table: its line as read (borrowed from the text unless escapes were
/// stripped), thread group, and where its labels and cells are in the line.
struct PendingRow<'a> {
    no: usize,
    group: usize,
    line: Cow<'a, str>,
    labels: Range<usize>,
    /// The row's cells, `|`-separated, as printed.
    cells: Range<usize>,
}

impl<'a> Pending<'a> {
    /// The warning for a table that ended without its `Times are in` footer.
    fn no_footer(&self) -> Warning {
        Warning {
            line: self.title_line,
            reason: format!(
                "Compare table `{}` has no `Times are in` footer (skipped)",
                self.label
            ),
        }
    }

    /// A row of the table at line `no`: as many cells as descriptions, under a thread
    /// group.
    fn push_row(&mut self, no: usize, line: Cow<'a, str>) -> Result<(), ParseError> {
        let bar = memchr::memchr(b'|', line.as_bytes());
        let n_cells = match bar {
            Some(at) => {
                crate::formats::support::text::count_byte(&line.as_bytes()[at + 1..], b'|') + 1
            }
            None => 0,
        };
        if n_cells != self.variants.len() {
            return Err(ParseError::at(
                no,
                format!(
                    "{n_cells} cells under {} descriptions in Compare table `{}`",
                    self.variants.len(),
                    self.label
                ),
            ));
        }
        let Some(group) = self.groups.len().checked_sub(1) else {
            return Err(ParseError::at(
                no,
                "a Compare row before any `N threads:` line",
            ));
        };
        let bar = bar.unwrap_or(line.len());
        let len = line.len();
        self.rows.push(PendingRow {
            no,
            group,
            line,
            labels: 0..bar,
            cells: (bar + 1).min(len)..len,
        });
        Ok(())
    }
}

impl Parser for TorchCompare {
    fn format(&self) -> Format {
        Format::TorchCompare
    }
    fn sniff(&self, text: &str) -> bool {
        // A `[--- label ---]` title line and a `N threads:` group line (a missing footer
        // is the parser's to report). Only the lines holding those markers are looked at.
        let line_at = |at: usize| {
            let start = text[..at].rfind('\n').map_or(0, |s| s + 1);
            let end = text[at..].find('\n').map_or(text.len(), |e| at + e);
            crate::formats::support::text::clean_line(&text[start..end])
        };
        let b = text.as_bytes();
        crate::formats::support::text::finder!("[--")
            .find_iter(b)
            .chain(crate::formats::support::text::finder!("[ ").find_iter(b))
            .any(|at| title(&line_at(at)).is_some())
            && crate::formats::support::text::finder!(" thread")
                .find_iter(b)
                .any(|at| threads(&line_at(at)).is_some())
    }
    fn parse(&self, text: &str) -> Result<Parsed, ParseError> {
        let mut parsed = Parsed::sized_for(text, 15);
        let mut pending: Option<Pending> = None;
        let mut spare_rows: Vec<PendingRow> = Vec::new();
        let mut expect_header = false;
        let mut shared = Shared::new();
        for (no, line) in lines(text) {
            // One look at the first byte decides which kind of line it may be.
            let start = line.trim_ascii_start();
            let first = start.as_bytes().first().copied();
            // Rows' sub-labels start with `[` too (`[64, 64]`): a title with `[-`.
            if let Some(label) = start.starts_with("[-").then(|| title(&line)).flatten() {
                if let Some(p) = pending.take() {
                    parsed.warnings.push(p.no_footer());
                }
                pending = Some(Pending {
                    label: label.to_string(),
                    variants: Vec::new(),
                    title_line: no,
                    groups: Vec::new(),
                    // The last table's list, emptied: tables have alike row counts.
                    rows: std::mem::take(&mut spare_rows),
                });
                expect_header = true;
                continue;
            }
            let Some(p) = pending.as_mut() else {
                continue;
            };
            if expect_header {
                let mut parts = crate::formats::support::split_bytes(&line, b'|');
                let _row_labels = parts.next();
                p.variants = parts.map(|v| trim(v).to_string()).collect();
                if p.variants.is_empty() {
                    return Err(ParseError::at(
                        no,
                        format!(
                            "Compare table `{}`: no `|` header of descriptions under the title",
                            p.label
                        ),
                    ));
                }
                expect_header = false;
                continue;
            }
            if let Some(n) = first
                .is_some_and(|b| b.is_ascii_digit())
                .then(|| threads(&line))
                .flatten()
            {
                p.groups.push(n.to_string());
                continue;
            }
            if let Some(unit) = (first == Some(b'T')).then(|| footer_unit(&line)).flatten() {
                let p = pending.take().expect("checked above");
                emit(&p, unit, no, &mut shared, &mut parsed)?;
                spare_rows = p.rows;
                spare_rows.clear();
                continue;
            }
            if first.is_none() {
                continue;
            }
            p.push_row(no, line)?;
        }
        if let Some(p) = pending {
            parsed.warnings.push(p.no_footer());
        }
        if parsed.measurements.is_empty() {
            return Err(parsed.warnings.first().map_or_else(
                || ParseError::at(0, "no torch.utils.benchmark Compare table: no `[--- label ---]` title with rows and a `Times are in ...` footer"),
                |w| ParseError::at(w.line, w.reason.trim_end_matches(" (skipped)")),
            ));
        }
        Ok(parsed)
    }
}

/// A table's unit and descriptions, and its spec and variant name per description.
type TableSpecs = (String, Vec<String>, Vec<(Name, Spec)>);

/// What the tables of one printout share, laid out once: the two key layouts, and the
/// last table's specs (tables of one Compare printout list the same descriptions).
struct Shared {
    plain: KeyLayout,
    with_env: KeyLayout,
    /// The unit and descriptions the specs are for, and the specs.
    specs: Option<TableSpecs>,
}

impl Shared {
    fn new() -> Shared {
        Shared {
            plain: KeyLayout::new(&["threads", "sub_label"]),
            with_env: KeyLayout::new(&["threads", "env", "sub_label"]),
            specs: None,
        }
    }
    /// One spec and variant name per description, in `unit` (kept for the next table
    /// when `unit` and `variants` are the last table's).
    fn lay_out(&mut self, unit: &str, variants: &[String]) {
        let fresh = self
            .specs
            .as_ref()
            .is_none_or(|(u, v, _)| u != unit || v != variants);
        if fresh {
            let specs = variants
                .iter()
                .map(|v| (Name::new(v), Spec::measured(None, unit, v)))
                .collect();
            self.specs = Some((unit.to_string(), variants.to_vec(), specs));
        }
    }
}

fn emit(
    p: &Pending,
    unit: &str,
    footer_line: usize,
    shared: &mut Shared,
    parsed: &mut Parsed,
) -> Result<(), ParseError> {
    // Compare prints `seconds (s)`; a bare `s` is no unit word elsewhere.
    let unit = if unit == "s" { "sec" } else { unit };
    if crate::formats::support::units::unit_of(unit).is_none_or(|u| u.canonical != "us") {
        return Err(ParseError::at(
            footer_line,
            format!("`{unit}` is not a time unit (expected ns, us, ms or s)"),
        ));
    }
    shared.lay_out(unit, &p.variants);
    let specs = &shared.specs.as_ref().expect("laid out").2;
    parsed.measurements.reserve(p.rows.len() * specs.len());
    let (plain, with_env) = (&shared.plain, &shared.with_env);
    let mut row_cells = Vec::with_capacity(specs.len());
    let table = Name::new(&p.label);
    for PendingRow {
        no,
        group,
        line,
        labels,
        cells,
    } in &p.rows
    {
        let threads = p.groups[*group].as_str();
        // `(envA)  tiny`: the env, then the sub-label.
        let labels = trim(&line[labels.clone()]);
        let row = match labels.strip_prefix('(').and_then(|r| r.split_once(')')) {
            Some((env, sub)) => with_env.row(
                &mut parsed.keys,
                table,
                table,
                &[threads, env, trim(sub)],
                *no,
            ),
            None => plain.row(&mut parsed.keys, table, table, &[threads, labels], *no),
        };
        let no = *no;
        let cells_text = &line[cells.clone()];
        // Most rows have no `(! XX%)` mark: their cells are numbers alone.
        let marked = memchr::memchr(b'(', cells_text.as_bytes()).is_some();
        row_cells.clear();
        crate::formats::support::for_each_cell(cells_text, b'|', |c| row_cells.push(c));
        for ((variant, spec), &text) in specs.iter().zip(&row_cells) {
            let bad = || ParseError::at(no, format!("`{text}` under `{variant}` is not a number"));
            let (value, printed, warn) = if marked {
                let (value, warn) = cell(text).map_err(|_| bad())?;
                let printed = match warn {
                    Some(_) => trim(text.split("(!").next().unwrap_or(text)),
                    None => text,
                };
                (value, printed, warn)
            } else {
                (
                    crate::formats::support::text::parse_value(text).map_err(|_| bad())?,
                    text,
                    None,
                )
            };
            let mut m = row.put_as(&mut parsed.keys, *variant, spec, value, printed);
            if let Some(pct) = warn {
                m.note = Some(Name::from(format!("noisy: IQR {pct} of the median")));
            }
            parsed.measurements.push(m);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers() {
        assert_eq!(title("[------------- Ops -------------]"), Some("Ops"));
        assert_eq!(title("[------- cpu --------]"), Some("cpu"));
        assert_eq!(footer_unit("Times are in microseconds (us)."), Some("us"));
        assert_eq!(footer_unit("Times are in milliseconds (ms)."), Some("ms"));
        assert_eq!(threads("4 threads: ------"), Some("4"));
        assert_eq!(threads("1 thread: --"), Some("1"));
        assert_eq!(cell(" 56.6 (! 12%) ").unwrap(), (Some(56.6), Some("12%")));
        let text = "[--- t ---]\n   |  a\n1 threads: -\n  x  |  1.5\n\nTimes are in seconds (s).\n";
        let p = TorchCompare.parse(text).unwrap();
        let m = &p.measurements[0];
        assert_eq!((m.value, p.raw(m)), (Some(1_500_000.0), "1.5 sec"));
    }
}
