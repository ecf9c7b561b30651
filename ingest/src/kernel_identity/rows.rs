//! Each row's identity from an identity pass: the kernels launched between the row's
//! previous line and its own (a benchmark prints a row after timing it), each by its code
//! (the TTGIR the recorder kept, without source locations) and its launch (grid,
//! arguments' shapes and dtypes, options), with the toolchain beside them.
//!
//! When every launch comes before every row (a table printed at the end), no launch can
//! be told to a row: each row then carries every kernel of the benchmark
//! ([`Attribution::WholeBenchmark`]), so a change to any of them times them all. A row
//! that launched no Triton kernel has no identity (its code is a library's, or Python's,
//! which the recorder cannot see): it is always timed.

use super::launches::{Choice, Launch, Pass};
use super::{kernel, IdentityError};
use crate::hash::sha256_hex;
use crate::model::{in_source_order, key_display, key_from_json, Keys, Measurement};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// One kernel as one row launches it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct KernelUse {
    pub kernel: String,
    /// SHA-256 of its TTGIR without source locations (16 hex digits).
    pub code: String,
    /// Its `@triton.jit` source's own key, when the recorder read one.
    #[serde(default)]
    pub source: Option<String>,
    /// SHA-256 of how it was launched (grid, arguments, options, warps, stages, CTAs,
    /// shared memory), 16 hex digits.
    pub launch: String,
    #[serde(default)]
    pub num_warps: Option<u64>,
    #[serde(default)]
    pub num_stages: Option<u64>,
    #[serde(default)]
    pub grid: Vec<u64>,
}

/// A row and what identifies it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RowIdentity {
    pub table: String,
    pub variant: String,
    /// The key as the warehouse stores it (canonical JSON).
    pub key: String,
    /// The key as printed (`dim=(4096,) dtype=torch.float32`).
    pub key_text: String,
    /// SHA-256 of its kernels' code and launches (16 hex digits); `None` when it launched
    /// no Triton kernel the recorder saw.
    pub identity: Option<String>,
    pub kernels: Vec<KernelUse>,
    /// The run whose trials are this row's result: the run that timed it, or, for a row
    /// not timed, the run it was filled from.
    #[serde(default)]
    pub measured_in: Option<String>,
}

impl RowIdentity {
    /// `table variant key` as a person reads it.
    pub fn name(&self) -> String {
        format!("{} {} {}", self.table, self.variant, self.key_text)
    }
    pub fn same_row(&self, other: &RowIdentity) -> bool {
        self.table == other.table && self.variant == other.variant && self.key == other.key
    }
}

/// How launches were told to rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Attribution {
    /// By the lines: each row has the launches printed since the row before it.
    PerRow,
    /// Every launch came before every row: each row has them all.
    WholeBenchmark,
}

/// The identity of every row of one run, stored with the run as the warehouse document
/// `identity/<run id>.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Identities {
    /// The toolchain and device the recorder saw (`triton`, `torch`, `cuda`/`hip`,
    /// `driver`, `device`, `capability`).
    pub toolchain: BTreeMap<String, String>,
    pub attribution: Attribution,
    pub rows: Vec<RowIdentity>,
    /// What each autotuner chose in the pass.
    #[serde(default)]
    pub autotune: Vec<Choice>,
    /// Wall seconds a timed row took in the run these were stored with (the timed
    /// pass's seconds over the rows it printed), carried from the base when none was
    /// timed: what skipping a row saves, estimated.
    #[serde(default)]
    pub row_seconds: Option<f64>,
}

impl Identities {
    /// The warehouse document that holds a run's identities.
    pub fn document(run_id: &str) -> String {
        format!("identity/{run_id}.json")
    }
    pub fn row(&self, like: &RowIdentity) -> Option<&RowIdentity> {
        self.rows.iter().find(|r| r.same_row(like))
    }
}

