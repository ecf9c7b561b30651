//! Numbers and text as a person reads them, defined once: significant figures, a signed
//! percent of a change and of a ratio, a duration, names sorted as people sort them, and
//! text read from outside made safe for a terminal. A leaf: it imports nothing of this
//! crate.

use std::borrow::Cow;
use std::cmp::Ordering;

/// Significant-figure formatting for values: 4 significant digits, no exponent for
/// ordinary magnitudes.
pub fn num(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let mag = v.abs().log10().floor() as i32;
    if !(-4..6).contains(&mag) {
        return format!("{v:.3e}");
    }
    let decimals = (3 - mag).max(0) as usize;
    format!("{v:.decimals$}")
}

/// A level as a person reads it: four significant digits, at most six decimals, never
/// an exponent (the control's tolerance band).
pub fn four_figures(x: f64) -> String {
    let digits = (3 - x.abs().log10().floor() as i32).clamp(0, 6) as usize;
    format!("{x:.digits$}")
}

/// Compare two strings with digit runs compared as numbers: `M=16` < `M=128`.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (mut a, mut b) = (a.as_bytes(), b.as_bytes());
    loop {
        match (a.first(), b.first()) {
            (None, None) => return Ordering::Equal,
            (None, _) => return Ordering::Less,
            (_, None) => return Ordering::Greater,
            (Some(x), Some(y)) if x.is_ascii_digit() && y.is_ascii_digit() => {
                let la = a.iter().take_while(|c| c.is_ascii_digit()).count();
                let lb = b.iter().take_while(|c| c.is_ascii_digit()).count();
                let na: u128 = std::str::from_utf8(&a[..la])
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0);
                let nb: u128 = std::str::from_utf8(&b[..lb])
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0);
                match na.cmp(&nb) {
                    Ordering::Equal => {
                        a = &a[la..];
                        b = &b[lb..];
                    }
                    o => return o,
                }
            }
            (Some(x), Some(y)) => match x.cmp(y) {
                Ordering::Equal => {
                    a = &a[1..];
                    b = &b[1..];
                }
                o => return o,
            },
        }
    }
}

/// `+12.3%` of a relative change (0.123).
pub fn signed_pct(change: f64) -> String {
    format!("{:+.1}%", change * 100.0)
}

/// `+12.3%` of a ratio (1.123).
pub fn ratio_pct(ratio: f64) -> String {
    signed_pct(ratio - 1.0)
}

/// Seconds as a person reads a duration: `45s`, `12m05s`, `2.5h`.
pub fn human_seconds(secs: f64) -> String {
    if secs < 90.0 {
        format!("{secs:.0}s")
    } else if secs < 5400.0 {
        format!("{:.0}m{:02.0}s", (secs / 60.0).floor(), secs % 60.0)
    } else {
        format!("{:.1}h", secs / 3600.0)
    }
}

/// Text as it may reach a terminal or a CI log, when parts of it were read from outside
/// perfdb (a commit subject, a file's names and cells, a webhook's reply): every control
/// character but newline and tab is shown escaped (`\u{1b}`), so nothing read from
/// outside moves the cursor, clears the screen or retitles the window. With `keep_sgr`
/// (perfdb is colouring its own output), colour sequences (`ESC [ digits ; ... m`) pass:
/// they change colours and nothing else. JSON needs none of this: [`crate::json`] writes
/// every control character as a `\uXXXX` escape, so the text passes unchanged.
pub fn visible(text: &str, keep_sgr: bool) -> Cow<'_, str> {
    let is_control = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if keep_sgr && c == '\x1b' {
            if let Some(n) = sgr_len(rest) {
                out.push_str(&rest[..n]);
                rest = &rest[n..];
                continue;
            }
        }
        if is_control(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    Cow::Owned(out)
}

/// The length of the colour sequence `ESC [ <digits and ;> m` at the start of `s`.
fn sgr_len(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    if !b.starts_with(b"\x1b[") {
        return None;
    }
    let end = b[2..]
        .iter()
        .position(|c| !(c.is_ascii_digit() || *c == b';'))?
        + 2;
    (b[end] == b'm').then_some(end + 1)
}

/// `text` cut to at most `max` characters, `…` marking the cut (a C++ kernel name runs
/// to hundreds).
pub fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut s: String = text.chars().take(max.saturating_sub(1)).collect();
    s.push('…');
    s
}

/// How a report is printed (`--format` of `alerts`, `detect`, `noise` and `bisect`): a
/// table for the terminal, JSON for a program, markdown for a pull request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    Table,
    Json,
    Markdown,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_from_outside_cannot_drive_the_terminal() {
        let subject = "fix\x1b]0;owned\x07 and \x1b[2J done\r";
        assert_eq!(
            visible(subject, false),
            "fix\\u{1b}]0;owned\\u{7} and \\u{1b}[2J done\\r"
        );
        assert_eq!(visible("a\tb\nc", false), "a\tb\nc");
        assert!(matches!(visible("plain", false), Cow::Borrowed(_)));
        // perfdb's own colours pass when it colours; a clear-screen never does.
        assert_eq!(
            visible("\x1b[31;1mREGRESSION\x1b[0m \x1b[2J", true),
            "\x1b[31;1mREGRESSION\x1b[0m \\u{1b}[2J"
        );
        assert_eq!(visible("\x1b[31m", false), "\\u{1b}[31m");
        assert_eq!(visible("c1 \u{9b}2J", false), "c1 \\u{9b}2J");
    }

    #[test]
    fn percents_are_signed_with_one_decimal() {
        assert_eq!(signed_pct(0.1234), "+12.3%");
        assert_eq!(signed_pct(-0.05), "-5.0%");
        assert_eq!(ratio_pct(0.9), "-10.0%");
    }

    #[test]
    fn durations_read_in_seconds_minutes_or_hours() {
        assert_eq!(human_seconds(45.2), "45s");
        assert_eq!(human_seconds(725.0), "12m05s");
        assert_eq!(human_seconds(9000.0), "2.5h");
    }
}
