//! The fields of a serving result (vLLM, SGLang, TokenSpeed's serve export) and how each
//! is stored: shared by the serving formats and the `TS_BENCH_*` lines of the probe.

use crate::formats::support::emit::Spec;

/// How one numeric result field is stored.
#[derive(Debug, PartialEq)]
pub enum Field {
    /// A measurement: metric, printed unit, compared.
    Measured(String, &'static str),
    /// A value kept beside the measurements: metric, printed unit.
    Derived(String, &'static str),
}

/// `median_ttft_ms` -> latency `ttft_median` in ms; `output_throughput` -> tokens/s.
pub fn field(name: &str) -> Option<Field> {
    if let Some(rest) = name.strip_suffix("_ms") {
        for q in ["ttft", "tpot", "itl", "e2el", "e2e_latency"] {
            if let Some(stat) = rest.strip_suffix(q).and_then(|s| s.strip_suffix('_')) {
                let q = if q == "e2e_latency" { "e2el" } else { q };
                let metric = format!("{q}_{stat}");
                return Some(if stat == "std" {
                    Field::Derived(metric, "ms")
                } else {
                    Field::Measured(metric, "ms")
                });
            }
        }
    }
    Some(match name {
        "request_throughput" | "request_goodput" => Field::Measured(name.to_string(), "req/s"),
        "output_throughput"
        | "total_token_throughput"
        | "total_throughput"
        | "input_throughput"
        | "max_output_tokens_per_s" => Field::Measured(name.to_string(), "tokens/s"),
        "duration" => Field::Derived("duration".to_string(), "sec"),
        n if n.ends_with("_sec") || n.ends_with("_secs") => Field::Measured(
            n.trim_end_matches("_secs")
                .trim_end_matches("_sec")
                .to_string(),
            "sec",
        ),
        "completed"
        | "failed"
        | "total_input_tokens"
        | "total_output_tokens"
        | "total_output"
        | "total_input"
        | "max_concurrent_requests"
        | "concurrency"
        | "accept_length" => Field::Derived(name.to_string(), ""),
        _ => return None,
    })
}

/// How a result field is stored.
pub(crate) fn spec(name: &str) -> Spec {
    match field(name) {
        Some(Field::Measured(metric, unit)) => Spec::measured(Some(&metric), unit, name),
        Some(Field::Derived(metric, "")) => Spec::derived(&metric, "", name, None),
        Some(Field::Derived(metric, unit)) => Spec::measured(Some(&metric), unit, name).kept(),
        None => Spec::derived(
            crate::model::metric::UNCLASSIFIED,
            "",
            name,
            Some("unclassified field"),
        ),
    }
}
