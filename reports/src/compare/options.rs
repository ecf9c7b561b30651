//! The options of a comparison, defined once.
//!
//! [`JudgeArgs`] is what a caller asks: the flags of `perfdb compare` and `perfdb ab`
//! (clap, flattened into both), the query of the web's `/compare` (serde, from the
//! string form below), and the link that replays a comparison (serde, back to that
//! form). [`crate::config::Config::resolve`] fills in what it leaves unset from
//! `perfdb.toml`, then the defaults, and checks the values: the result is [`Options`],
//! what a comparison runs with and what its report records.
//!
//! The string form (query strings and links): a number as printed, an empty value
//! unset; a list comma-separated (`control=torch,aten`, `where=arch=gfx942,dtype=bf16`);
//! a flag `true` or `false` (also `1`/`0`, `on`/`off`, `yes`/`no`; empty is false); the
//! per table/variant/metric overrides as JSON.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// How each side's trials are reduced to the one value of the ratio.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Reduce {
    Best,
    Median,
}

/// The test of each row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Test {
    Welch,
    MannWhitney,
    // Yuen's test of 20%-trimmed means on log values.
    Trimmed,
    // Yuen's when a few of the pooled trials lie far out, Welch's otherwise: `ab`'s test
    // (`stats::adaptive`). (Plain comments: a doc comment would become `--help` text.)
    Adaptive,
}

impl Test {
    /// The t-test this is (None: the rank test).
    pub fn location(self) -> Option<crate::stats::Location> {
        use crate::stats::Location;
        match self {
            Test::Welch => Some(Location::Welch),
            Test::Trimmed => Some(Location::Trimmed),
            Test::Adaptive => Some(Location::Adaptive),
            Test::MannWhitney => None,
        }
    }
}

/// Does `pattern` name `variant`? The one rule for every option that names variants
/// (`--control`, `[[compare.override]] variant`): ignoring case, a name matches the
/// variant of that name and those that start with it followed by `_`, `-` or `.`
/// (`torch` matches `torch`, `torch_mm`, `torch.matmul`, not `torchao`); with `*` (any
/// run of characters) or `?` (one character) it is a glob over the whole name.
pub fn variant_matches(pattern: &str, variant: &str) -> bool {
    let (n, v) = (pattern.to_lowercase(), variant.to_lowercase());
    if n.contains(['*', '?']) {
        return glob(n.as_bytes(), v.as_bytes());
    }
    v == n
        || v.strip_prefix(n.as_str())
            .is_some_and(|rest| rest.starts_with(['_', '-', '.']))
}

fn glob(p: &[u8], s: &[u8]) -> bool {
    match (p.first(), s.first()) {
        (None, None) => true,
        (Some(b'*'), _) => glob(&p[1..], s) || (!s.is_empty() && glob(p, &s[1..])),
        (Some(b'?'), Some(_)) => glob(&p[1..], &s[1..]),
        (Some(a), Some(b)) if a == b => glob(&p[1..], &s[1..]),
        _ => false,
    }
}

/// A threshold for the rows of one table, variant (matched as [`variant_matches`]
/// says) and metric; an omitted field matches anything.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Override {
    pub table: Option<String>,
    pub variant: Option<String>,
    pub metric: Option<String>,
    pub threshold: f64,
}

impl Override {
    pub fn matches(&self, table: &str, variant: &str, metric: &str) -> bool {
        self.table.as_deref().is_none_or(|t| t == table)
            && self
                .variant
                .as_deref()
                .is_none_or(|v| variant_matches(v, variant))
            && self.metric.as_deref().is_none_or(|m| m == metric)
    }
}

