//! A value's identity: its key cells as canonical JSON (the names sorted), the order the
//! source printed them in, the per-parse key table, and the printed text of a value.

use super::names::Name;
use std::fmt;
use std::sync::Arc;

/// Identity cells shared by every value of one table row or record, as the canonical
/// JSON object text the warehouse stores: cells sorted by name (then value), so two
/// sources that print the same cells in another column order give the same key. The
/// source order is kept apart, per table, in a [`KeyOrder`]. Parsers encode a row's key once.
pub type Key = Arc<str>;

/// The names of a key's cells in the order the source printed them, as a JSON array
/// (`["M","N","K","dtype"]`): one per table or record layout, for display only.
pub type KeyOrder = Name;

/// The text of the key with no cells.
const EMPTY_KEY: &str = "{}";

/// Which of its parse's [`Keys`] a value's key is: copied with the value, never counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KeyId(u32);

/// The strings of one parse's values: its rows' keys and its values' printed texts
/// ([`Raw`], in a string of their own). Each key is a canonical key's JSON text (as
/// [`key_of`] writes it), all end to end in one string. A row's key is written here once, with no
/// allocation of its own, and each of the row's values holds its [`KeyId`]: a value no
/// longer clones (and later drops) a reference-counted key, which cost ~12 ns a value.
/// A key equal to the one written just before it is stored once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Keys {
    /// Each value's printed text ([`Raw`]), end to end.
    printed: String,
    text: String,
    /// Where each key ends in `text`; key `i` starts where key `i - 1` ends.
    ends: Vec<usize>,
    /// The key with no cells, once written.
    empty: Option<KeyId>,
}

impl Keys {
    /// The id of `json`, a canonical key text.
    pub fn push(&mut self, json: &str) -> KeyId {
        self.text.push_str(json);
        self.finish()
    }
    /// The id of the key with no cells (written once per parse).
    pub fn empty(&mut self) -> KeyId {
        match self.empty {
            Some(id) => id,
            None => {
                let id = self.push(EMPTY_KEY);
                *self.empty.insert(id)
            }
        }
    }
    /// The text the next key is written onto, piece by piece, before [`Keys::finish`]:
    /// write only after the current end.
    pub(crate) fn text_mut(&mut self) -> &mut String {
        &mut self.text
    }
    /// The id of the key written onto [`Keys::text_mut`] since the last one ended.
    pub(crate) fn finish(&mut self) -> KeyId {
        let end = self.ends.last().copied().unwrap_or(0);
        if let Some(last) = self.ends.len().checked_sub(1) {
            let start = if last == 0 { 0 } else { self.ends[last - 1] };
            if self.text[start..end] == self.text[end..] {
                self.text.truncate(end);
                return KeyId(last as u32);
            }
        }
        let id = u32::try_from(self.ends.len()).expect("fewer than 2^32 keys in one parse");
        self.ends.push(self.text.len());
        KeyId(id)
    }
    /// The text of key `id`.
    pub fn get(&self, id: KeyId) -> &str {
        let i = id.0 as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.text[start..self.ends[i]]
    }
    /// `s` as a value's printed text.
    #[inline]
    pub fn raw(&mut self, s: &str) -> Raw {
        let start = self.printed.len();
        self.printed.push_str(s);
        Raw::spanning(start, self.printed.len())
    }
    /// `a`, a space and `b` (`1.5 ms`: a value and the unit it was printed in) as a
    /// value's printed text.
    pub fn raw_joined(&mut self, a: &str, b: &str) -> Raw {
        let start = self.printed.len();
        self.printed.push_str(a);
        self.printed.push(' ');
        self.printed.push_str(b);
        Raw::spanning(start, self.printed.len())
    }
    /// The printed text of `raw`.
    #[inline]
    pub fn printed(&self, raw: Raw) -> &str {
        let start = raw.start as usize;
        &self.printed[start..start + raw.len as usize]
    }
    /// How many keys there are.
    pub fn len(&self) -> usize {
        self.ends.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
}

/// The order of a key with no cells.
pub fn empty_order() -> KeyOrder {
    Name::new("[]")
}

/// Encode pairs (in source order) as a canonical [`Key`] and their [`KeyOrder`].
pub fn key_of(pairs: &[(String, String)]) -> (Key, KeyOrder) {
    // By name only (a stable sort): the aiter parser orders a table's key columns the
    // same way. The pairs' places are sorted, not copies of the pairs.
    let mut by_name: Vec<usize> = (0..pairs.len()).collect();
    by_name.sort_by(|a, b| pairs[*a].0.cmp(&pairs[*b].0));
    let mut json = String::with_capacity(
        2 + pairs
            .iter()
            .map(|(k, v)| k.len() + v.len() + 6)
            .sum::<usize>(),
    );
    json.push('{');
    for (i, &p) in by_name.iter().enumerate() {
        if i > 0 {
            json.push(',');
        }
        push_json_str(&mut json, &pairs[p].0);
        json.push(':');
        push_json_str(&mut json, &pairs[p].1);
    }
    json.push('}');
    (json.into(), order_of(pairs.iter().map(|(k, _)| k.as_str())))
}

/// The [`KeyOrder`] of cells named `names`, in that order.
pub fn order_of<'a>(names: impl Iterator<Item = &'a str>) -> KeyOrder {
    let mut s = String::from("[");
    for (i, n) in names.enumerate() {
        if i > 0 {
            s.push(',');
        }
        push_json_str(&mut s, n);
    }
    s.push(']');
    Name::new(&s)
}

