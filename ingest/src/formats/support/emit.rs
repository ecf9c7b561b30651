//! Building [`Measurement`]s the same way in every format beyond the first three (aiter
//! tables, `[perf]` lines, TokenSpeed probes):
//! one [`Row`] per printed row or record (table, variant, key, line), and its values,
//! each either measured in a unit (stored in the unit's canonical unit, with metric and
//! direction from [`crate::formats::support::units`]) or derived (kept, never compared).

use crate::formats::support::units;
use crate::model::{key_of, metric, Direction, KeyId, KeyOrder, Keys, Measurement, Name, Numerics};

/// How the values of one column or field are stored, worked out once per table header
/// or field name (not per value): metric, canonical unit, direction, the factor to the
/// canonical unit and the printed unit that then goes into `raw`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Spec {
    pub metric: Name,
    pub unit: Name,
    pub direction: Direction,
    /// To the canonical unit, with the unit as printed (for `raw`), when not 1.
    factor: Option<(f64, Name)>,
    pub column: Name,
    pub note: Option<Name>,
}

impl Spec {
    /// Values printed in `unit` (`ms`, `GB/s`, `TFLOPS`...): metric and direction from
    /// the unit unless `metric` names the quantity (`ttft_p99` in ms). A unit perfdb
    /// does not know keeps the values `unclassified`, with a note.
    pub fn measured(metric: Option<&str>, unit: &str, column: &str) -> Spec {
        match units::unit_of_any_case(unit) {
            Some(u) => Spec {
                metric: metric.unwrap_or(u.metric).into(),
                unit: u.canonical.into(),
                direction: u.direction,
                factor: (u.factor != 1.0).then(|| (u.factor, Name::new(unit))),
                column: column.into(),
                note: None,
            },
            None => Spec::derived(
                metric::UNCLASSIFIED,
                unit,
                column,
                Some("unclassified column"),
            ),
        }
    }
    /// Values stored and shown but never compared (a ratio, a count, a setting).
    pub fn derived(metric: &str, unit: &str, column: &str, note: Option<&str>) -> Spec {
        Spec {
            metric: metric.into(),
            unit: unit.into(),
            direction: Direction::None,
            factor: None,
            column: column.into(),
            note: note.map(Name::from),
        }
    }
    /// Measured values in a unit with no canonical form (`MiB`, `items/s`).
    pub fn directed(metric: &str, unit: &str, direction: Direction, column: &str) -> Spec {
        Spec {
            direction,
            ..Spec::derived(metric, unit, column, None)
        }
    }
    /// Values of another run, kept beside this run's under `<metric>@<other>` with a
    /// note (FlyDSL's reference tables): never compared.
    pub fn of_other(self, metric: String, note: String) -> Spec {
        Spec {
            metric: metric.as_str().into(),
            note: Some(note.as_str().into()),
            ..self.kept()
        }
    }
    /// Values converted as this spec says, with `unit` after the printed number in
    /// `raw` (the unit the source printed, where the parser scaled the value first).
    pub fn printed_in(self, unit: &str) -> Spec {
        Spec {
            factor: self.factor.map(|(f, _)| (f, Name::new(unit))),
            ..self
        }
    }
    /// The same, kept but not compared (a spread, an aggregate).
    pub fn kept(self) -> Spec {
        Spec {
            direction: Direction::None,
            ..self
        }
    }
}

/// Specs (or anything else worked out from a field's name) by field name, built once
/// per parse: JSON records repeat the same few fields.
pub(crate) struct Specs<T = Spec>(std::collections::HashMap<Box<str>, T, crate::hash::Fx>);

impl<T> Default for Specs<T> {
    fn default() -> Self {
        Specs(Default::default())
    }
}

impl<T: Copy> Specs<T> {
    pub fn get(&mut self, name: &str, make: impl FnOnce() -> T) -> T {
        if let Some(s) = self.0.get(name) {
            return *s;
        }
        let s = make();
        self.0.insert(name.into(), s);
        s
    }
}

/// [`Specs`] by field place and name, for records that list the same fields in the same
/// order (JSONL lines, a benchmark's repeated records): the name at a place is compared
/// with the last one seen there instead of being hashed and looked up.
pub(crate) struct SpecsByPlace<T = Spec> {
    places: Vec<(Box<str>, T)>,
    by_name: Specs<T>,
}

