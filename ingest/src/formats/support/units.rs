//! Units: every printed unit a format uses, the metric it measures, and the one
//! canonical unit each metric is stored in.
//!
//! A head that prints `ms` where base printed `us` must still compare row for row, so
//! values are stored in the canonical unit of their quantity (time in `us`, bandwidth in
//! `TB/s`, floating-point rate in `TFLOPS`) and the unit as printed stays in `raw`.
//! Rates of other things (`tokens/s`, `samples/s`, `ops/s`, `it/s`) have no common
//! scale and keep their own unit.

use crate::model::{metric, Direction};

/// What a printed unit measures and how to store it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Unit {
    pub metric: &'static str,
    /// The canonical unit values are stored in.
    pub canonical: &'static str,
    /// Multiply a printed value by this to get the canonical unit.
    pub factor: f64,
    pub direction: Direction,
}

const fn time(factor: f64) -> Unit {
    Unit {
        metric: metric::LATENCY,
        canonical: "us",
        factor,
        direction: Direction::Lower,
    }
}

const fn bandwidth(factor: f64) -> Unit {
    Unit {
        metric: metric::BANDWIDTH,
        canonical: "TB/s",
        factor,
        direction: Direction::Higher,
    }
}

const fn flops(factor: f64) -> Unit {
    Unit {
        metric: metric::THROUGHPUT,
        canonical: "TFLOPS",
        factor,
        direction: Direction::Higher,
    }
}

const fn rate(canonical: &'static str) -> Unit {
    Unit {
        metric: metric::THROUGHPUT,
        canonical,
        factor: 1.0,
        direction: Direction::Higher,
    }
}

const GIB: f64 = 1_073_741_824.0;

/// The unit a lower-cased word names, if it is one. `s` alone is not listed: as a
/// header word it is too often something else; [`seconds_word`] covers `time_s`.
pub fn unit_of(word: &str) -> Option<Unit> {
    Some(match word {
        "ns" | "nsec" | "ns/call" | "ns/iter" => time(1e-3),
        "us" | "µs" | "μs" | "usec" | "us/call" | "us/iter" => time(1.0),
        "ms" | "msec" | "ms/call" | "ms/iter" => time(1e3),
        "sec" | "secs" | "seconds" | "s/iter" | "s/call" => time(1e6),
        "b/s" | "bytes/s" => bandwidth(1e-12),
        "kb/s" => bandwidth(1e-9),
        "mb/s" | "mbps" => bandwidth(1e-6),
        "gb/s" | "gbps" => bandwidth(1e-3),
        "tb/s" | "tbps" => bandwidth(1.0),
        "mib/s" => bandwidth(1_048_576.0 / 1e12),
        "gib/s" => bandwidth(GIB / 1e12),
        "tib/s" => bandwidth(GIB * 1024.0 / 1e12),
        "gflops" | "gflop/s" => flops(1e-3),
        "tflops" | "tflop/s" => flops(1.0),
        "pflops" | "pflop/s" => flops(1e3),
        "tokens/s" | "tok/s" => rate("tokens/s"),
        "samples/s" => rate("samples/s"),
        "ops/s" => rate("ops/s"),
        "it/s" => rate("it/s"),
        "req/s" => rate("req/s"),
        _ => return None,
    })
}

/// [`unit_of`] of `word` in any case (`GB/s`, `TFLOPS`), lower-cased on the stack.
pub fn unit_of_any_case(word: &str) -> Option<Unit> {
    let b = word.as_bytes();
    if !b.iter().any(u8::is_ascii_uppercase) {
        return unit_of(word);
    }
    let mut buf = [0u8; 16];
    if b.len() > buf.len() {
        return unit_of(&word.to_ascii_lowercase());
    }
    for (d, s) in buf.iter_mut().zip(b) {
        *d = s.to_ascii_lowercase();
    }
    // Only ASCII letters changed, so the bytes are still the word's UTF-8.
    unit_of(std::str::from_utf8(&buf[..b.len()]).ok()?)
}

