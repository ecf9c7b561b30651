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
    winner_change(&before.winner, &after.winner)
}

/// Same, or a drift from one winner to the other.
fn winner_change(before: &Config, after: &Config) -> TuneChange {
    if before == after {
        TuneChange::Same
    } else {
        TuneChange::Drift {
            from: before.clone(),
            to: after.clone(),
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

/// One shape's choice in a tuned-config file (an aiter tuned CSV): its key cells and the
/// chosen kernel in one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub key: Vec<(String, String)>,
    pub winner: Config,
}

/// Two versions of a tuned-config file side by side, on the key columns both have (a
/// file that gained `gfx` or a dtype column still compares on `M,N,K`): each shape whose
/// choice changed ([`TuneChange::Drift`]: the file does not list the candidates, so a
/// changed choice is all it can say), then the shapes added or removed as one
/// [`TuneChange::ConfigSet`] (their keys as `k=v` lines). A key that names several rows
/// of one version on those columns is left out: which of them it was is not known.
pub fn compare_choices(before: &[Choice], after: &[Choice]) -> Vec<(String, TuneChange)> {
    let names = |cs: &[Choice]| -> Vec<String> {
        cs.first()
            .map(|c| c.key.iter().map(|(n, _)| n.clone()).collect())
            .unwrap_or_default()
    };
    let theirs = names(after);
    let common: Vec<String> = names(before)
        .into_iter()
        .filter(|n| theirs.contains(n))
        .collect();
    let by_key = |cs: &[Choice]| -> BTreeMap<String, Vec<Config>> {
        let mut m: BTreeMap<String, Vec<Config>> = BTreeMap::new();
        for c in cs {
            let key = c
                .key
                .iter()
                .filter(|(n, _)| common.contains(n))
                .map(|(n, v)| format!("{n}={v}"))
                .collect::<Vec<_>>()
                .join(" ");
            m.entry(key).or_default().push(c.winner.clone());
        }
        m
    };
    let (b, a) = (by_key(before), by_key(after));
    let mut out: Vec<(String, TuneChange)> = a
        .iter()
        .filter_map(|(k, w)| match (b.get(k)?.as_slice(), w.as_slice()) {
            ([was], [now]) if was != now => Some((
                k.clone(),
                TuneChange::Drift {
                    from: was.clone(),
                    to: now.clone(),
                },
            )),
            _ => None,
        })
        .collect();
    let added: Vec<Config> = a.keys().filter(|k| !b.contains_key(*k)).cloned().collect();
    let removed: Vec<Config> = b.keys().filter(|k| !a.contains_key(*k)).cloned().collect();
    if !added.is_empty() || !removed.is_empty() {
        out.push((String::new(), TuneChange::ConfigSet { added, removed }));
    }
    out
}

/// What Inductor's autotuner chose for one kernel, from its `.best_config` file (beside
/// the kernel in the Inductor cache: the config's kwargs, `num_warps`, `num_stages`, and
/// `configs_hash`, the hash of the candidates it chose among).
#[derive(Debug, Clone, PartialEq)]
pub struct BestConfig {
    pub winner: Config,
    /// The candidates' hash: another one is another config set.
    pub configs_hash: Option<String>,
    /// Chosen by coordinate descent after the listed candidates.
    pub found_by_coordesc: bool,
    pub time_taken_ms: Option<f64>,
    /// The compiled kernel's Triton cache hash.
    pub triton_cache_hash: Option<String>,
}

/// A `.best_config` file's text.
pub fn read_best_config(path: &Path, text: &str) -> Result<BestConfig, IdentityError> {
    let bad = |why: String| IdentityError::Metadata {
        path: path.to_path_buf(),
        why,
    };
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
    let obj = v
        .as_object()
        .ok_or_else(|| bad("not a JSON object".into()))?;
    const FIELDS: &[&str] = &[
        "configs_hash",
        "found_by_coordesc",
        "time_taken_ms",
        "triton_cache_hash",
    ];
    let mut kwargs = serde_json::Map::new();
    let mut config = serde_json::Map::new();
    for (k, val) in obj {
        match k.as_str() {
            k if FIELDS.contains(&k) => {}
            "num_warps" | "num_stages" | "num_ctas" | "maxnreg" => {
                config.insert(k.to_string(), val.clone());
            }
            _ => {
                kwargs.insert(k.clone(), val.clone());
            }
        }
    }
    if !config.contains_key("num_warps") {
        return Err(bad("no num_warps: not an Inductor best config".into()));
    }
    config.insert("kwargs".to_string(), serde_json::Value::Object(kwargs));
    Ok(BestConfig {
        winner: config_text(&serde_json::Value::Object(config)),
        configs_hash: obj
            .get("configs_hash")
            .and_then(|h| h.as_str())
            .map(str::to_string),
        found_by_coordesc: obj
            .get("found_by_coordesc")
            .and_then(|b| b.as_bool())
            .unwrap_or(false),
        time_taken_ms: obj.get("time_taken_ms").and_then(|t| t.as_f64()),
        triton_cache_hash: obj
            .get("triton_cache_hash")
            .and_then(|t| t.as_str())
            .map(str::to_string),
    })
}

/// `after` against `before`, of one kernel: another candidates' hash is a changed config
/// set (its members are not in the file), the same with another winner a drift.
pub fn compare_best(before: &BestConfig, after: &BestConfig) -> TuneChange {
    if before.configs_hash != after.configs_hash {
        return TuneChange::ConfigSet {
            added: Vec::new(),
            removed: Vec::new(),
        };
    }
    winner_change(&before.winner, &after.winner)
}