/// What a caller asks of a comparison; `None` and empty leave it to `perfdb.toml` and
/// the defaults. Each field's documentation is its `--help` line.
#[derive(Debug, Clone, Default, PartialEq, clap::Args, Serialize, Deserialize)]
#[serde(default)]
pub struct JudgeArgs {
    /// Relative change that counts as a regression or improvement [default: 0.05]
    #[arg(long)]
    #[serde(with = "form::number", skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// Relative change of a trial's GPU energy (the `gpu trial energy` rows `ab` measures
    /// through NVML) that counts as a regression or improvement [default: --threshold]
    #[arg(long)]
    #[serde(with = "form::number", skip_serializing_if = "Option::is_none")]
    pub energy_threshold: Option<f64>,
    /// Significance level for Benjamini-Hochberg adjusted p-values [default: 0.05]
    #[arg(long)]
    #[serde(with = "form::number", skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
    /// Reduction of each side's trials for the ratio [default: median]
    #[arg(long, value_enum)]
    #[serde(with = "form::choice", skip_serializing_if = "Option::is_none")]
    pub reduce: Option<Reduce>,
    /// Welch's t on log values (decides with 3 trials a side), the exact U test, Yuen's t
    /// on 20%-trimmed log values (one slow trial in five falls out), or adaptive: Yuen's
    /// where a few trials lie far out, else Welch's [default: welch; in `ab`: adaptive]
    #[arg(long, value_enum)]
    #[serde(with = "form::choice", skip_serializing_if = "Option::is_none")]
    pub test: Option<Test>,
    /// Control variant(s) both sides ran unchanged (repeatable): `torch` matches torch,
    /// torch_mm, torch.matmul (not torchao); `torch*` is a glob
    #[arg(long)]
    #[serde(with = "form::list", skip_serializing_if = "Vec::is_empty")]
    pub control: Vec<String>,
    /// How far the control may move before results are unreliable [default: 0.10]
    #[arg(long)]
    #[serde(with = "form::number", skip_serializing_if = "Option::is_none")]
    pub control_tol: Option<f64>,
    /// Config file with defaults and per table/variant/metric thresholds
    /// [default: ./perfdb.toml when present]
    #[arg(long)]
    #[serde(skip)]
    pub config: Option<PathBuf>,
    /// Filter rows: table=, variant=, metric=, arch=, commit=, or a tag / key cell (repeatable)
    #[arg(long = "where", value_name = "KEY=VALUE", value_parser = filter)]
    #[serde(
        rename = "where",
        with = "form::pairs",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub filters: Vec<(String, String)>,
    /// Join a profiled kernel to the rows it runs under: rows whose table, variant or key
    /// holds ROW get the counters of the kernels whose name holds KERNEL (repeatable;
    /// without it a kernel joins a row by a word of its name, or as the only kernel)
    #[arg(long = "kernel", value_name = "ROW=KERNEL", value_parser = kernel_join)]
    #[serde(
        rename = "kernel",
        with = "form::joins",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub kernels: Vec<(String, String)>,
    /// Accept rows measured on base but missing on head (they are still listed)
    #[arg(long)]
    #[serde(with = "form::flag", skip_serializing_if = "is_false")]
    pub allow_missing: bool,
    /// Compare sides that ran on different arch, image or `machine` tag
    #[arg(long)]
    #[serde(with = "form::flag", skip_serializing_if = "is_false")]
    pub allow_mixed_hardware: bool,
    /// Fail on numerics failures base had too (by default only new ones fail)
    #[arg(long)]
    #[serde(with = "form::flag", skip_serializing_if = "is_false")]
    pub strict_numerics: bool,
    /// Accept rows whose numerics base checked and head did not
    #[arg(long)]
    #[serde(with = "form::flag", skip_serializing_if = "is_false")]
    pub allow_unchecked: bool,
    /// Under Welch, also report the exact U test's p per row (costly with many trials)
    #[arg(long)]
    #[serde(with = "form::flag", skip_serializing_if = "is_false")]
    pub mann_whitney_p: bool,
    /// Per table/variant/metric thresholds replacing the config's (a saved comparison
    /// replays with its own): not a flag, the config file gives them there.
    #[arg(skip)]
    #[serde(with = "form::json", skip_serializing_if = "Option::is_none")]
    pub overrides: Option<Vec<Override>>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// `--where KEY=VALUE`.
fn filter(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
        _ => Err(format!("'{s}' is not KEY=VALUE")),
    }
}