impl<T> Default for SpecsByPlace<T> {
    fn default() -> Self {
        SpecsByPlace {
            places: Vec::new(),
            by_name: Specs::default(),
        }
    }
}

impl<T: Copy> SpecsByPlace<T> {
    pub fn get(&mut self, place: usize, name: &str, make: impl FnOnce() -> T) -> T {
        if let Some((n, s)) = self.places.get(place) {
            if **n == *name {
                return *s;
            }
        }
        let s = self.by_name.get(name, make);
        let len = self.places.len();
        if place < len {
            self.places[place] = (name.into(), s);
        } else if place == len {
            self.places.push((name.into(), s));
        }
        s
    }
}

/// The key of every row of one table, laid out once: the cells' canonical order (by
/// name, as [`key_of`] sorts them), each cell's JSON prefix and the source order. A
/// row's key is then its values pushed behind the prefixes: the same text `key_of`
/// writes, without sorting or interning per row.
pub(crate) struct KeyLayout {
    /// (source index, `{"name":` or `,"name":`) in canonical order.
    cells: Vec<(usize, String)>,
    pub order: KeyOrder,
}

impl KeyLayout {
    pub fn new<S: AsRef<str>>(names: &[S]) -> KeyLayout {
        let mut by_name: Vec<usize> = (0..names.len()).collect();
        by_name.sort_by(|a, b| names[*a].as_ref().cmp(names[*b].as_ref()));
        let cells = by_name
            .iter()
            .enumerate()
            .map(|(i, &c)| {
                let mut p = String::from(if i == 0 { "{" } else { "," });
                crate::model::push_json_str(&mut p, names[c].as_ref());
                p.push(':');
                (c, p)
            })
            .collect();
        KeyLayout {
            cells,
            order: crate::model::order_of(names.iter().map(|n| n.as_ref())),
        }
    }
    /// The key of a row whose cells (in source order) are `values`, written to `keys`.
    #[inline]
    pub fn key<S: AsRef<str>>(&self, keys: &mut Keys, values: &[S]) -> KeyId {
        self.key_by(keys, |c| values[c].as_ref())
    }
    /// The key of a row whose cell `c` (in source order) is `cell(c)`: for rows whose key
    /// cells are not a list of their own.
    #[inline]
    pub fn key_by<'v>(&self, keys: &mut Keys, cell: impl Fn(usize) -> &'v str) -> KeyId {
        if self.cells.is_empty() {
            return keys.empty();
        }
        let json = keys.text_mut();
        for (c, prefix) in &self.cells {
            json.push_str(prefix);
            crate::model::push_json_str(json, cell(*c));
        }
        json.push('}');
        keys.finish()
    }
    /// A row of `table`/`variant` with the key of `values`.
    pub fn row<S: AsRef<str>>(
        &self,
        keys: &mut Keys,
        table: Name,
        variant: Name,
        values: &[S],
        line: usize,
    ) -> Row {
        self.row_by(keys, table, variant, |c| values[c].as_ref(), line)
    }
    /// [`KeyLayout::row`] with [`KeyLayout::key_by`].
    pub fn row_by<'v>(
        &self,
        keys: &mut Keys,
        table: Name,
        variant: Name,
        cell: impl Fn(usize) -> &'v str,
        line: usize,
    ) -> Row {
        Row {
            table,
            variant,
            key: self.key_by(keys, cell),
            key_order: self.order,
            line: line as u32,
        }
    }
}

/// The identity of one printed row or record.
#[derive(Clone)]
pub(crate) struct Row {
    pub table: Name,
    pub variant: Name,
    pub key: KeyId,
    pub key_order: KeyOrder,
    pub line: u32,
}

impl Row {
    /// `pairs` in source order; the key is written to `keys`.
    pub fn new(
        keys: &mut Keys,
        table: &str,
        variant: &str,
        pairs: &[(String, String)],
        line: usize,
    ) -> Row {
        let (key, key_order) = key_of(pairs);
        Row {
            table: table.into(),
            variant: variant.into(),
            key: keys.push(&key),
            key_order,
            line: line as u32,
        }
    }

    /// One value as `spec` says, `printed` as the source printed it (written to `keys`,
    /// the parse's, beside the row's key).
    #[inline]
    pub fn put(
        &self,
        keys: &mut Keys,
        spec: &Spec,
        value: Option<f64>,
        printed: &str,
    ) -> Measurement {
        self.put_as(keys, self.variant, spec, value, printed)
    }

