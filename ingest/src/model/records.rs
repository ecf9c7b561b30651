//! The records the parsers produce and the warehouse stores: a measurement, what a parse
//! returns (with its provenance and warnings), a run, an alert and its status changes.

use super::format::Format;
use super::keys::{key_from_json, KeyId, KeyOrder, Keys, Raw};
use super::kinds::{AlertStatus, Direction, Numerics, RunVerdict};
use super::names::Name;
use serde::{Deserialize, Serialize};

/// One value, as parsed. `key` holds the identity cells (shape and config) as a
/// canonical name -> value map; `key_order` the order the source printed them in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measurement {
    pub table: Name,
    pub variant: Name,
    /// The row's key, in the [`Keys`] of the parse that made the value.
    pub key: KeyId,
    pub key_order: KeyOrder,
    pub metric: Name,
    pub unit: Name,
    pub direction: Direction,
    /// `None` when the source said the value is missing (nan, None, empty, `-`, skip).
    pub value: Option<f64>,
    /// The cell or field exactly as the source printed it (after trimming); when the
    /// value was converted to its metric's canonical unit, the printed unit follows
    /// (`1.2 ms` for a value stored as 1200 us). In the [`Keys`] of the parse that made
    /// the value, as the key is.
    pub raw: Raw,
    /// The column header or field name the value came from.
    pub column: Name,
    pub numerics: Numerics,
    /// 1-based line number in the source file.
    pub line: u32,
    /// Why the value reads as it does, when the parser had to decide something the
    /// source did not say (`unattributed numerics failure`, `unclassified column`).
    pub note: Option<Name>,
}

/// The harness verdict a format reports for the whole run, when it has one.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Provenance {
    /// `None` when the format has no verdict.
    pub verdict: Option<RunVerdict>,
    /// The reason after `TS_KERNEL_FAIL:` and similar.
    pub verdict_detail: Option<String>,
    pub image_digest: Option<String>,
    pub token: Option<String>,
    pub arch: Option<String>,
    /// The commit the output itself names (pytest-benchmark's `commit_info`): used when
    /// `--commit` is not given.
    pub commit: Option<String>,
    /// When that commit was made (µs since the epoch), if the output says: used when
    /// `--commit-time` is not given.
    pub commit_time_us: Option<i64>,
    /// The machine class the output itself names: used when `--machine` is not given.
    pub machine: Option<String>,
    /// More about the run the output says (`host`, `branch`): kept as tags unless the
    /// command line gives the same tag.
    pub tags: Vec<(String, String)>,
}

/// Something a parser skipped or could not classify: reported at ingest, the rest of
/// the file is still ingested.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// 1-based line, 0 for the file as a whole.
    pub line: usize,
    pub reason: String,
}

/// What a parser returns for one file.
#[derive(Debug, Clone, Default)]
pub struct Parsed {
    pub measurements: Vec<Measurement>,
    /// The keys of `measurements` (and of `repetitions`), by their [`KeyId`]s.
    pub keys: Keys,
    pub provenance: Provenance,
    pub warnings: Vec<Warning>,
    /// Further trials printed in the same output (google-benchmark's repetitions): each
    /// becomes a run of its own, named `<source>#<n>` (n from 2), `measurements` being #1.
    pub repetitions: Vec<Vec<Measurement>>,
    /// Where the output's trials are of different commits or machines (a v3 export of a
    /// whole label): trial `i`'s own provenance (0: `measurements`, `i`: repetition
    /// `i - 1`). Empty: every trial has `provenance`.
    pub trial_provenance: Vec<Provenance>,
}

impl Parsed {
    /// Value `m` of trial `i` (0-based) of the output: trial 0 is this run, trial `i` the
    /// run `#i+1` ([`Parsed::repetitions`]).
    pub fn push_trial(&mut self, i: usize, m: Measurement) {
        if i == 0 {
            self.measurements.push(m);
            return;
        }
        if self.repetitions.len() < i {
            self.repetitions.resize_with(i, Vec::new);
        }
        self.repetitions[i - 1].push(m);
    }

    /// An empty result with room for the values of `text`, at about `bytes_per_value`
    /// bytes of text per value (a lower bound for the format, so the list is rarely
    /// regrown: growing it copies every value, which cost large inputs up to a fifth of
    /// their parse time). Capped, so a huge input reserves at most ~120 MB up front.
    pub fn sized_for(text: &str, bytes_per_value: usize) -> Parsed {
        const MAX_RESERVED: usize = 1 << 20;
        Parsed {
            measurements: Vec::with_capacity((text.len() / bytes_per_value).min(MAX_RESERVED)),
            ..Parsed::default()
        }
    }
    /// The key text of `m`, one of this parse's values.
    pub fn key(&self, m: &Measurement) -> &str {
        self.keys.get(m.key)
    }
    /// The printed text of `m`, one of this parse's values.
    pub fn raw(&self, m: &Measurement) -> &str {
        self.keys.printed(m.raw)
    }
    /// The identity cells of `m`, one of this parse's values, as pairs in source order.
    pub fn key_pairs(&self, m: &Measurement) -> Vec<(String, String)> {
        key_from_json(self.key(m))
    }
}