/// `--kernel ROW=KERNEL`, split at the last `=`: a row is often named by its key
/// (`size=4096`), a kernel's name holds none.
fn kernel_join(s: &str) -> Result<(String, String), String> {
    match s.rsplit_once('=') {
        Some((r, k)) if !r.is_empty() && !k.is_empty() => Ok((r.to_string(), k.to_string())),
        _ => Err(format!("'{s}' is not ROW=KERNEL")),
    }
}

impl JudgeArgs {
    /// What replays `o` exactly: every option it ran with, given explicitly (so a
    /// replay does not depend on the config where it is replayed).
    pub fn replaying(o: &Options) -> JudgeArgs {
        JudgeArgs {
            threshold: Some(o.threshold),
            // Its override is among `overrides`.
            energy_threshold: None,
            alpha: Some(o.alpha),
            reduce: Some(o.reduce),
            test: Some(o.test),
            control: o.control.clone(),
            control_tol: Some(o.control_tol),
            config: None,
            filters: o.filters.clone(),
            kernels: o.kernels.clone(),
            allow_missing: o.allow_missing,
            allow_mixed_hardware: o.allow_mixed_hardware,
            strict_numerics: o.strict_numerics,
            allow_unchecked: o.allow_unchecked,
            mann_whitney_p: o.mann_whitney_p,
            overrides: (!o.overrides.is_empty()).then(|| o.overrides.clone()),
        }
    }
}

/// What a comparison runs with: every option decided ([`JudgeArgs`] resolved).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct Options {
    pub threshold: f64,
    pub alpha: f64,
    pub reduce: Reduce,
    pub test: Test,
    /// The control variant(s), matched as [`variant_matches`] says.
    pub control: Vec<String>,
    pub control_tol: f64,
    /// Per table/variant/metric thresholds (from `perfdb.toml`), kept so a saved
    /// comparison replays exactly.
    pub overrides: Vec<Override>,
    /// `k=v` filters: table/variant/metric/unit on rows, arch/format/commit on runs,
    /// anything else a run tag or an identity key cell.
    pub filters: Vec<(String, String)>,
    /// `row=kernel` joins of profiled kernels to rows (`--kernel`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kernels: Vec<(String, String)>,
    /// Rows measured on base but not on head are listed, not inconclusive.
    pub allow_missing: bool,
    /// Sides on different hardware (arch, image, `machine` tag) are compared anyway.
    pub allow_mixed_hardware: bool,
    /// A numerics failure base had too fails the comparison.
    pub strict_numerics: bool,
    /// A check base made and head no longer makes is accepted.
    pub allow_unchecked: bool,
    /// Under Welch, also report the exact U test's p (`p_mann_whitney`): costly with
    /// many trials, so only when asked.
    pub mann_whitney_p: bool,
    /// Base is the last N commits of the base label, pooled (history as the baseline).
    pub baseline_window: Option<usize>,
    /// Judge the comparison as one look of a sequential A/B run (`perfdb ab`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sequential: Option<super::sequential::Look>,
    /// Leave the trials' GPU energy rows out (`ab` without `--energy`).
    #[serde(skip_serializing_if = "is_false")]
    pub skip_energy: bool,
    /// Which GPU ran each trial of the look (`perfdb ab --gpus`): each row's GPUs'
    /// offsets are taken out before it is tested (`super::strata`), and runs it does
    /// not list are not compared. Not part of a saved report's options.
    #[serde(skip)]
    pub strata: Option<std::sync::Arc<Strata>>,
}

