//! Column roles of aiter summary tables: identity key, primary measurement, or derived.
//!
//! Headers come from a test's parameters (keys) and its returned measurements
//! (`<variant> <unit>`). Derived columns (`err`, `a/b`, `speedup`, `uplift`, `rel`)
//! differ between base and head by construction, so they must never be part of a row's
//! identity: the seed scraper's known defect was treating them as keys.

use crate::model::{metric, Direction};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColumnRole {
    /// A shape or config parameter: part of the row identity.
    Key,
    /// A primary measurement of `variant`.
    Measure {
        variant: String,
        metric: String,
        unit: String,
        direction: Direction,
    },
    /// Stored, never identity, never compared as a performance row.
    Derived {
        variant: String,
        metric: String,
        unit: String,
    },
}

/// The variant name used when a measurement column has no variant prefix (`us`).
pub const DEFAULT_VARIANT: &str = "default";

/// Variant prefixes aiter and FlyDSL tests use; a numeric column starting with one of
/// these is a measurement even when its unit is unknown (`triton dq`).
const KNOWN_VARIANTS: &[&str] = &[
    "torch",
    "triton",
    "ck",
    "asm",
    "hip",
    "flydsl",
    "gluon",
    "aiter",
    "cktile",
    "tuned",
    "baseline",
    "reference",
    "ref",
    "kernel",
    "b",
];

fn unit_of(word: &str) -> Option<(&'static str, &'static str, Direction)> {
    let d = Direction::Lower;
    let u = Direction::Higher;
    Some(match word {
        "us" | "µs" | "μs" | "usec" => (metric::LATENCY, "us", d),
        "ms" | "msec" => (metric::LATENCY, "ms", d),
        "ns" => (metric::LATENCY, "ns", d),
        "sec" | "seconds" => (metric::LATENCY, "s", d),
        "tflops" => (metric::THROUGHPUT, "TFLOPS", u),
        "gflops" => (metric::THROUGHPUT, "GFLOPS", u),
        "tb/s" | "tbps" => (metric::BANDWIDTH, "TB/s", u),
        "gb/s" | "gbps" => (metric::BANDWIDTH, "GB/s", u),
        "tokens/s" => (metric::THROUGHPUT, "tokens/s", u),
        _ => return None,
    })
}

/// Words that name the quantity rather than the variant.
fn is_quantity_word(word: &str) -> bool {
    matches!(
        word,
        "latency"
            | "time"
            | "elapsed"
            | "duration"
            | "bw"
            | "bandwidth"
            | "throughput"
            | "avg"
            | "median"
            | "mean"
            | "gpu"
    )
}

fn words(lower: &str) -> Vec<&str> {
    lower
        .split(|c: char| c.is_whitespace() || c == '_' || c == '(' || c == ')' || c == ',')
        .filter(|w| !w.is_empty())
        .collect()
}

/// Classify one header. `numeric` says whether the column is numeric (`---:` alignment).
pub fn classify_header(header: &str, numeric: bool) -> ColumnRole {
    let h = header.trim();
    let lower = h.to_lowercase();
    let ws = words(&lower);
    let original_words: Vec<&str> = h
        .split(|c: char| c.is_whitespace() || c == '_' || c == '(' || c == ')' || c == ',')
        .filter(|w| !w.is_empty())
        .collect();

    if let Some(role) = derived_role(h, &lower, &ws, &original_words) {
        return role;
    }

    // A measurement: some word is a unit.
    if let Some(pos) = ws.iter().position(|w| unit_of(w).is_some()) {
        let (metric, unit, direction) = unit_of(ws[pos]).expect("checked above");
        let variant = variant_from(h, &original_words, |i| i == pos || is_quantity_word(ws[i]));
        return ColumnRole::Measure {
            variant,
            metric: metric.to_string(),
            unit: unit.to_string(),
            direction,
        };
    }
    // Quantity words without a unit (`latency`, `time`): latency of unknown unit.
    if ws.len() == 1 && matches!(ws[0], "latency" | "time" | "elapsed" | "duration") {
        return ColumnRole::Measure {
            variant: DEFAULT_VARIANT.to_string(),
            metric: metric::LATENCY.to_string(),
            unit: String::new(),
            direction: Direction::Lower,
        };
    }
    // `<variant> <something>` in a numeric column: a measurement of unknown kind.
    if numeric && ws.len() >= 2 && h.contains(' ') && KNOWN_VARIANTS.contains(&ws[0]) {
        return ColumnRole::Measure {
            variant: original_words[0].to_string(),
            metric: ws[1..].join("_"),
            unit: String::new(),
            direction: Direction::None,
        };
    }
    ColumnRole::Key
}

