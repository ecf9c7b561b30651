//! What a file read in its format must hold before it is stored: at least one compared
//! value, or a reason it has none. A reader that found a file's shape but not one
//! number read the wrong thing (refused); one whose every cell says its kernel failed
//! read a failed run (stored as one).

use crate::formats::parser::ParseError;
use crate::formats::support;
use crate::model::Format;
use crate::model::Parsed;

/// What a file's measured values hold.
pub(super) enum Measured {
    /// At least one value.
    Some,
    /// None, and nothing says why: refused.
    Empty(ParseError),
    /// None, every cell saying its kernel failed (`error`, `OOM`...): the run failed.
    AllFailed(String),
}

/// A file whose measured columns all read empty: the reader found its shape but not
/// one value (a table of another tool read by position, a results table whose cells
/// hold no number). Stored, it would be a run of rows with nothing in them, which a
/// comparison reads as rows gone.
pub(super) fn nothing_measured(format: Format, parsed: &Parsed) -> Measured {
    let all = parsed
        .measurements
        .iter()
        .chain(parsed.repetitions.iter().flatten());
    let mut measured = all
        .clone()
        .filter(|m| m.direction != crate::model::Direction::None);
    let Some(first) = measured.next() else {
        return unreadable_cells(format, parsed, all);
    };
    if first.value.is_some() {
        return Measured::Some;
    }
    let failed = |m: &crate::model::Measurement| {
        is_failure_cell(parsed.raw(m))
            || m.note
                .is_some_and(|n| n.as_str().starts_with(super::google_benchmark::ERROR_NOTE))
    };
    let mut columns: Vec<&str> = vec![first.column.as_str()];
    let mut all_failed = failed(first);
    for m in measured {
        if m.value.is_some() {
            return Measured::Some;
        }
        all_failed &= failed(m);
        if !columns.contains(&m.column.as_str()) {
            columns.push(m.column.as_str());
        }
    }
    if all_failed {
        let what = first
            .note
            .map(|n| n.as_str().to_string())
            .unwrap_or_else(|| parsed.raw(first).trim().to_string());
        return Measured::AllFailed(format!(
            "every measured value is a failure ({what}, line {})",
            first.line
        ));
    }
    Measured::Empty(ParseError::at(
        first.line as usize,
        format!(
            "read as {format}, every measured column is empty ({}): nothing to store; if \
             this is another tool's output, `--format NAME` reads it as that",
            columns.join(", ")
        ),
    ))
}

/// A file with no compared value at all, some of whose value cells are not numbers
/// (`117.30 µs (2050.4 TFLOPs)`): its results are there but in a shape the reader does
/// not take, so storing it would keep nothing to compare. A file of plain numbers that
/// no rule names (an aggregate-only output) is stored, as documented.
fn unreadable_cells<'a>(
    format: Format,
    parsed: &Parsed,
    all: impl Iterator<Item = &'a crate::model::Measurement>,
) -> Measured {
    let mut columns: Vec<&str> = Vec::new();
    let mut first: Option<(u32, String)> = None;
    // The first value's line, and whether any cell of the file held a number at all.
    let (mut first_line, mut any_value) = (None, false);
    for m in all {
        first_line.get_or_insert(m.line);
        any_value |= m.value.is_some();
        let raw = parsed.raw(m).trim();
        let unreadable = m.value.is_none()
            && m.metric.as_str() == crate::model::metric::UNCLASSIFIED
            && !support::text::is_missing_token(raw)
            && support::text::parse_value(raw).is_err();
        if unreadable {
            first.get_or_insert((m.line, raw.to_string()));
            if !columns.contains(&m.column.as_str()) {
                columns.push(m.column.as_str());
            }
        }
    }
    match first {
        // Not one number anywhere (a table of `nan`s): a run of nothing, never stored.
        None if !any_value && first_line.is_some() => Measured::Empty(ParseError::at(
            first_line.map_or(0, |l| l as usize),
            format!(
                "read as {format}, not one cell holds a number (every value is empty or \
                 `nan`): nothing to store"
            ),
        )),
        None => Measured::Some,
        Some((line, raw)) => Measured::Empty(ParseError::at(
            line as usize,
            format!(
                "read as {format}, no column holds a value perfdb can compare: cells such \
                 as '{raw}' ({}) are not plain numbers; print one number a cell with the \
                 unit in the header (`opus us`, `triton TFLOPS`)",
                columns.join(", ")
            ),
        )),
    }
}

/// A measured cell whose text is not a number, a missing token (`nan`, `-`, `—`) or a
/// failure (`OOM`), such as `1O.9` or `see log`: the file is refused at the first one
/// (how many there are is said), never stored with the value dropped — a garbled cell
/// read silently as an absent one would make compare report a row missing or invalid
/// instead of the file being fixed.
pub(super) fn unread_cells(parsed: &Parsed) -> Option<ParseError> {
    let unread = |m: &&crate::model::Measurement| {
        m.value.is_none() && m.direction != crate::model::Direction::None && m.note.is_none() && {
            let raw = parsed.raw(m).trim().trim_matches(['*', '`', '"']);
            !support::text::is_missing_token(raw)
                && !is_failure_cell(raw)
                && !matches!(raw, "inf" | "-inf" | "Infinity" | "-Infinity" | "—" | "–")
                // A number the reader set aside on purpose (a failed run's zeros).
                && support::text::parse_value(raw).is_err()
        }
    };
    let all = parsed
        .measurements
        .iter()
        .chain(parsed.repetitions.iter().flatten());
    let first = all.clone().find(unread)?;
    let count = all.filter(unread).count();
    Some(ParseError::at(
        first.line as usize,
        format!(
            "`{}` in column {} {} ({count} measured cell(s) of the file are not \
             numbers); fix the file, or write `nan` where there is no value",
            parsed.raw(first).trim().escape_debug(),
            first.column.as_str(),
            support::text::not_a_value(parsed.raw(first).trim())
        ),
    ))
}

/// A cell a harness prints where a kernel failed instead of a value.
fn is_failure_cell(raw: &str) -> bool {
    let t = raw.trim().trim_matches(['*', '`']).to_ascii_lowercase();
    matches!(
        t.as_str(),
        "error"
            | "err"
            | "failed"
            | "fail"
            | "oom"
            | "exception"
            | "crash"
            | "crashed"
            | "timeout"
            | "timed out"
    ) || t.starts_with("error:")
        || t.starts_with("failed:")
}
