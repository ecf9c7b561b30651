//! FlyDSL CI bench output (samples 12, 13): whitespace tables headed `op shape dtype`
//! and then value columns — `TB/s`, `TFLOPS` (FlyDSL's own kernel), `<impl>(gpu us)`
//! (one variant per implementation), `speedup` — with `-`/`skip` for no value; and the
//! `=== Benchmark: current vs <ref> ===` blocks that compare with a reference build.
//!
//! The op is the table, shape and dtype the key. A table printed after a
//! `found_<ref>=1` line holds the reference's numbers, not this run's: they are kept as
//! `<metric>@<ref>` (derived). The ratio lines keep their `ratio=` as a derived `ratio`
//! (column `ratio vs <ref>`); `current=missing` keeps no value and says so. `[perf]`
//! lines in the same log are read as the `perf-lines` format reads them.

use crate::formats::parser::{ParseError, Parser};
use crate::formats::support::emit::{KeyLayout, Row, Spec};
use crate::formats::support::lines;
use crate::model::Format;
use crate::model::{metric, Name, Parsed, Warning};

pub struct FlydslBench;

/// The variant of FlyDSL's own `TB/s`/`TFLOPS` columns.
const OWN: &str = "flydsl";

/// Whitespace tokens, a `(...)` group kept whole: `FlyDSL(gpu us)` is one.
fn tokens(line: &str) -> Vec<&str> {
    if line.is_ascii() {
        return ascii_tokens(line);
    }
    unicode_tokens(line)
}

fn unicode_tokens(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let mut depth = 0i32;
    for (i, c) in line.char_indices() {
        match c {
            '(' => {
                depth += 1;
                start.get_or_insert(i);
            }
            ')' => {
                depth -= 1;
                start.get_or_insert(i);
            }
            c if c.is_whitespace() && depth <= 0 => {
                if let Some(s) = start.take() {
                    out.push(&line[s..i]);
                }
                depth = 0;
            }
            _ => {
                start.get_or_insert(i);
            }
        }
    }
    if let Some(s) = start {
        out.push(&line[s..]);
    }
    out
}

/// What an ASCII byte is to [`ascii_tokens`]: 0 part of a token, else one of these.
const BLANK: u8 = 1;
const OPEN: u8 = 2;
const CLOSE: u8 = 3;
static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    // `char::is_whitespace` on ASCII: space, \t, \n, \x0b, \x0c, \r.
    t[b' ' as usize] = BLANK;
    let mut c = b'\t';
    while c <= b'\r' {
        t[c as usize] = BLANK;
        c += 1;
    }
    t[b'(' as usize] = OPEN;
    t[b')' as usize] = CLOSE;
    t
};

/// [`tokens`] of an ASCII line, byte by byte (every line of a real log): runs of
/// blanks skipped in a tight loop, then one token up to the next blank outside `(...)`,
/// each byte classed by one table lookup.
fn ascii_tokens(line: &str) -> Vec<&str> {
    let b = line.as_bytes();
    let mut out = Vec::with_capacity(8);
    let mut i = 0;
    loop {
        while i < b.len() && CLASS[b[i] as usize] == BLANK {
            i += 1;
        }
        if i == b.len() {
            return out;
        }
        let (start, mut depth) = (i, 0i32);
        while i < b.len() {
            match CLASS[b[i] as usize] {
                0 => {}
                OPEN => depth += 1,
                CLOSE => depth -= 1,
                _ if depth <= 0 => break,
                _ => {}
            }
            i += 1;
        }
        out.push(&line[start..i]);
    }
}

fn is_header(t: &[&str]) -> bool {
    t.len() > 3 && t[0] == "op" && t[1] == "shape" && t[2] == "dtype"
}

/// `=== Benchmark: current vs main ===` -> `main`.
fn versus(line: &str) -> Option<&str> {
    // Most lines start with something else: decided on the first byte (a non-ASCII one
    // may be Unicode blank before the `===`, which the full trim below takes).
    let l = line.trim_ascii_start();
    if !l.starts_with('=') && l.as_bytes().first().is_none_or(|b| b.is_ascii()) {
        return None;
    }
    l.trim()
        .strip_prefix("=== Benchmark: current vs ")?
        .strip_suffix("===")
        .map(str::trim)
}

/// What a value column holds: (variant, unit) or a derived speedup.
enum Column<'a> {
    Value { variant: &'a str, unit: &'a str },
    Speedup,
    Other,
}

