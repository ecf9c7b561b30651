//! URLs the pages write: percent-encoding, and the link that replays a comparison.

use perfdb_reports::compare::{JudgeArgs, Options};

/// Percent-encode everything but unreserved characters (RFC 3986).
pub fn url_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The inverse of `url_encode` (and `+` as a space, as forms send it); a `%` not
/// followed by two hex digits stays as it is.
pub fn url_decode(s: &str) -> String {
    let b = s.as_bytes();
    let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => match (
                b.get(i + 1).copied().and_then(hex),
                b.get(i + 2).copied().and_then(hex),
            ) {
                (Some(h), Some(l)) => {
                    out.push(h * 16 + l);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' => out.push(b' '),
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The `/compare` query that replays a comparison of `base` and `head` with exactly
/// `options`: every option given (so the server's `perfdb.toml` changes nothing), the
/// overrides as JSON.
pub fn replay_query(base: &str, head: &str, options: &Options) -> String {
    let judge = serde_urlencoded::to_string(JudgeArgs::replaying(options))
        .expect("the comparison options have a string form");
    let window = options
        .baseline_window
        .map(|n| format!("&baseline_window={n}"))
        .unwrap_or_default();
    format!(
        "base={}&head={}&{judge}{window}",
        url_encode(base),
        url_encode(head)
    )
}