/// Metadata the user gives at ingest time.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunMeta {
    pub label: String,
    pub commit: Option<String>,
    /// When the commit was made (microseconds since the Unix epoch, UTC); orders the
    /// runs of a label for `LABEL@latest` and history. Ingest time when not given.
    pub commit_time_us: Option<i64>,
    pub arch: Option<String>,
    pub tags: Vec<(String, String)>,
    /// `--unit`: the unit of values whose source prints none (Triton's CSV).
    pub unit: Option<String>,
    /// `--variant-axis`: the nvbench axis whose values are the variants.
    pub variant_axis: Option<String>,
    /// Set by `perfdb run` when the command exited non-zero: the run is a failed run,
    /// whatever its output says.
    pub failed: Option<String>,
}

/// A run as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub run_id: String,
    /// Microseconds since the Unix epoch, UTC.
    pub ingested_at_us: i64,
    pub source_path: String,
    pub source_sha256: String,
    /// `None`: a failed run whose output matched no format (stored as `none`).
    pub format: Option<Format>,
    pub label: String,
    pub commit: Option<String>,
    /// Microseconds since the Unix epoch, UTC.
    pub commit_time_us: i64,
    pub arch: Option<String>,
    pub tags: Vec<(String, String)>,
    /// 1-based index of this trial within its label, in ingest order.
    pub trial: i32,
    pub verdict: Option<RunVerdict>,
    pub verdict_detail: Option<String>,
    pub image_digest: Option<String>,
    pub token: Option<String>,
    pub n_measurements: i64,
    pub n_tables: i32,
}

/// A regression `perfdb detect` found: one kernel and shape on one machine class,
/// stepping worse at one commit (the `alerts` table).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AlertRecord {
    /// The step's identity: the first 16 hex digits of the SHA-256 of label, table,
    /// variant, canonical key, machine class and the first bad commit it was first
    /// stored with. A later detection of the same step keeps it (docs/alerts.md).
    pub alert_id: String,
    /// This revision of the alert: its id, last good and first bad commit and size. A
    /// record is stored once per fingerprint; the alert is its newest revision.
    pub fingerprint: String,
    pub label: String,
    pub table: String,
    pub variant: String,
    /// Canonical key JSON (as in `measurements.key`).
    pub key: String,
    /// The key as printed: `M=512 N=4096 K=4096 dtype=torch.bfloat16`.
    pub key_text: String,
    pub machine: String,
    pub last_good_commit: String,
    pub first_bad_commit: String,
    /// The metrics that moved, as JSON: `[{metric, unit, direction, before_median,
    /// after_median, ratio, p}]`.
    pub metrics: String,
    /// The size now: the primary metric's level at the latest confirmed segment over its
    /// level before the step (latency where it moved). A partial fix shrinks it.
    pub ratio: f64,
    /// The smallest p of the metrics' tests.
    pub p: f64,
    /// Run ids either side of the change point that support it, as a JSON array.
    pub runs: String,
    /// Microseconds since the Unix epoch, UTC.
    pub created_at_us: i64,
}

/// An alert delivered to a notification target (the `alert_delivery` table,
/// append-only): a delivered alert is never sent to that target again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Delivery {
    pub alert_id: String,
    pub target: String,
    pub delivered_at_us: i64,
    pub http_status: i32,
    pub attempts: i32,
}

/// One change of an alert's status (the `alert_status` table, append-only): the
/// current status is the latest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatusChange {
    pub alert_id: String,
    pub status: AlertStatus,
    pub at_us: i64,
    pub who: String,
    pub note: String,
}

/// Why `name` cannot be a commit name, if it cannot. Commit names reach `git` and the
/// shell hints perfdb prints: one that starts with `-` would be read as an option, and
/// control characters (a newline, an escape) forge lines in a terminal or a log.
pub fn commit_name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("an empty commit name")
    } else if name.starts_with('-') {
        Some("a commit name that starts with `-` (git would read it as an option)")
    } else if name.chars().any(char::is_control) {
        Some("a commit name with a control character")
    } else {
        None
    }
}