/// Which GPU ran each trial of a look: run id to GPU index. Trials of runs not listed
/// are not compared (a GPU whose state departed from the others: `perfdb ab` says so).
#[derive(Debug, Clone, Default)]
pub struct Strata {
    pub gpu_of: std::collections::HashMap<String, u32>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            threshold: 0.05,
            alpha: 0.05,
            reduce: Reduce::Median,
            test: Test::Welch,
            control: Vec::new(),
            control_tol: 0.10,
            overrides: Vec::new(),
            filters: Vec::new(),
            kernels: Vec::new(),
            allow_missing: false,
            allow_mixed_hardware: false,
            strict_numerics: false,
            allow_unchecked: false,
            mann_whitney_p: false,
            baseline_window: None,
            sequential: None,
            skip_energy: false,
            strata: None,
        }
    }
}

/// The string form of [`JudgeArgs`] (module documentation), one `with` module a kind of
/// field. Every value arrives as a string; an error says what was wrong with it (the
/// web's query reader adds the field's name).
mod form {
    use serde::de::{Deserialize, Deserializer, Error};
    use serde::Serializer;

    fn given<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
        let s = String::deserialize(d)?;
        let t = s.trim();
        Ok((!t.is_empty()).then(|| t.to_string()))
    }

    pub mod number {
        use super::*;
        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
            given(d)?
                .map(|t| {
                    t.parse::<f64>()
                        .map_err(|_| D::Error::custom(format!("'{t}' is not a number (e.g. 0.05)")))
                })
                .transpose()
        }
        pub fn serialize<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
            match v {
                Some(x) => s.serialize_str(&x.to_string()),
                None => s.serialize_none(),
            }
        }
    }

    pub mod choice {
        use super::*;
        use clap::ValueEnum;
        pub fn deserialize<'de, D: Deserializer<'de>, T: ValueEnum>(
            d: D,
        ) -> Result<Option<T>, D::Error> {
            given(d)?
                .map(|t| {
                    T::from_str(&t, false).map_err(|_| {
                        let names: Vec<String> = T::value_variants()
                            .iter()
                            .filter_map(|v| v.to_possible_value())
                            .map(|p| p.get_name().to_string())
                            .collect();
                        D::Error::custom(format!("'{t}': {}", names.join(" or ")))
                    })
                })
                .transpose()
        }
        pub fn serialize<S: Serializer, T: ValueEnum>(
            v: &Option<T>,
            s: S,
        ) -> Result<S::Ok, S::Error> {
            match v.as_ref().and_then(|v| v.to_possible_value()) {
                Some(p) => s.serialize_str(p.get_name()),
                None => s.serialize_none(),
            }
        }
    }

    pub mod list {
        use super::*;
        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
            Ok(given(d)?
                .unwrap_or_default()
                .split(',')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(String::from)
                .collect())
        }
        pub fn serialize<S: Serializer>(v: &[String], s: S) -> Result<S::Ok, S::Error> {
            s.serialize_str(&v.join(","))
        }
    }

    pub mod pairs {
        use super::*;
        pub fn deserialize<'de, D: Deserializer<'de>>(
            d: D,
        ) -> Result<Vec<(String, String)>, D::Error> {
            list::deserialize(d)?
                .into_iter()
                .map(|p| {
                    super::super::filter(&p)
                        .map_err(|_| D::Error::custom(format!("'{p}' is not key=value")))
                })
                .collect()
        }
        pub fn serialize<S: Serializer>(v: &[(String, String)], s: S) -> Result<S::Ok, S::Error> {
            let w: Vec<String> = v.iter().map(|(k, v)| format!("{k}={v}")).collect();
            s.serialize_str(&w.join(","))
        }
    }

    /// `ROW=KERNEL` pairs, split at the last `=` ([`super::kernel_join`]).
    pub mod joins {
        use super::*;
        pub fn deserialize<'de, D: Deserializer<'de>>(
            d: D,
        ) -> Result<Vec<(String, String)>, D::Error> {
            list::deserialize(d)?
                .into_iter()
                .map(|p| super::super::kernel_join(&p).map_err(D::Error::custom))
                .collect()
        }
        pub use super::pairs::serialize;
    }

    pub mod flag {
        use super::*;
        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
            match given(d)?.as_deref() {
                None | Some("0" | "false" | "off" | "no") => Ok(false),
                Some("1" | "true" | "on" | "yes") => Ok(true),
                Some(o) => Err(D::Error::custom(format!(
                    "'{o}': true or false (1, 0, on, off, yes, no)"
                ))),
            }
        }
        pub fn serialize<S: Serializer>(v: &bool, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_str(if *v { "true" } else { "false" })
        }
    }

    pub mod json {
        use super::*;
        use crate::compare::Override;
        pub fn deserialize<'de, D: Deserializer<'de>>(
            d: D,
        ) -> Result<Option<Vec<Override>>, D::Error> {
            given(d)?
                .map(|j| {
                    serde_json::from_str(&j)
                        .map_err(|e| D::Error::custom(format!("not a JSON list of overrides: {e}")))
                })
                .transpose()
        }
        pub fn serialize<S: Serializer>(
            v: &Option<Vec<Override>>,
            s: S,
        ) -> Result<S::Ok, S::Error> {
            match v {
                Some(o) => s.serialize_str(&serde_json::to_string(o).expect("overrides serialise")),
                None => s.serialize_none(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_names_a_variant_not_a_substring() {
        for (name, variant, want) in [
            ("torch", "torch", true),
            ("torch", "torch_mm", true),
            ("torch", "torch.matmul", true),
            ("Torch", "TORCH-ref", true),
            ("torch", "torchao", false),
            ("ck", "cktile", false),
            ("ck", "triton_ck", false),
            ("torch*", "torchao", true),
            ("*_ck", "triton_ck", true),
            ("ck?", "ck2", true),
            // An override's variant follows the same rule.
            ("triton", "triton_mm", true),
            ("mm", "triton_mm", false),
        ] {
            assert_eq!(variant_matches(name, variant), want, "{name} {variant}");
        }
    }

    /// The string form reads back what it wrote: a replay link decides as the
    /// comparison it replays.
    #[test]
    fn the_string_form_round_trips() {
        let o = Options {
            threshold: 0.07,
            control: vec!["torch".into(), "aten*".into()],
            filters: vec![("arch".into(), "gfx942".into()), ("k".into(), "a=b".into())],
            kernels: vec![("size=4096".into(), "add_kernel".into())],
            overrides: vec![Override {
                variant: Some("triton".into()),
                threshold: 0.2,
                ..Override::default()
            }],
            allow_missing: true,
            test: Test::MannWhitney,
            ..Options::default()
        };
        let a = JudgeArgs::replaying(&o);
        let json = serde_json::to_value(&a).unwrap();
        assert_eq!(json["test"], "mann-whitney");
        assert_eq!(json["where"], "arch=gfx942,k=a=b");
        assert_eq!(json["allow_missing"], "true");
        assert!(json.get("strict_numerics").is_none());
        let back: JudgeArgs = serde_json::from_value(json).unwrap();
        assert_eq!(back, a);
    }

    #[test]
    fn a_bad_value_says_what_it_should_be() {
        let bad = |k: &str, v: &str| {
            serde_json::from_value::<JudgeArgs>(serde_json::json!({ k: v }))
                .unwrap_err()
                .to_string()
        };
        assert!(bad("threshold", "abc").contains("'abc' is not a number"));
        assert!(bad("reduce", "mean").contains("'mean': best or median"));
        assert!(bad("test", "t").contains("'t': welch or mann-whitney"));
        assert!(bad("allow_missing", "maybe").contains("true or false"));
        assert!(bad("where", "nokey").contains("'nokey' is not key=value"));
        assert!(bad("overrides", "[1]").contains("not a JSON list of overrides"));
        let empty: JudgeArgs =
            serde_json::from_value(serde_json::json!({"threshold": "", "control": ""})).unwrap();
        assert_eq!(empty, JudgeArgs::default());
    }
}
