//! A table row's cells as values: `1.431 ms`, `12.3%`, `2^1 = 2` axis cells, in their
//! column's canonical unit.

use crate::formats::support::text::trim;
use crate::formats::support::units;

/// `2^10 = 1024` (a power-of-two axis) -> `1024`; other cells as printed.
pub(super) fn axis_value(cell: &str) -> &str {
    match cell.split_once(" = ") {
        Some((p, v)) if p.starts_with("2^") => v.trim(),
        _ => cell,
    }
}

/// Whether a table's axis cell (`2^16 = 65536`, `matmul`) and a `Run:` line's value of
/// the same axis (`Elements{io}=2^16`: the power alone) are one value.
pub(super) fn same_axis_value(cell: &str, run: &str) -> bool {
    let cell = axis_value(cell);
    let run = axis_value(run);
    cell == run
        || run
            .strip_prefix("2^")
            .and_then(|e| e.parse::<u32>().ok())
            .and_then(|e| 1u64.checked_shl(e).filter(|_| e < 64))
            .is_some_and(|v| cell.parse::<u64>() == Ok(v))
}

/// A cell's value in the column's stored unit; `Some(None)`: printed as no value
/// (`inf%`, `nan`).
pub(super) fn read_cell(cell: &str, how: Cell) -> Option<Option<f64>> {
    let (num, unit) = match cell.find([' ', '%']) {
        Some(at) => (&cell[..at], trim(&cell[at..])),
        None => (cell, ""),
    };
    if matches!(num, "inf" | "-inf" | "nan") {
        return Some(None);
    }
    match how {
        // (A number that does not parse is no value nvbench prints: `None`, the cell
        // refused, never `Some(None)`, the cell read as empty.)
        Cell::Time => {
            // nvbench prints seconds as `1.991 s`.
            let u = units::unit_of(unit).or_else(|| units::seconds_word(unit))?;
            let v = num.parse::<f64>().ok()?;
            (u.metric == crate::model::metric::LATENCY)
                .then(|| Some(units::to_canonical(v, u.factor)))
        }
        Cell::Percent => {
            (unit == "%").then_some(())?;
            Some(Some(num.parse::<f64>().ok()? / 100.0))
        }
        Cell::Bandwidth => {
            let u = units::unit_of_any_case(unit)?;
            let v = num.parse::<f64>().ok()?;
            (u.metric == crate::model::metric::BANDWIDTH)
                .then(|| Some(units::to_canonical(v, u.factor)))
        }
        Cell::Count => {
            let scale = match unit {
                "" => 1.0,
                "B" => 1.0,
                // A clock summary (`1.545 GHz`), stored in Hz.
                "Hz" => 1.0,
                "kHz" | "KHz" => 1e3,
                "MHz" => 1e6,
                "GHz" => 1e9,
                "KiB" => 1024.0,
                "MiB" => 1024.0 * 1024.0,
                "GiB" => 1024.0 * 1024.0 * 1024.0,
                "TiB" => 1024f64.powi(4),
                _ => return None,
            };
            let num = num.strip_suffix('x').unwrap_or(num);
            // nvbench prints rates with `K`, `M`, `G`, `T`, `P`; its first releases with
            // `k`, `m` (millions) and `b` (billions).
            let (digits, si) = match num.as_bytes().last() {
                Some(b'k' | b'K') => (&num[..num.len() - 1], 1e3),
                Some(b'M' | b'm') => (&num[..num.len() - 1], 1e6),
                Some(b'G' | b'b') => (&num[..num.len() - 1], 1e9),
                Some(b'T') => (&num[..num.len() - 1], 1e12),
                Some(b'P') => (&num[..num.len() - 1], 1e15),
                _ => (num, 1.0),
            };
            Some(Some(units::to_canonical(
                digits.parse::<f64>().ok()?,
                si * scale,
            )))
        }
    }
}

/// How a column's cells are read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Cell {
    /// `88.492 us`, `1.431 ms`: stored in us.
    Time,
    /// `14.24%`, `inf%`: stored as a fraction.
    Percent,
    /// `940.305 GB/s`: stored in TB/s.
    Bandwidth,
    /// `641.915T`, `1.319K`, `17179869184`, `1056x`, `16.000 MiB`, `1.545 GHz`: SI
    /// suffix, size or clock unit applied.
    Count,
}

/// How a cell of a column nvbench does not name reads.
pub(super) fn shape_of(cell: &str) -> Cell {
    if is_time_cell(cell) {
        Cell::Time
    } else if cell.ends_with('%') {
        Cell::Percent
    } else if cell.ends_with("/s") {
        Cell::Bandwidth
    } else {
        Cell::Count
    }
}

/// `1.431 ms`, `26.763 us`: a time as nvbench prints it.
pub(super) fn is_time_cell(cell: &str) -> bool {
    matches!(read_cell(cell, Cell::Time), Some(Some(_)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_in_every_suffix_nvbench_has_printed() {
        let count = |c: &str| read_cell(c, Cell::Count).flatten();
        // Today's nvbench: K, M, G, T, P.
        assert_eq!(count("1.319K"), Some(1319.0));
        assert_eq!(count("33.050M"), Some(33.05e6));
        assert_eq!(count("641.915T"), Some(641.915e12));
        // Its first releases: k, m (millions), b (billions).
        assert_eq!(count("20.566k"), Some(20566.0));
        assert_eq!(count("1.5m"), Some(1.5e6));
        assert_eq!(count("2.25b"), Some(2.25e9));
        // Clock summaries: KHz beside kHz.
        assert_eq!(count("1.20 KHz"), Some(1200.0));
        assert_eq!(count("1.20 kHz"), Some(1200.0));
        assert_eq!(count("1.5Q"), None);
    }
}
