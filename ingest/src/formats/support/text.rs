//! Line cleaning shared by every text format: CI timestamp prefixes, ANSI escapes,
//! missing-value tokens and number parsing. Written without regexes: these run on every
//! byte of every log.

use std::borrow::Cow;

/// Strip a trailing `\r`, a GitHub-Actions style timestamp prefix
/// (`2026-06-09T09:00:00.0Z `) and ANSI escapes (`\x1b[` params, final letter).
pub fn clean_line(line: &str) -> Cow<'_, str> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let line = strip_ci_timestamp(line);
    if memchr::memchr(0x1b, line.as_bytes()).is_some() {
        Cow::Owned(strip_ansi(line))
    } else {
        Cow::Borrowed(line)
    }
}

fn strip_ci_timestamp(line: &str) -> &str {
    let b = line.as_bytes();
    // YYYY-MM-DDTHH:MM:SS then optional fraction, then Z and one space.
    if b.len() < 21 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' {
        return line;
    }
    if !b[..4].iter().all(u8::is_ascii_digit) {
        return line;
    }
    let mut i = 19;
    if b.get(i) == Some(&b'.') {
        i += 1;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
    }
    if b.get(i) == Some(&b'Z') && b.get(i + 1) == Some(&b' ') {
        &line[i + 2..]
    } else {
        line
    }
}

