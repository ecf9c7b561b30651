//! What a comparison produces: the options it ran with, each side, each row, the
//! control's status, the summary and the overall verdict. Every exporter reads these.

use super::{NotTimed, Options};
use crate::db::DbError;
use perfdb_ingest::model::{self, Direction, Numerics};
use serde::Serialize;

/// A row's state at a look of a sequential A/B run (`perfdb ab`, the stopping rule
/// in [`super::sequential`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    Regression,
    Improvement,
    Cleared,
    Undecidable,
    Undecided,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::Regression => "regression",
            State::Improvement => "improvement",
            State::Cleared => "cleared",
            State::Undecidable => "undecidable",
            State::Undecided => "undecided",
        }
    }
}

/// Fewest trials a side for Welch's test.
pub const MIN_TRIALS_WELCH: usize = 3;
/// Side size from which the U test's p is reported next to Welch's.
pub const MIN_TRIALS_REPORT_MW: usize = 4;

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
    #[error("the {0} side names warehouse runs, and no warehouse was opened")]
    NoWarehouse(&'static str),
}

impl From<duckdb::Error> for CompareError {
    fn from(e: duckdb::Error) -> Self {
        CompareError::Db(DbError::Query(e))
    }
}

/// How a side's selector matched its runs; serialized as `label`, `label@commit`,
/// `label@latest`, `label@last-N`, `commit`, `run_id` or `files`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum MatchedBy {
    /// `LABEL`: the runs of one label (of one commit).
    Label,
    /// `LABEL@COMMIT`.
    LabelAtCommit,
    /// `LABEL@latest`.
    LabelAtLatest,
    /// The runs of a label's last N commits, pooled (`--baseline-window N`).
    LabelWindow(usize),
    /// A commit prefix.
    Commit,
    /// A run id prefix (`run:ID`).
    RunId,
    /// Benchmark files read for the comparison (`compare base/ head/`), not the warehouse.
    Files,
}

impl std::fmt::Display for MatchedBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MatchedBy::Label => f.write_str("label"),
            MatchedBy::LabelAtCommit => f.write_str("label@commit"),
            MatchedBy::LabelAtLatest => f.write_str("label@latest"),
            MatchedBy::LabelWindow(n) => write!(f, "label@last-{n}"),
            MatchedBy::Commit => f.write_str("commit"),
            MatchedBy::RunId => f.write_str("run_id"),
            MatchedBy::Files => f.write_str("files"),
        }
    }
}

impl From<MatchedBy> for String {
    fn from(m: MatchedBy) -> String {
        m.to_string()
    }
}

impl TryFrom<String> for MatchedBy {
    type Error = String;
    fn try_from(s: String) -> Result<MatchedBy, String> {
        Ok(match s.as_str() {
            "label" => MatchedBy::Label,
            "label@commit" => MatchedBy::LabelAtCommit,
            "label@latest" => MatchedBy::LabelAtLatest,
            "commit" => MatchedBy::Commit,
            "run_id" => MatchedBy::RunId,
            "files" => MatchedBy::Files,
            other => match other
                .strip_prefix("label@last-")
                .and_then(|n| n.parse().ok())
            {
                Some(n) => MatchedBy::LabelWindow(n),
                None => return Err(format!("unknown selector match '{other}'")),
            },
        })
    }
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct SideInfo {
    pub selector: String,
    /// How the selector matched.
    pub matched_by: MatchedBy,
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
    /// How the runs' values were measured (their `method` tags), sorted and distinct.
    #[serde(default)]
    pub methods: Vec<String>,
    /// The devices the runs ran on (`perfdb devices`), by id, sorted and distinct: from
    /// each run's `device` tag, else what its machine tag or arch names.
    #[serde(default)]
    pub devices: Vec<String>,
    /// The tags (JSON) of the runs that carry GPU-state tags (`perfdb ab` records the
    /// clocks and throttling), read with the runs; not part of the report.
    #[serde(skip)]
    pub gpu_tags: Vec<String>,
    /// Profiled runs among `runs` (tagged `profiled`): their own timing rows ran under a
    /// profiler's replay and are never a trial; only their counters are read.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub profiled_runs: usize,
    /// Those runs' ids (read with the runs; not part of the report).
    #[serde(skip)]
    pub profiled_run_ids: Vec<String>,
    /// Rows these runs did not time on purpose (`compare::not_timed`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_timed: Vec<NotTimed>,
    /// The runs tagged `identity` (`run --affected`): not part of the report.
    #[serde(skip)]
    pub identity_runs: Vec<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
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
    /// Significant, and the point estimate passes the threshold, but the evidence does
    /// not (yet) show the change beyond it: not a regression, not cleared
    /// (sorted after regressions: it may be one).
    SizeUnknown,
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
            Verdict::SizeUnknown => "size unknown",
            Verdict::NoSignificantChange => "no significant change",
            Verdict::Insufficient => "insufficient",
            Verdict::Invalid => "invalid",
            Verdict::Withheld => "withheld",
            Verdict::Unreliable => "unreliable",
        }
    }
    /// Could this row be compared at all? (A row whose size is unknown was: it moved,
    /// by how much is what is not known.)
    pub fn is_decided(self) -> bool {
        matches!(
            self,
            Verdict::Regression
                | Verdict::Improvement
                | Verdict::WithinThreshold
                | Verdict::SizeUnknown
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
    /// One-sided p that the change passes the threshold in its own direction (the row's
    /// test against the margin ln(1 + threshold)), and its Benjamini-Hochberg q: a
    /// regression or improvement rests on it, not on the point estimate alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p_beyond: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub q_beyond: Option<f64>,
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
    pub state: Option<State>,
    /// Trials a side the row needs: to be decided (an undecided or undecidable row of
    /// `ab`), to show its size against the threshold (a `size unknown` row), or to see
    /// its threshold with power 0.8 (an underpowered row of `compare`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trials_needed: Option<usize>,
    /// The row's ceiling on the device its runs name (head's, else base's): a
    /// throughput whose data type its key says, or a bandwidth. Absent when the device
    /// or the data type is not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak: Option<perfdb_ingest::devices::Peak>,
    /// What `perfdb devices measure` reached on the same device for the same quantity
    /// (in the peak's unit), when it ran there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_peak: Option<f64>,
    /// Each GPU's offset, when the trials ran on several (`perfdb ab --gpus`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpu_offsets: Vec<GpuOffset>,
    /// Degrees of freedom those offsets used, taken off the row's test.
    #[serde(skip)]
    pub lost_df: f64,
}

/// A GPU's offset in one row: how much slower (or lower, for a throughput) its trials
/// read than the row's trials over all GPUs, both arms pooled.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct GpuOffset {
    pub gpu: u32,
    /// exp(o_g - o) - 1 of the row's values (not direction-normalised).
    pub offset: f64,
    /// Trials of each arm on it.
    pub trials: usize,
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

/// Why a row has one side only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OneSidedKind {
    /// Measured on base, not on head.
    Missing,
    /// Measured on head only.
    New,
    /// Not timed on head on purpose (`run --affected`: its identity unchanged).
    NotTimed,
}

