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