fn derived_role(h: &str, lower: &str, ws: &[&str], orig: &[&str]) -> Option<ColumnRole> {
    let derived = |variant: String, metric: String, unit: &str| ColumnRole::Derived {
        variant,
        metric,
        unit: unit.to_string(),
    };
    // Ratios of two variants: `asm/ck`, `triton/torch` (but not `TB/s`, `GB/s`).
    if lower.contains('/') && !ws.iter().any(|w| unit_of(w).is_some()) {
        return Some(derived(h.to_string(), metric::RATIO.to_string(), ""));
    }
    if matches!(
        lower,
        "note" | "notes" | "comment" | "comments" | "status" | "remark"
    ) {
        return Some(derived(String::new(), metric::NOTE.to_string(), ""));
    }
    let last = *ws.last()?;
    if last == "err" || last == "error" || last.starts_with("errratio") || lower == "errratio" {
        // `triton err` -> error of triton; `triton dq err` -> error_dq of triton;
        // `rel err` / `err` -> table-level error.
        let (variant, rest): (String, Vec<&str>) = match ws.first() {
            Some(first) if ws.len() >= 2 && *first != "rel" && *first != "max" => {
                (orig[0].to_string(), ws[1..ws.len() - 1].to_vec())
            }
            _ => (String::new(), ws[..ws.len() - 1].to_vec()),
        };
        let metric = if rest.is_empty() {
            metric::ERROR.to_string()
        } else {
            format!("{}_{}", metric::ERROR, rest.join("_"))
        };
        return Some(derived(variant, metric, ""));
    }
    for (word, metric_name) in [
        ("speedup", metric::SPEEDUP),
        ("uplift", metric::UPLIFT),
        ("rel", metric::RATIO),
        ("ratio", metric::RATIO),
    ] {
        if let Some(i) = ws.iter().position(|w| *w == word) {
            let variant = orig
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, w)| *w)
                .collect::<Vec<_>>()
                .join(" ");
            return Some(derived(variant, metric_name.to_string(), ""));
        }
    }
    None
}

/// The variant: a parenthesised name (`time_us (torch)`), else the words left after
/// removing unit and quantity words, else [`DEFAULT_VARIANT`].
fn variant_from(h: &str, orig: &[&str], skip: impl Fn(usize) -> bool) -> String {
    if let (Some(open), Some(close)) = (h.find('('), h.rfind(')')) {
        if open < close {
            let inner = h[open + 1..close].trim();
            let inner_lower = inner.to_lowercase();
            let plain = words(&inner_lower)
                .iter()
                .all(|w| unit_of(w).is_none() && !is_quantity_word(w));
            if !inner.is_empty() && plain {
                return inner.to_string();
            }
        }
    }
    let rest: Vec<&str> = orig
        .iter()
        .enumerate()
        .filter(|(i, _)| !skip(*i))
        .map(|(_, w)| *w)
        .collect();
    if rest.is_empty() {
        DEFAULT_VARIANT.to_string()
    } else {
        rest.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measure(v: &str, m: &str, u: &str) -> ColumnRole {
        let direction = match m {
            "latency" => Direction::Lower,
            _ => Direction::Higher,
        };
        ColumnRole::Measure {
            variant: v.into(),
            metric: m.into(),
            unit: u.into(),
            direction,
        }
    }

    #[test]
    fn table_of_headers() {
        let cases = [
            ("M", ColumnRole::Key),
            ("dtype", ColumnRole::Key),
            ("ck_preshuffle", ColumnRole::Key),
            ("q_type", ColumnRole::Key),
            ("torch us", measure("torch", "latency", "us")),
            ("triton TFLOPS", measure("triton", "throughput", "TFLOPS")),
            ("ck TB/s", measure("ck", "bandwidth", "TB/s")),
            ("us", measure("default", "latency", "us")),
            ("TFLOPS", measure("default", "throughput", "TFLOPS")),
            ("latency_us", measure("default", "latency", "us")),
            ("time_us (torch)", measure("torch", "latency", "us")),
            ("hip_bw_TBps", measure("hip", "bandwidth", "TB/s")),
            ("kernel us", measure("kernel", "latency", "us")),
            ("FlyDSL(gpu us)", measure("FlyDSL", "latency", "us")),
        ];
        for (h, want) in cases {
            assert_eq!(classify_header(h, true), want, "{h}");
        }
    }

    #[test]
    fn derived_columns_are_never_keys() {
        for h in [
            "triton err",
            "err",
            "errRatio",
            "asm/ck",
            "triton/torch",
            "speedup",
            "uplift",
            "flydsl rel",
            "rel err",
            "triton dq err",
        ] {
            assert!(
                matches!(classify_header(h, true), ColumnRole::Derived { .. }),
                "{h}"
            );
        }
        assert_eq!(
            classify_header("triton dq err", true),
            ColumnRole::Derived {
                variant: "triton".into(),
                metric: "error_dq".into(),
                unit: "".into()
            }
        );
    }

    #[test]
    fn variant_with_unknown_unit_is_a_measurement_only_when_numeric() {
        assert!(matches!(
            classify_header("triton dq", true),
            ColumnRole::Measure { .. }
        ));
        assert_eq!(classify_header("triton dq", false), ColumnRole::Key);
    }
}
