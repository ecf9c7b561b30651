//! Matching rows across the two sides when their tables are not printed identically:
//! a key column one side prints and the other does not, and repeated tables that could
//! only be told apart by position.

use super::load::Value;
use perfdb_ingest::model::SeriesKey;
use perfdb_ingest::model::{key_from_json, key_of, Direction};
use std::collections::{BTreeMap, BTreeSet, HashMap};

type Rows = BTreeMap<SeriesKey, (Direction, Vec<Value>)>;

/// Key column names per table over all rows of one side.
fn key_columns(rows: &Rows) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut seen: BTreeSet<(&str, &str)> = BTreeSet::new();
    for id in rows.keys() {
        if !seen.insert((&id.table, &id.key)) {
            continue;
        }
        let names = out.entry(id.table.clone()).or_default();
        names.extend(key_from_json(&id.key).into_iter().map(|(k, _)| k));
    }
    out
}

/// The row id with its key cut down to `common` columns.
fn project(id: &SeriesKey, common: &BTreeSet<String>) -> SeriesKey {
    let cells: Vec<(String, String)> = key_from_json(&id.key)
        .into_iter()
        .filter(|(k, _)| common.contains(k))
        .collect();
    SeriesKey {
        key: key_of(&cells).0.to_string(),
        ..id.clone()
    }
}

/// Does cutting every key of `table` down to `common` keep its rows apart?
fn projection_is_injective(rows: &Rows, table: &str, common: &BTreeSet<String>) -> bool {
    let mut seen: HashMap<SeriesKey, &str> = HashMap::new();
    rows.keys().filter(|id| id.table == table).all(|id| {
        let p = project(id, common);
        match seen.get(&p) {
            Some(original) => *original == id.key,
            None => {
                seen.insert(p, &id.key);
                true
            }
        }
    })
}

