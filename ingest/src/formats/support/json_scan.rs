//! A fast reader for the JSON the benchmark formats print: an object's fields as
//! [`Fields`] (keys borrowed, values as their raw text), checked to be JSON as strictly
//! as serde_json checks it, in one pass over the bytes with no visitor or `RawValue`
//! machinery per field (serde_json's path was 40-50% of google-benchmark's and the
//! serving results' parses).
//!
//! It never decides anything serde_json would decide otherwise: whatever it does not
//! read on its own (a `\u` escape, nesting deeper than [`MAX_DEPTH`], any text that is not
//! JSON) it gives up on with [`Unread`], and the caller reads the text with serde_json
//! instead, which gives the same fields or the error to report (with its line). A test
//! holds the two readers to the same answer on every case they share.

use crate::formats::support::json::{Fields, Str};
use std::borrow::Cow;

/// The fast reader gave up: read the text with serde_json for the fields or the error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Unread;

/// Nesting deeper than this is left to serde_json (whose own limit is 128).
pub(crate) const MAX_DEPTH: usize = 100;

type Scan<T> = Result<T, Unread>;

/// The fields of `text`, one JSON object with only whitespace around it.
pub(crate) fn object(text: &str) -> Scan<Fields<'_>> {
    whole(text, |r| r.object(0))
}

/// The fields of `text`, one JSON object, and of each object in its first field named
/// `name` when that field is an array of objects (read in the same pass: google-benchmark's
/// `benchmarks`); `None` when there is no such field.
pub(crate) fn object_and_items<'a>(
    text: &'a str,
    name: &str,
) -> Scan<(Fields<'a>, Option<Vec<Fields<'a>>>)> {
    whole(text, |r| {
        let (mut items, mut seen) = (None, false);
        let fields = r.object_with(0, |r, key| {
            // The first field of that name only, as `Fields::get` finds it.
            if !seen && key == name {
                seen = true;
                if r.peek() == Some(b'[') {
                    items = Some(r.objects(1)?);
                    return Ok(true);
                }
            }
            Ok(false)
        })?;
        Ok((fields, items))
    })
}

/// The fields of each object in `array`, the raw text of a JSON array whose items are
/// all objects.
/// The fields of `text`, one JSON object: read by the fast reader, else (where it gives
/// up) by serde_json, which gives the same fields or the error with its line.
pub(crate) fn fields(text: &str) -> Result<Fields<'_>, serde_json::Error> {
    crate::formats::support::json_scan::object(text).or_else(|_| serde_json::from_str(text))
}

#[cfg(test)]
fn objects(array: &str) -> Scan<Vec<Fields<'_>>> {
    whole(array, |r| r.objects(0))
}

/// What `read` reads from the start of `text`, with only whitespace around it.
fn whole<'a, T>(text: &'a str, read: impl FnOnce(&mut Reader<'a>) -> Scan<T>) -> Scan<T> {
    let mut r = Reader { text, at: 0 };
    r.ws();
    let out = read(&mut r)?;
    r.ws();
    if r.at != text.len() {
        return Err(Unread);
    }
    Ok(out)
}

