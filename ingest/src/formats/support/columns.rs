//! Column roles of aiter summary tables: identity key, primary measurement, or derived.
//!
//! Headers come from a test's parameters (keys) and its returned measurements
//! (`<variant> <unit>`). Derived columns (`err`, `a/b`, `speedup`, `uplift`, `rel`)
//! differ between base and head by construction, so they must never be part of a row's
//! identity: validate-kernel-pr's perf scraper treated them as keys, its known defect.

use crate::formats::support::units::{seconds_word, unit_of, Unit};
use crate::model::{metric, Direction};

#[derive(Debug, Clone, PartialEq)]
pub enum ColumnRole {
    /// A shape or config parameter: part of the row identity.
    Key,
    /// A primary measurement of `variant`, stored in `unit` after multiplying by `factor`
    /// (the header's unit is `printed`).
    Measure {
        variant: String,
        metric: String,
        unit: String,
        direction: Direction,
        factor: f64,
        printed: String,
    },
    /// Stored, never identity, never compared as a performance row.
    Derived {
        variant: String,
        metric: String,
        unit: String,
    },
    /// A numeric column perfdb cannot tell the meaning of: stored (metric
    /// [`metric::UNCLASSIFIED`]), reported at ingest, never identity, never compared.
    Unclassified { reason: String },
}

pub use crate::model::DEFAULT_VARIANT;

/// The metric of a difference column (`Delta (ns)`, `diff`): derived, never compared.
pub const DIFFERENCE: &str = crate::model::metric::DIFFERENCE;