/// Remove `\x1b[` `[0-9;?]*` `[A-Za-z]` sequences.
pub fn strip_ansi(line: &str) -> String {
    let b = line.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    // Copy the text between escapes in whole runs.
    while let Some(off) = b[i..].iter().position(|c| *c == 0x1b) {
        let esc = i + off;
        out.extend_from_slice(&b[i..esc]);
        i = esc;
        if b.get(i + 1) == Some(&b'[') {
            let mut j = i + 2;
            while j < b.len() && (b[j].is_ascii_digit() || b[j] == b';' || b[j] == b'?') {
                j += 1;
            }
            if j < b.len() && b[j].is_ascii_alphabetic() {
                i = j + 1;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    out.extend_from_slice(&b[i..]);
    // Only ASCII bytes were removed, so the rest is still valid UTF-8.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Does `hay` contain `needle`? SIMD substring search (the `memchr` crate), for whole
/// texts: format detection scans every file. Short lines use [`find_marker`].
pub fn has(hay: &str, needle: &str) -> bool {
    memchr::memmem::find(hay.as_bytes(), needle.as_bytes()).is_some()
}

/// A substring search for a fixed needle whose searcher is built once per process
/// (building one costs about as much as scanning a short log): `finder!("TS_")`.
macro_rules! finder {
    ($needle:literal) => {{
        static FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
            std::sync::LazyLock::new(|| memchr::memmem::Finder::new($needle));
        &*FINDER
    }};
}
pub(crate) use finder;

/// Offset of `marker` (which starts with `[`, like `[perf]`) in a line: a jump from
/// bracket to bracket, cheaper on short lines than a general substring search.
pub fn find_marker(line: &str, marker: &str) -> Option<usize> {
    let b = line.as_bytes();
    memchr::memchr_iter(b'[', b).find(|&i| b[i..].starts_with(marker.as_bytes()))
}

/// The bytes of `word` (little-endian) equal to `byte`: bit 7 of each such byte set,
/// every other bit clear. Exact (no borrow runs from one byte into the next): a byte
/// `x` of `word ^ byte..` is zero exactly when neither `(x & 0x7f) + 0x7f` nor `x` has
/// its high bit set.
#[inline]
pub fn byte_mask(word: u64, byte: u8) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let x = word ^ (0x0101_0101_0101_0101 * u64::from(byte));
    !(((x & LOW7) + LOW7) | x) & !LOW7
}

/// The first eight bytes of `b` as a little-endian word (`b` holds at least eight): the
/// unit of the word-at-a-time scans ([`byte_mask`]).
#[inline]
pub fn le_word(b: &[u8]) -> u64 {
    u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
}

/// How many bytes of `b` are `byte`: eight at a time ([`byte_mask`]), for the short
/// lines whose cells are counted (a `memchr` count's set-up costs more there).
#[inline]
pub fn count_byte(b: &[u8], byte: u8) -> usize {
    let mut words = b.chunks_exact(8);
    let mut n = 0;
    for w in &mut words {
        n += byte_mask(le_word(w), byte).count_ones() as usize;
    }
    n + words.remainder().iter().filter(|&&c| c == byte).count()
}

/// `str::trim`, with ASCII whitespace (nearly every cell's) trimmed byte by byte and the
/// Unicode rules only when a non-ASCII byte is left at either end.
#[inline]
pub fn trim(s: &str) -> &str {
    let t = s.trim_ascii();
    match (t.as_bytes().first(), t.as_bytes().last()) {
        (Some(&a), Some(&b)) if a >= 0x80 || b >= 0x80 => t.trim(),
        _ => t,
    }
}

/// Tokens that mean "no value". A missing value is stored as null, never as 0.
pub fn is_missing_token(cell: &str) -> bool {
    matches!(
        cell,
        "" | "nan"
            | "NaN"
            | "NAN"
            | "None"
            | "none"
            | "-"
            | "n/a"
            | "N/A"
            | "skip"
            | "<NA>"
            | "null"
    )
}

/// A cell that is neither a number nor a missing-value token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotANumber;

/// Parse a numeric cell. `Ok(None)` for a missing token (including `inf`/`-inf`, which
/// no benchmark reports as a real measurement), `Err(NotANumber)` otherwise.
pub fn parse_value(cell: &str) -> Result<Option<f64>, NotANumber> {
    let c = cell.trim_ascii();
    // Most cells are short plain decimals (`17012.4`, `512`): exact without the general
    // parser.
    if let Some(v) = plain_decimal(c.as_bytes()) {
        return Ok(Some(v));
    }
    // Plain numbers first (every decimal form Python and C print: `1.5e+01`, `1E5`,
    // `.5`, `5.`); `nan` and `inf` also parse, and are missing values.
    if let Ok(v) = c.parse::<f64>() {
        return Ok(v.is_finite().then_some(v));
    }
    if is_missing_token(c) || is_inf_token(c) {
        return Ok(None);
    }
    if let Some(v) = parse_hex_float(c) {
        return Ok(Some(v));
    }
    // `1,264.1` (thousands separators): rare, so only then pay for a copy. Only groups
    // of three read so: `1,2` or `12,5` (a decimal comma) is no number perfdb can tell.
    let without_commas;
    let c = if c.contains(',') {
        without_commas = without_thousands(c).ok_or(NotANumber)?;
        without_commas.as_str()
    } else {
        c
    };
    match c.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(Some(v)),
        Ok(_) => Ok(None),
        Err(_) => Err(NotANumber),
    }
}

/// A ratio's cell: [`parse_value`], or a number with `x` or `%` glued on or after a
/// space (`1.31x`, `12.5 %`), read as the number printed.
pub fn parse_ratio(cell: &str) -> Result<Option<f64>, NotANumber> {
    let c = cell.trim_ascii();
    let bare = c
        .strip_suffix(['x', '%'])
        .map(str::trim_end)
        .filter(|b| !b.is_empty());
    match bare {
        Some(b) => parse_value(b),
        None => parse_value(c),
    }
}

/// What a cell that is no value of its column is: a ratio (a number with `x` or `%`
/// after it, in a column of measured values) or no number at all; for errors.
pub fn not_a_value(cell: &str) -> &'static str {
    if parse_ratio(cell).is_ok() {
        "is a ratio or a percentage (`x` or `%` after the number), not a value of this column"
    } else {
        "is not a number"
    }
}

/// The one rule for text glued after a number in a cell of a `metric` column: a unit is
/// the reader's to split off (the column's header or the token names it); `x` or `%`
/// after the number is a ratio, read as one in a column of derived values (ratios,
/// speedups, errors, unclassified numbers) and refused in a measured one (a latency,
/// throughput or bandwidth column holding `1.31x` holds no latency).
pub fn parse_in(cell: &str, metric: &str) -> Result<Option<f64>, NotANumber> {
    // A plain number first (nearly every cell): the column's kind is asked only of text.
    match parse_value(cell) {
        Err(NotANumber) if crate::model::metric::is_derived(metric) => parse_ratio(cell),
        r => r,
    }
}

/// `1,234,567.5` -> `1234567.5`: the commas of a number printed with thousands
/// separators, when every group after the first holds three digits and the first one to
/// three (`-1,234`, `1,234e3` too). `None` for any other comma (`1,2`, `12,5`, `1,,234`,
/// `,123`, a comma after the point).
pub fn without_thousands(c: &str) -> Option<String> {
    let b = c.as_bytes();
    let sign = usize::from(matches!(b.first(), Some(b'-' | b'+')));
    let int_end = b[sign..]
        .iter()
        .position(|&x| !(x.is_ascii_digit() || x == b','))
        .map_or(b.len(), |p| p + sign);
    if b[int_end..].contains(&b',') {
        return None;
    }
    let mut groups = c[sign..int_end].split(',');
    let first = groups.next()?;
    if first.is_empty() || first.len() > 3 {
        return None;
    }
    let mut n = 0;
    for g in groups {
        if g.len() != 3 {
            return None;
        }
        n += 1;
    }
    (n > 0).then(|| c.replace(',', ""))
}

/// A token printed as a number with perhaps a unit glued on (`12.3us`, `1.5e+01ms`): the
/// number's text, and the unit's when what follows the number is a unit `is_unit` knows.
/// Anything else after the number (`1,234.5`, `12.3.4`, `1O.9`, `12.5O`) leaves the token
/// whole, for [`parse_value`] to read as the number it denotes or to refuse: a value is
/// never its leading digits.
pub fn split_glued_unit(tok: &str, is_unit: impl Fn(&str) -> bool) -> (&str, Option<&str>) {
    match number_prefix_len(tok) {
        0 => (tok, None),
        n if n == tok.len() => (tok, None),
        n if is_unit(&tok[n..]) => (&tok[..n], Some(&tok[n..])),
        _ => (tok, None),
    }
}

/// The powers of ten an `f64` holds exactly (10^0 ..= 10^22): dividing an exact
/// integer by one is a single correctly rounded operation.
pub(crate) const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Four ASCII digits (`b[0]` the most significant) as their number, or `None` if any of
/// the four is not a digit: one check and two multiplies for the four (SWAR, as in
/// simdjson's eight-digit step).
#[inline]
fn four_digits(b: &[u8]) -> Option<u64> {
    let x = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    // High nibbles all 3, and no low nibble above 9 (adding 6 would carry it out).
    if x & 0xF0F0_F0F0 != 0x3030_3030 || x.wrapping_add(0x0606_0606) & 0xF0F0_F0F0 != 0x3030_3030 {
        return None;
    }
    let d = x - 0x3030_3030;
    // Bytes 0 and 2: the pairs `ab` and `cd`; then `ab * 100 + cd` in bits 16-31.
    let pairs = d.wrapping_mul(10).wrapping_add(d >> 8) & 0x00FF_00FF;
    Some(u64::from(pairs.wrapping_mul(1 + (100 << 16)) >> 16))
}

/// `[-]digits[.digits]` whose digits, read as one integer, fit in 53 bits, with at most
/// 22 decimals: the mantissa and the power of ten are both exact in an `f64`, so one
/// division is correctly rounded (Clinger's fast path, the same answer `str::parse`
/// gives). `None` for anything else (exponents, longer mantissas, `.5`), which the
/// general parser takes. Each digit costs a compare and a multiply-add: no count of
/// significant digits per digit (at most 19 digits cannot overflow a `u64`, and the
/// 53-bit test is made once at the end).
#[inline]
pub(crate) fn plain_decimal(b: &[u8]) -> Option<f64> {
    const EXACT: u64 = 1 << 53;
    let (neg, digits) = match b.first()? {
        b'-' => (true, &b[1..]),
        _ => (false, b),
    };
    let n = digits.len();
    let mut m = 0u64;
    let mut i = 0;
    while let Some(q) = digits.get(i..i + 4).and_then(four_digits) {
        m = m.wrapping_mul(10_000).wrapping_add(q);
        i += 4;
    }
    while i < n && digits[i].is_ascii_digit() {
        m = m.wrapping_mul(10).wrapping_add(u64::from(digits[i] - b'0'));
        i += 1;
    }
    // `.5` and `-` are the general parser's.
    if i == 0 {
        return None;
    }
    let mut frac = 0;
    if i < n {
        // `5.`: Python never prints it, and the general parser knows what it means.
        if digits[i] != b'.' || i + 1 == n {
            return None;
        }
        let start = i + 1;
        i = start;
        while let Some(q) = digits.get(i..i + 4).and_then(four_digits) {
            m = m.wrapping_mul(10_000).wrapping_add(q);
            i += 4;
        }
        while i < n && digits[i].is_ascii_digit() {
            m = m.wrapping_mul(10).wrapping_add(u64::from(digits[i] - b'0'));
            i += 1;
        }
        if i < n {
            return None;
        }
        frac = n - start;
    }
    // More than 19 digits may have wrapped; 19 or fewer are exact in the `u64`.
    if n - usize::from(frac > 0) > 19 || m > EXACT || frac > 22 {
        return None;
    }
    let v = m as f64 / POW10[frac];
    Some(if neg { -v } else { v })
}

fn is_inf_token(c: &str) -> bool {
    let c = c.trim_start_matches(['-', '+']);
    c.eq_ignore_ascii_case("inf")
        || c.eq_ignore_ascii_case("infinity")
        || c.eq_ignore_ascii_case("nan")
        // MSVC's printf: `-nan(ind)`, `1.#INF`.
        || c.starts_with("nan(")
        || c.starts_with("1.#")
}

/// C's `%a` (and Python's `float.hex()`): `0x1.8p+3` = 12, `-0x1p-2` = -0.25.
pub fn parse_hex_float(c: &str) -> Option<f64> {
    let (neg, c) = match c.as_bytes().first()? {
        b'-' => (true, &c[1..]),
        b'+' => (false, &c[1..]),
        _ => (false, c),
    };
    let c = c.strip_prefix("0x").or_else(|| c.strip_prefix("0X"))?;
    let (mantissa, exp) = c.split_once(['p', 'P'])?;
    let exp: i32 = exp.parse().ok()?;
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let mut v = 0f64;
    for d in int.chars() {
        v = v * 16.0 + f64::from(d.to_digit(16)?);
    }
    let mut scale = 1.0 / 16.0;
    for d in frac.chars() {
        v += f64::from(d.to_digit(16)?) * scale;
        scale /= 16.0;
    }
    let v = v * 2f64.powi(exp);
    Some(if neg { -v } else { v })
}

/// Length of the number at the start of `tok` in any form Python and C print
/// (`12.3`, `-1.5e+01`, `1e-05`, `.5`, `0x1.8p+3`), so a unit glued to it
/// (`1.5e+01us`) is split off after the exponent, not at the `e`.
pub fn number_prefix_len(tok: &str) -> usize {
    let b = tok.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'-' | b'+')));
    if b[i..].starts_with(b"0x") || b[i..].starts_with(b"0X") {
        let mut j = i + 2;
        while j < b.len() && (b[j].is_ascii_hexdigit() || b[j] == b'.') {
            j += 1;
        }
        if j < b.len() && (b[j] == b'p' || b[j] == b'P') {
            return exponent_end(b, j);
        }
        return j;
    }
    let start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
    }
    if i == start || (i == start + 1 && b[start] == b'.') {
        return 0;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        return exponent_end(b, i);
    }
    i
}

