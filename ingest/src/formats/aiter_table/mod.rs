//! aiter logs with summary tables: `DataFrame.to_markdown(index=False)`
//! pipe tables after a `<op> summary (markdown):` title (or none), and the
//! `to_string(index=False)` whitespace fallback. `checkAllclose` verdicts printed before
//! a table attach to that table's variant; `[perf]` lines in the same log are kept too.

use crate::formats::aiter_table::calling::calling_block;
use crate::formats::aiter_table::calling::check_allclose;
use crate::formats::aiter_table::cells::is_separator_line;
use crate::formats::aiter_table::layout::TableError;
use crate::formats::aiter_table::tables::table_title;
use crate::formats::parser::{Evidence, ParseError, Parser};
mod calling;
mod cells;
mod emit;
mod layout;
mod tables;

use crate::formats::support::columns::KNOWN_VARIANTS;
use crate::formats::support::lines;
use crate::formats::support::perf_line::parse_perf_line;
use crate::formats::support::text::{find_marker, strip_aiter_prefix};
use crate::model::Format;
use crate::model::{Direction, Keys, Measurement, Name, Numerics, Parsed, Warning};
use std::borrow::Cow;
use std::collections::HashSet;

pub struct AiterTables;

/// Name given to a table printed without a title.
pub const UNTITLED: &str = "untitled";

impl Parser for AiterTables {
    fn format(&self) -> Format {
        Format::AiterTable
    }
    fn sniff(&self, text: &str) -> bool {
        self.evidence(text) > Evidence::None
    }
    /// aiter's banner (`[aiter] <test> summary (markdown):`) is its signature; a pipe
    /// table's separator row (pandas' `|---:|`, GitHub's `| --- |` and `|:-:|`) only a
    /// marker, which other tools print too.
    fn evidence(&self, text: &str) -> Evidence {
        let b = text.as_bytes();
        if crate::formats::support::text::finder!("summary (markdown):")
            .find(b)
            .is_some()
        {
            return Evidence::Signature;
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
                .any(|at| is_separator_line(line_at(text, at)))
            // GitHub's separator without outer pipes (`--- | ---`).
            || crate::formats::support::text::finder!("- |")
                .find_iter(b)
                .chain(crate::formats::support::text::finder!("-|").find_iter(b))
                .any(|at| cells::is_bare_separator_line(line_at(text, at)));
        if separator {
            Evidence::Marker
        } else {
            Evidence::None
        }
    }
    fn parse(&self, text: &str) -> Result<Parsed, ParseError> {
        let mut all: Vec<(usize, Cow<str>)> = lines(text).collect();
        if crate::formats::support::text::finder!("-|")
            .find(text.as_bytes())
            .is_some()
            || crate::formats::support::text::finder!("- |")
                .find(text.as_bytes())
                .is_some()
        {
            cells::add_outer_pipes(&mut all);
        }
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

/// The line of `text` that byte `at` is in.
fn line_at(text: &str, at: usize) -> &str {
    let start = text[..at].rfind('\n').map_or(0, |s| s + 1);
    let end = text[at..].find('\n').map_or(text.len(), |e| at + e);
    &text[start..end]
}

/// Why the markdown table whose separator is `all[sep]` gave no value: its rows hold no
/// number at all (every cell empty or `nan`), or none of its columns read as measured.
fn unread_table(all: &[(usize, Cow<str>)], sep: usize) -> &'static str {
    let numbers = all[sep + 1..]
        .iter()
        .take_while(|(_, l)| l.trim_start().starts_with('|'))
        .flat_map(|(_, l)| l.split('|'))
        .any(|c| matches!(crate::formats::support::text::parse_ratio(c), Ok(Some(_))));
    if numbers {
        "this table was found, but none of its columns read as measured values (a unit in \
         a column's header, `cpu us`, says what its numbers measure): nothing to store"
    } else {
        "this table's rows hold no number perfdb can read (every value cell is empty or \
         `nan`): nothing to store"
    }
}

/// Why a value is marked failed without a verdict naming it.
const UNATTRIBUTED: &str = "unattributed numerics failure";

impl State {
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
                None => match all.iter().position(|(_, l)| is_separator_line(l)) {
                    // A markdown table was there: say where, and why nothing was read.
                    Some(sep) if sep > 0 => ParseError::at(all[sep - 1].0, unread_table(all, sep)),
                    _ => ParseError::at(0, "no summary table with data rows found"),
                },
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
