//! The printed form of a serving result: vLLM's `vllm bench serve` and SGLang's
//! `bench_serving` end with a block
//!
//! ```text
//! ============ Serving Benchmark Result ============
//! Backend:                                 sglang
//! Successful requests:                     660
//! Request throughput (req/s):              11.91
//! ---------------Time to First Token----------------
//! Median TTFT (ms):                        2409.87
//! ==================================================
//! ```
//!
//! (often all a pull request or an issue keeps of a run). Each block is read as the
//! result object `--save-result` would have written: its labels are the JSON fields'
//! (`Median TTFT (ms)` is `median_ttft_ms`, `Request throughput (req/s)` is
//! `request_throughput`), so it lands in the same rows as the JSON
//! ([`super`]). A block ends at its closing `=====` line, a blank line or the
//! text's end; section rules (`----Time to First Token----`) are skipped.

use crate::formats::parser::ParseError;

/// `============ Serving Benchmark Result ============` (vLLM, SGLang).
pub fn is_title(line: &str) -> bool {
    let t = line.trim();
    t.starts_with("====") && t.ends_with("====") && t.contains("Serving Benchmark Result")
}

/// The field a printed label stands for: the name `--save-result` gives it.
fn field_of(label: &str) -> String {
    let lower = label.trim().to_ascii_lowercase();
    // `Mean TTFT (ms)`, `P99 E2E Latency (ms)`, `Median ITL (ms)`.
    let (name, unit) = match lower.rsplit_once(" (") {
        Some((n, u)) if u.ends_with(')') => (n.trim(), Some(u.trim_end_matches(')'))),
        _ => (lower.as_str(), None),
    };
    if unit == Some("ms") {
        if let Some((stat, q)) = name.split_once(' ') {
            let q = match q {
                "ttft" => Some("ttft"),
                "tpot" => Some("tpot"),
                "itl" => Some("itl"),
                "e2el" => Some("e2el"),
                "e2e latency" => Some("e2e_latency"),
                _ => None,
            };
            let stat_ok = matches!(stat, "mean" | "median" | "std")
                || stat
                    .strip_prefix('p')
                    .is_some_and(|p| p.parse::<f64>().is_ok());
            if let (Some(q), true) = (q, stat_ok) {
                return format!("{stat}_{q}_ms");
            }
        }
    }
    let known = match (name, unit) {
        ("backend", _) => "backend",
        ("traffic request rate", _) | ("request rate", _) => "request_rate",
        ("max request concurrency", _) | ("maximum request concurrency", _) => "max_concurrency",
        ("successful requests", _) => "completed",
        ("failed requests", _) => "failed",
        ("benchmark duration", _) => "duration",
        ("total input tokens", _) => "total_input_tokens",
        ("total generated tokens", Some("retokenized")) => "total_output_tokens_retokenized",
        ("total generated tokens", _) => "total_output_tokens",
        ("request throughput", _) => "request_throughput",
        ("request goodput", _) => "request_goodput",
        ("input token throughput", _) => "input_throughput",
        ("output token throughput", _) => "output_throughput",
        ("total token throughput", _) => "total_token_throughput",
        ("total throughput", _) => "total_throughput",
        ("peak output token throughput", _) => "max_output_tokens_per_s",
        ("peak concurrent requests", _) => "max_concurrent_requests",
        ("concurrency", _) => "concurrency",
        ("accept length", _) => "accept_length",
        _ => "",
    };
    if !known.is_empty() {
        return known.to_string();
    }
    // Any other label, as a field name: kept, unclassified.
    lower
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect::<String>()
        .split('_')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("_")
}

