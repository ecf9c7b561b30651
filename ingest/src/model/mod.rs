//! The canonical data model: what every input format is turned into.
//!
//! A *run* is one benchmark process output (one file = one trial). A *measurement* is
//! one value of one run. The Arrow schema of both lives in [`crate::warehouse::schema`]; this module
//! holds the in-memory records the parsers produce: [`names`] (interned names), [`keys`]
//! (identity), [`kinds`] (the closed sets), [`records`] (what is parsed and stored),
//! [`SeriesKey`] (what names one series wherever one is read).

mod format;
mod keys;
mod kinds;
mod names;
mod records;
mod series;

pub use format::Format;
pub use keys::*;
pub use kinds::*;
pub use names::*;
pub use records::*;
pub use series::SeriesKey;

/// The variant of a value whose source names none (a `us` column with no variant
/// prefix, a harness with one implementation).
pub const DEFAULT_VARIANT: &str = "default";

/// The run tag that says how a run's values were measured (`nvbench:cold`,
/// `do_bench:median`, `tritonbench:p50`...): set by a format that tells, or by
/// `--method`. Series measured differently are never pooled or compared as one.
pub const METHOD_TAG: &str = "method";

#[cfg(test)]
mod tests {
    use super::keys::needs_escape;
    use super::*;

    #[test]
    fn tail_metrics_are_high_percentiles_and_maxima() {
        for t in [
            "latency_p99",
            "latency_p90",
            "ttft_p99",
            "p99.9",
            "latency_max",
            "itl_p95",
        ] {
            assert!(metric::is_tail(t), "{t}");
        }
        for m in [
            "latency",
            "latency_p50",
            "throughput",
            "latency_min",
            "p2p_bandwidth",
            "maxwell",
        ] {
            assert!(!metric::is_tail(m), "{m}");
        }
    }

    #[test]
    fn every_alert_status_reads_back() {
        for s in AlertStatus::ALL {
            assert_eq!(AlertStatus::parse(s.as_str()), Ok(s));
            assert_eq!(serde_json::to_string(&s).unwrap(), format!("\"{s}\""));
        }
        assert!(AlertStatus::parse("bogus")
            .unwrap_err()
            .contains("one of pending, active"));
    }

    #[test]
    fn escapes_are_found_at_every_place_of_a_word() {
        for len in 0..20 {
            let plain = "a".repeat(len);
            assert!(!needs_escape(plain.as_bytes()));
            for at in 0..len {
                for c in [b'"', b'\\', 0u8, 0x1f, b'\n'] {
                    let mut b = plain.clone().into_bytes();
                    b[at] = c;
                    assert!(needs_escape(&b), "{c} at {at} of {len}");
                }
                // Neighbours of the escaped bytes, and non-ASCII, need none.
                for c in [b' ', b'!', b'#', b'[', b']', 0x7f, 0x80, 0xff] {
                    let mut b = plain.clone().into_bytes();
                    b[at] = c;
                    assert!(!needs_escape(&b), "{c} at {at} of {len}");
                }
            }
        }
    }

    #[test]
    fn a_key_is_its_pairs_stably_sorted_by_name() {
        let p = |v: &[(&str, &str)]| -> Vec<(String, String)> {
            v.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        for pairs in [
            p(&[]),
            p(&[("N", "1")]),
            p(&[("n", "2"), ("dtype", "bf\"16"), ("M", "x\ny"), ("k", "1")]),
        ] {
            let mut sorted = pairs.clone();
            sorted.sort_by(|a, b| a.0.cmp(&b.0));
            let (key, order) = key_of(&pairs);
            assert_eq!(&*key, key_to_json(&sorted));
            assert_eq!(key_from_json(&key), sorted);
            assert_eq!(
                in_source_order(key_from_json(&key), &order)
                    .iter()
                    .map(|(k, _)| k.as_str())
                    .collect::<Vec<_>>(),
                pairs.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn printed_texts_read_back_as_written() {
        let all = "0123456789abcdefghijklmnopqrstuvwxyzé";
        let mut keys = Keys::default();
        let key = keys.push(r#"{"M":"1"}"#);
        let raws: Vec<Raw> = (0..=all.len())
            .filter(|&n| all.is_char_boundary(n))
            .map(|n| keys.raw(&all[..n]))
            .collect();
        for (r, n) in raws
            .iter()
            .zip((0..=all.len()).filter(|&n| all.is_char_boundary(n)))
        {
            assert_eq!(keys.printed(*r), &all[..n]);
        }
        // Keys and printed texts do not mix.
        assert_eq!(keys.get(key), r#"{"M":"1"}"#);
    }

    #[test]
    fn joined_raw_text_is_the_formatted_text() {
        for (a, b) in [
            ("1.5", "ms"),
            ("11.953308", "GB/s"),
            ("123456789012345678", "GB/s"),
            ("", "us"),
        ] {
            let mut keys = Keys::default();
            let r = keys.raw_joined(a, b);
            assert_eq!(keys.printed(r), format!("{a} {b}"));
        }
    }
}
