//! A table's rows as measurements: each cell's value, unit and numerics, its key cells
//! and variant.

use crate::formats::aiter_table::absent_variant_failure;
use crate::formats::aiter_table::is_reference;
use crate::formats::aiter_table::layout::cell_with_unit;
use crate::formats::aiter_table::layout::measured_keys;
use crate::formats::aiter_table::layout::Layout;
use crate::formats::aiter_table::layout::Role;
use crate::formats::aiter_table::layout::Template;
use crate::formats::aiter_table::layout::UNCLASSIFIED_NOTE;
use crate::formats::aiter_table::names_known_variant;
use crate::formats::aiter_table::names_variant;
use crate::formats::aiter_table::State;
use crate::formats::aiter_table::TableSpan;
use crate::formats::aiter_table::UNATTRIBUTED;
use crate::formats::aiter_table::UNTITLED;
use crate::formats::support::text::{is_missing_token, parse_in};
use crate::model::{metric, push_json_str, Measurement, Name, Numerics, Warning};
use crate::model::{KeyId, Keys, Raw};

impl State {
    /// Which variant a verdict's message names: the longest measured variant it starts
    /// with (`ck_gemm` -> `ck`), or `None`.
    pub(super) fn named_variant(prefix: &str, variants: &[Name]) -> Option<Name> {
        variants
            .iter()
            .filter(|v| names_variant(prefix, v))
            .max_by_key(|v| v.len())
            .copied()
    }

    pub(super) fn emit(&mut self, header_line: usize, layout: &Layout, rows: &[(usize, &[&str])]) {
        let demoted = measured_keys(layout, rows);
        let layout = demoted.as_ref().unwrap_or(layout);
        let columns = &layout.columns;
        let title = self
            .pending_title
            .take()
            .unwrap_or_else(|| UNTITLED.to_string());
        let calls = std::mem::take(&mut self.calls);
        let verdicts = std::mem::take(&mut self.verdicts);
        let measured: Vec<Name> = columns
            .iter()
            .filter_map(|c| match c {
                Role::Value(t) if t.measured => Some(t.variant),
                _ => None,
            })
            .collect();
        let (named, unattributed_fail) = self.attribute(&verdicts, &measured);
        // The verdicts of one variant, in order: one per row when the counts agree.
        let verdicts_of = |variant: Name| -> Vec<Numerics> {
            named
                .iter()
                .filter(|(v, _)| *v == variant)
                .map(|(_, n)| *n)
                .collect()
        };
        let numerics_for = |mine: &[Numerics], row: usize| -> Numerics {
            if mine.is_empty() {
                Numerics::NotChecked
            } else if mine.len() == rows.len() {
                mine[row]
            } else {
                // Cannot tell which row a verdict belongs to: the worst one applies to all.
                mine.iter().fold(Numerics::Pass, |a, b| a.worst(*b))
            }
        };
        let table: Name = title.as_str().into();
        // Per column: its template, for measurements its variant's verdicts, and
        // whether an unattributed failure applies to it.
        type Out = Option<(Template, Option<Vec<Numerics>>, bool, Option<Name>)>;
        let outs: Vec<Out> = columns
            .iter()
            .map(|c| match *c {
                Role::Key { .. } => None,
                Role::Value(t) => Some((
                    t,
                    t.measured.then(|| verdicts_of(t.variant)),
                    t.measured && unattributed_fail && !is_reference(&t.variant),
                    (&*t.metric == metric::UNCLASSIFIED).then(|| Name::new(UNCLASSIFIED_NOTE)),
                )),
            })
            .collect();
        for (t, ..) in outs.iter().flatten() {
            self.warn_unclassified(t, header_line);
        }
        // Key cells in canonical order (by name): the same cells printed in another
        // column order give the same key.
        let (key_cols, key_order) = (&layout.key_cols, layout.key_order);
        let start = self.out.len();
        self.out
            .reserve(rows.len() * outs.iter().filter(|o| o.is_some()).count());
        for (r, (no, cells)) in rows.iter().enumerate() {
            let key = row_key(&mut self.keys, key_cols, cells);
            for (o, raw) in outs.iter().zip(cells.iter()) {
                let Some((t, checks, escalated, column_note)) = o else {
                    continue;
                };
                let (value, raw) = cell_value(&mut self.keys, t, raw);
                let (numerics, note) = if *escalated {
                    (Numerics::Fail, Some(Name::new(UNATTRIBUTED)))
                } else {
                    let n = match checks {
                        Some(mine) => numerics_for(mine, r),
                        None => Numerics::NotChecked,
                    };
                    (n, *column_note)
                };
                self.out.push(Measurement {
                    table,
                    variant: t.variant,
                    key,
                    key_order,
                    metric: t.metric,
                    unit: t.unit,
                    direction: t.direction,
                    value,
                    raw,
                    column: t.column,
                    numerics,
                    line: *no as u32,
                    note,
                });
            }
        }
        self.tables.push(TableSpan {
            title,
            values: start..self.out.len(),
            header_line,
            calls,
        });
    }

