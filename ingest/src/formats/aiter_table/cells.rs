//! A table line's cells, and the separator rows under a pipe table's header (pandas'
//! `|---:|`, GitHub's `| --- |` and `|:-:|`).

/// The trimmed cells of `| a | b |`; `None` when the line is not closed by `|`.
pub(super) fn cells(line: &str) -> Option<impl Iterator<Item = &str>> {
    let inner = line.trim_ascii().strip_prefix('|')?.strip_suffix('|')?;
    Some(crate::formats::support::split_bytes(inner, b'|').map(str::trim_ascii))
}

pub(super) fn split_cells(line: &str) -> Option<Vec<&str>> {
    cells(line).map(Iterator::collect)
}

/// `|---:|:---|` without allocating: every cell is `:?-{3,}:?`. (A row of `-` cells,
/// tabulate's missing values, has one dash a cell and is not a separator.)
pub(super) fn is_separator_line(line: &str) -> bool {
    let t = line.trim_ascii().as_bytes();
    let Some(inner) = t.strip_prefix(b"|").and_then(|x| x.strip_suffix(b"|")) else {
        return false;
    };
    inner
        .split(|b| *b == b'|')
        .all(|cell| is_separator_cell(cell.trim_ascii()))
}

/// GitHub's separator row written without outer pipes (`--- | ---`, `:-- | --:`): two
/// cells at least, each a separator cell.
#[inline]
pub(super) fn is_bare_separator_line(line: &str) -> bool {
    // Asked of every line of a log with a pipe table: its first byte after the indent
    // decides for nearly all (`|`, `[`, a letter, a digit).
    let first = line.bytes().find(|b| !b.is_ascii_whitespace());
    if !matches!(first, Some(b'-' | b':')) {
        return false;
    }
    let t = line.trim_ascii();
    !t.starts_with('|')
        && !t.ends_with('|')
        && memchr::memchr(b'|', t.as_bytes()).is_some()
        && t.as_bytes()
            .split(|b| *b == b'|')
            .all(|cell| is_separator_cell(cell.trim_ascii()))
}

/// The cells of a line split on `|` (no outer pipes): how many.
fn bare_cells(line: &str) -> usize {
    line.bytes().filter(|b| *b == b'|').count() + 1
}

/// GitHub's tables may leave out the outer pipes (`a | b`, `--- | ---`, `1 | 2`): each
/// such table (a header over a bare separator row, and the rows after it of as many
/// cells) is given its outer pipes, so it reads as every other pipe table. Lines keep
/// their numbers.
pub(super) fn add_outer_pipes(all: &mut [(usize, std::borrow::Cow<'_, str>)]) {
    let mut i = 1;
    while i < all.len() {
        if !is_bare_separator_line(&all[i].1) {
            i += 1;
            continue;
        }
        let width = bare_cells(all[i].1.trim_ascii());
        let bare = |l: &str| {
            let t = l.trim_ascii();
            !t.is_empty() && !t.starts_with('|') && !t.ends_with('|') && bare_cells(t) == width
        };
        if !bare(&all[i - 1].1) {
            i += 1;
            continue;
        }
        // Every `|` line after it is a row, of the right width or not: a row a cell
        // short is the pipe table's to refuse, never a line passed over.
        let row = |l: &str| {
            let t = l.trim_ascii();
            !t.is_empty() && !t.starts_with('|') && memchr::memchr(b'|', t.as_bytes()).is_some()
        };
        let mut end = i + 1;
        while end < all.len() && row(&all[end].1) {
            end += 1;
        }
        for (_, line) in &mut all[i - 1..end] {
            *line = std::borrow::Cow::Owned(format!("| {} |", line.trim_ascii()));
        }
        i = end;
    }
}

pub(super) fn is_separator_cell(c: &[u8]) -> bool {
    let aligned = c.first() == Some(&b':') || c.last() == Some(&b':');
    let c = c.strip_prefix(b":").unwrap_or(c);
    let c = c.strip_suffix(b":").unwrap_or(c);
    // GitHub takes `:-:` (an alignment colon and one dash); plain cells need three.
    c.len() >= if aligned { 1 } else { 3 } && c.iter().all(|b| *b == b'-')
}

pub(super) fn is_separator(cells: &[&str]) -> bool {
    !cells.is_empty() && cells.iter().all(|c| is_separator_cell(c.as_bytes()))
}
