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

use serde::Deserialize;
use std::path::Path;

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub compare: CompareConfig,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CompareConfig {
    pub threshold: Option<f64>,
    pub alpha: Option<f64>,
    pub control_tol: Option<f64>,
    #[serde(default, rename = "override")]
    pub overrides: Vec<Override>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
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

impl Config {
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
        for o in &cfg.compare.overrides {
            if !(o.threshold >= 0.0 && o.threshold.is_finite()) {
                return Err(format!("override threshold {} must be >= 0", o.threshold));
            }
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
}
