//! Triton's labelled lines, shared by the formats that print them: `perf_report`'s
//! printed table (`triton-perf-report`) and its saved CSV (`triton-csv`): a column is a
//! line of the plot named `Line (ylabel)`.

/// `Triton (GB/s)` -> (`Triton`, `GB/s`); an x column has no parenthesised ylabel.
pub(crate) fn line_and_ylabel(name: &str) -> Option<(&str, &str)> {
    let open = name.rfind(" (")?;
    let ylabel = name[open + 2..].strip_suffix(')')?;
    Some((name[..open].trim(), ylabel.trim()))
}

/// Triton 3.6's header: the x columns bare, then every line `<line> (<ylabel>)` with the
/// one ylabel of the plot. The first line column, or `None` when the header is not that:
/// then a parenthesised word is part of its line's name (`Torch (native)`, `Torch (jit)`
/// in the fused-softmax tutorial's header before 3.6), never a unit.
pub(crate) fn labelled_lines<S: AsRef<str>>(cols: &[S]) -> Option<usize> {
    let cols: Vec<&str> = cols.iter().map(AsRef::as_ref).collect();
    let first = cols.iter().position(|c| line_and_ylabel(c).is_some())?;
    let ylabel = line_and_ylabel(cols[first])?.1;
    (first > 0
        && cols[first..]
            .iter()
            .all(|c| line_and_ylabel(c).is_some_and(|(_, y)| y == ylabel) || is_ratio_column(c)))
    .then_some(first)
}

/// A column a script adds among the lines, the ratio of two of them (`2cta/1cta`,
/// `2cta/cublas`): one word with a `/` and no parenthesised ylabel. Stored as the
/// derived ratio it is, never a line.
fn is_ratio_column(name: &str) -> bool {
    name.contains('/')
        && !name.contains(char::is_whitespace)
        && !name.contains('(')
        && crate::formats::support::units::unit_of_any_case(name).is_none()
}
