//! The `[perf]` line's grammar, shared by the formats that print it: aiter's `[perf]`
//! lines (`perf-lines`), the lines among aiter's tables (`aiter-table`) and FlyDSL's
//! per-call lines (`flydsl-bench`). Its forms:
//!
//! ```text
//! [aiter] [perf] dim: (4, 32, 8192)   dtype: torch.float16, torch avg: 10.33  us, B avg: 7.80 us, uplift: 32.4%[checkAllclose atol=0.01 rtol=0.01 passed~]
//! [perf] dim: (64, 4096), dtype: torch.bfloat16, torch avg: 8.10 us, ck avg: 5.20 us, uplift: 55.8%
//! [perf][qk_1way_perhead] === dtype:..., M:... === baseline avg: 12.30 us, hip avg: 9.80 us, uplift: 25.5%
//! ... torch_avg: 10.1 us, asm_avg: 8.2 us            (MoE tests)
//!   [perf] 12.34 us/call (oneshot)                    (FlyDSL)
//! ```
//! Row identity is the text between `[perf]` and the first metric, whitespace collapsed.

use crate::formats::parser::ParseError;
use crate::formats::support::text::{collapse_ws, parse_value, split_glued_unit};
use crate::formats::support::units::{to_canonical, Unit};
use crate::model::{
    empty_order, key_of, metric, Direction, Keys, Measurement, Name, Numerics, Raw,
};

/// Table name of `[perf]` lines without a `[tag]`.
pub const PERF_TABLE: &str = "perf";

/// A time unit token (`us`, `ms`, `ns`, `s`, `us/call`...), as printed and as stored.
fn is_unit(tok: &str) -> Option<(&str, Unit)> {
    let u = match tok {
        "s" => crate::formats::support::units::seconds_word("s")?,
        _ => crate::formats::support::units::unit_of_any_case(tok)?,
    };
    (u.metric == metric::LATENCY).then_some((tok, u))
}

/// The value in the canonical unit, and the raw text: the number as printed, followed by
/// the printed unit when the value was converted.
fn value_in(
    keys: &mut Keys,
    value: Option<f64>,
    num: &str,
    printed: &str,
    unit: &Unit,
) -> (Option<f64>, Raw) {
    if unit.factor == 1.0 {
        return (value, keys.raw(num));
    }
    (
        value.map(|v| to_canonical(v, unit.factor)),
        keys.raw_joined(num, printed),
    )
}

/// The verdict at the end of a `[checkAllclose ...]` tail.
pub(crate) fn numerics_of_tail(tail: &str) -> Numerics {
    if tail.contains("passed~") {
        Numerics::Pass
    } else if tail.contains("failed!")
        || tail.contains("catastrophic!")
        || tail.contains("warning!")
    {
        Numerics::Fail
    } else {
        Numerics::NotChecked
    }
}