struct Reader<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Reader<'a> {
    #[inline]
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }
    #[inline]
    fn next(&mut self) -> Scan<u8> {
        let c = self.peek().ok_or(Unread)?;
        self.at += 1;
        Ok(c)
    }
    #[inline]
    fn eat(&mut self, c: u8) -> Scan<()> {
        if self.next()? == c {
            Ok(())
        } else {
            Err(Unread)
        }
    }
    /// JSON's whitespace: space, tab, line feed, carriage return.
    #[inline]
    fn ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.peek() {
            self.at += 1;
        }
    }
    /// The object at the cursor (`{` next), its values' raw text borrowed.
    fn object(&mut self, depth: usize) -> Scan<Fields<'a>> {
        self.object_with(depth, |_, _| Ok(false))
    }
    /// [`Reader::object`], where `read(self, key)` may read a field's value itself (and
    /// says so with `true`) before it is skipped as any value.
    fn object_with(
        &mut self,
        depth: usize,
        mut read: impl FnMut(&mut Self, &str) -> Scan<bool>,
    ) -> Scan<Fields<'a>> {
        let mut fields = Vec::with_capacity(16);
        self.items(b'{', b'}', |r| {
            let key = r.string()?;
            r.ws();
            r.eat(b':')?;
            r.ws();
            let start = r.at;
            if !read(r, &key.0)? {
                r.value(depth + 1)?;
            }
            fields.push((key, &r.text[start..r.at]));
            Ok(())
        })?;
        Ok(Fields(fields))
    }
    /// The array at the cursor (`[` next), every item an object.
    fn objects(&mut self, depth: usize) -> Scan<Vec<Fields<'a>>> {
        let mut out = Vec::new();
        self.items(b'[', b']', |r| {
            out.push(r.object(depth + 1)?);
            Ok(())
        })?;
        Ok(out)
    }
    /// Past an object, its fields not kept.
    fn skip_object(&mut self, depth: usize) -> Scan<()> {
        self.items(b'{', b'}', |r| {
            r.string()?;
            r.ws();
            r.eat(b':')?;
            r.ws();
            r.value(depth + 1)
        })
    }
    /// Past the `open`...`close` at the cursor (an object or an array), `item` reading
    /// each of its comma-separated items (the cursor at the item's first byte).
    #[inline(always)]
    fn items(
        &mut self,
        open: u8,
        close: u8,
        mut item: impl FnMut(&mut Self) -> Scan<()>,
    ) -> Scan<()> {
        self.eat(open)?;
        self.ws();
        if self.peek() == Some(close) {
            self.at += 1;
            return Ok(());
        }
        loop {
            self.ws();
            item(self)?;
            self.ws();
            match self.next()? {
                b',' => continue,
                c if c == close => return Ok(()),
                _ => return Err(Unread),
            }
        }
    }
    /// Past one value of any kind (checked), the cursor at its first byte.
    fn value(&mut self, depth: usize) -> Scan<()> {
        if depth > MAX_DEPTH {
            return Err(Unread);
        }
        match self.peek().ok_or(Unread)? {
            b'"' => self.string().map(drop),
            b'{' => self.skip_object(depth),
            b'[' => self.items(b'[', b']', |r| r.value(depth + 1)),
            b't' => self.word(b"true"),
            b'f' => self.word(b"false"),
            b'n' => self.word(b"null"),
            b'-' | b'0'..=b'9' => self.number(),
            _ => Err(Unread),
        }
    }
    fn word(&mut self, w: &[u8]) -> Scan<()> {
        if self.text.as_bytes()[self.at..].starts_with(w) {
            self.at += w.len();
            Ok(())
        } else {
            Err(Unread)
        }
    }
    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, as RFC 8259 and serde_json
    /// read a number.
    fn number(&mut self) -> Scan<()> {
        let b = self.text.as_bytes();
        let digits = |at: &mut usize| {
            let from = *at;
            while b.get(*at).is_some_and(u8::is_ascii_digit) {
                *at += 1;
            }
            *at > from
        };
        let mut at = self.at;
        if b.get(at) == Some(&b'-') {
            at += 1;
        }
        match b.get(at) {
            Some(b'0') => at += 1,
            Some(b'1'..=b'9') => {
                digits(&mut at);
            }
            _ => return Err(Unread),
        }
        if b.get(at) == Some(&b'.') {
            at += 1;
            if !digits(&mut at) {
                return Err(Unread);
            }
        }
        if let Some(b'e' | b'E') = b.get(at) {
            at += 1;
            if let Some(b'+' | b'-') = b.get(at) {
                at += 1;
            }
            if !digits(&mut at) {
                return Err(Unread);
            }
        }
        self.at = at;
        Ok(())
    }
    /// The string at the cursor (`"` next): borrowed when it has no escape, unescaped
    /// when its escapes are the one-letter ones; a `\u` escape or a control character
    /// gives up.
    fn string(&mut self) -> Scan<Str<'a>> {
        self.eat(b'"')?;
        let b = self.text.as_bytes();
        let start = self.at;
        let mut at = start;
        // Eight bytes at a time to the first quote, backslash or control character (the
        // closing quote, in nearly every key and name).
        while let Some(w) = b.get(at..at + 8) {
            let m = special(crate::formats::support::text::le_word(w));
            if m != 0 {
                at += (m.trailing_zeros() / 8) as usize;
                break;
            }
            at += 8;
        }
        loop {
            match *b.get(at).ok_or(Unread)? {
                b'"' => {
                    self.at = at + 1;
                    return Ok(Str(Cow::Borrowed(&self.text[start..at])));
                }
                b'\\' => break,
                c if c < 0x20 => return Err(Unread),
                _ => at += 1,
            }
        }
        // Escapes: unescaped into a string of its own.
        let mut out = String::from(&self.text[start..at]);
        loop {
            let from = at;
            while let Some(&c) = b.get(at) {
                if c == b'"' || c == b'\\' || c < 0x20 {
                    break;
                }
                at += 1;
            }
            out.push_str(&self.text[from..at]);
            match *b.get(at).ok_or(Unread)? {
                b'"' => {
                    self.at = at + 1;
                    return Ok(Str(Cow::Owned(out)));
                }
                b'\\' => {
                    out.push(match *b.get(at + 1).ok_or(Unread)? {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        _ => return Err(Unread),
                    });
                    at += 2;
                }
                _ => return Err(Unread),
            }
        }
    }
}

