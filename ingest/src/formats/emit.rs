//! Building [`Measurement`]s the same way in every format added after the seed three:
//! one [`Row`] per printed row or record (table, variant, key, line), and its values,
//! each either measured in a unit (stored in the unit's canonical unit, with metric and
//! direction from [`crate::units`]) or derived (kept, never compared).

use crate::model::{key_of, metric, Direction, Key, KeyOrder, Measurement, Name, Numerics, Raw};
use crate::units;

/// The identity of one printed row or record.
#[derive(Clone)]
pub(crate) struct Row {
    pub table: Name,
    pub variant: Name,
    pub key: Key,
    pub key_order: KeyOrder,
    pub line: u32,
}

impl Row {
    /// `pairs` in source order.
    pub fn new(table: &str, variant: &str, pairs: &[(String, String)], line: usize) -> Row {
        let (key, key_order) = key_of(pairs);
        Row {
            table: table.into(),
            variant: variant.into(),
            key,
            key_order,
            line: line as u32,
        }
    }

    fn measurement(
        &self,
        (metric, unit, direction): (&str, &str, Direction),
        value: Option<f64>,
        raw: Raw,
        column: &str,
        note: Option<&str>,
    ) -> Measurement {
        Measurement {
            table: self.table,
            variant: self.variant,
            key: self.key.clone(),
            key_order: self.key_order,
            metric: metric.into(),
            unit: unit.into(),
            direction,
            value,
            raw,
            column: column.into(),
            numerics: Numerics::NotChecked,
            line: self.line,
            note: note.map(Name::from),
        }
    }

    /// A value printed in `unit` (`ms`, `GB/s`, `TFLOPS`...): metric and direction from
    /// the unit unless `metric` names the quantity (`ttft_p99` in ms), stored in the
    /// canonical unit with the printed unit in `raw`. A unit perfdb does not know keeps
    /// the value as `unclassified`, with a note.
    pub fn value(
        &self,
        metric: Option<&str>,
        unit: &str,
        value: Option<f64>,
        printed: &str,
        column: &str,
    ) -> Measurement {
        match units::unit_of_any_case(unit) {
            Some(u) => {
                let (value, raw) = match value {
                    Some(v) if u.factor != 1.0 => (
                        Some(units::to_canonical(v, u.factor)),
                        Raw::new(&format!("{printed} {unit}")),
                    ),
                    _ => (value, Raw::new(printed)),
                };
                self.measurement(
                    (metric.unwrap_or(u.metric), u.canonical, u.direction),
                    value,
                    raw,
                    column,
                    None,
                )
            }
            None => self.derived(
                metric::UNCLASSIFIED,
                unit,
                value,
                printed,
                column,
                Some("unclassified column"),
            ),
        }
    }

    /// A value that is stored and shown but never compared (a ratio, a count, a
    /// setting, the spread of a measurement).
    pub fn derived(
        &self,
        metric: &str,
        unit: &str,
        value: Option<f64>,
        printed: &str,
        column: &str,
        note: Option<&str>,
    ) -> Measurement {
        self.measurement(
            (metric, unit, Direction::None),
            value,
            Raw::new(printed),
            column,
            note,
        )
    }

    /// A measured value with its own metric, unit and direction (a unit with no
    /// canonical form: `MiB`, `%`).
    pub fn directed(
        &self,
        metric: &str,
        unit: &str,
        direction: Direction,
        value: Option<f64>,
        printed: &str,
        column: &str,
    ) -> Measurement {
        self.measurement(
            (metric, unit, direction),
            value,
            Raw::new(printed),
            column,
            None,
        )
    }

    /// A text cell kept beside the values (`kernelName`, `Confound`).
    pub fn note(&self, text: &str, column: &str) -> Measurement {
        self.derived(metric::NOTE, "", None, text, column, None)
    }
}

/// A JSON scalar as key text: strings bare, numbers as printed, integral floats
/// (`512.0`) as integers so they match the same key printed elsewhere.
pub(crate) fn json_cell(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 1e15 => {
                format!("{}", f as i64)
            }
            _ => n.to_string(),
        },
        serde_json::Value::Null => "None".to_string(),
        other => other.to_string(),
    }
}

/// `512.000000` -> `512`: integral floats read as integers in keys.
pub(crate) fn key_number(cell: &str) -> &str {
    let Some((int, frac)) = cell.split_once('.') else {
        return cell;
    };
    if !int.is_empty()
        && int
            .trim_start_matches('-')
            .bytes()
            .all(|b| b.is_ascii_digit())
        && !int.trim_start_matches('-').is_empty()
        && frac.bytes().all(|b| b == b'0')
    {
        int
    } else {
        cell
    }
}

/// The 1-based line of every occurrence of `needle` in `text`, in one pass (the line
/// a JSON record starts on, found by a key every record has).
pub(crate) fn lines_of(text: &str, needle: &str) -> Vec<usize> {
    let b = text.as_bytes();
    let (mut line, mut at) = (1, 0);
    memchr::memmem::find_iter(b, needle.as_bytes())
        .map(|hit| {
            line += memchr::memchr_iter(b'\n', &b[at..hit]).count();
            at = hit;
            line
        })
        .collect()
}

/// A JSON number field as a value (`null`, `"inf"`, `"nan"` are missing).
pub(crate) fn json_number(v: &serde_json::Value) -> Option<Option<f64>> {
    match v {
        serde_json::Value::Number(n) => Some(n.as_f64().filter(|x| x.is_finite())),
        serde_json::Value::Null => Some(None),
        serde_json::Value::String(s) => crate::text::parse_value(s).ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integral_floats_read_as_integers() {
        assert_eq!(key_number("512.000000"), "512");
        assert_eq!(key_number("512.0"), "512");
        assert_eq!(key_number("-3.00"), "-3");
        assert_eq!(key_number("0.5"), "0.5");
        assert_eq!(key_number("fp16"), "fp16");
        assert_eq!(key_number(".0"), ".0");
        assert_eq!(json_cell(&serde_json::json!(512.0)), "512");
        assert_eq!(json_cell(&serde_json::json!(0.5)), "0.5");
        assert_eq!(json_cell(&serde_json::json!("inf")), "inf");
    }

    #[test]
    fn values_land_in_canonical_units() {
        let row = Row::new("t", "v", &[("M".into(), "1".into())], 3);
        let m = row.value(Some("ttft_p99"), "ms", Some(1.5), "1.5", "p99_ttft_ms");
        assert_eq!(
            (&*m.metric, &*m.unit, m.direction, m.value),
            ("ttft_p99", "us", Direction::Lower, Some(1500.0))
        );
        assert_eq!(m.raw.as_str(), "1.5 ms");
        let m = row.value(None, "furlongs", Some(2.0), "2", "x");
        assert_eq!((&*m.metric, m.direction), ("unclassified", Direction::None));
    }
}
