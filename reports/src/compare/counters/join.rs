//! Which kernels a changed row's counters come from: joined on evidence only (the
//! list in [`super`]'s documentation), and each kernel's own duration, which orders
//! several joined kernels.

use super::{Changed, Diffs, Profiled, MOVED};
use std::collections::{BTreeMap, BTreeSet};

/// Words of a name that can tell what it is: lower case, letters and digits, three
/// characters or more, not a number, a C type, a data type, a unit or a word every
/// kernel carries.
pub(super) fn words(text: &str) -> BTreeSet<String> {
    const COMMON: [&str; 20] = [
        "kernel", "void", "float", "int", "const", "unsigned", "half", "char", "bool", "double",
        "long", "struct", "std", "native", "detail", "impl", "the", "and", "triton", "cuda",
    ];
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .map(str::to_ascii_lowercase)
        .filter(|w| w.len() >= 3 && !w.chars().all(|c| c.is_ascii_digit()))
        .filter(|w| !COMMON.contains(&w.as_str()) && !is_type_or_unit(w))
        .collect()
}

/// A data type (`bfloat16`, `fp8`, `e4m3`, `int8`) or a unit (`tflops`, `gbps`, `usec`):
/// what a row's text and a kernel's template both carry, never what the kernel is.
fn is_type_or_unit(w: &str) -> bool {
    const EXACT: [&str; 16] = [
        "bfloat", "float", "half", "tf32", "fp32", "fp16", "bf16", "fp8", "fp4", "e4m3", "e5m2",
        "tflops", "gflops", "gbps", "tbps", "usec",
    ];
    if EXACT.contains(&w) {
        return true;
    }
    // float16, bfloat16, int8, uint32, fp8e4m3...: a type word and bits.
    let letters = w.trim_end_matches(|c: char| c.is_ascii_digit() || c == 'e' || c == 'm');
    matches!(
        letters,
        "float" | "bfloat" | "int" | "uint" | "fp" | "bf" | "tf" | "complex"
    ) && w.len() > letters.len()
}

/// The kernel(s) that explain `row`, and how they were joined: on evidence only (the
/// module's list).
pub(super) fn join<'a>(
    row: &Changed,
    kernels: &'a BTreeMap<(String, String), Profiled>,
    asked_joins: &[(String, String)],
) -> Vec<(&'a (String, String), String)> {
    let text = format!("{} {} {}", row.table, row.variant, row.key_text);
    let asked: Vec<_> = kernels
        .keys()
        .filter_map(|k| {
            asked_joins
                .iter()
                .find(|(r, kn)| text.contains(r.as_str()) && k.1.contains(kn.as_str()))
                .map(|(r, kn)| (k, format!("--kernel {r}={kn}")))
        })
        .collect();
    if !asked.is_empty() || asked_joins.iter().any(|(r, _)| text.contains(r.as_str())) {
        return asked;
    }
    // The harness's marks: a range or scope named for the row's table or variant.
    let names: BTreeSet<String> = [row.table, row.variant]
        .iter()
        .filter(|n| !n.is_empty())
        .map(|n| n.to_ascii_lowercase())
        .collect();
    let marked: Vec<_> = kernels
        .iter()
        .filter_map(|(k, p)| {
            let shared: Vec<&String> = p.marks.intersection(&names).collect();
            (!shared.is_empty()).then(|| {
                let what = shared
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ");
                (k, format!("its NVTX range or proton scope ({what})"))
            })
        })
        .collect();
    if !marked.is_empty() {
        return marked;
    }
    // A word of the row's table or variant in the kernel's name: never of its key.
    let row_words: BTreeSet<String> = words(row.table)
        .into_iter()
        .chain(words(row.variant))
        .collect();
    let by_name: Vec<_> = kernels
        .keys()
        .filter_map(|k| {
            let shared: Vec<String> = words(&k.1).intersection(&row_words).cloned().collect();
            (!shared.is_empty()).then(|| (k, format!("the name ({})", shared.join(", "))))
        })
        .collect();
    if !by_name.is_empty() {
        return by_name;
    }
    let names: BTreeSet<&String> = kernels.keys().map(|k| &k.1).collect();
    if names.len() == 1 {
        return kernels
            .keys()
            .map(|k| (k, "the only kernel profiled".to_string()))
            .collect();
    }
    Vec::new()
}

/// A kernel's own duration, head / base - 1: ncu's `Duration` or
/// `gpu__time_duration.sum`, rocprofv3's dispatch duration, proton's time per launch.
pub(super) fn duration_change(diffs: &Diffs) -> Option<f64> {
    let get = |name: &str| {
        diffs
            .iter()
            .find(|((n, _, u), _)| n.eq_ignore_ascii_case(name) && u == "ns")
            .map(|(_, v)| *v)
    };
    let per_launch = |(b, h): (f64, f64)| (b > 0.0).then(|| h / b - 1.0);
    if let Some(v) = get("Duration").or_else(|| get("gpu__time_duration.sum")) {
        return per_launch(v);
    }
    if let Some(v) = get("duration") {
        return per_launch(v);
    }
    // proton: the total over `count` launches.
    let (tb, th) = get("time")?;
    let (cb, ch) = diffs
        .iter()
        .find(|((n, _, _), _)| n == "count")
        .map(|(_, v)| *v)
        .unwrap_or((1.0, 1.0));
    (cb > 0.0 && ch > 0.0).then_some(())?;
    per_launch((tb / cb, th / ch))
}

/// Whether a kernel's own duration moved with the row: the same way, by [`MOVED`] or
/// more.
pub(super) fn moved_with(kernel: Option<f64>, row: Option<f64>) -> bool {
    match (kernel, row) {
        (Some(k), Some(r)) => k.abs() >= MOVED && k.signum() == r.signum(),
        _ => false,
    }
}
