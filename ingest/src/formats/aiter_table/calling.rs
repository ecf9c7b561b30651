//! `calling test_x(...)` blocks: their arguments, and how a table repeated under one
//! title is told apart by the arguments its blocks did not share; `checkAllclose`
//! verdicts.

use crate::formats::aiter_table::State;
use crate::formats::support::text::find_marker;
use crate::model::{key_from_json, key_of, order_of, KeyId, Name, Numerics, Warning};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

/// The text after `calling test_x(` on a line, if it starts such a block.
pub(super) fn calling_start(line: &str) -> Option<&str> {
    let rest = line.trim_ascii_start().strip_prefix("calling ")?;
    let open = rest.find('(')?;
    (!rest[..open].contains(char::is_whitespace)).then(|| &rest[open + 1..])
}

/// `calling test_gemm(M = 1,\n  N = 4096, ...)` (aiter's `log_args`, one argument a
/// line) starting at `all[start]`: the index after its last line. Nothing is copied.
pub(super) fn calling_block(all: &[(usize, Cow<str>)], start: usize) -> Option<usize> {
    let first = calling_start(&all[start].1)?;
    let mut end = start + 1;
    let mut depth = 1i32 + paren_balance(first);
    // At most a few dozen arguments; a block that never closes is not a call.
    while depth > 0 && end < all.len() && end - start < 256 {
        let l = all[end].1.as_ref();
        if l.trim_ascii_start().starts_with('[') || l.trim_ascii_start().starts_with('|') {
            break;
        }
        depth += paren_balance(l);
        end += 1;
    }
    Some(end)
}

/// The `name = value` arguments of the calling block `all[start..end]`.
pub(super) fn calling_args(
    all: &[(usize, Cow<str>)],
    (start, end): (usize, usize),
) -> Vec<(String, String)> {
    let mut text = calling_start(&all[start].1).unwrap_or("").to_string();
    for (_, l) in &all[start + 1..end] {
        text.push('\n');
        text.push_str(l);
    }
    let inner = match text.rfind(')') {
        Some(p) => &text[..p],
        None => text.as_str(),
    };
    let mut args = Vec::new();
    for piece in split_top_level(inner) {
        if let Some((k, v)) = piece.split_once('=') {
            let (k, v) = (k.trim(), crate::formats::support::text::collapse_ws(v));
            if !k.is_empty() && !k.contains(char::is_whitespace) {
                args.push((k.to_string(), v));
            }
        }
    }
    args
}

pub(super) fn paren_balance(s: &str) -> i32 {
    s.bytes()
        .map(|b| match b {
            b'(' | b'[' | b'{' => 1,
            b')' | b']' | b'}' => -1,
            _ => 0,
        })
        .sum()
}

