//! The canonical data model: what every input format is turned into.
//!
//! A *run* is one benchmark process output (one file = one trial). A *measurement* is
//! one value of one run. The Arrow schema of both lives in [`crate::warehouse::schema`]; this module
//! holds the in-memory records the parsers produce.

mod format;

pub use format::Format;

use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;

/// The variant of a value whose source names none (a `us` column with no variant
/// prefix, a harness with one implementation).
pub const DEFAULT_VARIANT: &str = "default";

/// The run tag that says how a run's values were measured (`nvbench:cold`,
/// `do_bench:median`, `tritonbench:p50`...): set by a format that tells, or by
/// `--method`. Series measured differently are never pooled or compared as one.
pub const METHOD_TAG: &str = "method";

/// A name shared by many values (table, variant, metric, unit, column). Names are
/// interned for the life of the process: copying one is copying a pointer, with no
/// reference count to touch per value. The pointer is thin (one word: the interned
/// `Box<str>`), which keeps a [`Measurement`] — moved once per parsed value — small.
/// The set of distinct names a process sees is small (columns and fields of the formats
/// it reads), so the interner stays small.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Name(&'static NameText);

/// The interned text of a [`Name`]; a sized box, so a reference to it is one word.
#[derive(PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NameText(Box<str>);

type Interned = std::collections::HashMap<&'static str, &'static NameText>;

static NAMES: std::sync::LazyLock<std::sync::Mutex<Interned>> =
    std::sync::LazyLock::new(Default::default);

thread_local! {
    /// Names this thread has seen: looked up without taking the process-wide lock
    /// (parsers intern a metric, unit and column per value, on every core).
    static SEEN: std::cell::RefCell<std::collections::HashMap<&'static str, Name, crate::hash::Fx>> =
        Default::default();
}

impl Name {
    pub fn new(s: &str) -> Name {
        if let Some(n) = SEEN.with(|seen| seen.borrow().get(s).copied()) {
            return n;
        }
        let n = Name::intern(s);
        SEEN.with(|seen| seen.borrow_mut().insert(n.as_str(), n));
        n
    }
    fn intern(s: &str) -> Name {
        let mut names = NAMES.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = names.get(s) {
            return Name(n);
        }
        let leaked: &'static NameText = Box::leak(Box::new(NameText(s.into())));
        names.insert(&leaked.0, leaked);
        Name(leaked)
    }
    pub fn as_str(&self) -> &'static str {
        &self.0 .0
    }
}

impl From<&str> for Name {
    fn from(s: &str) -> Name {
        Name::new(s)
    }
}

impl From<String> for Name {
    fn from(s: String) -> Name {
        Name::new(&s)
    }
}

