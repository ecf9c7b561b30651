//! Reading JSON benchmark outputs without building a `serde_json::Value` tree: an
//! object is read as its fields in source order, each key borrowed from the text and
//! each value kept as its raw text (`&RawValue`), so a number is parsed once, by the
//! parser that wants it, and `raw` keeps it exactly as printed. Nested objects and
//! arrays nobody asks for are skipped, not built.

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

/// A string borrowed from the text when it has no escapes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Str<'a>(pub Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Str<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Str<'a>, E> {
                Ok(Str(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Str<'a>, E> {
                Ok(Str(Cow::Owned(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> Result<Str<'a>, E> {
                Ok(Str(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V(std::marker::PhantomData))
    }
}

/// A JSON object's fields in source order: keys borrowed, each value as its raw JSON
/// text (checked to be one JSON value, by [`crate::formats::support::json_scan`] or serde_json).
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Fields<'a>(pub Vec<(Str<'a>, &'a str)>);

impl<'de: 'a, 'a> Deserialize<'de> for Fields<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Fields<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fields<'a>, A::Error> {
                let mut out = Vec::with_capacity(map.size_hint().unwrap_or(16));
                while let Some(k) = map.next_key::<Str<'a>>()? {
                    out.push((k, map.next_value::<&'a RawValue>()?.get()));
                }
                Ok(Fields(out))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

/// `text` with Python's non-standard number tokens (`json.dumps` writes `float("inf")`
/// as `Infinity` and `float("nan")` as `NaN`, which no JSON parser reads) as the strings
/// the formats already read as missing values: `NaN` -> `"nan"`, `Infinity` -> `"inf"`,
/// `-Infinity` -> `"-inf"`. Only tokens where a value starts are replaced (strings are
/// left alone) and no line break moves, so errors still name the right line. Borrowed
/// when the text has none.
pub(crate) fn python_tokens(text: &str) -> Cow<'_, str> {
    let b = text.as_bytes();
    if !crate::formats::support::text::has(text, "NaN")
        && !crate::formats::support::text::has(text, "Infinity")
    {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let (mut i, mut copied, mut in_string) = (0, 0, false);
    // The last byte outside strings and spaces: a value starts after `:`, `[`, `,`.
    let mut before = b'\0';
    while i < b.len() {
        let c = b[i];
        if in_string {
            match c {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        let at_value = matches!(before, b':' | b'[' | b',' | b'\0');
        let token = [
            ("-Infinity", "\"-inf\""),
            ("Infinity", "\"inf\""),
            ("NaN", "\"nan\""),
        ]
        .into_iter()
        .find(|(t, _)| at_value && b[i..].starts_with(t.as_bytes()));
        if let Some((t, with)) = token {
            out.push_str(&text[copied..i]);
            out.push_str(with);
            i += t.len();
            copied = i;
            before = b'"';
            continue;
        }
        if c == b'"' {
            in_string = true;
        }
        if !c.is_ascii_whitespace() {
            before = c;
        }
        i += 1;
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

impl<'a> Fields<'a> {
    /// The raw value of field `name`.
    pub fn get(&self, name: &str) -> Option<&'a str> {
        self.0.iter().find(|(k, _)| k.0 == name).map(|(_, v)| *v)
    }
    /// The string value of field `name` (`None` when absent or not a string).
    pub fn str(&self, name: &str) -> Option<Cow<'a, str>> {
        self.get(name).and_then(text)
    }
}

/// A field's raw value, whatever it is, `null` included (with `#[serde(default,
/// deserialize_with = "json::raw")]`; serde's `Option` alone reads `null` as absent).
pub(crate) fn raw<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de str>, D::Error> {
    <&'de RawValue>::deserialize(d).map(|r| Some(r.get()))
}

/// What a raw JSON value is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Scalar<'a> {
    /// A number, with its text.
    Number(f64, &'a str),
    Null,
    String(Cow<'a, str>),
    Bool(bool),
    /// An object or array.
    Nested,
}

pub(crate) fn scalar(t: &str) -> Scalar<'_> {
    match t.as_bytes().first() {
        Some(b'"') => Scalar::String(text(t).unwrap_or_default()),
        Some(b'n') => Scalar::Null,
        Some(b't') => Scalar::Bool(true),
        Some(b'f') => Scalar::Bool(false),
        Some(b'{' | b'[') => Scalar::Nested,
        // serde_json checked the number's syntax; it parses as f64 (maybe to infinity),
        // a plain decimal without the general parser.
        _ => Scalar::Number(
            crate::formats::support::text::plain_decimal(t.as_bytes())
                .unwrap_or_else(|| t.parse().unwrap_or(f64::NAN)),
            t,
        ),
    }
}

/// A raw value as a measurement: a finite number, or `None` for `null` and the missing
/// tokens (`"nan"`, `"inf"` as strings); `Err` with the value's text otherwise.
pub(crate) fn number(raw: &str) -> Result<Option<f64>, &str> {
    match scalar(raw) {
        Scalar::Number(v, _) => Ok(v.is_finite().then_some(v)),
        Scalar::Null => Ok(None),
        Scalar::String(s) => crate::formats::support::text::parse_value(&s).map_err(|_| raw),
        _ => Err(raw),
    }
}

/// The text of a string value; `None` for any other value.
pub(crate) fn text(t: &str) -> Option<Cow<'_, str>> {
    let inner = t.strip_prefix('"')?.strip_suffix('"')?;
    if !inner.contains('\\') {
        return Some(Cow::Borrowed(inner));
    }
    serde_json::from_str::<String>(t).ok().map(Cow::Owned)
}

/// A scalar as key text: strings bare, numbers as printed with integral floats
/// (`512.0`) as integers, `null` as `None`, anything else as its JSON.
pub(crate) fn key_text(raw: &str) -> Cow<'_, str> {
    match scalar(raw) {
        Scalar::String(s) => s,
        Scalar::Number(v, t) => {
            if t.contains(['.', 'e', 'E']) && v.fract() == 0.0 && v.abs() < 1e15 {
                Cow::Owned(format!("{}", v as i64))
            } else {
                Cow::Borrowed(t)
            }
        }
        Scalar::Null => Cow::Borrowed("None"),
        _ => Cow::Borrowed(raw),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_keep_order_and_text() {
        let f: Fields = serde_json::from_str(
            r#"{"b": 1.50, "a": "x\"y", "n": null, "o": {"k": [1, 2]}, "s": "inf", "i": 512.0}"#,
        )
        .unwrap();
        let keys: Vec<&str> = f.0.iter().map(|(k, _)| k.0.as_ref()).collect();
        assert_eq!(keys, ["b", "a", "n", "o", "s", "i"]);
        assert_eq!(number(f.get("b").unwrap()), Ok(Some(1.5)));
        assert_eq!(f.get("b").unwrap(), "1.50");
        assert_eq!(f.str("a").as_deref(), Some("x\"y"));
        assert_eq!(number(f.get("n").unwrap()), Ok(None));
        assert_eq!(number(f.get("s").unwrap()), Ok(None));
        assert!(number(f.get("o").unwrap()).is_err());
        assert_eq!(key_text(f.get("i").unwrap()), "512");
        assert_eq!(key_text(f.get("b").unwrap()), "1.50");
        assert_eq!(key_text(f.get("n").unwrap()), "None");
        assert_eq!(key_text(f.get("s").unwrap()), "inf");
        assert_eq!(key_text("0.5"), "0.5");
    }

    #[test]
    fn python_tokens_read_as_missing_values() {
        let t = "{\"request_rate\": Infinity, \"x\": [NaN, -Infinity],\n \"s\": \"NaN Infinity\"}";
        let clean = python_tokens(t);
        assert_eq!(
            clean,
            "{\"request_rate\": \"inf\", \"x\": [\"nan\", \"-inf\"],\n \"s\": \"NaN Infinity\"}"
        );
        let f = crate::formats::support::json_scan::fields(&clean).unwrap();
        assert_eq!(number(f.get("request_rate").unwrap()), Ok(None));
        assert_eq!(key_text(f.get("request_rate").unwrap()), "inf");
        assert_eq!(f.str("s").as_deref(), Some("NaN Infinity"));
        assert!(matches!(python_tokens("{\"a\": 1}"), Cow::Borrowed(_)));
        // Not where a value starts: left for the parser to refuse.
        assert_eq!(python_tokens("{\"a\": 1NaN}"), "{\"a\": 1NaN}");
    }
}
