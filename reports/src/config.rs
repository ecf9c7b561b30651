//! `perfdb.toml`: comparison defaults and per table/variant/metric threshold overrides.
//!
//! ```toml
//! [compare]
//! threshold = 0.05        # relative change that counts (5%)
//! alpha = 0.05
//!
//! [[compare.override]]    # first match wins; omitted fields match anything
//! table = "gemm_a16w16"
//! variant = "triton"      # case-insensitive substring, like --control
//! metric = "latency"
//! threshold = 0.15
//! ```

use crate::compare::{Options, Reduce, Test};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Config file read when none is named and it exists (in the working directory).
pub const DEFAULT_CONFIG: &str = "perfdb.toml";

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub compare: CompareConfig,
    #[serde(default)]
    pub detect: DetectConfig,
}

/// `[detect]`: the change-point detector's thresholds, with per table/variant minimum
/// steps (first match wins), e.g. a noisy kernel that should move 10% before it alerts:
///
/// ```toml
/// [detect]
/// p = 0.001
/// min_step = 0.05
/// [[detect.override]]
/// variant = "triton_add"
/// min_step = 0.10
/// ```
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DetectConfig {
    pub p: Option<f64>,
    pub min_step: Option<f64>,
    /// Commits a new level must hold before its alert pages (default 3): until then a
    /// step at the tip is pending.
    pub confirm: Option<usize>,
    #[serde(default, rename = "override")]
    pub overrides: Vec<DetectOverride>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DetectOverride {
    pub table: Option<String>,
    pub variant: Option<String>,
    pub min_step: f64,
}

/// The default of `[detect] confirm`.
pub const CONFIRM: usize = 3;

impl DetectConfig {
    /// Commits a new level must hold before it pages.
    pub fn confirm(&self) -> usize {
        self.confirm.unwrap_or(CONFIRM)
    }

    /// The detector's thresholds for one series.
    pub fn for_series(&self, table: &str, variant: &str) -> crate::stats::changepoint::Params {
        let d = crate::stats::changepoint::Params::default();
        let min_step = self
            .overrides
            .iter()
            .find(|o| {
                o.table.as_deref().is_none_or(|t| t == table)
                    && o.variant.as_deref().is_none_or(|v| v == variant)
            })
            .map(|o| o.min_step)
            .or(self.min_step)
            .unwrap_or(d.min_step);
        crate::stats::changepoint::Params {
            p: self.p.unwrap_or(d.p),
            min_step,
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CompareConfig {
    /// Where `perfdb detect` delivers new alerts (besides `--notify`).
    #[serde(default)]
    pub notify: Vec<String>,
    pub threshold: Option<f64>,
    pub alpha: Option<f64>,
    pub control_tol: Option<f64>,
    #[serde(default, rename = "override")]
    pub overrides: Vec<Override>,
}

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
                .is_none_or(|v| variant.to_lowercase().contains(&v.to_lowercase()))
            && self.metric.as_deref().is_none_or(|m| m == metric)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: cannot read: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Parse { path: String, message: String },
}

/// What a caller asks of one comparison — the command line's flags, or the web page's
/// query — before `perfdb.toml` and the defaults fill in what it left unset. The CLI
/// and the web app both go through [`Config::resolve`], so they decide alike.
#[derive(Debug, Clone, Default)]
pub struct Requested {
    pub threshold: Option<f64>,
    pub alpha: Option<f64>,
    pub control_tol: Option<f64>,
    pub reduce: Option<Reduce>,
    pub test: Option<Test>,
    pub control: Vec<String>,
    pub filters: Vec<(String, String)>,
    /// Replace the config's per table/variant/metric overrides (a saved comparison
    /// replays with its own).
    pub overrides: Option<Vec<Override>>,
    pub allow_missing: bool,
    pub allow_mixed_hardware: bool,
    pub strict_numerics: bool,
    pub allow_unchecked: bool,
    pub mann_whitney_p: bool,
    pub baseline_window: Option<usize>,
}

fn fraction(name: &str, v: f64) -> Result<f64, String> {
    if (0.0..1.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!(
            "{name} must be a fraction in [0, 1), got {v} (5% is 0.05)"
        ))
    }
}

/// A significance level: in (0, 1). At 0 no row could ever be significant, so every
/// comparison would read "no significant change" whatever the data.
fn level(name: &str, v: f64) -> Result<f64, String> {
    if v > 0.0 && v < 1.0 {
        Ok(v)
    } else {
        Err(format!(
            "{name} must be a significance level in (0, 1), got {v} (e.g. 0.05)"
        ))
    }
}

/// Per table/variant/metric thresholds, checked alike wherever they come from (the
/// config file, `/api/compare?overrides=`).
pub fn check_overrides(overrides: &[Override]) -> Result<(), String> {
    for o in overrides {
        if !(o.threshold >= 0.0 && o.threshold.is_finite()) {
            return Err(format!("override threshold {} must be >= 0", o.threshold));
        }
    }
    Ok(())
}

impl Config {
    /// `path`, or `perfdb.toml` in the working directory when it exists, or the defaults.
    pub fn load_or_default(path: Option<&Path>) -> Result<Config, ConfigError> {
        match path {
            Some(p) => Config::load(p),
            None if Path::new(DEFAULT_CONFIG).exists() => Config::load(Path::new(DEFAULT_CONFIG)),
            None => Ok(Config::default()),
        }
    }

    /// The options of a comparison: what was asked, else this config, else the defaults.
    pub fn resolve(&self, r: &Requested) -> Result<Options, String> {
        if let Some(o) = &r.overrides {
            check_overrides(o)?;
        }
        let d = Options::default();
        let c = &self.compare;
        Ok(Options {
            threshold: fraction(
                "threshold",
                r.threshold.or(c.threshold).unwrap_or(d.threshold),
            )?,
            alpha: level("alpha", r.alpha.or(c.alpha).unwrap_or(d.alpha))?,
            control_tol: fraction(
                "control_tol",
                r.control_tol.or(c.control_tol).unwrap_or(d.control_tol),
            )?,
            reduce: r.reduce.unwrap_or(d.reduce),
            test: r.test.unwrap_or(d.test),
            control: r.control.clone(),
            overrides: r.overrides.clone().unwrap_or_else(|| c.overrides.clone()),
            filters: r.filters.clone(),
            allow_missing: r.allow_missing,
            allow_mixed_hardware: r.allow_mixed_hardware,
            strict_numerics: r.strict_numerics,
            allow_unchecked: r.allow_unchecked,
            mann_whitney_p: r.mann_whitney_p,
            baseline_window: r.baseline_window,
            sequential: None,
        })
    }

    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Self::parse(&text).map_err(|message| ConfigError::Parse {
            path: path.display().to_string(),
            message,
        })
    }

    pub fn parse(text: &str) -> Result<Config, String> {
        let cfg: Config = toml::from_str(text).map_err(|e| e.to_string())?;
        check_overrides(&cfg.compare.overrides)?;
        if cfg.detect.confirm == Some(0) {
            return Err("[detect] confirm must be at least 1 commit".into());
        }
        if let Some(p) = cfg.detect.p {
            level("[detect] p", p)?;
        }
        Ok(cfg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_overrides_and_rejects_typos() {
        let c = Config::parse(
            "[compare]\nthreshold = 0.1\n[[compare.override]]\nvariant = \"Triton\"\nthreshold = 0.2\n",
        )
        .unwrap();
        assert_eq!(c.compare.threshold, Some(0.1));
        assert!(c.compare.overrides[0].matches("t", "triton_mm", "latency"));
        assert!(!c.compare.overrides[0].matches("t", "torch", "latency"));
        let err = Config::parse("[compare]\nthreshhold = 0.1\n").unwrap_err();
        assert!(err.contains("threshhold"), "{err}");
    }

    #[test]
    fn alpha_is_a_level_in_the_open_interval() {
        let c = Config::default();
        for bad in [0.0, 1.0, -0.1, 1.5, f64::NAN] {
            let r = Requested {
                alpha: Some(bad),
                ..Requested::default()
            };
            let err = c.resolve(&r).unwrap_err();
            assert!(
                err.contains("alpha must be a significance level in (0, 1)"),
                "{err}"
            );
        }
        let r = Requested {
            alpha: Some(0.01),
            ..Requested::default()
        };
        assert_eq!(c.resolve(&r).unwrap().alpha, 0.01);
    }
}