/// Variant prefixes aiter and FlyDSL tests use; a numeric column starting with one of
/// these is a measurement even when its unit is unknown (`triton dq`).
pub const KNOWN_VARIANTS: &[&str] = &[
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

/// Words that name a side of a comparison rather than a variant (`before`, `old`).
const SIDE_WORDS: &[&str] = &["untuned", "before", "after", "old", "new", "default"];

/// A numeric column headed by one of these alone (`Baseline`, `Tuned`, `before`) holds
/// a variant's or a side's numbers: never a parameter. (`b` and `kernel` name
/// parameters when alone.)
fn names_a_variant(word: &str) -> bool {
    (KNOWN_VARIANTS.contains(&word) && !matches!(word, "b" | "kernel"))
        || SIDE_WORDS.contains(&word)
}

/// The metric a quantity word names when no unit is printed (`fa3 latency`, `bw`).
fn quantity_metric(word: &str) -> Option<(&'static str, Direction)> {
    Some(match word {
        "latency" | "time" | "elapsed" | "duration" => (metric::LATENCY, Direction::Lower),
        "bw" | "bandwidth" => (metric::BANDWIDTH, Direction::Higher),
        "throughput" => (metric::THROUGHPUT, Direction::Higher),
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

fn is_word_break(c: char) -> bool {
    c.is_whitespace() || matches!(c, '_' | '(' | ')' | ',' | '[' | ']')
}

fn words(lower: &str) -> Vec<&str> {
    lower
        .split(is_word_break)
        .filter(|w| !w.is_empty())
        .collect()
}

/// The unit word of a header and where it is: a unit (`us`, `ms/iter`, `GiB/s`), or `s`
/// next to a time word (`time_s`).
fn find_unit(ws: &[&str]) -> Option<(usize, Unit)> {
    if let Some(i) = ws.iter().position(|w| unit_of(w).is_some()) {
        return Some((i, unit_of(ws[i])?));
    }
    let timed = ws.iter().any(|w| quantity_metric(w).is_some());
    ws.iter()
        .position(|w| timed && seconds_word(w).is_some())
        .map(|i| (i, seconds_word("s").expect("s is seconds")))
}

/// Classify one header. `numeric` says whether the column is numeric (`---:` alignment,
/// or every cell a number).
pub fn classify_header(header: &str, numeric: bool) -> ColumnRole {
    let h = header.trim();
    let lower = h.to_lowercase();
    let ws = words(&lower);
    let original_words: Vec<&str> = h.split(is_word_break).filter(|w| !w.is_empty()).collect();

    if let Some(role) = derived_role(h, &lower, &ws, &original_words) {
        return role;
    }

    // A measurement: some word is a unit.
    if let Some((pos, unit)) = find_unit(&ws) {
        let variant = variant_from(h, &original_words, |i| {
            i == pos || is_quantity_word(ws[i]) || quantity_metric(ws[i]).is_some()
        });
        return ColumnRole::Measure {
            variant,
            metric: unit.metric.to_string(),
            unit: unit.canonical.to_string(),
            direction: unit.direction,
            factor: unit.factor,
            printed: original_words[pos].to_string(),
        };
    }
    // A quantity word without a unit (`latency`, `fa3 time`, `bw`): a measurement of
    // that quantity in an unknown unit; the other words name the variant.
    if let Some((pos, (metric_name, direction))) = ws
        .iter()
        .enumerate()
        .find_map(|(i, w)| quantity_metric(w).map(|q| (i, q)))
    {
        if !numeric {
            return ColumnRole::Derived {
                variant: String::new(),
                metric: metric::NOTE.to_string(),
                unit: String::new(),
            };
        }
        let variant = variant_from(h, &original_words, |i| i == pos || is_quantity_word(ws[i]));
        return ColumnRole::Measure {
            variant,
            metric: metric_name.to_string(),
            unit: String::new(),
            direction,
            factor: 1.0,
            printed: String::new(),
        };
    }
    // `<variant> <something>` in a numeric column: a measurement of unknown kind.
    if numeric && ws.len() >= 2 && h.contains(' ') && KNOWN_VARIANTS.contains(&ws[0]) {
        return ColumnRole::Measure {
            variant: original_words[0].to_string(),
            metric: ws[1..].join("_"),
            unit: String::new(),
            direction: Direction::None,
            factor: 1.0,
            printed: String::new(),
        };
    }
    // Parameters are single names (`M`, `q_type`, `ck_preshuffle`); a numeric column
    // whose header is a phrase is a value of some kind, and guessing it as identity
    // would split every row by it. So is one named as a variant (`Baseline`, `Tuned`,
    // `triton`): a variant's numbers, their unit unsaid.
    let variant_name = ws.len() == 1 && names_a_variant(ws[0]);
    if numeric && (h.contains(char::is_whitespace) || variant_name) {
        return ColumnRole::Unclassified {
            reason: "numeric column with no unit, no quantity word (latency, time, bw, \
                     throughput) and no known variant prefix"
                .to_string(),
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
    if lower.contains('/') && find_unit(ws).is_none() {
        return Some(derived(h.to_string(), metric::RATIO.to_string(), ""));
    }
    // A column headed by a percent sign alone (`%`): a ratio of the columns beside it.
    if matches!(lower, "%" | "(%)" | "pct" | "percent" | "x") {
        return Some(derived(String::new(), metric::UPLIFT.to_string(), ""));
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
    // A difference between two runs or variants (`Delta (ns)`, `diff us`, `%Diff`): it
    // changes sign with noise and is no latency of anything. (`max_diff` beside a
    // check is a numerical error, left to the rules below.)
    if ws
        .first()
        .is_some_and(|w| matches!(*w, "delta" | "diff" | "difference" | "Δ" | "δ"))
        || lower.starts_with("%diff")
        || lower.starts_with('Δ')
    {
        return Some(derived(String::new(), DIFFERENCE.to_string(), ""));
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
            let plain = words(&inner_lower).iter().all(|w| {
                unit_of(w).is_none() && !is_quantity_word(w) && quantity_metric(w).is_none()
            });
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

    /// What a header must classify as: (variant, metric, canonical unit, factor).
    fn measure(v: &str, m: &str, u: &str, factor: f64) -> (String, String, String, f64) {
        (v.into(), m.into(), u.into(), factor)
    }

    fn measured(h: &str) -> Option<(String, String, String, f64)> {
        match classify_header(h, true) {
            ColumnRole::Measure {
                variant,
                metric,
                unit,
                factor,
                ..
            } => Some((variant, metric, unit, factor)),
            _ => None,
        }
    }

    #[test]
    fn table_of_headers() {
        for h in ["M", "dtype", "ck_preshuffle", "q_type", "s"] {
            assert_eq!(classify_header(h, true), ColumnRole::Key, "{h}");
        }
        let cases = [
            ("torch us", measure("torch", "latency", "us", 1.0)),
            (
                "triton TFLOPS",
                measure("triton", "throughput", "TFLOPS", 1.0),
            ),
            ("ck TB/s", measure("ck", "bandwidth", "TB/s", 1.0)),
            ("us", measure("default", "latency", "us", 1.0)),
            ("TFLOPS", measure("default", "throughput", "TFLOPS", 1.0)),
            ("latency_us", measure("default", "latency", "us", 1.0)),
            ("time_us (torch)", measure("torch", "latency", "us", 1.0)),
            ("hip_bw_TBps", measure("hip", "bandwidth", "TB/s", 1.0)),
            ("kernel us", measure("kernel", "latency", "us", 1.0)),
            ("FlyDSL(gpu us)", measure("FlyDSL", "latency", "us", 1.0)),
            // Units and quantity words written out (`ck ms`, `MB/s`, `GiB/s`).
            ("ck ms", measure("ck", "latency", "us", 1e3)),
            ("MB/s", measure("default", "bandwidth", "TB/s", 1e-6)),
            (
                "triton GiB/s",
                measure("triton", "bandwidth", "TB/s", 1.073741824e-3),
            ),
            ("TFLOP/s", measure("default", "throughput", "TFLOPS", 1.0)),
            (
                "samples/s",
                measure("default", "throughput", "samples/s", 1.0),
            ),
            ("ops/s", measure("default", "throughput", "ops/s", 1.0)),
            ("it/s", measure("default", "throughput", "it/s", 1.0)),
            ("fa3 latency", measure("fa3", "latency", "", 1.0)),
            ("fa3 time", measure("fa3", "latency", "", 1.0)),
            ("fa3 [us]", measure("fa3", "latency", "us", 1.0)),
            ("fa3 ms/iter", measure("fa3", "latency", "us", 1e3)),
            ("bw", measure("default", "bandwidth", "", 1.0)),
            ("bandwidth", measure("default", "bandwidth", "", 1.0)),
            ("throughput", measure("default", "throughput", "", 1.0)),
            ("time_s", measure("default", "latency", "us", 1e6)),
        ];
        for (h, want) in cases {
            assert_eq!(measured(h), Some(want), "{h}");
        }
    }

    #[test]
    fn a_numeric_phrase_is_unclassified_not_identity() {
        assert!(matches!(
            classify_header("fa3 dq", true),
            ColumnRole::Unclassified { .. }
        ));
        assert_eq!(classify_header("fa3 dq", false), ColumnRole::Key);
        // A time column of text (timestamps) is a note, never identity.
        assert!(matches!(
            classify_header("start time", false),
            ColumnRole::Derived { .. }
        ));
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