impl std::ops::Deref for Name {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Name {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
/// Identity cells shared by every value of one table row or record, as the canonical
/// JSON object text the warehouse stores: cells sorted by name (then value), so two
/// sources that print the same cells in another column order give the same key. The
/// source order is kept apart, per table, in a [`KeyOrder`]. Parsers encode a row's key once.
pub type Key = Arc<str>;

/// The names of a key's cells in the order the source printed them, as a JSON array
/// (`["M","N","K","dtype"]`): one per table or record layout, for display only.
pub type KeyOrder = Name;

/// The text of the key with no cells.
const EMPTY_KEY: &str = "{}";

/// Which of its parse's [`Keys`] a value's key is: copied with the value, never counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KeyId(u32);

/// The strings of one parse's values: its rows' keys and its values' printed texts
/// ([`Raw`], in a string of their own). Each key is a canonical key's JSON text (as
/// [`key_of`] writes it), all end to end in one string. A row's key is written here once, with no
/// allocation of its own, and each of the row's values holds its [`KeyId`]: a value no
/// longer clones (and later drops) a reference-counted key, which cost ~12 ns a value.
/// A key equal to the one written just before it is stored once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Keys {
    /// Each value's printed text ([`Raw`]), end to end.
    printed: String,
    text: String,
    /// Where each key ends in `text`; key `i` starts where key `i - 1` ends.
    ends: Vec<usize>,
    /// The key with no cells, once written.
    empty: Option<KeyId>,
}

impl Keys {
    /// The id of `json`, a canonical key text.
    pub fn push(&mut self, json: &str) -> KeyId {
        self.text.push_str(json);
        self.finish()
    }
    /// The id of the key with no cells (written once per parse).
    pub fn empty(&mut self) -> KeyId {
        match self.empty {
            Some(id) => id,
            None => {
                let id = self.push(EMPTY_KEY);
                *self.empty.insert(id)
            }
        }
    }
    /// The text the next key is written onto, piece by piece, before [`Keys::finish`]:
    /// write only after the current end.
    pub(crate) fn text_mut(&mut self) -> &mut String {
        &mut self.text
    }
    /// The id of the key written onto [`Keys::text_mut`] since the last one ended.
    pub(crate) fn finish(&mut self) -> KeyId {
        let end = self.ends.last().copied().unwrap_or(0);
        if let Some(last) = self.ends.len().checked_sub(1) {
            let start = if last == 0 { 0 } else { self.ends[last - 1] };
            if self.text[start..end] == self.text[end..] {
                self.text.truncate(end);
                return KeyId(last as u32);
            }
        }
        let id = u32::try_from(self.ends.len()).expect("fewer than 2^32 keys in one parse");
        self.ends.push(self.text.len());
        KeyId(id)
    }
    /// The text of key `id`.
    pub fn get(&self, id: KeyId) -> &str {
        let i = id.0 as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.text[start..self.ends[i]]
    }
    /// `s` as a value's printed text.
    #[inline]
    pub fn raw(&mut self, s: &str) -> Raw {
        let start = self.printed.len();
        self.printed.push_str(s);
        Raw::spanning(start, self.printed.len())
    }
    /// `a`, a space and `b` (`1.5 ms`: a value and the unit it was printed in) as a
    /// value's printed text.
    pub fn raw_joined(&mut self, a: &str, b: &str) -> Raw {
        let start = self.printed.len();
        self.printed.push_str(a);
        self.printed.push(' ');
        self.printed.push_str(b);
        Raw::spanning(start, self.printed.len())
    }
    /// The printed text of `raw`.
    #[inline]
    pub fn printed(&self, raw: Raw) -> &str {
        let start = raw.start as usize;
        &self.printed[start..start + raw.len as usize]
    }
    /// How many keys there are.
    pub fn len(&self) -> usize {
        self.ends.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
}

/// The order of a key with no cells.
pub fn empty_order() -> KeyOrder {
    Name::new("[]")
}

/// Encode pairs (in source order) as a canonical [`Key`] and their [`KeyOrder`].
pub fn key_of(pairs: &[(String, String)]) -> (Key, KeyOrder) {
    // By name only (a stable sort): the aiter parser orders a table's key columns the
    // same way. The pairs' places are sorted, not copies of the pairs.
    let mut by_name: Vec<usize> = (0..pairs.len()).collect();
    by_name.sort_by(|a, b| pairs[*a].0.cmp(&pairs[*b].0));
    let mut json = String::with_capacity(
        2 + pairs
            .iter()
            .map(|(k, v)| k.len() + v.len() + 6)
            .sum::<usize>(),
    );
    json.push('{');
    for (i, &p) in by_name.iter().enumerate() {
        if i > 0 {
            json.push(',');
        }
        push_json_str(&mut json, &pairs[p].0);
        json.push(':');
        push_json_str(&mut json, &pairs[p].1);
    }
    json.push('}');
    (json.into(), order_of(pairs.iter().map(|(k, _)| k.as_str())))
}

/// The [`KeyOrder`] of cells named `names`, in that order.
pub fn order_of<'a>(names: impl Iterator<Item = &'a str>) -> KeyOrder {
    let mut s = String::from("[");
    for (i, n) in names.enumerate() {
        if i > 0 {
            s.push(',');
        }
        push_json_str(&mut s, n);
    }
    s.push(']');
    Name::new(&s)
}

/// Put the cells of a canonical key back in source order (names `order` does not list
/// keep their canonical place, after the listed ones).
pub fn in_source_order(key: Vec<(String, String)>, order: &str) -> Vec<(String, String)> {
    let names: Vec<String> = serde_json::from_str(order).unwrap_or_default();
    if names.is_empty() {
        return key;
    }
    let mut key = key;
    key.sort_by_key(|(k, _)| names.iter().position(|n| n == k).unwrap_or(usize::MAX));
    key
}

/// Does `b` hold a `"`, a `\\` or a control character? Eight bytes at a time (every key
/// cell of every row is looked at): a byte is zero in `x` exactly when the word test
/// `(x - 0x01..) & !x & 0x80..` is non-zero, and below 0x20 exactly when
/// `(x - 0x20..) & !x & 0x80..` is.
#[inline]
fn needs_escape(b: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let has_zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH != 0;
    let special = |x: u64| {
        has_zero(x ^ (ONES * u64::from(b'"')))
            || has_zero(x ^ (ONES * u64::from(b'\\')))
            || x.wrapping_sub(ONES * 0x20) & !x & HIGH != 0
    };
    let mut chunks = b.chunks_exact(8);
    if chunks.any(|c| special(u64::from_le_bytes(c.try_into().expect("eight bytes")))) {
        return true;
    }
    let r = chunks.remainder();
    if r.len() >= 4 {
        // Two overlapping four-byte loads cover 4 to 7 bytes.
        let lo = u32::from_le_bytes([r[0], r[1], r[2], r[3]]);
        let n = r.len();
        let hi = u32::from_le_bytes([r[n - 4], r[n - 3], r[n - 2], r[n - 1]]);
        return special(u64::from(lo) | u64::from(hi) << 32);
    }
    r.iter().any(|&c| c == b'"' || c == b'\\' || c < 0x20)
}

/// Append `s` as a JSON string literal.
pub fn push_json_str(out: &mut String, s: &str) {
    out.push('"');
    if !needs_escape(s.as_bytes()) {
        // Nothing to escape (nearly every cell): copy it whole.
        out.push_str(s);
        out.push('"');
        return;
    }
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                use std::fmt::Write;
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A value's text as printed: where it is in its parse's [`Keys`] (read it with
/// [`Keys::printed`] or [`Parsed::raw`]). Two words copied with the value: the text
/// itself is written once, end to end with the others, so a value needs no allocation,
/// no copy of its text of its own, and nothing to drop.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Raw {
    start: u32,
    len: u32,
}

impl Raw {
    fn spanning(start: usize, end: usize) -> Raw {
        let at = |n: usize| u32::try_from(n).expect("under 4 GiB of printed values in one parse");
        Raw {
            start: at(start),
            len: at(end - start),
        }
    }
}

/// Which way is better for a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Lower,
    Higher,
    None,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Lower => "lower",
            Direction::Higher => "higher",
            Direction::None => "none",
        }
    }
    pub fn parse(s: &str) -> Direction {
        match s {
            "lower" => Direction::Lower,
            "higher" => Direction::Higher,
            _ => Direction::None,
        }
    }
}

