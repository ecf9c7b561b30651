//! What a comparison produces: the options it ran with, each side, each row, the
//! control's status, the summary and the overall verdict. Every exporter reads these.

use crate::db::DbError;
use perfdb_ingest::model::{self, Direction, Numerics};
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Reduce {
    Best,
    Median,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Test {
    Welch,
    MannWhitney,
}

/// Fewest trials a side for Welch's test.
pub const MIN_TRIALS_WELCH: usize = 3;
/// Side size from which the U test's p is reported next to Welch's.
pub const MIN_TRIALS_REPORT_MW: usize = 4;

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Options {
    pub threshold: f64,
    pub alpha: f64,
    pub reduce: Reduce,
    pub test: Test,
    /// The control variant(s): a name matches a variant that is that name or starts
    /// with it followed by `_`, `-` or `.` (case-insensitive: `torch` matches
    /// `torch_mm`, not `torchao`); `*` and `?` make a glob.
    pub control: Vec<String>,
    pub control_tol: f64,
    /// Per table/variant/metric thresholds (from `perfdb.toml`), kept so a saved
    /// comparison replays exactly.
    pub overrides: Vec<crate::config::Override>,
    /// `k=v` filters: table/variant/metric/unit on rows, arch/format/commit on runs,
    /// anything else a run tag or an identity key cell.
    pub filters: Vec<(String, String)>,
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
}

impl Options {
    /// The web query that replays a comparison with exactly these options (after
    /// `base=...&head=...`): every option, the overrides as JSON.
    pub fn to_query(&self) -> String {
        let mut q = vec![
            format!("threshold={}", self.threshold),
            format!("alpha={}", self.alpha),
            format!("control_tol={}", self.control_tol),
            format!(
                "reduce={}",
                match self.reduce {
                    Reduce::Best => "best",
                    Reduce::Median => "median",
                }
            ),
            format!(
                "test={}",
                match self.test {
                    Test::Welch => "welch",
                    Test::MannWhitney => "mann-whitney",
                }
            ),
        ];
        if !self.control.is_empty() {
            q.push(format!("control={}", url_encode(&self.control.join(","))));
        }
        if let Some(n) = self.baseline_window {
            q.push(format!("baseline_window={n}"));
        }
        if !self.filters.is_empty() {
            let w: Vec<String> = self
                .filters
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            q.push(format!("where={}", url_encode(&w.join(","))));
        }
        if !self.overrides.is_empty() {
            let json = serde_json::to_string(&self.overrides).expect("overrides serialise");
            q.push(format!("overrides={}", url_encode(&json)));
        }
        for (flag, on) in [
            ("allow_missing", self.allow_missing),
            ("allow_mixed_hardware", self.allow_mixed_hardware),
            ("strict_numerics", self.strict_numerics),
            ("allow_unchecked", self.allow_unchecked),
            ("mann_whitney_p", self.mann_whitney_p),
        ] {
            if on {
                q.push(format!("{flag}=true"));
            }
        }
        q.join("&")
    }
}

/// Percent-encode everything but unreserved characters (RFC 3986).
pub fn url_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The inverse of `url_encode` (and `+` as a space, as forms send it); a `%` not
/// followed by two hex digits stays as it is.
pub fn url_decode(s: &str) -> String {
    let b = s.as_bytes();
    let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => match (
                b.get(i + 1).copied().and_then(hex),
                b.get(i + 2).copied().and_then(hex),
            ) {
                (Some(h), Some(l)) => {
                    out.push(h * 16 + l);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' => out.push(b' '),
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
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
            allow_missing: false,
            allow_mixed_hardware: false,
            strict_numerics: false,
            allow_unchecked: false,
            mann_whitney_p: false,
            baseline_window: None,
            sequential: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    #[error(transparent)]
    Db(#[from] DbError),
    #[error("no runs match '{0}' (tried label, commit prefix and run id prefix); `perfdb runs` lists them")]
    NoRuns(String),
    #[error("the {0} selector is empty (an unset variable?): give a label, LABEL@COMMIT, LABEL@latest, a commit prefix or run:ID")]
    EmptySelector(&'static str),
    #[error("label '{label}' holds runs of {} commits ({}): say which, e.g. {label}@{} or {label}@latest", .commits.len(), .commits.join(", "), .commits[0])]
    LabelSpansCommits { label: String, commits: Vec<String> },
    #[error("base '{base}' and head '{head}' share {n} run(s) (e.g. {example}): a side cannot be compared with itself")]
    SidesOverlap {
        base: String,
        head: String,
        n: usize,
        example: String,
    },
    #[error("--control {control} matches no variant on either side; variants present: {}", .present.join(", "))]
    ControlMatchesNothing {
        control: String,
        present: Vec<String>,
    },
    #[error("invalid --where '{0}': expected key=value")]
    BadFilter(String),
}

impl From<duckdb::Error> for CompareError {
    fn from(e: duckdb::Error) -> Self {
        CompareError::Db(DbError::Query(e))
    }
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct SideInfo {
    pub selector: String,
    /// How the selector matched: `label`, `label@commit`, `label@latest`, `commit` or `run_id`.
    pub matched_by: String,
    pub runs: Vec<String>,
    pub labels: Vec<String>,
    pub commits: Vec<String>,
    /// Runs whose harness said they failed (`TS_KERNEL_FAIL`, a failed check of a
    /// variant no table measured): the run and the harness's words.
    pub failed_runs: Vec<FailedRun>,
    /// The hardware the runs ran on: GPU architectures, container image digests and
    /// `machine` tags, each sorted and distinct.
    pub archs: Vec<String>,
    pub image_digests: Vec<String>,
    pub machines: Vec<String>,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct FailedRun {
    pub run_id: String,
    pub source_path: String,
    pub detail: String,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct SideStats {
    pub n: usize,
    pub values: Vec<Option<f64>>,
    pub best: Option<f64>,
    pub median: Option<f64>,
    /// Distribution-free 95% CI of the median; `null` ends are infinite (< 6 trials).
    pub median_ci: (Option<f64>, Option<f64>),
}

impl SideStats {
    /// The trials' values, those that have one.
    pub fn finite(&self) -> Vec<f64> {
        self.values.iter().flatten().copied().collect()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Regression,
    Improvement,
    WithinThreshold,
    NoSignificantChange,
    Insufficient,
    Invalid,
    Withheld,
    Unreliable,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Regression => "regression",
            Verdict::Improvement => "improvement",
            Verdict::WithinThreshold => "within threshold",
            Verdict::NoSignificantChange => "no significant change",
            Verdict::Insufficient => "insufficient",
            Verdict::Invalid => "invalid",
            Verdict::Withheld => "withheld",
            Verdict::Unreliable => "unreliable",
        }
    }
    /// Could this row be compared at all?
    pub fn is_decided(self) -> bool {
        matches!(
            self,
            Verdict::Regression
                | Verdict::Improvement
                | Verdict::WithinThreshold
                | Verdict::NoSignificantChange
        )
    }
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Row {
    pub table: String,
    pub variant: String,
    #[serde(serialize_with = "ser_key", deserialize_with = "de_key")]
    pub key: Vec<(String, String)>,
    /// The key as text in source order (`M=512 N=4096 K=4096`): JSON objects lose order.
    pub key_text: String,
    pub metric: String,
    pub unit: String,
    pub direction: Direction,
    pub base: SideStats,
    pub head: SideStats,
    /// head / base of the chosen reduction.
    pub ratio: Option<f64>,
    /// 95% CI of head / base as a ratio of geometric means (Welch, log scale).
    pub ratio_ci: Option<(f64, f64)>,
    /// Direction-normalised relative change: > 0 is worse (slower) whatever the metric.
    pub change: Option<f64>,
    pub p: Option<f64>,
    /// Mann-Whitney p: the test's own under `--test mann-whitney`; next to Welch's with
    /// `--mann-whitney-p` when both sides have >= 4 trials; else null.
    pub p_mann_whitney: Option<f64>,
    pub q: Option<f64>,
    pub threshold: f64,
    pub verdict: Verdict,
    pub reason: String,
    pub control: bool,
    pub head_numerics: Numerics,
    pub base_numerics: Numerics,
    /// Head's numerics judged against base's.
    pub numerics: NumericsStatus,
    /// The two levels one side's trials split into, when they do (base's first; a
    /// kernel that runs at one of two speeds): the medians then compare how often each
    /// side sat in the slow mode more than the code.
    #[serde(default)]
    pub modes: Option<(f64, f64)>,
    /// As one look of `perfdb ab`: regression, improvement, cleared, undecidable or
    /// undecided (docs/STATS.md, "Sequential A/B"); absent in a one-shot comparison.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<super::sequential::State>,
    /// Trials a side the row needs: to be decided (an undecided or undecidable row of
    /// `ab`), or to see its threshold with power 0.8 (an underpowered row of `compare`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trials_needed: Option<usize>,
}

/// Head's numerics judged against base (docs/STATS.md, "Numerics").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NumericsStatus {
    /// Nothing new: both pass, or neither side checked.
    Ok,
    /// Head fails a check base passed or did not make: the comparison fails.
    NewFailure,
    /// Both sides fail: reported; fails the comparison only with --strict-numerics.
    PreExisting,
    /// Base checked and passed, head did not check: not a pass.
    UncheckedOnHead,
}

impl NumericsStatus {
    pub fn of(base: Numerics, head: Numerics) -> NumericsStatus {
        match (base, head) {
            (Numerics::Fail, Numerics::Fail) => NumericsStatus::PreExisting,
            (_, Numerics::Fail) => NumericsStatus::NewFailure,
            (Numerics::Pass, Numerics::NotChecked) => NumericsStatus::UncheckedOnHead,
            _ => NumericsStatus::Ok,
        }
    }
}

impl Row {
    /// The key as the log printed it (`key_text`; a saved report's `key` object has
    /// lost that order).
    pub fn key_display(&self) -> String {
        if self.key_text.is_empty() {
            model::key_display(&self.key)
        } else {
            self.key_text.clone()
        }
    }
    /// Head fails a check base did not fail.
    pub fn numerics_failed(&self) -> bool {
        self.numerics == NumericsStatus::NewFailure
    }
}

/// A latency row (`t`, `triton`, no key, lower is better) with these sides and nothing
/// judged yet: tests set what they need on top.
#[cfg(test)]
pub(crate) fn test_row(base: SideStats, head: SideStats) -> Row {
    Row {
        table: "t".into(),
        variant: "triton".into(),
        key: vec![],
        key_text: String::new(),
        metric: "latency".into(),
        unit: "us".into(),
        direction: Direction::Lower,
        base,
        head,
        ratio: None,
        ratio_ci: None,
        change: None,
        p: None,
        p_mann_whitney: None,
        q: None,
        threshold: 0.05,
        verdict: Verdict::Invalid,
        reason: String::new(),
        control: false,
        head_numerics: Numerics::NotChecked,
        base_numerics: Numerics::NotChecked,
        numerics: NumericsStatus::Ok,
        modes: None,
        state: None,
        trials_needed: None,
    }
}

/// A key read back from its JSON object (saved reports); cells in the object's order.
fn de_key<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<(String, String)>, D::Error> {
    let m: serde_json::Map<String, serde_json::Value> = serde::Deserialize::deserialize(d)?;
    Ok(m.into_iter()
        .map(|(k, v)| {
            let v = match v {
                serde_json::Value::String(s) => s,
                other => other.to_string(),
            };
            (k, v)
        })
        .collect())
}

fn ser_key<S: serde::Serializer>(key: &[(String, String)], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut m = s.serialize_map(Some(key.len()))?;
    for (k, v) in key {
        m.serialize_entry(k, v)?;
    }
    m.end()
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct ControlMetric {
    pub metric: String,
    /// Geometric mean of the control's direction-normalised ratios (> 1 = slower).
    pub ratio: f64,
    pub rows: usize,
    pub passed: bool,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct ControlStatus {
    pub variant: Vec<String>,
    pub matched_variants: Vec<String>,
    pub tolerance: f64,
    pub metrics: Vec<ControlMetric>,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Summary {
    /// Geometric mean over compared and trusted (decided) non-control rows of the direction-normalised ratio
    /// (> 1 = slower), benchstat's definition.
    pub geomean_ratio: Option<f64>,
    /// Stratified bootstrap 95% CI (fixed seed).
    pub ci: Option<(f64, f64)>,
    /// t-interval over rows, a secondary figure.
    pub t_ci: Option<(f64, f64)>,
    pub rows: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Overall {
    Ok,
    Regression,
    Inconclusive,
    Unreliable,
}

impl Overall {
    /// The process exit code CI acts on.
    pub fn exit_code(self) -> u8 {
        match self {
            Overall::Ok => 0,
            Overall::Regression => 1,
            Overall::Inconclusive | Overall::Unreliable => 3,
        }
    }
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct OneSided {
    /// `missing` (measured on base, not on head) or `new` (only on head).
    pub verdict: std::borrow::Cow<'static, str>,
    pub table: String,
    pub variant: String,
    #[serde(serialize_with = "ser_key", deserialize_with = "de_key")]
    pub key: Vec<(String, String)>,
    pub metric: String,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct KeyBasis {
    pub table: String,
    pub key_columns: Vec<String>,
    pub derived_columns_excluded: Vec<String>,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Report {
    pub verdict: Overall,
    pub reason: String,
    pub base: SideInfo,
    pub head: SideInfo,
    pub options: Options,
    pub control: Option<ControlStatus>,
    pub summary: Summary,
    pub rows: Vec<Row>,
    pub only_in_base: Vec<OneSided>,
    pub only_in_head: Vec<OneSided>,
    /// Rows whose every value is missing on both sides (e.g. `tflops=None`).
    pub not_measured: usize,
    pub key_basis: Vec<KeyBasis>,
    pub warnings: Vec<String>,
}

impl Report {
    pub fn count(&self, v: Verdict) -> usize {
        self.rows
            .iter()
            .filter(|r| !r.control && r.verdict == v)
            .count()
    }
    pub fn numerics_failures(&self) -> Vec<&Row> {
        self.rows.iter().filter(|r| r.numerics_failed()).collect()
    }
}
