//! What Triton's autotuner chose, from the record it keeps (`cache_results=True`: one
//! `<kernel>.autotune.json` a tuning key in the cache, each candidate config with its
//! timings), and how two choices differ: the same candidates and another winner is
//! config drift, not a change of the code; other candidates are a changed config set.
//!
//! On an H100 (sample-data/h100-kernel-identity/autotune/), two near-tied configs of one
//! add (4 and 8 warps, medians 0.0224-0.0234 ms) gave 4 warps in 5 of 8 fresh processes
//! and 8 warps in 3, the code unchanged.

use super::IdentityError;
use std::collections::BTreeMap;
use std::path::Path;

/// One candidate config, as the record spells it: its constexprs and launch settings,
/// in one line (`BLOCK=1024 num_warps=4 num_stages=3`).
pub type Config = String;

/// One autotune record: the kernel, its tuning key, each candidate with its timings (the
/// median first, as Triton's benchmark returns them), and the one Triton took.
#[derive(Debug, Clone, PartialEq)]
pub struct Tuned {
    pub kernel: String,
    /// The tuning key's values (the arguments named in `key=`, and the dtypes), as JSON.
    pub key: String,
    pub candidates: Vec<(Config, Vec<f64>)>,
    /// The least timings, compared as Triton compares them (a list, element by element).
    pub winner: Config,
}

/// How a tuning differs from another of the same kernel and key.
#[derive(Debug, Clone, PartialEq)]
pub enum TuneChange {
    Same,
    /// The same candidates, another winner: "config drift: winner A -> B, same code".
    Drift {
        from: Config,
        to: Config,
    },
    /// Candidates added or removed ("config set changed").
    ConfigSet {
        added: Vec<Config>,
        removed: Vec<Config>,
    },
}

/// The record at `path` (`<kernel>.autotune.json`).
pub fn read_record(path: &Path) -> Result<Tuned, IdentityError> {
    let bad = |why: String| IdentityError::Metadata {
        path: path.to_path_buf(),
        why,
    };
    let text = std::fs::read_to_string(path).map_err(|source| IdentityError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    let kernel = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".autotune.json"))
        .ok_or_else(|| bad("not named <kernel>.autotune.json".into()))?
        .to_string();
    let pairs = v["configs_timings"]
        .as_array()
        .ok_or_else(|| bad("no configs_timings list".into()))?;
    let mut candidates = Vec::new();
    for p in pairs {
        let (Some(config), Some(times)) = (p.get(0), p.get(1).and_then(|t| t.as_array())) else {
            return Err(bad(format!("a candidate is not [config, timings]: {p}")));
        };
        let times: Vec<f64> = times.iter().filter_map(|t| t.as_f64()).collect();
        if times.is_empty() {
            return Err(bad(format!("a candidate has no timings: {p}")));
        }
        candidates.push((config_text(config), times));
    }
    let winner = candidates
        .iter()
        .min_by(|a, b| a.1.partial_cmp(&b.1).unwrap_or(std::cmp::Ordering::Equal))
        .map(|(c, _)| c.clone())
        .ok_or_else(|| bad("no candidate".into()))?;
    Ok(Tuned {
        kernel,
        key: v["key"].to_string(),
        candidates,
        winner,
    })
}

/// A config in one line: its constexprs, then the launch settings it sets.
fn config_text(c: &serde_json::Value) -> Config {
    let mut parts: Vec<String> = Vec::new();
    if let Some(kw) = c["kwargs"].as_object() {
        let sorted: BTreeMap<&String, &serde_json::Value> = kw.iter().collect();
        parts.extend(sorted.iter().map(|(k, v)| format!("{k}={v}")));
    }
    for k in ["num_warps", "num_stages", "num_ctas", "maxnreg"] {
        if let Some(v) = c.get(k).filter(|v| !v.is_null()) {
            parts.push(format!("{k}={v}"));
        }
    }
    parts.join(" ")
}

/// `after` against `before`, of one kernel and key.
pub fn compare(before: &Tuned, after: &Tuned) -> TuneChange {
    let set = |t: &Tuned| -> Vec<Config> {
        let mut c: Vec<Config> = t.candidates.iter().map(|(c, _)| c.clone()).collect();
        c.sort();
        c
    };
    let (b, a) = (set(before), set(after));
    if b != a {
        return TuneChange::ConfigSet {
            added: a.iter().filter(|c| !b.contains(c)).cloned().collect(),
            removed: b.iter().filter(|c| !a.contains(c)).cloned().collect(),
        };
    }
    if before.winner == after.winner {
        TuneChange::Same
    } else {
        TuneChange::Drift {
            from: before.winner.clone(),
            to: after.winner.clone(),
        }
    }
}

/// How often each config won over `runs` (fresh processes of one kernel and key), most
/// first: the spread a drift is read against.
pub fn winners(runs: &[Tuned]) -> Vec<(Config, usize)> {
    let mut n: BTreeMap<&str, usize> = BTreeMap::new();
    for t in runs {
        *n.entry(&t.winner).or_default() += 1;
    }
    let mut out: Vec<(Config, usize)> = n.into_iter().map(|(c, k)| (c.to_string(), k)).collect();
    out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    out
}