/// Numerics verdict of one value: `None` from a harness means *not checked*, which is
/// neither a pass nor a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Numerics {
    Pass,
    Fail,
    NotChecked,
}

impl Numerics {
    pub fn as_str(self) -> &'static str {
        match self {
            Numerics::Pass => "pass",
            Numerics::Fail => "fail",
            Numerics::NotChecked => "not_checked",
        }
    }
    pub fn parse(s: &str) -> Numerics {
        match s {
            "pass" => Numerics::Pass,
            "fail" => Numerics::Fail,
            _ => Numerics::NotChecked,
        }
    }
    /// The worse of two verdicts: a failure wins, then not-checked, then pass.
    pub fn worst(self, other: Numerics) -> Numerics {
        use Numerics::*;
        match (self, other) {
            (Fail, _) | (_, Fail) => Fail,
            (NotChecked, _) | (_, NotChecked) => NotChecked,
            _ => Pass,
        }
    }
}

/// What kind of quantity a measurement is. Primary metrics are compared; derived ones
/// (errors, ratios, speedups) are stored but never form part of a row's identity.
pub mod metric {
    pub const LATENCY: &str = "latency";
    pub const THROUGHPUT: &str = "throughput";
    pub const BANDWIDTH: &str = "bandwidth";
    pub const ERROR: &str = "error";
    pub const RATIO: &str = "ratio";
    pub const SPEEDUP: &str = "speedup";
    pub const UPLIFT: &str = "uplift";
    /// Free-text annotation columns (`note`, `status`): kept, never identity.
    pub const NOTE: &str = "note";
    /// Numeric columns whose meaning perfdb cannot tell: kept, reported, never identity.
    pub const UNCLASSIFIED: &str = "unclassified";

    /// Derived metrics: stored, shown, never compared as a performance row.
    pub fn is_derived(metric: &str) -> bool {
        matches!(
            metric,
            ERROR | RATIO | SPEEDUP | UPLIFT | NOTE | UNCLASSIFIED
        ) || metric.starts_with("error_")
    }

