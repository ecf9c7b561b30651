//! `perfdb.toml`: comparison defaults and per table/variant/metric threshold overrides.
//!
//! ```toml
//! [compare]
//! threshold = 0.05        # relative change that counts (5%)
//! alpha = 0.05
//!
//! [[compare.override]]    # first match wins; omitted fields match anything
//! table = "gemm_a16w16"
//! variant = "triton"      # named as --control names it (compare::variant_matches)
//! metric = "latency"
//! threshold = 0.15
//! ```

use crate::compare::{JudgeArgs, Options, Override};
use serde::Deserialize;
use std::path::Path;
use std::sync::Arc;

/// Config file read when none is named and it exists (in the working directory).
pub const DEFAULT_CONFIG: &str = "perfdb.toml";

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub compare: CompareConfig,
    #[serde(default)]
    pub detect: DetectConfig,
    /// `[[device]]`: devices added to the built-in table, or replacing one by id
    /// (docs/data-model.md, "Devices and their peaks").
    #[serde(default)]
    pub device: Vec<perfdb_ingest::devices::Device>,
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
    /// With `detect --since C`, how many commits before C are read as the history a
    /// change is judged against (default 200); a run without --since reads every commit.
    pub context: Option<usize>,
    #[serde(default, rename = "override")]
    pub overrides: Vec<DetectOverride>,
    /// `[detect.stale]`: when missing data raises an alert.
    #[serde(default)]
    pub stale: StaleConfig,
}

/// `[detect.stale]`: a series measured at `reported` of its class's commits in a row and
/// at none of the `missing` or more since is stale; so is a machine class that missed
/// `missing` of its usual gaps, or whose newest run is more than `days` older than the
/// label's newest run (`detect::stale`). `missing = 0` turns the check off.
///
/// ```toml
/// [detect.stale]
/// reported = 5
/// missing = 2
/// days = 3
/// ```
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StaleConfig {
    pub reported: Option<usize>,
    pub missing: Option<usize>,
    pub days: Option<f64>,
}

/// The defaults of `[detect.stale]`.
pub const STALE_REPORTED: usize = 5;
pub const STALE_MISSING: usize = 2;
pub const STALE_DAYS: f64 = 3.0;

impl StaleConfig {
    pub fn reported(&self) -> usize {
        self.reported.unwrap_or(STALE_REPORTED).max(1)
    }
    pub fn missing(&self) -> usize {
        self.missing.unwrap_or(STALE_MISSING)
    }
    /// `None`: no check by days (`days = 0`).
    pub fn days(&self) -> Option<f64> {
        Some(self.days.unwrap_or(STALE_DAYS)).filter(|d| *d > 0.0)
    }
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DetectOverride {
    pub table: Option<String>,
    pub variant: Option<String>,
    pub min_step: f64,
}

/// The default of `[detect] context`: commits before `detect --since`'s commit read as
/// its history; about three weeks of ten commits a day, far more than a step needs
/// ([`crate::stats::changepoint::MIN_SEGMENT`] commits a side).
pub const CONTEXT: usize = 200;

/// The default of `[detect] confirm`.
pub const CONFIRM: usize = 3;

impl DetectConfig {
    /// Commits a new level must hold before it pages.
    pub fn confirm(&self) -> usize {
        self.confirm.unwrap_or(CONFIRM)
    }