/// When one side prints a key column the other does not (an extra, unrelated column on
/// head), match the table's rows on the columns both print — but only when those still
/// tell every row of each side apart. Returns what was done, as warnings for the report.
pub(crate) fn reconcile_key_columns(base: &mut Rows, head: &mut Rows) -> Vec<String> {
    let (kb, kh) = (key_columns(base), key_columns(head));
    let mut warnings = Vec::new();
    for (table, names_b) in &kb {
        let Some(names_h) = kh.get(table) else {
            continue;
        };
        if names_b == names_h {
            continue;
        }
        let common: BTreeSet<String> = names_b.intersection(names_h).cloned().collect();
        let only = |a: &BTreeSet<String>, b: &BTreeSet<String>| -> Vec<String> {
            a.difference(b).cloned().collect()
        };
        let (only_b, only_h) = (only(names_b, names_h), only(names_h, names_b));
        let mut said = Vec::new();
        if !only_h.is_empty() {
            said.push(format!("{} only on head", only_h.join(", ")));
        }
        if !only_b.is_empty() {
            said.push(format!("{} only on base", only_b.join(", ")));
        }
        if !projection_is_injective(base, table, &common)
            || !projection_is_injective(head, table, &common)
        {
            warnings.push(format!(
                "table '{table}': key column(s) differ between the sides ({}), and the \
                 columns both print do not tell the rows apart: its rows are not matched",
                said.join("; ")
            ));
            continue;
        }
        for rows in [&mut *base, &mut *head] {
            let ids: Vec<SeriesKey> = rows
                .keys()
                .filter(|id| id.table == *table)
                .cloned()
                .collect();
            for id in ids {
                let v = rows.remove(&id).expect("id from the map");
                rows.insert(project(&id, &common), v);
            }
        }
        warnings.push(format!(
            "table '{table}': key column(s) differ between the sides ({}); rows are matched \
             on the columns both print ({})",
            said.join("; "),
            common.iter().cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    warnings
}

/// A repeated table that ingest could only tell apart by position (`title`, `title#2`,
/// ...), printed a different number of times on the two sides: its copies cannot be paired.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Positional {
    pub title: String,
    pub base: usize,
    pub head: usize,
}

impl Positional {
    pub fn covers(&self, table: &str) -> bool {
        table == self.title || split_position(table).is_some_and(|(t, _)| t == self.title)
    }
    pub fn warning(&self) -> String {
        format!(
            "table '{}' is printed {} time(s) on base and {} on head with nothing but the \
             position to tell the copies apart: its rows cannot be paired",
            self.title, self.base, self.head
        )
    }
    pub fn row_reason(&self) -> String {
        format!(
            "table printed {} time(s) on base, {} on head; copies matched only by position",
            self.base, self.head
        )
    }
}

/// `gemm#3` -> (`gemm`, 3).
fn split_position(table: &str) -> Option<(&str, usize)> {
    let (title, n) = table.rsplit_once('#')?;
    let n: usize = n.parse().ok()?;
    (n >= 2 && !title.is_empty()).then_some((title, n))
}

/// Titles named by position whose number of copies differs between the sides.
pub(crate) fn positional_mismatches(base: &Rows, head: &Rows) -> Vec<Positional> {
    let copies = |rows: &Rows| -> BTreeMap<String, BTreeSet<usize>> {
        let tables: BTreeSet<&str> = rows.keys().map(|id| id.table.as_str()).collect();
        let mut out: BTreeMap<String, BTreeSet<usize>> = BTreeMap::new();
        for t in &tables {
            if let Some((title, n)) = split_position(t) {
                out.entry(title.to_string()).or_default().insert(n);
            }
        }
        for (title, ns) in out.iter_mut() {
            if tables.contains(title.as_str()) {
                ns.insert(1);
            }
        }
        out
    };
    let (cb, ch) = (copies(base), copies(head));
    let titles: BTreeSet<&String> = cb.keys().chain(ch.keys()).collect();
    titles
        .into_iter()
        .filter_map(|t| {
            let count = |c: &BTreeMap<String, BTreeSet<usize>>, rows: &Rows| {
                c.get(t)
                    .map(BTreeSet::len)
                    .unwrap_or_else(|| usize::from(rows.keys().any(|id| &id.table == t)))
            };
            let (nb, nh) = (count(&cb, base), count(&ch, head));
            (nb != nh).then(|| Positional {
                title: t.clone(),
                base: nb,
                head: nh,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfdb_ingest::model::Numerics;

    fn rows(items: &[(&str, &[(&str, &str)])]) -> Rows {
        items
            .iter()
            .map(|(table, key)| {
                let cells: Vec<(String, String)> = key
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect();
                let id = SeriesKey {
                    table: table.to_string(),
                    variant: "triton".to_string(),
                    key: key_of(&cells).0.to_string(),
                    metric: "latency".to_string(),
                    unit: "us".to_string(),
                };
                let v = Value {
                    value: Some(1.0),
                    numerics: Numerics::NotChecked,
                    gpu: None,
                };
                (id, (Direction::Lower, vec![v]))
            })
            .collect()
    }

    #[test]
    fn an_extra_column_on_one_side_is_matched_away_when_rows_stay_apart() {
        let mut b = rows(&[("gemm", &[("M", "1")]), ("gemm", &[("M", "2")])]);
        let mut h = rows(&[
            ("gemm", &[("M", "1"), ("host", "ci-3")]),
            ("gemm", &[("M", "2"), ("host", "ci-3")]),
        ]);
        let w = reconcile_key_columns(&mut b, &mut h);
        assert_eq!(b.keys().collect::<Vec<_>>(), h.keys().collect::<Vec<_>>());
        assert!(w[0].contains("host only on head"), "{w:?}");
    }

    #[test]
    fn an_extra_column_that_splits_rows_is_not_matched_away() {
        let mut b = rows(&[("gemm", &[("M", "1")])]);
        let mut h = rows(&[
            ("gemm", &[("M", "1"), ("bias", "True")]),
            ("gemm", &[("M", "1"), ("bias", "False")]),
        ]);
        let w = reconcile_key_columns(&mut b, &mut h);
        assert_eq!(h.len(), 2);
        assert!(w[0].contains("not matched"), "{w:?}");
    }

    #[test]
    fn positional_copies_in_different_numbers_are_flagged() {
        let b = rows(&[
            ("gemm", &[]),
            ("gemm#2", &[]),
            ("gemm#3", &[]),
            ("mha", &[]),
        ]);
        let h = rows(&[("gemm", &[]), ("gemm#2", &[]), ("mha", &[])]);
        let m = positional_mismatches(&b, &h);
        assert_eq!(
            m,
            vec![Positional {
                title: "gemm".into(),
                base: 3,
                head: 2
            }]
        );
        assert!(m[0].covers("gemm#2") && m[0].covers("gemm") && !m[0].covers("mha"));
        assert!(positional_mismatches(&b, &b).is_empty());
    }
}