/// Put the cells of a canonical key back in source order (names `order` does not list
/// keep their canonical place, after the listed ones).
pub fn in_source_order(key: Vec<(String, String)>, order: &str) -> Vec<(String, String)> {
    let names: Vec<String> = serde_json::from_str(order).unwrap_or_default();
    if names.is_empty() {
        return key;
    }
    let mut key = key;
    key.sort_by_key(|(k, _)| names.iter().position(|n| n == k).unwrap_or(usize::MAX));
    key
}

/// Does `b` hold a `"`, a `\\` or a control character? Eight bytes at a time (every key
/// cell of every row is looked at): a byte is zero in `x` exactly when the word test
/// `(x - 0x01..) & !x & 0x80..` is non-zero, and below 0x20 exactly when
/// `(x - 0x20..) & !x & 0x80..` is.
#[inline]
pub(super) fn needs_escape(b: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let has_zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH != 0;
    let special = |x: u64| {
        has_zero(x ^ (ONES * u64::from(b'"')))
            || has_zero(x ^ (ONES * u64::from(b'\\')))
            || x.wrapping_sub(ONES * 0x20) & !x & HIGH != 0
    };
    let mut chunks = b.chunks_exact(8);
    if chunks.any(|c| special(u64::from_le_bytes(c.try_into().expect("eight bytes")))) {
        return true;
    }
    let r = chunks.remainder();
    if r.len() >= 4 {
        // Two overlapping four-byte loads cover 4 to 7 bytes.
        let lo = u32::from_le_bytes([r[0], r[1], r[2], r[3]]);
        let n = r.len();
        let hi = u32::from_le_bytes([r[n - 4], r[n - 3], r[n - 2], r[n - 1]]);
        return special(u64::from(lo) | u64::from(hi) << 32);
    }
    r.iter().any(|&c| c == b'"' || c == b'\\' || c < 0x20)
}

/// Append `s` as a JSON string literal.
pub fn push_json_str(out: &mut String, s: &str) {
    out.push('"');
    if !needs_escape(s.as_bytes()) {
        // Nothing to escape (nearly every cell): copy it whole.
        out.push_str(s);
        out.push('"');
        return;
    }
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                use std::fmt::Write;
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A value's text as printed: where it is in its parse's [`Keys`] (read it with
/// [`Keys::printed`] or [`Parsed::raw`]). Two words copied with the value: the text
/// itself is written once, end to end with the others, so a value needs no allocation,
/// no copy of its text of its own, and nothing to drop.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Raw {
    start: u32,
    len: u32,
}

impl Raw {
    fn spanning(start: usize, end: usize) -> Raw {
        let at = |n: usize| u32::try_from(n).expect("under 4 GiB of printed values in one parse");
        Raw {
            start: at(start),
            len: at(end - start),
        }
    }
}

/// Encode key pairs as a JSON object, keeping their order (serde_json's Map would sort).
pub fn key_to_json(key: &[(String, String)]) -> String {
    let mut s = String::with_capacity(16 * key.len() + 2);
    s.push('{');
    for (i, (k, v)) in key.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        push_json_str(&mut s, k);
        s.push(':');
        push_json_str(&mut s, v);
    }
    s.push('}');
    s
}

/// Decode a key written by [`key_to_json`], keeping order.
pub fn key_from_json(text: &str) -> Vec<(String, String)> {
    // serde_json with `preserve_order` is not enabled; parse pairs by hand via a
    // streaming visitor over the object.
    let v: Result<Vec<(String, String)>, _> = parse_ordered_object(text);
    v.unwrap_or_default()
}

fn parse_ordered_object(text: &str) -> Result<Vec<(String, String)>, serde_json::Error> {
    use serde::de::{Deserializer, MapAccess, Visitor};
    struct Ordered;
    impl<'de> Visitor<'de> for Ordered {
        type Value = Vec<(String, String)>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a JSON object of strings")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some((k, v)) = map.next_entry::<String, String>()? {
                out.push((k, v));
            }
            Ok(out)
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    de.deserialize_map(Ordered)
}

/// Human form of a key: `M=1 N=4096 K=4096`.
pub fn key_display(key: &[(String, String)]) -> String {
    key.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}
