//! What the parsers share and no parser owns: line cleaning and number reading
//! ([`text`]), units ([`units`]), column roles ([`columns`]), building rows ([`emit`]),
//! JSON ([`json`], [`json_scan`]), CSV ([`csv`]), and splitting a text into lines and cells.

pub mod columns;
pub mod csv;
pub mod emit;
pub mod json;
pub mod json_scan;
pub mod neighbours;
pub mod perf_line;
pub mod serving_fields;
pub mod text;
pub mod triton_lines;
pub mod ts_fields;
pub mod units;

/// Iterate cleaned lines with 1-based numbers.
pub(crate) fn lines(text: &str) -> impl Iterator<Item = (usize, std::borrow::Cow<'_, str>)> {
    split_bytes(text, b'\n')
        .enumerate()
        .map(|(i, l)| (i + 1, crate::formats::support::text::clean_line(l)))
}

/// `text.split(sep)` for an ASCII separator, found with `memchr` (faster than std's
/// char searcher on the many short pieces of a log).
pub(crate) fn split_bytes(text: &str, sep: u8) -> impl Iterator<Item = &str> {
    let mut start = 0;
    let mut ends = memchr::memchr_iter(sep, text.as_bytes()).chain(std::iter::once(text.len()));
    std::iter::from_fn(move || {
        let end = ends.next()?;
        // `sep` is ASCII, so both ends are char boundaries.
        let piece = &text[start..end];
        start = end + 1;
        Some(piece)
    })
}

/// Each cell of one line (`text.split(sep)`), trimmed as [`crate::formats::support::text::trim`] trims,
/// handed to `f` in one byte loop: as an iterator into a list, the cells of the densest
/// formats (9-30 bytes a value) cost a call and an `Option` each.
///
/// Eight bytes at a time: a word's separators are found as one bit mask
/// ([`crate::formats::support::text::byte_mask`]) and handed on bit by bit, so a cell costs a few
/// instructions whatever its length (a byte loop cost ~7 a byte: a third of the densest
/// parses).
#[inline]
pub(crate) fn for_each_cell<'a>(text: &'a str, sep: u8, mut f: impl FnMut(&'a str)) {
    let b = text.as_bytes();
    let mut start = 0;
    let mut words = b.chunks_exact(8);
    let mut base = 0;
    for w in &mut words {
        let mut mask = crate::formats::support::text::byte_mask(
            crate::formats::support::text::le_word(w),
            sep,
        );
        while mask != 0 {
            let i = base + (mask.trailing_zeros() / 8) as usize;
            // `sep` is ASCII, so both ends are char boundaries.
            f(crate::formats::support::text::trim(&text[start..i]));
            start = i + 1;
            mask &= mask - 1;
        }
        base += 8;
    }
    for (i, &c) in words.remainder().iter().enumerate() {
        if c == sep {
            f(crate::formats::support::text::trim(&text[start..base + i]));
            start = base + i + 1;
        }
    }
    f(crate::formats::support::text::trim(&text[start..]));
}

#[cfg(test)]
mod tests {
    #[test]
    fn split_bytes_is_split() {
        for text in [
            "",
            "a",
            "a\nb",
            "a\n",
            "\n\nb\n",
            "é|ü||x",
            "|",
            "||",
            " a | b\t|c ",
            "\u{a0}x\u{a0}| y",
            // Longer than a word: separators found eight bytes at a time.
            "| cell3-none | m3 | local | 99% | 3 / 3 | 3/3 | 12345.6 | no effect |",
            "gfx942,304,1,128,8192,torch.int8,0,0,12.3456,a8w8_rowwise_256x16x64x256,1.5,,",
            "12345678|12345678|",
            "1234567|",
            "é é é é | ü ü ü ü ü |\u{a0}\u{a0}\u{a0}\u{a0}|",
        ] {
            for sep in [b'\n', b'|', b','] {
                let ours: Vec<&str> = crate::formats::support::split_bytes(text, sep).collect();
                let std: Vec<&str> = text.split(sep as char).collect();
                assert_eq!(ours, std, "{text:?}");
                let mut trimmed = Vec::new();
                crate::formats::support::for_each_cell(text, sep, |c| trimmed.push(c));
                let std_trimmed: Vec<&str> = std
                    .iter()
                    .map(|c| crate::formats::support::text::trim(c))
                    .collect();
                assert_eq!(trimmed, std_trimmed, "{text:?}");
            }
        }
    }
}
