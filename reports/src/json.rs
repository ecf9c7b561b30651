//! The one JSON writer of every `--format json` and JSON-lines output: serde's encoding,
//! then every character a reader or a terminal could trip on written as a `\uXXXX` escape,
//! so the text is plain ASCII-safe JSON that any parser reads and the terminal pass
//! (`fmt::visible`) finds nothing to change in it.
//!
//! serde escapes C0 controls and quotes; it leaves C1 controls (U+0080..U+009F, `\u{9b}`
//! is a terminal's CSI), the line and paragraph separators (U+2028/9, line breaks to
//! JavaScript) and the bidirectional controls (which reorder what a reader sees) raw.
//! Outside strings serde prints only ASCII, so escaping these wherever they stand is
//! escaping them inside strings.

use serde::Serialize;
use std::borrow::Cow;

/// `value` as indented JSON and a final newline (a report on standard output).
pub fn pretty<T: Serialize + ?Sized>(value: &T) -> String {
    let text = serde_json::to_string_pretty(value).expect("perfdb's records serialise");
    escaped(text) + "\n"
}

/// `value` as one line of JSON, no newline (a JSON-lines record, a stored field).
pub fn line<T: Serialize + ?Sized>(value: &T) -> String {
    escaped(serde_json::to_string(value).expect("perfdb's records serialise"))
}

/// JSON text written by another encoder (arrow's JSON lines) made as safe as [`pretty`]'s.
pub fn escaped(text: String) -> String {
    match escape(&text) {
        Cow::Borrowed(_) => text,
        Cow::Owned(s) => s,
    }
}

/// Whether JSON writes `c` as an escape: every control but the newline between values
/// (inside strings serde has already escaped newlines), the separators and the bidi
/// controls.
fn needs_escape(c: char) -> bool {
    (c.is_control() && c != '\n')
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{061c}' | '\u{200e}' | '\u{200f}'
        )
        || ('\u{202a}'..='\u{202e}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if needs_escape(c) {
            // Every such character is in the Basic Multilingual Plane: one escape each.
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn c1_controls_and_separators_are_escaped_and_read_back() {
        let name = "k\u{9b}2J\u{85}\u{2028}\u{202e}evil\u{7f}\u{1b}[31m";
        let text = pretty(&serde_json::json!({ "kernel": name }));
        assert!(text.is_ascii(), "{text}");
        assert_eq!(crate::fmt::visible(&text, false), text);
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back["kernel"], name);
        insta::assert_snapshot!(line(&name), @r#""k\u009b2J\u0085\u2028\u202eevil\u007f\u001b[31m""#);
    }

    proptest! {
        /// Any Unicode scalar in any string, key or value, reads back as itself, and the
        /// terminal pass leaves the JSON as it is.
        #[test]
        fn any_text_round_trips(key in "\\PC*|[\\x00-\\x{ffff}]{0,8}", value in any::<String>()) {
            let v = serde_json::json!({ key.clone(): [value.clone()] });
            for text in [pretty(&v), line(&v)] {
                prop_assert_eq!(&*crate::fmt::visible(&text, false), &*text);
                let back: serde_json::Value = serde_json::from_str(&text).unwrap();
                prop_assert_eq!(&back[&key][0], &serde_json::Value::String(value.clone()));
            }
        }
    }
}
