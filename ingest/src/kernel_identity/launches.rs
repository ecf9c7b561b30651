//! What the launch recorder printed in an identity pass (`perfdb-identity KIND {json}`
//! lines on the benchmark's standard output, in order with its rows, from the `sitecustomize.py` that
//! `perfdb run --affected` puts first on `PYTHONPATH`): the kernels launched, in order
//! among the benchmark's own lines, the toolchain, and what each autotuner chose.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The prefix of every line the recorder prints.
pub const PREFIX: &str = "perfdb-identity ";

/// One recorded launch of a compiled Triton kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Launch {
    pub kernel: String,
    /// The compile's hash (Triton's metadata `hash`): the folder its TTGIR was kept in.
    pub hash: String,
    /// The `@triton.jit` function's own key (its source and the sources it calls): the
    /// same for two compiles of one source with other constexprs or launch options.
    #[serde(default)]
    pub source: Option<String>,
    #[serde(default)]
    pub grid: Vec<u64>,
    /// Each argument: `["tensor", shape, dtype]`, a scalar's value, or a type's name.
    #[serde(default)]
    pub args: Vec<serde_json::Value>,
    /// Keyword options given at the launch (constexprs, `num_warps`).
    #[serde(default)]
    pub options: BTreeMap<String, serde_json::Value>,
}

/// What one autotuner chose in the pass.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Choice {
    pub kernel: String,
    /// The tuning key's values (the arguments the autotuner keys on), when printed.
    #[serde(default)]
    pub key: Vec<String>,
    pub winner: String,
    #[serde(default)]
    pub configs: Vec<String>,
}

/// The recorder's lines of one pass, and the output with them blanked (line numbers
/// kept) for the benchmark's own parser.
#[derive(Debug, Default)]
pub struct Pass {
    pub toolchain: BTreeMap<String, String>,
    /// Each launch with the (1-based) line it was printed on.
    pub launches: Vec<(u32, Launch)>,
    pub autotune: Vec<Choice>,
    /// The recorder's own errors (`perfdb-identity error {...}`), as printed.
    pub errors: Vec<String>,
    /// Whether the recorder started (its `ready` line): without it no launch could be
    /// seen, and no launch seen means nothing.
    pub ready: bool,
    pub output: Vec<u8>,
}

/// Read the recorder's lines out of a pass's merged output.
pub fn read_pass(output: &[u8]) -> Pass {
    let mut pass = Pass {
        output: Vec::with_capacity(output.len()),
        ..Pass::default()
    };
    for (i, line) in output.split_inclusive(|b| *b == b'\n').enumerate() {
        let text = String::from_utf8_lossy(line);
        let Some(rest) = text.trim_end().strip_prefix(PREFIX) else {
            pass.output.extend_from_slice(line);
            continue;
        };
        if line.ends_with(b"\n") {
            pass.output.push(b'\n');
        }
        let (kind, json) = rest.split_once(' ').unwrap_or((rest, "{}"));
        let at = u32::try_from(i + 1).unwrap_or(u32::MAX);
        match kind {
            "launch" => match serde_json::from_str::<Launch>(json) {
                Ok(l) => pass.launches.push((at, l)),
                Err(e) => pass
                    .errors
                    .push(format!("line {at}: unreadable launch: {e}")),
            },
            "toolchain" => {
                if let Ok(map) = serde_json::from_str::<BTreeMap<String, serde_json::Value>>(json) {
                    for (k, v) in map {
                        let v = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                        pass.toolchain.insert(k, v);
                    }
                }
            }
            "autotune" => {
                if let Ok(c) = serde_json::from_str::<Choice>(json) {
                    pass.autotune.push(c);
                }
            }
            "ready" => pass.ready = true,
            "error" => pass.errors.push(format!("line {at}: {json}")),
            _ => {}
        }
    }
    pass.autotune.sort();
    pass.autotune.dedup();
    pass
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorder_lines_are_read_and_blanked() {
        let out = b"perfdb-identity ready {\"pid\": 1}\n\
            perfdb-identity toolchain {\"triton\": \"3.6.0\", \"torch\": \"2.11.0\"}\n\
            perfdb-identity launch {\"kernel\": \"add_kernel\", \"hash\": \"ab\", \"grid\": [1024], \"args\": [[\"tensor\", [4], \"torch.float32\"], 4]}\n\
            [perf][add] dim: (4,), dtype: torch.float32, torch avg: 1.0 us, triton avg: 1.0 us\n\
            perfdb-identity launch {oops\n";
        let p = read_pass(out);
        assert!(p.ready);
        assert_eq!(p.toolchain["triton"], "3.6.0");
        assert_eq!(p.launches.len(), 1);
        assert_eq!(p.launches[0].0, 3);
        assert_eq!(p.launches[0].1.grid, vec![1024]);
        assert_eq!(p.errors.len(), 1, "{:?}", p.errors);
        let text = String::from_utf8(p.output).unwrap();
        assert_eq!(text.lines().count(), 5);
        assert_eq!(
            text.lines().nth(3).unwrap(),
            "[perf][add] dim: (4,), dtype: torch.float32, torch avg: 1.0 us, triton avg: 1.0 us"
        );
        assert!(!text.contains("perfdb-identity"));
    }
}