/// A JSON string literal of `s`.
fn quoted(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

/// One printed result block.
pub struct Block {
    /// The line of its title.
    pub line: usize,
    /// The JSON object `--save-result` would write for it.
    pub json: String,
    /// The line of each of its fields, in order.
    pub lines: Vec<usize>,
    /// Its load lines (`name=value` of the fields that are the key), in order.
    load: Vec<String>,
}

/// Every result block of `text`. A line inside a block that is no `Label: value`
/// refuses the text at that line.
///
/// Blocks of one file that print the same load (backend, rate, concurrency: often none
/// of them, vLLM prints no rate when it is `inf`) are a sweep over what the block does
/// not print (prompt counts, lengths), not reruns: each is told apart by its place, key
/// `block` = 1, 2, ... (the same place in a rerun of the same script).
pub fn objects(text: &str) -> Result<Vec<Block>, ParseError> {
    let mut out = read_blocks(text)?;
    let loads: Vec<Vec<&str>> = out
        .iter()
        .map(|b| b.load.iter().map(String::as_str).collect::<Vec<_>>())
        .collect();
    let repeated = (0..loads.len()).any(|i| loads[i + 1..].contains(&loads[i]));
    if repeated {
        for (n, b) in out.iter_mut().enumerate() {
            let brace = b.json.len() - 1;
            let sep = if b.lines.is_empty() { "" } else { ", " };
            b.json
                .insert_str(brace, &format!("{sep}\"block\": \"{}\"", n + 1));
            b.lines.push(b.line);
        }
    }
    Ok(out)
}

fn read_blocks(text: &str) -> Result<Vec<Block>, ParseError> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if !is_title(lines[i]) {
            i += 1;
            continue;
        }
        let title = i + 1;
        let mut fields: Vec<String> = Vec::new();
        let mut field_lines: Vec<usize> = Vec::new();
        let mut load: Vec<String> = Vec::new();
        i += 1;
        while i < lines.len() {
            let t = lines[i].trim();
            if t.is_empty() || t.starts_with("====") {
                break;
            }
            i += 1;
            if t.starts_with("---") {
                continue; // a section rule
            }
            let Some((label, value)) = t.split_once(':') else {
                return Err(ParseError::at(
                    i,
                    format!("`{t}` inside a serving result block is no `Label: value` line"),
                ));
            };
            // A number, without what a person appended after it in an issue; a
            // phrase of text (`not set`) whole, never its first word.
            let whole = value.trim();
            let first = whole.split_whitespace().next().unwrap_or("");
            let numeric = first.parse::<f64>().is_ok();
            let value = if numeric { first } else { whole };
            let name = field_of(label);
            let unset = matches!(
                whole.to_ascii_lowercase().as_str(),
                "not set" | "none" | "n/a" | "unset" | "-"
            );
            let json_value = match first.parse::<f64>() {
                Ok(v) if v.is_finite() => first.trim_start_matches('+').to_string(),
                // No value given (`Max request concurrency: not set`): null, as the
                // JSON `--save-result` writes it, so no key holds a word of it.
                _ if unset => "null".to_string(),
                // `inf` (a request rate), a backend name, or text where a number
                // belongs: a string, which the result reader refuses for a measurement.
                _ => quoted(value),
            };
            if !unset && (name == "backend" || super::KEY_FIELDS.contains(&name.as_str())) {
                load.push(format!("{name}={value}"));
            }
            fields.push(format!("{}: {json_value}", quoted(&name)));
            field_lines.push(i);
        }
        out.push(Block {
            line: title,
            json: format!("{{{}}}", fields.join(", ")),
            lines: field_lines,
            load,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `not set` is no value, never the word `not`: null, and no part of the load.
    #[test]
    fn a_value_not_set_is_null_and_a_number_keeps_only_itself() {
        let text = "============ Serving Benchmark Result ============\n\
                    Backend:                                 vllm\n\
                    Max request concurrency:                 not set\n\
                    Successful requests:                     80 (all of them)\n\
                    Request throughput (req/s):              0.91\n\
                    ==================================================\n";
        let blocks = objects(text).unwrap();
        let v: serde_json::Value = serde_json::from_str(&blocks[0].json).unwrap();
        assert_eq!(v["max_concurrency"], serde_json::Value::Null, "{v}");
        assert_eq!(v["completed"], 80, "{v}");
        assert_eq!(blocks[0].load, ["backend=vllm"]);
    }

    #[test]
    fn labels_are_the_json_fields() {
        for (label, field) in [
            ("Median TTFT (ms)", "median_ttft_ms"),
            ("P99 E2E Latency (ms)", "p99_e2e_latency_ms"),
            ("Mean E2EL (ms)", "mean_e2el_ms"),
            ("P99.9 ITL (ms)", "p99.9_itl_ms"),
            ("Request throughput (req/s)", "request_throughput"),
            ("Total Token throughput (tok/s)", "total_token_throughput"),
            (
                "Total generated tokens (retokenized)",
                "total_output_tokens_retokenized",
            ),
            ("Maximum request concurrency", "max_concurrency"),
            ("Successful requests", "completed"),
            ("Some New Line (x)", "some_new_line_x"),
        ] {
            assert_eq!(field_of(label), field, "{label}");
        }
    }
}