/// The bytes of the little-endian `word` that are a `"`, a `\` or below 0x20 (bit 7 of
/// each set, as [`crate::formats::support::text::byte_mask`] marks them).
#[inline]
fn special(word: u64) -> u64 {
    use crate::formats::support::text::byte_mask;
    // A byte is below 0x20 exactly when its top three bits are clear.
    byte_mask(word, b'"') | byte_mask(word, b'\\') | byte_mask(word & 0xe0e0_e0e0_e0e0_e0e0, 0)
}

/// Panics where the fast reader reads `text` otherwise than serde_json: it may give up
/// on a text serde_json reads, never read one serde_json refuses, nor read other fields
/// (the fuzz target `json_reader` and the tests below).
#[cfg(any(test, feature = "testing"))]
pub(crate) fn check_against_serde(text: &str) {
    if let Ok(fields) = object(text) {
        let theirs: Result<Fields, _> = serde_json::from_str(text);
        assert_eq!(Some(&fields), theirs.as_ref().ok(), "{text:?}");
    }
    if let Ok((fields, items)) = object_and_items(text, "benchmarks") {
        let theirs: Fields = serde_json::from_str(text).expect("serde_json reads it too");
        assert_eq!(fields, theirs, "{text:?}");
        if let Some(items) = items {
            let raw = fields
                .get("benchmarks")
                .expect("the field the items came from");
            let theirs: Vec<Fields> = serde_json::from_str(raw).expect("an array of objects");
            assert_eq!(items, theirs, "{text:?}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fields serde_json reads, or `None` where it refuses the text.
    fn serde(text: &str) -> Option<Fields<'_>> {
        serde_json::from_str(text).ok()
    }

    #[test]
    fn reads_what_serde_json_reads_and_gives_up_on_the_rest() {
        let cases = [
            r#"{}"#,
            r#" { "a" : 1 } "#,
            r#"{"b": 1.50, "a": "x\"y", "n": null, "o": {"k": [1, 2, {"z": []}]}, "s": "inf"}"#,
            r#"{"t": true, "f": false, "e": -0.5e-3, "E": 2E+10, "z": 0, "neg": -12}"#,
            r#"{"a": 1, "a": 2}"#,
            r#"{"k\n\t\\\/\b\f\r": "v"}"#,
            r#"{"u": "caf\u00e9"}"#,
            r#"{"long key of many words": "and a long value with no escape at all"}"#,
            "{\"é\": \"ü and more than eight bytes\"}",
            r#"{"arr": [], "obj": {}, "nested": [[[]]]}"#,
            // Refused by both.
            r#"{"a": 01}"#,
            r#"{"a": 1.}"#,
            r#"{"a": .5}"#,
            r#"{"a": -}"#,
            r#"{"a": 1e}"#,
            r#"{"a": +1}"#,
            r#"{"a": NaN}"#,
            r#"{"a": 1,}"#,
            r#"{"a": [1,]}"#,
            r#"{"a" 1}"#,
            r#"{a: 1}"#,
            r#"{"a": tru}"#,
            r#"{"a": "x\q"}"#,
            "{\"a\": \"tab\there\"}",
            r#"{"a": 1} x"#,
            r#"{"a": 1}{}"#,
            r#"[1, 2]"#,
            r#"{"a": "unterminated}"#,
            r#"{"a": 1"#,
            "",
            "   ",
        ];
        for text in cases {
            check_against_serde(text);
            match object(text) {
                Ok(fields) => assert_eq!(Some(fields), serde(text), "{text}"),
                // Gave up: fine only where serde_json refuses too, or for a `\u` escape.
                Err(Unread) => assert!(serde(text).is_none() || text.contains("\\u"), "{text}"),
            }
        }
        let deep = format!("{{\"a\": {}1{}}}", "[".repeat(150), "]".repeat(150));
        assert_eq!(object(&deep), Err(Unread));
        let ok = format!("{{\"a\": {}1{}}}", "[".repeat(50), "]".repeat(50));
        assert_eq!(object(&ok).ok(), serde(&ok));
    }

    #[test]
    fn an_array_of_objects_is_read_object_by_object() {
        let text = r#" [ {"a": 1}, {"b": [2], "c": "x"} ] "#;
        let want: Vec<Fields> = serde_json::from_str(text).unwrap();
        assert_eq!(objects(text).unwrap(), want);
        assert_eq!(objects("[]").unwrap(), Vec::<Fields>::new());
        assert_eq!(objects("[1]"), Err(Unread));
        assert_eq!(objects("[{},]"), Err(Unread));
    }

    #[test]
    fn special_bytes_are_found_in_every_place() {
        for v in 0..=255u8 {
            for at in 0..8 {
                let mut w = [b'a'; 8];
                w[at] = v;
                let want = u64::from(v == b'"' || v == b'\\' || v < 0x20) << (8 * at + 7);
                assert_eq!(special(u64::from_le_bytes(w)), want, "{v} at {at}");
            }
        }
    }
}
