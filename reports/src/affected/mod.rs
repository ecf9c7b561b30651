//! `perfdb run --affected BASE`: which rows to time, from each row's identity against
//! the base's (`perfdb_ingest::kernel_identity::rows`).
//!
//! A row whose identity equals the base row's is not timed: its result is "unchanged:
//! identity equal to run R", R being the run whose trials the base row's result is.
//! Never a pass and never "no change": nothing was measured. Every other row is timed:
//! one whose kernels' code or launch changed, one new, one with no identity (it launched
//! no Triton kernel the recorder saw), and a share of the unchanged ones chosen to audit
//! the skipping. A toolchain or device that differs from the base's times every row.
//!
//! A changed row whose kernels kept their source (the same `@triton.jit` key, the same
//! toolchain) while its autotuner chose another config is a config drift, not a code
//! change: it is timed, and its move is said as the drift it is.

pub mod render;

use perfdb_ingest::hash::sha256_hex;
use perfdb_ingest::kernel_identity::rows::{Identities, KernelUse, RowIdentity};
use serde::Serialize;

/// Why a row is timed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "why", rename_all = "snake_case")]
pub enum Why {
    /// Every row is timed: the base has no identities, or the toolchain or device differs.
    Forced,
    /// Its kernels' code or launch differ from the base row's (the kernels named).
    Changed { kernels: Vec<String> },
    /// Only the autotuner's choice differs (same source, same toolchain).
    ConfigDrift {
        kernel: String,
        from: String,
        to: String,
    },
    /// The autotuner's candidate configs differ.
    ConfigSetChanged { kernel: String },
    /// The base has no such row.
    New,
    /// It launched no Triton kernel the recorder saw: its identity is unknown.
    NoIdentity,
    /// The base row's result names no run to fill from.
    BaseUnmeasured,
    /// Unchanged, timed anyway to audit the skipping.
    Audit { run: String, identity: String },
}

