//! A report's table columns, defined once per report and laid out by each exporter: the
//! terminal aligns them, markdown writes a pipe table. A column may be shown in one of
//! the two only ([`Shown`]): the terminal has room for no reason column, a comment has
//! no use for the unadjusted p.

use super::RowView;

/// Where a column is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    Everywhere,
    TerminalOnly,
    MarkdownOnly,
}

/// One column of a report's table: its header, its alignment, where it is shown and
/// the text of its cell.
pub struct Column<T> {
    pub header: &'static str,
    /// Numbers are right-aligned.
    pub right: bool,
    pub shown: Shown,
    pub cell: fn(&T) -> String,
}

impl<T> Clone for Column<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Column<T> {}

impl<T> Column<T> {
    pub(crate) const fn left(header: &'static str, cell: fn(&T) -> String) -> Self {
        Column {
            header,
            right: false,
            shown: Shown::Everywhere,
            cell,
        }
    }
    pub(crate) const fn right(header: &'static str, cell: fn(&T) -> String) -> Self {
        Column {
            header,
            right: true,
            shown: Shown::Everywhere,
            cell,
        }
    }
    pub(crate) const fn only(self, shown: Shown) -> Self {
        Column { shown, ..self }
    }
}

/// The columns of a comparison's rows.
pub const ROW_COLUMNS: &[Column<RowView>] = &[
    Column::left("verdict", |v: &RowView| v.verdict.clone()),
    Column::left("table", |v: &RowView| v.table.clone()),
    Column::left("variant", |v: &RowView| v.variant.clone()),
    Column::left("key", |v: &RowView| v.key.clone()),
    Column::left("metric", |v: &RowView| v.metric.clone()),
    Column::right("base", |v: &RowView| v.base.clone()),
    Column::right("head", |v: &RowView| v.head.clone()),
    Column::right("change", |v: &RowView| v.change.clone()),
    Column::right("p", |v: &RowView| v.p.clone()).only(Shown::TerminalOnly),
    Column::right("q", |v: &RowView| v.q.clone()),
    Column::left("reason", |v: &RowView| v.reason.replace('|', "\\|")).only(Shown::MarkdownOnly),
];

/// Head's value as a percent of its device's peak: shown when a row has a peak.
const PEAK_COLUMN: Column<RowView> = Column::right("% peak", |v: &RowView| v.peak.clone());

/// The columns of a report's rows: [`ROW_COLUMNS`], with `% peak` after head when
/// some row's device and data type are known.
pub fn row_columns(views: &[RowView]) -> Vec<Column<RowView>> {
    let mut cols = ROW_COLUMNS.to_vec();
    if views.iter().any(|v| !v.peak.is_empty()) {
        let at = cols
            .iter()
            .position(|c| c.header == "head")
            .map_or(cols.len(), |i| i + 1);
        cols.insert(at, PEAK_COLUMN);
    }
    cols
}

/// The rows as aligned terminal lines, the header first: two spaces between columns,
/// no trailing blanks.
pub fn terminal_lines<T>(columns: &[Column<T>], rows: &[T]) -> Vec<String> {
    let columns: Vec<&Column<T>> = columns
        .iter()
        .filter(|c| c.shown != Shown::MarkdownOnly)
        .collect();
    let header: Vec<String> = columns.iter().map(|c| c.header.to_string()).collect();
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| columns.iter().map(|c| (c.cell)(r)).collect())
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for line in &cells {
        for (w, c) in widths.iter_mut().zip(line) {
            *w = (*w).max(c.chars().count());
        }
    }
    std::iter::once(&header)
        .chain(&cells)
        .map(|line| {
            line.iter()
                .zip(&columns)
                .zip(&widths)
                .map(|((c, col), &w)| {
                    if col.right {
                        format!("{c:>w$}")
                    } else {
                        format!("{c:<w$}")
                    }
                })
                .collect::<Vec<_>>()
                .join("  ")
                .trim_end()
                .to_string()
        })
        .collect()
}

/// The rows as a markdown pipe table (header, alignment row, one line a row).
pub fn markdown_table<T>(columns: &[Column<T>], rows: &[T]) -> String {
    let columns: Vec<&Column<T>> = columns
        .iter()
        .filter(|c| c.shown != Shown::TerminalOnly)
        .collect();
    let line = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
    let mut s = line(columns.iter().map(|c| c.header.to_string()).collect());
    s.push_str(&format!(
        "|{}|\n",
        columns
            .iter()
            .map(|c| if c.right { "---:" } else { "---" })
            .collect::<Vec<_>>()
            .join("|")
    ));
    for r in rows {
        s.push_str(&line(columns.iter().map(|c| (c.cell)(r)).collect()));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Pair(&'static str, f64);

    const COLUMNS: &[Column<Pair>] = &[
        Column::left("name", |p: &Pair| p.0.to_string()),
        Column::right("value", |p: &Pair| p.1.to_string()),
        Column::left("note", |_: &Pair| "a|b".into()).only(Shown::MarkdownOnly),
    ];

    #[test]
    fn one_list_lays_out_both_ways() {
        let rows = [Pair("a", 1.5), Pair("longer", 10.0)];
        insta::assert_snapshot!(terminal_lines(COLUMNS, &rows).join("\n"), @r"
        name    value
        a         1.5
        longer     10
        ");
        insta::assert_snapshot!(markdown_table(COLUMNS, &rows), @r"
        | name | value | note |
        |---|---:|---|
        | a | 1.5 | a|b |
        | longer | 10 | a|b |
        ");
    }
}