/// Split at commas outside brackets: `a = (1, 2), b = 3` -> [`a = (1, 2)`, ` b = 3`].
pub(super) fn split_top_level(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut from) = (0i32, 0);
    for (i, b) in s.bytes().enumerate() {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b',' if depth == 0 => {
                out.push(&s[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[from..]);
    out
}

/// `triton: gemm[checkAllclose atol=.. passed~]` -> (`triton`, Pass).
pub(super) fn check_allclose(body: &str) -> Option<(String, Numerics)> {
    let p = find_marker(body, "[checkAllclose")?;
    let verdict = match crate::formats::support::perf_line::numerics_of_tail(&body[p..]) {
        Numerics::NotChecked => return None,
        v => v,
    };
    let head = body[..p].trim();
    let variant = head.split(':').next().unwrap_or("").trim();
    Some((variant.to_string(), verdict))
}

/// The arguments every call in `calls` passed with the same value.
pub(super) fn shared_args(calls: &[Vec<(String, String)>]) -> Vec<(String, String)> {
    let Some((first, rest)) = calls.split_first() else {
        return Vec::new();
    };
    first
        .iter()
        .filter(|(k, v)| {
            rest.iter()
                .all(|c| c.iter().any(|(k2, v2)| k2 == k && v2 == v))
        })
        .cloned()
        .collect()
}

impl State {
    /// Logs print one title per loop iteration (dtype, bias, layout). Copies share the
    /// title when their rows are told apart by their keys; else by the `calling`
    /// arguments that differ between them (added to the key); else, as a last resort,
    /// by position (`title#2`), which `compare` refuses to trust when the counts differ.
    pub(super) fn name_repeated_tables(&mut self, all: &[(usize, Cow<str>)]) {
        let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
        for (i, t) in self.tables.iter().enumerate() {
            match groups.iter_mut().find(|(title, _)| *title == t.title) {
                Some((_, g)) => g.push(i),
                None => groups.push((t.title.clone(), vec![i])),
            }
        }
        for (title, group) in groups.into_iter().filter(|(_, g)| g.len() > 1) {
            if self.rows_unique(&group, &[]) {
                continue;
            }
            let shared: Vec<Vec<(String, String)>> = group
                .iter()
                .map(|t| {
                    let calls: Vec<Vec<(String, String)>> = self.tables[*t]
                        .calls
                        .iter()
                        .map(|c| calling_args(all, *c))
                        .collect();
                    shared_args(&calls)
                })
                .collect();
            let extra = self.distinguishing_args(&group, &shared);
            if !extra.is_empty() && self.rows_unique(&group, &extra) {
                for (t, cells) in group.iter().zip(&extra) {
                    self.add_key_cells(*t, cells);
                }
                continue;
            }
            for (n, t) in group.iter().enumerate().skip(1) {
                let name = Name::new(&format!("{title}#{}", n + 1));
                let range = self.tables[*t].values.clone();
                for m in &mut self.out[range] {
                    m.table = name;
                }
            }
            let lines: Vec<String> = group
                .iter()
                .map(|t| self.tables[*t].header_line.to_string())
                .collect();
            self.warnings.push(Warning {
                line: self.tables[group[0]].header_line,
                reason: format!(
                    "table '{title}' is printed {} times (lines {}) with the same rows and \
                     nothing that tells the copies apart; they are named '{title}', \
                     '{title}#2', ... by position, and compare is inconclusive on them \
                     when the other side printed a different number",
                    group.len(),
                    lines.join(", ")
                ),
            });
        }
    }

    /// Are (variant, key, column) unique over the tables of `group`, with `extra[i]`
    /// added to the key of the i-th table?
    pub(super) fn rows_unique(&self, group: &[usize], extra: &[Vec<(String, String)>]) -> bool {
        // (variant, key, column, the cells added to the key)
        type RowIdentity<'a> = (Name, &'a str, Name, Option<&'a [(String, String)]>);
        let mut seen: HashSet<RowIdentity> = HashSet::new();
        group.iter().enumerate().all(|(i, t)| {
            let cells = extra.get(i).map(Vec::as_slice);
            self.out[self.tables[*t].values.clone()]
                .iter()
                .all(|m| seen.insert((m.variant, self.keys.get(m.key), m.column, cells)))
        })
    }

    /// The `calling` arguments every copy of a table shares within itself but that
    /// differ between copies, and are not already key columns: per table, the cells.
    /// `shared[i]` holds the arguments the calls before the i-th table of `group` share.
    pub(super) fn distinguishing_args(
        &self,
        group: &[usize],
        shared: &[Vec<(String, String)>],
    ) -> Vec<Vec<(String, String)>> {
        let first = &self.tables[group[0]];
        let key_names: Vec<String> = self.out[first.values.clone()]
            .first()
            .map(|m| {
                key_from_json(self.keys.get(m.key))
                    .into_iter()
                    .map(|(k, _)| k)
                    .collect()
            })
            .unwrap_or_default();
        let names: Vec<&String> = shared[0]
            .iter()
            .map(|(k, _)| k)
            .filter(|k| !key_names.contains(k))
            .filter(|k| {
                let values: Vec<Option<&String>> = shared
                    .iter()
                    .map(|args| args.iter().find(|(n, _)| n == *k).map(|(_, v)| v))
                    .collect();
                values.iter().all(Option::is_some) && values.iter().any(|v| *v != values[0])
            })
            .collect();
        if names.is_empty() {
            return Vec::new();
        }
        shared
            .iter()
            .map(|args| {
                names
                    .iter()
                    .filter_map(|n| args.iter().find(|(k, _)| k == *n).cloned())
                    .collect()
            })
            .collect()
    }

    pub(super) fn add_key_cells(&mut self, table: usize, cells: &[(String, String)]) {
        let range = self.tables[table].values.clone();
        let mut rekeyed: HashMap<KeyId, (KeyId, Name)> = HashMap::new();
        let keys = &mut self.keys;
        for m in &mut self.out[range] {
            let (key, order) = *rekeyed.entry(m.key).or_insert_with(|| {
                let mut pairs = key_from_json(keys.get(m.key));
                pairs.extend(cells.iter().cloned());
                let (key, _) = key_of(&pairs);
                let key = keys.push(&key);
                let names: Vec<String> = serde_json::from_str(&m.key_order).unwrap_or_default();
                let order = order_of(
                    names
                        .iter()
                        .map(String::as_str)
                        .chain(cells.iter().map(|(k, _)| k.as_str())),
                );
                (key, order)
            });
            m.key = key;
            m.key_order = order;
        }
    }
}