fn column(name: &str) -> Column<'_> {
    if let Some(open) = name.find('(') {
        // `FlyDSL(gpu us)`: the implementation, the unit last in the parentheses.
        let inner = name[open + 1..].trim_end_matches(')');
        if let Some(unit) = inner.split_whitespace().last() {
            if crate::formats::support::units::unit_of_any_case(unit).is_some() {
                return Column::Value {
                    variant: &name[..open],
                    unit,
                };
            }
        }
    }
    if name.eq_ignore_ascii_case("speedup") {
        return Column::Speedup;
    }
    if crate::formats::support::units::unit_of_any_case(name).is_some() {
        return Column::Value {
            variant: OWN,
            unit: name,
        };
    }
    Column::Other
}

impl Parser for FlydslBench {
    fn format(&self) -> Format {
        Format::FlydslBench
    }
    fn sniff(&self, text: &str) -> bool {
        // Tried before the aiter tables on every log: look only at lines with `shape`.
        crate::formats::support::text::finder!("=== Benchmark: current vs ")
            .find(text.as_bytes())
            .is_some()
            || crate::formats::support::text::finder!("shape")
                .find_iter(text.as_bytes())
                .any(|at| {
                    let start = text[..at].rfind('\n').map_or(0, |s| s + 1);
                    let end = text[at..].find('\n').map_or(text.len(), |e| at + e);
                    is_header(&tokens(&crate::formats::support::text::clean_line(
                        &text[start..end],
                    )))
                })
    }
    fn parse(&self, text: &str) -> Result<Parsed, ParseError> {
        let mut parsed = Parsed::sized_for(text, 40);
        let mut header: Option<Header> = None;
        // The reference the next table measures (`found_main=1`), and the one the
        // table being read measures.
        let mut next_reference: Option<String> = None;
        let mut ratios_vs: Option<String> = None;
        for (no, line) in lines(text) {
            if let Some(ms) =
                crate::formats::support::perf_line::parse_perf_line(&line, no, &mut parsed.keys)?
            {
                parsed.measurements.extend(ms);
                continue;
            }
            let t = tokens(&line);
            if is_header(&t) {
                let reference = next_reference.take();
                header = Some(Header::new(&t, reference.as_deref()));
                ratios_vs = None;
                continue;
            }
            if let Some(r) = versus(&line) {
                header = None;
                ratios_vs = Some(r.to_string());
                continue;
            }
            if let Some(flag) = t.first().and_then(|f| f.strip_prefix("found_")) {
                if let Some((r, "1")) = flag.split_once('=') {
                    next_reference = Some(r.to_string());
                    header = None;
                    continue;
                }
            }
            if t.iter().all(|s| s.bytes().all(|b| b == b'-')) {
                continue; // a rule under the header, or an empty line
            }
            if let Some(h) = &header {
                if t.len() == h.names.len() {
                    row(h, &t, no, &mut parsed)?;
                    continue;
                }
                // A row a cell short or long (an op, then a shape such as `32768x8192`)
                // is a garbled row, refused; any other line ends the table.
                let shape = t.get(1).is_some_and(|s| {
                    s.contains('x') && s.bytes().next().is_some_and(|b| b.is_ascii_digit())
                });
                if shape && t.len().abs_diff(h.names.len()) == 1 {
                    return Err(ParseError::at(
                        no,
                        format!("{} cells under a header of {}", t.len(), h.names.len()),
                    ));
                }
                header = None;
            }
            if let Some(r) = &ratios_vs {
                if t.len() >= 4 && line.contains("current=") {
                    ratio_line(&t, r, no, &mut parsed)?;
                    continue;
                }
                ratios_vs = None;
            }
        }
        if parsed.measurements.is_empty() {
            return Err(ParseError::at(
                0,
                "no FlyDSL bench row: no `op shape dtype ...` header with rows and no \
                 `=== Benchmark: current vs` ratio line",
            ));
        }
        Ok(parsed)
    }
}

/// A table header: its column names and, for each value column, the variant and how
/// its values are stored (worked out once per table).
struct Header {
    names: Vec<String>,
    own: Name,
    cols: Vec<(Name, Spec)>,
    layout: KeyLayout,
}