    /// Each verdict to the variant of `measured` its message names; a failure naming a
    /// known variant the table does not measure fails the run. Also whether a failure
    /// named none (it fails every variant but the reference).
    fn attribute(
        &mut self,
        verdicts: &[(String, Numerics, usize)],
        measured: &[Name],
    ) -> (Vec<(Name, Numerics)>, bool) {
        let mut named: Vec<(Name, Numerics)> = Vec::new();
        let mut unattributed_fail = false;
        for (prefix, verdict, line) in verdicts {
            match Self::named_variant(prefix, measured) {
                Some(v) => named.push((v, *verdict)),
                None if *verdict != Numerics::Fail => {}
                None if names_known_variant(prefix) => self
                    .run_failures
                    .push(absent_variant_failure(prefix, *line)),
                None => unattributed_fail = true,
            }
        }
        (named, unattributed_fail)
    }

    /// A column read as a number nothing classifies: warned of once a file.
    fn warn_unclassified(&mut self, t: &Template, header_line: usize) {
        if &*t.metric == metric::UNCLASSIFIED && self.reported.insert(t.column.to_string()) {
            self.warnings.push(Warning {
                line: header_line,
                reason: format!(
                    "column '{}': numeric, but no unit, no quantity word (latency, time, \
                     bw, throughput) and no known variant prefix; stored as metric '{}', \
                     not compared and not part of the row identity",
                    t.column,
                    metric::UNCLASSIFIED
                ),
            });
        }
    }
}

/// A row's key: its key cells in canonical order (by name), so the same cells printed in
/// another column order give the same key.
fn row_key(keys: &mut Keys, key_cols: &[(usize, Name)], cells: &[&str]) -> KeyId {
    let json = keys.text_mut();
    json.push('{');
    for (i, (c, prefix)) in key_cols.iter().enumerate() {
        if i > 0 {
            json.push(',');
        }
        json.push_str(prefix);
        let v = cells[*c];
        push_json_str(json, if is_missing_token(v) { "None" } else { v });
    }
    json.push('}');
    keys.finish()
}

/// A cell's value in its column's canonical unit, and its printed text (with the unit
/// the column's header gave, when converted).
fn cell_value(keys: &mut Keys, t: &Template, raw: &str) -> (Option<f64>, Raw) {
    let mut value = if t.unit_cells {
        cell_with_unit(raw).map(|(v, u)| crate::formats::support::units::to_canonical(v, u.factor))
    } else {
        parse_in(raw, &t.metric).ok().flatten()
    };
    let raw = if t.factor != 1.0 {
        value = value.map(|v| crate::formats::support::units::to_canonical(v, t.factor));
        keys.raw_joined(raw, &t.printed)
    } else {
        keys.raw(raw)
    };
    (value, raw)
}