/// The value after `NAME avg:` at token `i` and its time unit, glued (`12.3us`) or the
/// next token: (the number as printed, its value, the unit as printed, the unit, the
/// tokens read).
fn avg_value<'a>(
    toks: &[(usize, &'a str)],
    i: usize,
    name: &str,
    no: usize,
) -> Result<(&'a str, Option<f64>, &'a str, Unit, usize), ParseError> {
    let value_tok = toks.get(i + 1).map(|t| t.1).unwrap_or("");
    let (num, glued_unit) = split_number(value_tok.trim_end_matches(','));
    let value = parse_value(num).map_err(|_| {
        ParseError::at(
            no,
            format!(
                "`{name} avg:` value '{value_tok}' {}",
                crate::formats::support::text::not_a_value(num)
            ),
        )
    })?;
    let mut unit = glued_unit.and_then(is_unit);
    let mut consumed = 2;
    if unit.is_none() {
        if let Some((_, u)) = toks.get(i + 2) {
            if let Some(u) = is_unit(u.trim_end_matches(',')) {
                unit = Some(u);
                consumed = 3;
            }
        }
    }
    let (printed, unit) = unit.ok_or_else(|| {
        ParseError::at(
            no,
            format!("`{name} avg: {num}` has no time unit (us, ms, ns or s)"),
        )
    })?;
    Ok((num, value, printed, unit, consumed))
}

/// Parse one cleaned line. `Ok(None)` when the line has no `[perf]` marker.
/// Keys go to `keys`.
pub fn parse_perf_line(
    line: &str,
    no: usize,
    keys: &mut Keys,
) -> Result<Option<Vec<Measurement>>, ParseError> {
    let Some(at) = crate::formats::support::text::find_marker(line, "[perf]") else {
        return Ok(None);
    };
    let mut rest = &line[at + "[perf]".len()..];
    let mut table: Name = PERF_TABLE.into();
    if let Some(tagged) = rest.strip_prefix('[') {
        if let Some(close) = tagged.find(']') {
            table = format!("{PERF_TABLE}[{}]", &tagged[..close]).into();
            rest = &tagged[close + 1..];
        }
    }
    let (body, verdict) = match crate::formats::support::text::find_marker(rest, "[checkAllclose") {
        Some(p) => (&rest[..p], numerics_of_tail(&rest[p..])),
        None => (rest, Numerics::NotChecked),
    };
    // Tokens with their byte offsets in `body`.
    let toks: Vec<(usize, &str)> = body
        .split_whitespace()
        .map(|t| (t.as_ptr() as usize - body.as_ptr() as usize, t))
        .collect();

    let mut out = Vec::new();
    let mut identity_end: Option<usize> = None;
    let mut variants_seen = 0usize;
    let mut i = 0;
    while i < toks.len() {
        let (off, tok) = toks[i];
        let (name, start) = if tok == "avg:" && i > 0 {
            (toks[i - 1].1.trim_end_matches(','), toks[i - 1].0)
        } else if let Some(n) = tok.strip_suffix("_avg:") {
            (n, off)
        } else if tok == "uplift:" {
            let value_tok = toks
                .get(i + 1)
                .map(|t| t.1.trim_end_matches(','))
                .unwrap_or("");
            let value = crate::formats::support::text::parse_ratio(value_tok).map_err(|_| {
                ParseError::at(
                    no,
                    format!("uplift value '{value_tok}' is not a percentage"),
                )
            })?;
            identity_end.get_or_insert(off);
            out.push(uplift(keys, table, value, value_tok, no));
            i += 2;
            continue;
        } else {
            i += 1;
            continue;
        };
        identity_end.get_or_insert(start);
        let (num, value, printed, unit, consumed) = avg_value(&toks, i, name, no)?;
        let (value, raw) = value_in(keys, value, num, printed, &unit);
        // The first variant is the reference the check compares against.
        let numerics = if variants_seen == 0 {
            Numerics::NotChecked
        } else {
            verdict
        };
        variants_seen += 1;
        out.push(Measurement {
            table,
            variant: name.into(),
            key: keys.empty(),
            key_order: empty_order(),
            metric: metric::LATENCY.into(),
            unit: unit.canonical.into(),
            direction: Direction::Lower,
            value,
            raw,
            column: format!("{name} avg").into(),
            numerics,
            line: no as u32,
            note: None,
        });
        i += consumed;
    }

    // FlyDSL: `[perf] 12.34 us/call (oneshot)`.
    if out.is_empty() {
        return per_call(body, &toks, table, verdict, no, keys).map(Some);
    }

    let identity = identity_text(&body[..identity_end.unwrap_or(0)]);
    let (key, key_order) = key_of(&identity_key(&identity));
    let key = keys.push(&key);
    for m in &mut out {
        m.key = key;
        m.key_order = key_order;
    }
    Ok(Some(out))
}

/// A latency printed on its own: FlyDSL's `[perf] 12.34 us/call (oneshot)` (keyed by the
/// words after it), or aiter's MoE `[perf] a8w8 asm:    50.77 us ...... m=1, E=256, ...`
/// (the variant the words before the colon, keyed by the words after the dots). A check's
/// verdict on the line is the value's.
fn per_call(
    body: &str,
    toks: &[(usize, &str)],
    table: Name,
    verdict: Numerics,
    no: usize,
    keys: &mut Keys,
) -> Result<Vec<Measurement>, ParseError> {
    let named = toks
        .iter()
        .position(|(_, t)| t.len() > 1 && t.ends_with(':'))
        .filter(|&i| i > 0 || toks[0].1.len() > 1);
    // The number at token `at` and its time unit (glued on, or the next token), and the
    // token after them.
    let value_at = |at: usize| -> Option<(usize, &str, (&str, Unit))> {
        let (_, v) = *toks.get(at)?;
        let (num, glued) = split_number(v.trim_end_matches(','));
        if let Some(u) = glued.and_then(is_unit) {
            return Some((at + 1, num, u));
        }
        let (_, u) = toks.get(at + 1)?;
        Some((at + 2, num, is_unit(u.trim_end_matches(','))?))
    };
    let by_name = named.and_then(|i| {
        let name = collapse_ws(&body[..toks[i].0 + toks[i].1.len() - 1]);
        value_at(i + 1).map(|f| (Some(name), f))
    });
    let found = by_name.or_else(|| value_at(0).map(|f| (None, f)));
    let (variant, (next, num, unit)) = match found {
        Some(f) => f,
        None => {
            return Err(ParseError::at(
                no,
                "`[perf]` line has no `<name> avg: <number> <unit>` metric",
            ))
        }
    };
    let value = parse_value(num)
        .map_err(|_| ParseError::at(no, format!("`[perf]` value '{num}' is not a number")))?;
    let (printed, unit) = unit;
    let rest_at = toks.get(next).map_or(body.len(), |t| t.0);
    let ident = collapse_ws(body[rest_at..].trim_start_matches(['.', ' ']));
    let (key, key_order) = if variant.is_some() {
        key_of(&identity_key(&identity_text(&ident)))
    } else {
        key_of(&[("row".to_string(), ident)])
    };
    let key = keys.push(&key);
    let (value, raw) = value_in(keys, value, num, printed, &unit);
    let variant = variant
        .as_deref()
        .unwrap_or(crate::formats::support::columns::DEFAULT_VARIANT);
    Ok(vec![Measurement {
        table,
        variant: variant.into(),
        key,
        key_order,
        metric: metric::LATENCY.into(),
        unit: unit.canonical.into(),
        direction: Direction::Lower,
        value,
        raw,
        column: printed.into(),
        numerics: verdict,
        line: no as u32,
        note: None,
    }])
}

/// The `uplift: 32.4%` of a `[perf]` line: derived, never compared.
fn uplift(keys: &mut Keys, table: Name, value: Option<f64>, raw: &str, no: usize) -> Measurement {
    let key = keys.empty();
    let raw = keys.raw(raw);
    Measurement {
        table,
        variant: Name::from(""),
        key,
        key_order: empty_order(),
        metric: metric::UPLIFT.into(),
        unit: "%".into(),
        direction: Direction::None,
        value,
        raw,
        column: "uplift".into(),
        numerics: Numerics::NotChecked,
        line: no as u32,
        note: None,
    }
}

/// `12.3us` -> (`12.3`, Some(`us`)); `1.5e+01us` -> (`1.5e+01`, Some(`us`));
/// `12.3` -> (`12.3`, None). A token whose tail is no time unit stays whole (`nan`,
/// `1,234.5`, or a garbled `1O.9` the caller rejects).
fn split_number(tok: &str) -> (&str, Option<&str>) {
    split_glued_unit(tok, |u| is_unit(u).is_some())
}

fn identity_text(s: &str) -> String {
    collapse_ws(s)
        .trim_matches(|c: char| c == ',' || c == '=' || c.is_whitespace())
        .to_string()
}

/// `dim: (4, 32, 8192) dtype: torch.float16` -> [(dim, (4, 32, 8192)), (dtype, torch.float16)].
/// Text that is not `name: value` pairs is kept whole under the name `row`.
pub fn identity_key(identity: &str) -> Vec<(String, String)> {
    let is_name = |t: &str| {
        t.len() > 1
            && t.ends_with(':')
            && t[..t.len() - 1]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let toks: Vec<&str> = identity.split_whitespace().collect();
    if toks.is_empty() || !is_name(toks[0]) {
        return vec![("row".to_string(), identity.to_string())];
    }
    let mut pairs: Vec<(String, String)> = Vec::new();
    for t in toks {
        if is_name(t) {
            pairs.push((t[..t.len() - 1].to_string(), String::new()));
        } else if let Some(last) = pairs.last_mut() {
            if !last.1.is_empty() {
                last.1.push(' ');
            }
            last.1.push_str(t);
        }
    }
    for p in &mut pairs {
        p.1 = p.1.trim_end_matches(',').to_string();
    }
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Parsed;

    fn parse(line: &str) -> Parsed {
        let mut p = Parsed::default();
        p.measurements = parse_perf_line(line, 7, &mut p.keys).unwrap().unwrap();
        p
    }

    #[test]
    fn check_allclose_shape() {
        let p = parse("[aiter] [perf] dim: (4, 32, 8192)        dtype: torch.float16, torch avg: 10.33    us, B avg: 7.80     us, uplift: 32.4%[checkAllclose atol=0.01 rtol=0.01 passed~]");
        let ms = &p.measurements;
        assert_eq!(ms.len(), 3);
        let key = [
            ("dim".to_string(), "(4, 32, 8192)".to_string()),
            ("dtype".to_string(), "torch.float16".to_string()),
        ];
        assert_eq!(p.key_pairs(&ms[0]), key);
        assert_eq!((&*ms[0].variant, ms[0].value), ("torch", Some(10.33)));
        assert_eq!(ms[0].numerics, Numerics::NotChecked);
        assert_eq!((&*ms[1].variant, ms[1].value), ("B", Some(7.80)));
        assert_eq!(ms[1].numerics, Numerics::Pass);
        assert_eq!((&*ms[2].metric, ms[2].value), ("uplift", Some(32.4)));
        assert_eq!(ms[2].line, 7);
    }

    #[test]
    fn printed_tagged_and_underscore_shapes() {
        let p = parse("[perf] dim: (64, 4096), dtype: torch.bfloat16, torch avg: 8.10     us, ck avg: 5.20     us, uplift: 55.8%");
        let ms = &p.measurements;
        assert_eq!(p.key_pairs(&ms[0])[0].1, "(64, 4096)");
        assert_eq!(&*ms[1].variant, "ck");
        let p = parse("[perf][qk_1way_perhead] === dtype:bf16, M:4 === baseline avg: 12.30    us, hip avg: 9.80     us, uplift: 25.5%");
        let ms = &p.measurements;
        assert_eq!(&*ms[0].table, "perf[qk_1way_perhead]");
        assert_eq!(
            p.key_pairs(&ms[0]),
            [("row".to_string(), "dtype:bf16, M:4".to_string())]
        );
        assert_eq!(&*ms[1].variant, "hip");
        let p = parse("[aiter] [perf] token: 128, expert: 8, torch_avg: 101.5 us, asm_avg: 80.25 us, uplift: 26.5%");
        let ms = &p.measurements;
        assert_eq!(
            ms.iter().map(|m| &*m.variant).collect::<Vec<_>>(),
            ["torch", "asm", ""]
        );
        assert_eq!(ms[1].value, Some(80.25));
        let p = parse("  [perf] 12.34 us/call (oneshot)");
        let ms = &p.measurements;
        assert_eq!(ms[0].value, Some(12.34));
        assert_eq!(p.key_pairs(&ms[0])[0].1, "(oneshot)");
    }

    #[test]
    fn exponents_and_units_other_than_us() {
        let p = parse("[perf] dim: 1, torch avg: 1.5e+01 us, ck avg: 1e-05 us");
        let ms = &p.measurements;
        assert_eq!(ms[0].value, Some(15.0));
        assert_eq!(ms[1].value, Some(1e-05));
        let p = parse("[perf] dim: 1, torch avg: 1.5e+01us, ck avg: 2.5E-1ms");
        let ms = &p.measurements;
        assert_eq!(ms[0].value, Some(15.0));
        assert_eq!((ms[1].value, &*ms[1].unit), (Some(250.0), "us"));
        assert_eq!(p.raw(&ms[1]), "2.5E-1 ms");
        let p = parse("[perf] dim: 1, torch avg: 0.0123 ms, ck avg: 900 ns");
        let ms = &p.measurements;
        assert_eq!((ms[0].value, &*ms[0].unit), (Some(12.3), "us"));
        assert_eq!((ms[1].value, &*ms[1].unit), (Some(0.9), "us"));
        let p = parse("  [perf] 1.234e+01 us/call (oneshot)");
        let ms = &p.measurements;
        assert_eq!(ms[0].value, Some(12.34));
    }

    #[test]
    fn failed_check_and_bad_values() {
        let p = parse("[perf] dim: 1, torch avg: nan us, B avg: 3 us[checkAllclose atol=0.01 rtol=0.01 failed!]");
        let ms = &p.measurements;
        assert_eq!(ms[0].value, None);
        assert_eq!(ms[1].numerics, Numerics::Fail);
        let err = parse_perf_line("[perf] dim: 1, torch avg: fast us", 3, &mut Keys::default())
            .unwrap_err();
        assert_eq!(err.line, 3);
        assert!(err.reason.contains("not a number"), "{err}");
        let err = parse_perf_line("[perf] hello", 4, &mut Keys::default()).unwrap_err();
        assert!(err.reason.contains("no `<name> avg"), "{err}");
    }

    #[test]
    fn a_value_is_the_number_printed_never_its_leading_digits() {
        let p = parse("[perf] dim: (64,) dtype: bf16, torch avg: 5.00 us, ck avg: 1,234.5 us");
        assert_eq!(p.measurements[1].value, Some(1234.5));
        for garbled in ["1O.9", "12.3.4", "12.5O", "1,2", "12,5", "1,,234"] {
            let line = format!("[perf] dim: 1, torch avg: 5.00 us, ck avg: {garbled} us");
            let err = parse_perf_line(&line, 9, &mut Keys::default()).expect_err(garbled);
            assert_eq!(err.line, 9);
            assert!(err.reason.contains("not a number"), "{garbled}: {err}");
        }
        let err = parse_perf_line("[perf] 1O.9 us/call (x)", 2, &mut Keys::default()).unwrap_err();
        assert!(err.reason.contains("not a number"), "{err}");
    }

    #[test]
    fn moe_line_with_its_check_verdict() {
        let p = parse("[aiter] [perf] a8w8 asm:    50.77 us ...... m=1, model_dim=7168, inter_dim=256, E=256, shared_E=0, topk=8, dtype: torch.bfloat16[checkAllclose atol=0.05 rtol=0.05 failed!]");
        let ms = &p.measurements;
        assert_eq!(ms.len(), 1);
        assert_eq!((&*ms[0].variant, ms[0].value), ("a8w8 asm", Some(50.77)));
        assert_eq!(ms[0].numerics, Numerics::Fail);
        let key = p.key_pairs(&ms[0]);
        assert!(key[0].1.starts_with("m=1, model_dim=7168"), "{key:?}");
        let p = parse("[perf] a8w8 asm: 50.77 us ...... m=2, dtype: torch.bfloat16[checkAllclose atol=0.05 rtol=0.05 passed~]");
        assert_eq!(p.measurements[0].numerics, Numerics::Pass);
    }
}