    /// Tail metrics: a high percentile (`latency_p90`, `ttft_p99`, `p99.9`) or the
    /// maximum (`latency_max`). They move far more under load than medians, so `detect`
    /// reports them with the median's alert and never raises one on their own.
    pub fn is_tail(metric: &str) -> bool {
        metric.split(['_', '-', ' ']).any(|part| {
            let part = part.to_ascii_lowercase();
            part == "max"
                || part == "tail"
                || part.strip_prefix('p').is_some_and(|n| {
                    n.split('.')
                        .next()
                        .and_then(|n| n.parse::<u32>().ok())
                        .is_some_and(|n| (90..100).contains(&n))
                        && n.chars().all(|c| c.is_ascii_digit() || c == '.')
                })
        })
    }
}

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

/// Encode key pairs as a JSON object, keeping their order (serde_json's Map would sort).
pub fn key_to_json(key: &[(String, String)]) -> String {
    let mut s = String::with_capacity(16 * key.len() + 2);
    s.push('{');
    for (i, (k, v)) in key.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        push_json_str(&mut s, k);
        s.push(':');
        push_json_str(&mut s, v);
    }
    s.push('}');
    s
}

/// Decode a key written by [`key_to_json`], keeping order.
pub fn key_from_json(text: &str) -> Vec<(String, String)> {
    // serde_json with `preserve_order` is not enabled; parse pairs by hand via a
    // streaming visitor over the object.
    let v: Result<Vec<(String, String)>, _> = parse_ordered_object(text);
    v.unwrap_or_default()
}

fn parse_ordered_object(text: &str) -> Result<Vec<(String, String)>, serde_json::Error> {
    use serde::de::{Deserializer, MapAccess, Visitor};
    struct Ordered;
    impl<'de> Visitor<'de> for Ordered {
        type Value = Vec<(String, String)>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a JSON object of strings")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some((k, v)) = map.next_entry::<String, String>()? {
                out.push((k, v));
            }
            Ok(out)
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    de.deserialize_map(Ordered)
}

/// Human form of a key: `M=1 N=4096 K=4096`.
pub fn key_display(key: &[(String, String)]) -> String {
    key.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// What a harness (or `perfdb run`, from the exit status) said of a whole run; stored
/// as `pass` or `fail` in the runs table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunVerdict {
    Pass,
    Fail,
}

impl RunVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            RunVerdict::Pass => "pass",
            RunVerdict::Fail => "fail",
        }
    }
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

/// Where an alert stands (docs/alerts.md, "Lifecycle"). `detect` sets pending, active,
/// resolved, withdrawn and silenced from the history; people set acknowledged and
/// dismissed, and reopen (back to active).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AlertStatus {
    /// A step at the tip whose new level has not yet held for `confirm` commits: shown,
    /// not delivered, not an exit 1. Also an alert whose status was never committed.
    Pending,
    /// A confirmed step: delivered, exit 1 the first time.
    Active,
    /// A person has seen it; it still resolves or withdraws with the data.
    Acknowledged,
    /// A person said it is not a regression (a reason is required); detect leaves it so.
    Dismissed,
    /// The series came back to within the threshold of its level before the step.
    Resolved,
    /// The change point no longer holds with the data now in the warehouse.
    Withdrawn,
    /// A newer step on the same series (still standing) supersedes it.
    Silenced,
}

impl AlertStatus {
    pub const ALL: [AlertStatus; 7] = [
        AlertStatus::Pending,
        AlertStatus::Active,
        AlertStatus::Acknowledged,
        AlertStatus::Dismissed,
        AlertStatus::Resolved,
        AlertStatus::Withdrawn,
        AlertStatus::Silenced,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            AlertStatus::Pending => "pending",
            AlertStatus::Active => "active",
            AlertStatus::Acknowledged => "acknowledged",
            AlertStatus::Dismissed => "dismissed",
            AlertStatus::Resolved => "resolved",
            AlertStatus::Withdrawn => "withdrawn",
            AlertStatus::Silenced => "silenced",
        }
    }

    /// The status a name spells, or an error listing them all.
    pub fn parse(s: &str) -> Result<AlertStatus, String> {
        AlertStatus::ALL
            .into_iter()
            .find(|a| a.as_str() == s)
            .ok_or_else(|| {
                let all: Vec<&str> = AlertStatus::ALL.iter().map(|a| a.as_str()).collect();
                format!("'{s}' is not a status: one of {}", all.join(", "))
            })
    }

    /// Statuses a person has set, which `detect` keeps.
    pub fn is_human(self) -> bool {
        matches!(self, AlertStatus::Acknowledged | AlertStatus::Dismissed)
    }
}

/// A person's action on an alert, and the statuses it may be taken from: the one
/// place the human transitions live (the CLI, triage and the web's form use it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AlertAction {
    Acknowledge,
    Dismiss,
    Reopen,
}