/// The rows of `measurements` (one per table, variant and key), each with the kernels
/// launched for it in `pass`, their code read from `kept` (the recorder's
/// `PERFDB_IDENTITY_DIR`: `<hash>/<kernel>.ttgir` and `.json`).
pub fn identify(
    measurements: &[Measurement],
    keys: &Keys,
    pass: &Pass,
    kept: &Path,
) -> Result<Identities, IdentityError> {
    let mut uses: BTreeMap<&str, KernelUse> = BTreeMap::new();
    for (_, l) in &pass.launches {
        if !uses.contains_key(l.hash.as_str()) {
            uses.insert(&l.hash, kernel_use(l, kept)?);
        }
    }
    let use_of = |l: &Launch| {
        let mut u = uses[l.hash.as_str()].clone();
        u.launch = launch_hash(l, &u);
        u.grid.clone_from(&l.grid);
        u
    };
    // Each measured line, and the rows printed on it.
    let mut lines: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    let mut rows: Vec<RowIdentity> = Vec::new();
    let mut row_of: BTreeMap<(String, String, String), usize> = BTreeMap::new();
    for m in measurements {
        let key = keys.get(m.key).to_string();
        let id = (
            m.table.as_str().to_string(),
            m.variant.as_str().to_string(),
            key,
        );
        let at = *row_of.entry(id.clone()).or_insert_with(|| {
            let pairs = in_source_order(key_from_json(&id.2), m.key_order.as_str());
            rows.push(RowIdentity {
                table: id.0.clone(),
                variant: id.1.clone(),
                key: id.2.clone(),
                key_text: key_display(&pairs),
                identity: None,
                kernels: Vec::new(),
                measured_in: None,
            });
            rows.len() - 1
        });
        let on = lines.entry(m.line).or_default();
        if !on.contains(&at) {
            on.push(at);
        }
    }
    // Each launch goes to the first measured line after it.
    let mut per_line: BTreeMap<u32, BTreeSet<KernelUse>> = BTreeMap::new();
    for (at, l) in &pass.launches {
        if let Some((line, _)) = lines.range(at + 1..).next() {
            per_line.entry(*line).or_default().insert(use_of(l));
        }
    }
    let first = lines.keys().next().copied();
    let whole =
        rows.len() > 1 && !per_line.is_empty() && per_line.keys().all(|l| Some(*l) == first);
    let mut sets: Vec<BTreeSet<KernelUse>> = vec![BTreeSet::new(); rows.len()];
    if whole {
        let all: BTreeSet<KernelUse> = pass.launches.iter().map(|(_, l)| use_of(l)).collect();
        sets.iter_mut().for_each(|s| s.clone_from(&all));
    } else {
        for (line, on) in &lines {
            if let Some(ks) = per_line.get(line) {
                for r in on {
                    sets[*r].extend(ks.iter().cloned());
                }
            }
        }
    }
    for (row, set) in rows.iter_mut().zip(sets) {
        row.kernels = set.into_iter().collect();
        if !row.kernels.is_empty() {
            let text: Vec<String> = row
                .kernels
                .iter()
                .map(|k| format!("{} {} {}", k.kernel, k.code, k.launch))
                .collect();
            row.identity = Some(sha256_hex(text.join("\n").as_bytes())[..16].to_string());
        }
    }
    Ok(Identities {
        toolchain: pass.toolchain.clone(),
        attribution: if whole {
            Attribution::WholeBenchmark
        } else {
            Attribution::PerRow
        },
        rows,
        autotune: pass.autotune.clone(),
        row_seconds: None,
    })
}

/// The kernel a launch ran, read from what the recorder kept of its compile.
fn kernel_use(l: &Launch, kept: &Path) -> Result<KernelUse, IdentityError> {
    let folder = kept.join(&l.hash);
    let ttgir = folder.join(format!("{}.ttgir", l.kernel));
    let meta = folder.join(format!("{}.json", l.kernel));
    let read = |p: &Path| {
        std::fs::read_to_string(p).map_err(|source| IdentityError::Io {
            path: p.to_path_buf(),
            source,
        })
    };
    let k = kernel(&l.kernel, &read(&ttgir)?, &read(&meta)?, &meta)?;
    Ok(KernelUse {
        kernel: k.name,
        code: k.code,
        source: l.source.clone(),
        launch: String::new(),
        num_warps: k.num_warps,
        num_stages: k.num_stages,
        grid: Vec::new(),
    })
}

/// How a kernel was launched, hashed: the grid, the arguments (tensors by shape and
/// dtype, scalars by value), the options, and the compile's own launch shape.
fn launch_hash(l: &Launch, u: &KernelUse) -> String {
    let text = serde_json::json!({
        "grid": l.grid,
        "args": l.args,
        "options": l.options,
        "num_warps": u.num_warps,
        "num_stages": u.num_stages,
    })
    .to_string();
    sha256_hex(text.as_bytes())[..16].to_string()
}
