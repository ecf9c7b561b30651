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
//! toolchain, the same grid) while its autotuner chose another config is a config drift,
//! not a code change: not timed (the code did not change; a fresh process may choose
//! either), said as "config drift: winner A -> B, same code" and filled from the base's
//! run; `--time-drift` times it, its move then said as the autotuner's.

pub mod render;

use perfdb_ingest::hash::sha256_hex;
use perfdb_ingest::kernel_identity::launches::Choice;
use perfdb_ingest::kernel_identity::rows::{Identities, KernelUse, RowIdentity};
use serde::Serialize;
use std::collections::BTreeSet;

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
    /// Not timed: only the autotuner's choice differs from the base row's (same source,
    /// toolchain and launch): "config drift: winner A -> B, same code", its result
    /// `run`'s. Timed instead under `--time-drift`.
    Drift {
        run: String,
        kernel: String,
        from: String,
        to: String,
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
    /// The rows not timed: identity equal, or only the autotuner's choice differs.
    pub fn skipped(&self) -> impl Iterator<Item = &Planned> {
        self.rows
            .iter()
            .filter(|p| matches!(p.action, Action::Skip { .. } | Action::Drift { .. }))
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
pub fn plan(
    base: Option<&Identities>,
    head: &Identities,
    audit: f64,
    seed: &str,
    time_drift: bool,
) -> Plan {
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
                (None, Some(b)) => decide(row, b, head, time_drift),
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

fn decide(row: &RowIdentity, base: &Identities, head: &Identities, time_drift: bool) -> Action {
    let Some(was) = base.row(row) else {
        return Action::Time(Why::New);
    };
    let (Some(now_id), Some(was_id)) = (&row.identity, &was.identity) else {
        return Action::Time(Why::NoIdentity);
    };
    if now_id != was_id {
        return match autotuned(was, row, base, head) {
            None => Action::Time(Why::Changed {
                kernels: differing(&was.kernels, &row.kernels),
            }),
            Some(Err(kernel)) => Action::Time(Why::ConfigSetChanged { kernel }),
            Some(Ok((kernel, from, to))) => match (&was.measured_in, time_drift) {
                (Some(run), false) => Action::Drift {
                    run: run.clone(),
                    kernel,
                    from,
                    to,
                },
                _ => Action::Time(Why::ConfigDrift { kernel, from, to }),
            },
        };
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

/// A changed row whose kernel kept its code, toolchain and grid while the autotuner chose
/// another config: the kernel and the winners (from, to); `Err` when the autotuner's
/// candidates changed (a config set changed). `None`: not the autotuner's. Its code is
/// kept when its source key is the same, or when the code it compiled for its config is
/// code the base compiled for that config.
fn autotuned(
    was: &RowIdentity,
    now: &RowIdentity,
    base: &Identities,
    head: &Identities,
) -> Option<Result<(String, String, String), String>> {
    let kernels = differing(&was.kernels, &now.kernels);
    let [kernel] = kernels.as_slice() else {
        return None;
    };
    let uses = |ks: &[KernelUse]| -> Vec<KernelUse> {
        ks.iter().filter(|k| &k.kernel == kernel).cloned().collect()
    };
    let (u0, u1) = (uses(&was.kernels), uses(&now.kernels));
    let same_launch = !u0.is_empty()
        && u0.len() == u1.len()
        && u0.iter().map(|k| &k.grid).eq(u1.iter().map(|k| &k.grid));
    let same_source = u0.iter().all(|k| k.source.is_some())
        && u0
            .iter()
            .map(|k| &k.source)
            .eq(u1.iter().map(|k| &k.source));
    // The code head compiled for its config is code the base compiled for that config
    // (any row's): a comment that changed the source key changed no code.
    let known = |u: &KernelUse| {
        base.rows.iter().flat_map(|r| &r.kernels).any(|k| {
            k.kernel == u.kernel
                && k.code == u.code
                && k.num_warps == u.num_warps
                && k.num_stages == u.num_stages
        })
    };
    let same_code = same_source || u1.iter().all(known);
    fn entries<'a>(ids: &'a Identities, kernel: &str) -> Vec<&'a Choice> {
        ids.autotune
            .iter()
            .filter(|c| short(&c.kernel) == short(kernel))
            .collect()
    }
    let (e0, e1) = (entries(base, kernel), entries(head, kernel));
    if !same_launch || !same_code || e0.is_empty() || e1.is_empty() {
        return None;
    }
    let configs = |es: &[&Choice]| -> BTreeSet<String> {
        es.iter().flat_map(|c| c.configs.iter().cloned()).collect()
    };
    if configs(&e0) != configs(&e1) {
        return Some(Err(kernel.clone()));
    }
    // The winner each side launched: the autotuner's choice whose warps and stages are
    // the compiled kernel's (an autotuner tunes a key a shape; the row's is the one it
    // launched).
    let winner = |es: &[&Choice], u: &KernelUse| -> String {
        es.iter()
            .map(|c| c.winner.clone())
            .find(|w| {
                setting(w, "num_warps") == u.num_warps && setting(w, "num_stages") == u.num_stages
            })
            .unwrap_or_else(|| {
                format!(
                    "num_warps: {}, num_stages: {}",
                    u.num_warps.map_or("?".into(), |n| n.to_string()),
                    u.num_stages.map_or("?".into(), |n| n.to_string())
                )
            })
    };
    Some(Ok((
        kernel.clone(),
        winner(&e0, &u0[0]),
        winner(&e1, &u1[0]),
    )))
}

/// `num_warps: 8` in an autotuner's printed config.
fn setting(config: &str, name: &str) -> Option<u64> {
    let at = config.find(&format!("{name}: "))? + name.len() + 2;
    config[at..]
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// The kernels that differ between two rows' uses, by name.
fn differing(a: &[KernelUse], b: &[KernelUse]) -> Vec<String> {
    let mut names: Vec<String> = a
        .iter()
        .filter(|k| !b.contains(k))
        .chain(b.iter().filter(|k| !a.contains(k)))
        .map(|k| k.kernel.clone())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// A kernel's name as an autotuner names its function (`tuned_add_kernel`).
fn short(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

#[cfg(test)]
mod tests;