impl AlertAction {
    /// The status the action sets.
    pub fn target(self) -> AlertStatus {
        match self {
            AlertAction::Acknowledge => AlertStatus::Acknowledged,
            AlertAction::Dismiss => AlertStatus::Dismissed,
            AlertAction::Reopen => AlertStatus::Active,
        }
    }

    /// The statuses a person may take this action from.
    pub fn allowed_from(self, status: AlertStatus) -> bool {
        use AlertStatus::*;
        match self {
            AlertAction::Acknowledge => matches!(status, Active | Pending),
            AlertAction::Dismiss => matches!(status, Active | Pending | Acknowledged),
            AlertAction::Reopen => matches!(
                status,
                Acknowledged | Dismissed | Resolved | Withdrawn | Silenced
            ),
        }
    }
}

impl std::fmt::Display for AlertStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_metrics_are_high_percentiles_and_maxima() {
        for t in [
            "latency_p99",
            "latency_p90",
            "ttft_p99",
            "p99.9",
            "latency_max",
            "itl_p95",
        ] {
            assert!(metric::is_tail(t), "{t}");
        }
        for m in [
            "latency",
            "latency_p50",
            "throughput",
            "latency_min",
            "p2p_bandwidth",
            "maxwell",
        ] {
            assert!(!metric::is_tail(m), "{m}");
        }
    }

    #[test]
    fn every_alert_status_reads_back() {
        for s in AlertStatus::ALL {
            assert_eq!(AlertStatus::parse(s.as_str()), Ok(s));
            assert_eq!(serde_json::to_string(&s).unwrap(), format!("\"{s}\""));
        }
        assert!(AlertStatus::parse("bogus")
            .unwrap_err()
            .contains("one of pending, active"));
    }

    #[test]
    fn escapes_are_found_at_every_place_of_a_word() {
        for len in 0..20 {
            let plain = "a".repeat(len);
            assert!(!needs_escape(plain.as_bytes()));
            for at in 0..len {
                for c in [b'"', b'\\', 0u8, 0x1f, b'\n'] {
                    let mut b = plain.clone().into_bytes();
                    b[at] = c;
                    assert!(needs_escape(&b), "{c} at {at} of {len}");
                }
                // Neighbours of the escaped bytes, and non-ASCII, need none.
                for c in [b' ', b'!', b'#', b'[', b']', 0x7f, 0x80, 0xff] {
                    let mut b = plain.clone().into_bytes();
                    b[at] = c;
                    assert!(!needs_escape(&b), "{c} at {at} of {len}");
                }
            }
        }
    }

    #[test]
    fn a_key_is_its_pairs_stably_sorted_by_name() {
        let p = |v: &[(&str, &str)]| -> Vec<(String, String)> {
            v.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        for pairs in [
            p(&[]),
            p(&[("N", "1")]),
            p(&[("n", "2"), ("dtype", "bf\"16"), ("M", "x\ny"), ("k", "1")]),
        ] {
            let mut sorted = pairs.clone();
            sorted.sort_by(|a, b| a.0.cmp(&b.0));
            let (key, order) = key_of(&pairs);
            assert_eq!(&*key, key_to_json(&sorted));
            assert_eq!(key_from_json(&key), sorted);
            assert_eq!(
                in_source_order(key_from_json(&key), &order)
                    .iter()
                    .map(|(k, _)| k.as_str())
                    .collect::<Vec<_>>(),
                pairs.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn printed_texts_read_back_as_written() {
        let all = "0123456789abcdefghijklmnopqrstuvwxyzé";
        let mut keys = Keys::default();
        let key = keys.push(r#"{"M":"1"}"#);
        let raws: Vec<Raw> = (0..=all.len())
            .filter(|&n| all.is_char_boundary(n))
            .map(|n| keys.raw(&all[..n]))
            .collect();
        for (r, n) in raws
            .iter()
            .zip((0..=all.len()).filter(|&n| all.is_char_boundary(n)))
        {
            assert_eq!(keys.printed(*r), &all[..n]);
        }
        // Keys and printed texts do not mix.
        assert_eq!(keys.get(key), r#"{"M":"1"}"#);
    }

    #[test]
    fn joined_raw_text_is_the_formatted_text() {
        for (a, b) in [
            ("1.5", "ms"),
            ("11.953308", "GB/s"),
            ("123456789012345678", "GB/s"),
            ("", "us"),
        ] {
            let mut keys = Keys::default();
            let r = keys.raw_joined(a, b);
            assert_eq!(keys.printed(r), format!("{a} {b}"));
        }
    }
}