    /// Commits before `detect --since`'s commit read as its history.
    pub fn context(&self) -> usize {
        self.context.unwrap_or(CONTEXT)
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
    /// The threshold of the trials' GPU energy rows (`--energy-threshold`).
    pub energy_threshold: Option<f64>,
    pub alpha: Option<f64>,
    pub control_tol: Option<f64>,
    #[serde(default, rename = "override")]
    pub overrides: Vec<Override>,
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

/// A comparison option out of its range, named as `perfdb.toml` and the web's query
/// name it (`control_tol`); the command line words it with its flag ([`Self::worded`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OptionError {
    #[error("{}", self.worded(option))]
    NotAFraction { option: &'static str, value: f64 },
    /// A significance level: in (0, 1). At 0 no row could ever be significant, so every
    /// comparison would read "no significant change" whatever the data.
    #[error("{}", self.worded(option))]
    NotALevel { option: &'static str, value: f64 },
    #[error("{}", self.worded("override threshold"))]
    NegativeOverride { value: f64 },
}

impl OptionError {
    /// The option as `perfdb.toml` names it.
    pub fn option(&self) -> &'static str {
        match self {
            OptionError::NotAFraction { option, .. } | OptionError::NotALevel { option, .. } => {
                option
            }
            OptionError::NegativeOverride { .. } => "override",
        }
    }

    /// The message, naming the option `name` (`--control-tol` on the command line).
    pub fn worded(&self, name: &str) -> String {
        match self {
            OptionError::NotAFraction { value, .. } => {
                format!("{name} must be a fraction in [0, 1), got {value} (5% is 0.05)")
            }
            OptionError::NotALevel { value, .. } => {
                format!("{name} must be a significance level in (0, 1), got {value} (e.g. 0.05)")
            }
            OptionError::NegativeOverride { value } => format!("{name} {value} must be >= 0"),
        }
    }
}

fn fraction(option: &'static str, value: f64) -> Result<f64, OptionError> {
    if (0.0..1.0).contains(&value) {
        Ok(value)
    } else {
        Err(OptionError::NotAFraction { option, value })
    }
}

fn level(option: &'static str, value: f64) -> Result<f64, OptionError> {
    if value > 0.0 && value < 1.0 {
        Ok(value)
    } else {
        Err(OptionError::NotALevel { option, value })
    }
}

/// Per table/variant/metric thresholds, checked alike wherever they come from (the
/// config file, `/api/compare?overrides=`).
pub fn check_overrides(overrides: &[Override]) -> Result<(), OptionError> {
    for o in overrides {
        if !(o.threshold >= 0.0 && o.threshold.is_finite()) {
            return Err(OptionError::NegativeOverride { value: o.threshold });
        }
    }
    Ok(())
}

impl Config {
    /// `path`, or `perfdb.toml` in the working directory when it exists, or the defaults:
    /// the process's configuration.
    pub fn load_or_default(path: Option<&Path>) -> Result<Config, ConfigError> {
        match path {
            Some(p) => Config::load(p),
            None if Path::new(DEFAULT_CONFIG).exists() => Config::load(Path::new(DEFAULT_CONFIG)),
            None => Ok(Config::default()),
        }
    }

    /// The device table runs are read against: the built-in one, with this config's
    /// `[[device]]` entries added. A command makes it once, after loading its config, and
    /// passes it where runs are read (ingest, the warehouse, the pages), which share it.
    pub fn device_table(&self) -> Arc<perfdb_ingest::devices::Table> {
        if self.device.is_empty() {
            return perfdb_ingest::devices::builtin();
        }
        Arc::new(
            perfdb_ingest::devices::Table::with(self.device.clone()).expect("checked when parsed"),
        )
    }

    /// The options of a comparison: what was asked, else this config, else the
    /// defaults; `baseline_window` selects the base side (`compare` and the web page).
    pub fn resolve(
        &self,
        r: &JudgeArgs,
        baseline_window: Option<usize>,
    ) -> Result<Options, OptionError> {
        if let Some(o) = &r.overrides {
            check_overrides(o)?;
        }
        let d = Options::default();
        let c = &self.compare;
        let mut overrides = r.overrides.clone().unwrap_or_else(|| c.overrides.clone());
        // The energy rows' own threshold, ahead of any override (the first match wins).
        if let Some(e) = r.energy_threshold.or(c.energy_threshold) {
            overrides.insert(
                0,
                Override {
                    table: Some(perfdb_ingest::trial_energy::TABLE.to_string()),
                    variant: Some(perfdb_ingest::trial_energy::VARIANT.to_string()),
                    metric: Some(perfdb_ingest::trial_energy::METRIC.to_string()),
                    threshold: fraction("energy_threshold", e)?,
                },
            );
            overrides.insert(
                1,
                Override {
                    table: None,
                    variant: None,
                    metric: Some(perfdb_ingest::call_energy::METRIC.to_string()),
                    threshold: fraction("energy_threshold", e)?,
                },
            );
        }
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
            overrides,
            filters: r.filters.clone(),
            kernels: r.kernels.clone(),
            allow_missing: r.allow_missing,
            allow_mixed_hardware: r.allow_mixed_hardware,
            strict_numerics: r.strict_numerics,
            allow_unchecked: r.allow_unchecked,
            mann_whitney_p: r.mann_whitney_p,
            baseline_window,
            sequential: None,
            skip_energy: false,
            strata: None,
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
        perfdb_ingest::devices::Table::with(cfg.device.clone())?;
        check_overrides(&cfg.compare.overrides).map_err(|e| e.to_string())?;
        if cfg.detect.confirm == Some(0) {
            return Err("[detect] confirm must be at least 1 commit".into());
        }
        if let Some(p) = cfg.detect.p {
            level("[detect] p", p).map_err(|e| e.to_string())?;
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
            let r = JudgeArgs {
                alpha: Some(bad),
                ..JudgeArgs::default()
            };
            let err = c.resolve(&r, None).unwrap_err();
            assert!(
                matches!(
                    err,
                    OptionError::NotALevel {
                        option: "alpha",
                        ..
                    }
                ),
                "{err}"
            );
            assert!(err
                .worded("--alpha")
                .starts_with("--alpha must be a significance level"));
        }
        let r = JudgeArgs {
            alpha: Some(0.01),
            ..JudgeArgs::default()
        };
        assert_eq!(c.resolve(&r, None).unwrap().alpha, 0.01);
    }
}