/// What is done with one row.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    Time(Why),
    /// Not timed: its identity equals the base row's, whose result is `run`'s (a
    /// selector: `LABEL@COMMIT` or `run:ID`).
    Skip {
        run: String,
        identity: String,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Planned {
    pub row: RowIdentity,
    pub action: Action,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    /// Why every row is timed, when one must be.
    pub forced: Option<String>,
    pub rows: Vec<Planned>,
}

impl Plan {
    pub fn timed(&self) -> impl Iterator<Item = &Planned> {
        self.rows
            .iter()
            .filter(|p| matches!(p.action, Action::Time(_)))
    }
    pub fn skipped(&self) -> impl Iterator<Item = &Planned> {
        self.rows
            .iter()
            .filter(|p| matches!(p.action, Action::Skip { .. }))
    }
}

/// The toolchain keys whose change forces a full run, with what each was and is.
pub fn toolchain_changes(base: &Identities, head: &Identities) -> Vec<String> {
    let mut keys: Vec<&String> = base.toolchain.keys().chain(head.toolchain.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| base.toolchain.get(*k) != head.toolchain.get(*k))
        .map(|k| {
            let show = |v: Option<&String>| v.map_or("(none)", String::as_str).to_string();
            format!(
                "{k} {} -> {}",
                show(base.toolchain.get(k)),
                show(head.toolchain.get(k))
            )
        })
        .collect()
}

/// Which rows of `head` to time against `base` (`None`: the base has no identities).
///
/// `audit` is the share of unchanged rows timed anyway, each drawn by a hash of `seed`
/// and the row (the same rows for the same seed). When no row is timed otherwise, the
/// unchanged rows are drawn together, by the seed alone: all are audited with
/// probability `audit`, so a benchmark process is started for an audit on that share of
/// runs only, not on nearly every one; each row is still audited with probability
/// `audit`.
pub fn plan(base: Option<&Identities>, head: &Identities, audit: f64, seed: &str) -> Plan {
    let forced = match base {
        None => Some("the base has no identity record".to_string()),
        Some(b) if b.toolchain.is_empty() || head.toolchain.is_empty() => {
            Some("the toolchain was not recorded".to_string())
        }
        Some(b) => {
            let changes = toolchain_changes(b, head);
            (!changes.is_empty()).then(|| format!("the toolchain changed: {}", changes.join(", ")))
        }
    };
    let mut rows: Vec<Planned> = head
        .rows
        .iter()
        .map(|row| {
            let action = match (&forced, base) {
                (Some(_), _) | (None, None) => Action::Time(Why::Forced),
                (None, Some(b)) => decide(row, b, head),
            };
            Planned {
                row: row.clone(),
                action,
            }
        })
        .collect();
    let together = !rows.iter().any(|p| matches!(p.action, Action::Time(_)));
    let night = draw(&format!("{seed}\u{1f}together")) < audit;
    for p in &mut rows {
        if let Action::Skip { run, identity } = &p.action {
            let audited = if together {
                night
            } else {
                draw(&format!("{seed}\u{1f}{}\u{1f}{}", p.row.table, p.row.key)) < audit
            };
            if audited {
                p.action = Action::Time(Why::Audit {
                    run: run.clone(),
                    identity: identity.clone(),
                });
            }
        }
    }
    Plan { forced, rows }
}

fn decide(row: &RowIdentity, base: &Identities, head: &Identities) -> Action {
    let Some(was) = base.row(row) else {
        return Action::Time(Why::New);
    };
    let (Some(now_id), Some(was_id)) = (&row.identity, &was.identity) else {
        return Action::Time(Why::NoIdentity);
    };
    if now_id != was_id {
        return Action::Time(changed(was, row, base, head));
    }
    let Some(run) = was.measured_in.clone() else {
        return Action::Time(Why::BaseUnmeasured);
    };
    Action::Skip {
        run,
        identity: now_id.clone(),
    }
}

/// A uniform draw in [0, 1) for the audit: the first 64 bits of SHA-256 of `what` (the
/// seed with a row's table and key: the variants of one key draw together, as a
/// benchmark times a key's variants side by side).
fn draw(what: &str) -> f64 {
    let h = sha256_hex(what.as_bytes());
    u64::from_str_radix(&h[..16], 16).unwrap_or(0) as f64 / 2f64.powi(64)
}

/// Why a row whose identity differs is timed: its changed kernels, or the autotuner.
fn changed(was: &RowIdentity, now: &RowIdentity, base: &Identities, head: &Identities) -> Why {
    let differs = |a: &[KernelUse], b: &[KernelUse]| -> Vec<String> {
        let mut names: Vec<String> = a
            .iter()
            .filter(|k| !b.contains(k))
            .chain(b.iter().filter(|k| !a.contains(k)))
            .map(|k| k.kernel.clone())
            .collect();
        names.sort();
        names.dedup();
        names
    };
    let kernels = differs(&was.kernels, &now.kernels);
    if let [kernel] = kernels.as_slice() {
        let source = |ks: &[KernelUse]| -> Vec<Option<String>> {
            ks.iter()
                .filter(|k| &k.kernel == kernel)
                .map(|k| k.source.clone())
                .collect()
        };
        let (s0, s1) = (source(&was.kernels), source(&now.kernels));
        let same_source = !s0.is_empty() && s0.iter().all(Option::is_some) && s0 == s1;
        let choice = |ids: &Identities| {
            ids.autotune
                .iter()
                .find(|c| short(&c.kernel) == short(kernel))
                .cloned()
        };
        if let (true, Some(a), Some(b)) = (same_source, choice(base), choice(head)) {
            if a.configs != b.configs {
                return Why::ConfigSetChanged {
                    kernel: kernel.clone(),
                };
            }
            if a.winner != b.winner {
                return Why::ConfigDrift {
                    kernel: kernel.clone(),
                    from: a.winner,
                    to: b.winner,
                };
            }
        }
    }
    Why::Changed { kernels }
}

/// A kernel's name as an autotuner names its function (`tuned_add_kernel`).
fn short(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

#[cfg(test)]
mod tests;