/// End of an exponent starting at `b[at]` (`e`, `E`, `p`, `P`), or `at` when no digits follow.
fn exponent_end(b: &[u8], at: usize) -> usize {
    let mut j = at + 1;
    if j < b.len() && (b[j] == b'-' || b[j] == b'+') {
        j += 1;
    }
    let digits = j;
    while j < b.len() && b[j].is_ascii_digit() {
        j += 1;
    }
    if j == digits {
        at
    } else {
        j
    }
}

/// Collapse runs of whitespace to one space and trim.
pub fn collapse_ws(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for part in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(part);
    }
    out
}

/// Strip an aiter logger prefix: `[aiter] `, `[aiter.ops.x] `. Returns the message.
pub fn strip_aiter_prefix(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("[aiter")?;
    let close = rest.find(']')?;
    let tag = &rest[..close];
    if !(tag.is_empty() || tag.starts_with('.') || tag.starts_with(' ')) {
        return None;
    }
    let msg = &rest[close + 1..];
    Some(msg.strip_prefix(' ').unwrap_or(msg))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_byte_counts() {
        let text = "a|b||c|||d|||||e|f|g|h|i|j|k||||||||||||||||l";
        for n in 0..text.len() {
            let b = &text.as_bytes()[..n];
            assert_eq!(
                count_byte(b, b'|'),
                b.iter().filter(|&&c| c == b'|').count()
            );
        }
    }

    #[test]
    fn byte_mask_marks_exactly_the_equal_bytes() {
        // Every byte value at every place, beside neighbours that could borrow or carry.
        for byte in [0u8, b',', b'|', 0x7f, 0x80, 0xff] {
            for v in 0..=255u8 {
                for at in 0..8 {
                    for fill in [0u8, byte.wrapping_sub(1), byte.wrapping_add(1), 0xff] {
                        let mut w = [fill; 8];
                        w[at] = v;
                        let want = w
                            .iter()
                            .enumerate()
                            .fold(0u64, |m, (i, &c)| m | (u64::from(c == byte) << (8 * i + 7)));
                        assert_eq!(byte_mask(u64::from_le_bytes(w), byte), want, "{w:?} {byte}");
                    }
                }
            }
        }
    }

    #[test]
    fn trim_is_str_trim() {
        for s in [
            "",
            " ",
            " a ",
            "\t1.5\r",
            "\u{a0}x\u{a0}",
            " é ",
            "\u{3000} ",
            "a\u{2003}",
        ] {
            assert_eq!(trim(s), s.trim(), "{s:?}");
        }
    }

    #[test]
    fn four_digits_are_read_or_refused() {
        for n in 0..10_000u64 {
            assert_eq!(four_digits(format!("{n:04}").as_bytes()), Some(n));
        }
        // Every byte next to the digits, at every place.
        for place in 0..4 {
            for b in (0u8..=255).filter(|b| !b.is_ascii_digit()) {
                let mut w = *b"1234";
                w[place] = b;
                assert_eq!(four_digits(&w), None, "{w:?}");
            }
        }
    }

    #[test]
    fn the_plain_decimal_path_agrees_with_std_to_the_bit() {
        let mut fast = 0;
        let mut check = |s: &str| {
            if let Some(v) = plain_decimal(s.as_bytes()) {
                fast += 1;
                let std: f64 = s.parse().unwrap();
                assert_eq!(v.to_bits(), std.to_bits(), "{s}");
            }
        };
        for s in [
            "0",
            "-0",
            "512",
            "512.000000",
            "0.1",
            "0.3",
            "17012.4",
            "-3.00",
            "123456789012345",
            "1234567890123456",
            "9007199254740993",
            "9007199254740992",
            "900719925474099.2",
            "18446744073709551616",
            "184467440737095516.16",
            "0.000000000000000000001",
            "0.00000000000000000000001",
            "1.",
            ".5",
            "1e5",
            "1-2",
            "--1",
            "",
            "-",
            "1.2.3",
        ] {
            check(s);
        }
        // Every printed form of many magnitudes: whatever the fast path takes, std agrees.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..300_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = (x >> 11) as f64 / (1u64 << 53) as f64 * 10f64.powi((x % 19) as i32 - 6);
            for p in [0, 1, 2, 3, 6, 9, 12] {
                check(&format!("{v:.p$}"));
            }
            check(&format!("{v}"));
            check(&(x % 100_000_000).to_string());
        }
        assert!(fast > 1_000_000, "the fast path took {fast}");
        assert_eq!(
            plain_decimal(b"-0").map(f64::to_bits),
            Some((-0.0f64).to_bits())
        );
        for s in [
            "1.",
            ".5",
            "1e5",
            "9007199254740993",
            "90071992547409.93",
            "12345678901234567890",
            "1.2345678901234567890",
            "",
            "-",
            "1.2.3",
            "+1",
            "123:",
            "12/4",
            "1234567:",
            "1234.567/",
            "0x12",
            "12\u{ff13}4",
            "\u{ff11}\u{ff12}",
        ] {
            assert_eq!(plain_decimal(s.as_bytes()), None, "{s}");
        }
    }

    #[test]
    fn strips_timestamp_and_ansi() {
        assert_eq!(clean_line("2026-06-09T09:00:00.0Z op  shape"), "op  shape");
        assert_eq!(
            clean_line("a \x1b[32mpassed~\x1b[0m] \x1b[1A\x1b[2Kx\r"),
            "a passed~] x"
        );
        assert_eq!(
            clean_line("2026-06-09 not a stamp"),
            "2026-06-09 not a stamp"
        );
    }

    #[test]
    fn values_and_missing_tokens() {
        assert_eq!(parse_value(" 1.52588e-05 "), Ok(Some(1.52588e-05)));
        // A ratio is no plain value: only a ratio's column reads it (`parse_in`).
        assert_eq!(parse_value("1.60x"), Err(NotANumber));
        assert_eq!(parse_value("-20.4%"), Err(NotANumber));
        assert_eq!(parse_ratio("1.60x"), Ok(Some(1.6)));
        assert_eq!(parse_ratio("-20.4 %"), Ok(Some(-20.4)));
        assert_eq!(parse_ratio("1,264.1x"), Ok(Some(1264.1)));
        for bad in ["x", "%", "1.6xx", "1.6x%", "1e5x5", "12.5xus"] {
            assert_eq!(parse_ratio(bad), Err(NotANumber), "{bad}");
        }
        assert_eq!(parse_in("1.31x", "latency"), Err(NotANumber));
        assert_eq!(parse_in("12.5%", "throughput"), Err(NotANumber));
        assert_eq!(parse_in("1.31x", "speedup"), Ok(Some(1.31)));
        assert_eq!(parse_in("-3.5%", "uplift"), Ok(Some(-3.5)));
        assert_eq!(parse_value("1,264.1"), Ok(Some(1264.1)));
        for m in ["nan", "NaN", "inf", "-inf", "None", "-", "n/a", "skip", ""] {
            assert_eq!(parse_value(m), Ok(None), "{m}");
        }
        assert_eq!(parse_value("torch.bfloat16"), Err(NotANumber));
    }

    #[test]
    fn every_float_form_python_and_c_print() {
        let cases = [
            ("1.5e+01", 15.0),
            ("1e-05", 1e-05),
            ("1E5", 1e5),
            ("-2.5E-3", -2.5e-3),
            (".5", 0.5),
            ("5.", 5.0),
            ("-0.0", 0.0),
            ("+3", 3.0),
            ("1.52588e-05", 1.52588e-05),
            ("0x1.8p+3", 12.0),
            ("-0x1p-2", -0.25),
            ("0x1.999999999999ap-4", 0.1),
        ];
        for (text, want) in cases {
            assert_eq!(parse_value(text), Ok(Some(want)), "{text}");
        }
        for m in [
            "-nan",
            "NAN",
            "INF",
            "-Infinity",
            "nan(ind)",
            "-nan(ind)",
            "1.#INF",
        ] {
            assert_eq!(parse_value(m), Ok(None), "{m}");
        }
    }

    #[test]
    fn number_prefix_stops_after_the_exponent() {
        for (tok, n) in [
            ("1.5e+01us", 7),
            ("1e-05", 5),
            ("12.3us", 4),
            ("12.3", 4),
            ("3e", 1),
            ("2ms", 1),
            ("0x1.8p+3us", 8),
            ("us", 0),
            (".", 0),
            ("-4.0", 4),
        ] {
            assert_eq!(number_prefix_len(tok), n, "{tok}");
        }
    }

    #[test]
    fn aiter_prefixes() {
        assert_eq!(strip_aiter_prefix("[aiter] x"), Some("x"));
        assert_eq!(strip_aiter_prefix("[aiter.ops.gemm] y"), Some("y"));
        assert_eq!(strip_aiter_prefix("[aiter INFO] 2026"), Some("2026"));
        assert_eq!(strip_aiter_prefix("[aiterx] y"), None);
    }
}