/// `s` as a unit, only next to a time word (`time_s`, `latency s`).
pub fn seconds_word(word: &str) -> Option<Unit> {
    (word == "s").then_some(time(1e6))
}

/// A value printed in `unit`, stored in the canonical unit: exact for factor 1, else
/// rounded to 12 significant digits so `1.2 ms` is stored as 1200, not 1200.0000000000002.
pub fn to_canonical(value: f64, factor: f64) -> f64 {
    if factor == 1.0 {
        return value;
    }
    let v = value * factor;
    round_12(v).unwrap_or_else(|| format!("{v:.11e}").parse().unwrap_or(v))
}

/// `v` rounded to 12 significant digits by arithmetic (a formatted round trip costs a
/// big-number conversion per value): scale so the 12 digits are the integer part,
/// round, scale back by an exact power of ten (one correctly rounded division: the
/// nearest double to the decimal, as parsing it gives). `None` where a power of ten is
/// not exact or the scaled value is too close to a rounding tie to trust.
fn round_12(v: f64) -> Option<f64> {
    use crate::formats::support::text::POW10;
    if v == 0.0 || !v.is_finite() {
        return Some(v);
    }
    let a = v.abs();
    let e = if (1.0..1e12).contains(&a) {
        // The decimal exponent by comparison with the exact powers (no `log10` for
        // the usual magnitudes).
        POW10[..12].partition_point(|&p| p <= a) as i32 - 1
    } else {
        let mut e = a.log10().floor() as i32;
        // log10 can be one off next to a power of ten.
        if a >= 10f64.powi(e + 1) {
            e += 1;
        } else if a < 10f64.powi(e) {
            e -= 1;
        }
        e
    };
    let k = 11 - e;
    if !(0..=22).contains(&k) {
        return None;
    }
    let p = POW10[k as usize];
    let scaled = v * p;
    let r = scaled.round();
    // A product within a hair of .5 may have rounded the wrong way: leave it to the
    // exact path.
    if ((scaled - scaled.trunc()).abs() - 0.5).abs() < 1e-6 {
        return None;
    }
    Some(r / p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_rounding_is_the_formatted_rounding() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut checked = 0;
        for _ in 0..1_000_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let mantissa = (x % 10_000_000) as f64 / 1000.0;
            let exp = (x >> 40) % 16;
            let printed = mantissa * 10f64.powi(exp as i32 - 8);
            for factor in [1e-12, 1e-9, 1e-6, 1e-3, 1e3, 1e6, 1_048_576.0 / 1e12] {
                let v = printed * factor;
                let slow: f64 = format!("{v:.11e}").parse().unwrap();
                if let Some(fast) = round_12(v) {
                    assert_eq!(fast, slow, "{printed} x {factor}");
                    checked += 1;
                }
            }
        }
        // Most take the fast path (the rest: values below 1e-11, or near a tie).
        assert!(checked > 5_000_000, "{checked}");
    }

    #[test]
    fn printed_units_reach_one_canonical_unit_per_metric() {
        let cases = [
            ("ms", 1.2, "us", 1200.0),
            ("ns", 1500.0, "us", 1.5),
            ("seconds", 0.5, "us", 500_000.0),
            ("gb/s", 1606.2, "TB/s", 1.6062),
            ("mb/s", 2500.0, "TB/s", 0.0025),
            ("gib/s", 1000.0, "TB/s", 1.073741824),
            ("gflops", 1500.0, "TFLOPS", 1.5),
            ("tflop/s", 700.0, "TFLOPS", 700.0),
            ("samples/s", 31.0, "samples/s", 31.0),
        ];
        for (word, printed, canonical, stored) in cases {
            let u = unit_of(word).unwrap();
            assert_eq!(u.canonical, canonical, "{word}");
            assert_eq!(to_canonical(printed, u.factor), stored, "{word}");
        }
        assert_eq!(unit_of("s"), None);
        assert_eq!(seconds_word("s").unwrap().canonical, "us");
    }
}