impl Header {
    fn new(t: &[&str], reference: Option<&str>) -> Header {
        let first_variant = t[3..].iter().find_map(|c| match column(c) {
            Column::Value { variant, .. } if variant != OWN => Some(variant),
            _ => None,
        });
        let cols = t[3..]
            .iter()
            .map(|name| match column(name) {
                Column::Value { variant, unit } => {
                    let mut spec = Spec::measured(None, unit, name);
                    if let Some(r) = reference {
                        spec = spec.of_other(
                            format!("{}@{r}", spec.metric),
                            format!("measured on {r} (found_{r}=1), not this run"),
                        );
                    }
                    (Name::new(variant), spec)
                }
                Column::Speedup => (
                    Name::new(first_variant.unwrap_or(OWN)),
                    Spec::derived(metric::SPEEDUP, "x", name, None),
                ),
                Column::Other => (
                    Name::new(OWN),
                    Spec::derived(metric::UNCLASSIFIED, "", name, Some("unclassified column")),
                ),
            })
            .collect();
        Header {
            names: t.iter().map(|s| s.to_string()).collect(),
            own: Name::new(OWN),
            cols,
            layout: KeyLayout::new(&["shape", "dtype"]),
        }
    }
}

fn row(h: &Header, t: &[&str], no: usize, parsed: &mut Parsed) -> Result<(), ParseError> {
    let row = h
        .layout
        .row(&mut parsed.keys, Name::new(t[0]), h.own, &t[1..3], no);
    for ((name, cell), (variant, spec)) in h.names[3..].iter().zip(&t[3..]).zip(&h.cols) {
        let value =
            crate::formats::support::text::parse_in(cell, spec.metric.as_str()).map_err(|_| {
                let why = crate::formats::support::text::not_a_value(cell);
                ParseError::at(no, format!("`{cell}` under `{name}` {why}"))
            })?;
        parsed
            .measurements
            .push(row.put_as(&mut parsed.keys, *variant, spec, value, cell));
    }
    Ok(())
}

/// `softmax 32768x8192 bf16  main=  4.105 TB/s  current=  3.938 TB/s  ratio= 0.959x ...`
fn ratio_line(t: &[&str], r: &str, no: usize, parsed: &mut Parsed) -> Result<(), ParseError> {
    let key = [
        ("shape".to_string(), t[1].to_string()),
        ("dtype".to_string(), t[2].to_string()),
    ];
    let row = Row::new(&mut parsed.keys, t[0], OWN, &key, no);
    // `ratio= 0.959x` or `ratio=0.959x`.
    let after = |name: &str| {
        t.iter().position(|s| s.starts_with(name)).map(|i| {
            let v = &t[i][name.len()..];
            if v.is_empty() {
                t.get(i + 1).copied().unwrap_or("")
            } else {
                v
            }
        })
    };
    let column = format!("ratio vs {r}");
    if after("current=") == Some("missing") {
        let m = row.derived(
            &mut parsed.keys,
            metric::RATIO,
            "x",
            None,
            "current=missing",
            &column,
            Some("current missing"),
        );
        parsed.measurements.push(m);
        return Ok(());
    }
    let Some(ratio) = after("ratio=") else {
        parsed.warnings.push(Warning {
            line: no,
            reason: "a `current vs` line with no `ratio=` (skipped)".to_string(),
        });
        return Ok(());
    };
    let value = crate::formats::support::text::parse_ratio(ratio)
        .map_err(|_| ParseError::at(no, format!("ratio `{ratio}` is not a number")))?;
    let m = row.derived(
        &mut parsed.keys,
        metric::RATIO,
        "x",
        value,
        ratio,
        &column,
        None,
    );
    parsed.measurements.push(m);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_tokens_are_the_unicode_tokens() {
        for l in [
            "op shape dtype FlyDSL(gpu us) aiter(gpu us)",
            "  softmax\t32768x8192  bf16 \x0b 4.1 \r",
            "a (b c) d)) e( f",
            "",
            "   ",
            "x(",
            "(a b) (c",
            ")a b",
        ] {
            assert_eq!(ascii_tokens(l), unicode_tokens(l), "{l:?}");
        }
    }

    #[test]
    fn parenthesised_headers_are_one_token() {
        assert_eq!(
            tokens("op  shape dtype  FlyDSL(gpu us)  AIter(gpu us)    speedup"),
            [
                "op",
                "shape",
                "dtype",
                "FlyDSL(gpu us)",
                "AIter(gpu us)",
                "speedup"
            ]
        );
        assert!(matches!(
            column("AIter(gpu us)"),
            Column::Value {
                variant: "AIter",
                unit: "us"
            }
        ));
        assert!(matches!(column("TB/s"), Column::Value { variant: OWN, .. }));
        assert_eq!(
            versus("=== Benchmark: current vs v0.2.0 ==="),
            Some("v0.2.0")
        );
    }
}