    /// [`Row::put`] for another variant of the same printed row.
    #[inline]
    pub fn put_as(
        &self,
        keys: &mut Keys,
        variant: Name,
        spec: &Spec,
        value: Option<f64>,
        printed: &str,
    ) -> Measurement {
        let (value, raw) = match (spec.factor, value) {
            (Some((f, unit)), Some(v)) => (
                Some(units::to_canonical(v, f)),
                keys.raw_joined(printed, &unit),
            ),
            _ => (value, keys.raw(printed)),
        };
        Measurement {
            table: self.table,
            variant,
            key: self.key,
            key_order: self.key_order,
            metric: spec.metric,
            unit: spec.unit,
            direction: spec.direction,
            value,
            raw,
            column: spec.column,
            numerics: Numerics::NotChecked,
            line: self.line,
            note: spec.note,
        }
    }

    /// [`Spec::measured`] for one value.
    pub fn value(
        &self,
        keys: &mut Keys,
        metric: Option<&str>,
        unit: &str,
        value: Option<f64>,
        printed: &str,
        column: &str,
    ) -> Measurement {
        self.put(keys, &Spec::measured(metric, unit, column), value, printed)
    }

    /// [`Spec::derived`] for one value.
    #[allow(clippy::too_many_arguments)]
    pub fn derived(
        &self,
        keys: &mut Keys,
        metric: &str,
        unit: &str,
        value: Option<f64>,
        printed: &str,
        column: &str,
        note: Option<&str>,
    ) -> Measurement {
        self.put(
            keys,
            &Spec::derived(metric, unit, column, note),
            value,
            printed,
        )
    }
}

/// `512.000000` -> `512`: integral floats read as integers in keys.
#[inline]
pub(crate) fn key_number(cell: &str) -> &str {
    // One pass over the bytes (these are short cells, one per key column and row).
    let b = cell.as_bytes();
    let start = usize::from(b.first() == Some(&b'-'));
    let mut dot = None;
    for (i, &c) in b.iter().enumerate().skip(start) {
        match (c, dot) {
            (b'0'..=b'9', None) => {}
            (b'.', None) if i > start => dot = Some(i),
            (b'0', Some(_)) => {}
            _ => return cell,
        }
    }
    match dot {
        Some(d) => &cell[..d],
        None => cell,
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
    }

    #[test]
    fn a_laid_out_key_is_the_key_of_its_pairs() {
        let names = ["N", "M", "dtype", "K"];
        let values = ["4096", "1", "bf\"16", "8192"];
        let layout = KeyLayout::new(&names);
        let pairs: Vec<(String, String)> = names
            .iter()
            .zip(values)
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        let (key, order) = key_of(&pairs);
        let mut keys = Keys::default();
        let id = layout.key(&mut keys, &values);
        assert_eq!(keys.get(id), &*key);
        assert_eq!(layout.order, order);
        let none = KeyLayout::new::<&str>(&[]).key::<&str>(&mut keys, &[]);
        assert_eq!(keys.get(none), &*key_of(&[]).0);
        // Each key reads back as written, the same key twice in a row once.
        let again = layout.key(&mut keys, &values);
        assert_eq!(
            (keys.get(id), keys.get(again), keys.len()),
            (&*key, &*key, 3)
        );
        assert_eq!(layout.key(&mut keys, &values), again);
        assert_eq!(keys.len(), 3);
    }

    #[test]
    fn values_land_in_canonical_units() {
        let mut keys = Keys::default();
        let row = Row::new(&mut keys, "t", "v", &[("M".into(), "1".into())], 3);
        let m = row.value(
            &mut keys,
            Some("ttft_p99"),
            "ms",
            Some(1.5),
            "1.5",
            "p99_ttft_ms",
        );
        assert_eq!(
            (&*m.metric, &*m.unit, m.direction, m.value),
            ("ttft_p99", "us", Direction::Lower, Some(1500.0))
        );
        assert_eq!(keys.printed(m.raw), "1.5 ms");
        let m = row.value(&mut keys, None, "furlongs", Some(2.0), "2", "x");
        assert_eq!((&*m.metric, m.direction), ("unclassified", Direction::None));
    }
}