impl OneSidedKind {
    pub fn as_str(self) -> &'static str {
        match self {
            OneSidedKind::Missing => "missing",
            OneSidedKind::New => "new",
            OneSidedKind::NotTimed => "not timed",
        }
    }
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct OneSided {
    pub verdict: OneSidedKind,
    pub table: String,
    pub variant: String,
    #[serde(serialize_with = "ser_key", deserialize_with = "de_key")]
    pub key: Vec<(String, String)>,
    pub metric: String,
    /// A row not timed on head: the runs its result is (`LABEL@COMMIT`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filled_from: Option<String>,
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct KeyBasis {
    pub table: String,
    pub key_columns: Vec<String>,
    pub derived_columns_excluded: Vec<String>,
}

/// What decided the overall verdict, as a code a program can act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasonCode {
    /// A head run failed (its harness said so): a regression.
    HeadRunFailed,
    /// Kernel/shape rows regressed beyond the threshold (`rows`: how many).
    Regressed,
    /// A trial's GPU energy regressed beyond its threshold (`rows`: GPUs).
    EnergyRegressed,
    /// Rows fail numerics on head that passed on base.
    NewNumericsFailure,
    /// Rows fail numerics on both sides, under `--strict-numerics`.
    NumericsFailureOnBothSides,
    /// The control variant moved beyond its tolerance: unreliable.
    ControlMoved,
    /// A base run failed: inconclusive.
    BaseRunFailed,
    /// The sides ran on different hardware.
    MixedHardware,
    /// The sides (or one side's runs) were measured differently (`method`): never
    /// compared, whatever the options.
    MixedMethods,
    /// The control variant is on one side only.
    ControlOnOneSide,
    /// Rows measured on base are missing on head.
    MissingOnHead,
    /// Rows checked numerics on base but not on head.
    UncheckedOnHead,
    /// Repeated tables could not be paired between the sides.
    UnpairedTables,
    /// No row matched across the sides.
    NothingMatched,
    /// Rows past the threshold by their estimate, not by their interval: inconclusive.
    SizeUnknown,
    /// Rows could not be compared (too few trials, invalid, withheld, undecided).
    NotCompared,
    /// Every row was compared and none regressed.
    NoRegression,
}

/// One finding behind the overall verdict: its code, the rows it counts (where it
/// counts rows) and its text.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Reason {
    pub code: ReasonCode,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rows: Option<usize>,
    pub text: String,
}

impl Reason {
    pub fn new(code: ReasonCode, rows: Option<usize>, text: String) -> Reason {
        Reason { code, rows, text }
    }

    /// The reasons as one sentence for a person.
    pub fn prose(reasons: &[Reason]) -> String {
        reasons
            .iter()
            .map(|r| r.text.as_str())
            .collect::<Vec<_>>()
            .join("; ")
    }
}

#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Report {
    pub verdict: Overall,
    /// Why, for a person: the texts of `reasons`, joined.
    pub reason: String,
    /// Why, for a program: one entry per finding, with a stable code.
    #[serde(default)]
    pub reasons: Vec<Reason>,
    pub base: SideInfo,
    pub head: SideInfo,
    pub options: Options,
    pub control: Option<ControlStatus>,
    pub summary: Summary,
    pub rows: Vec<Row>,
    pub only_in_base: Vec<OneSided>,
    /// Rows of base head did not time on purpose: not compared, not missing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_timed: Vec<OneSided>,
    pub only_in_head: Vec<OneSided>,
    /// Rows whose every value is missing on both sides (e.g. `tflops=None`).
    pub not_measured: usize,
    pub key_basis: Vec<KeyBasis>,
    pub warnings: Vec<String>,
    /// The hardware counters that moved with each changed row, when both sides were
    /// profiled.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counters: Vec<super::counters::Explained>,
    /// What profiling the sides cost (`perfdb ab --profile`), a line each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profiling: Vec<String>,
}

impl Report {
    pub fn count(&self, v: Verdict) -> usize {
        self.rows
            .iter()
            .filter(|r| !r.control && r.verdict == v)
            .count()
    }
}
