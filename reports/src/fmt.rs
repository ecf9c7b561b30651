//! Numbers as a person reads them, defined once: a signed percent of a change and of a
//! ratio, and a duration. A leaf: it imports nothing of this crate.

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

#[cfg(test)]
mod tests {
    use super::*;

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
