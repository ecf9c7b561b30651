//! Step 4: the overall verdict, from the rows and what the comparison knows besides
//! them. Each finding is one rule keyed by its reason code, in three lists read in
//! order: any failure makes a regression; else a control that moved makes the
//! comparison unreliable; else any gap makes it inconclusive; else no regression.

use super::decide::{is_energy, is_trial_energy, kernel_shapes, regressed_rows};
use super::{
    ControlStatus, FailedRun, NumericsStatus, Options, Overall, Reason, ReasonCode, Row, SideInfo,
    Verdict,
};
use crate::fmt::{ratio_pct, signed_pct as fmt_pct};

/// What the overall verdict weighs besides the rows.
pub(super) struct Evidence<'a> {
    pub base: &'a SideInfo,
    pub head: &'a SideInfo,
    pub missing: usize,
    /// Control names present on one side only (renamed on head?).
    pub control_one_sided: Vec<String>,
    /// How the sides' hardware differs, one line per property.
    pub mixed_hardware: Vec<String>,
    /// How the sides' methods differ (`method` tags).
    pub mixed_methods: Vec<String>,
    /// Repeated tables whose copies could not be paired.
    pub unpaired_tables: usize,
    pub opt: &'a Options,
}

/// What every rule reads.
struct Facts<'a> {
    rows: &'a [Row],
    control: &'a Option<ControlStatus>,
    ev: &'a Evidence<'a>,
    opt: &'a Options,
    /// On other hardware without --allow-mixed-hardware: no row is judged.
    mixed: bool,
    /// The rows judged: every row but the control's.
    judged: Vec<&'a Row>,
}

/// A rule: the reasons it finds (none, one, or one per failed run).
type Rule = fn(&Facts) -> Vec<Reason>;

/// Findings that make the comparison a regression, in the order a person reads them.
const FAILURES: &[(ReasonCode, Rule)] = &[
    (ReasonCode::HeadRunFailed, |f| {
        failed_runs(ReasonCode::HeadRunFailed, "head", &f.ev.head.failed_runs)
    }),
    (ReasonCode::Regressed, regressed),
    (ReasonCode::EnergyRegressed, energy_regressed),
    (ReasonCode::NewNumericsFailure, |f| {
        let n = f.rows.iter().filter(|r| r.numerics_failed()).count();
        counted(ReasonCode::NewNumericsFailure, n, || {
            format!("{n} row(s) fail numerics on head that did not on base")
        })
    }),
    (ReasonCode::NumericsFailureOnBothSides, |f| {
        let n = numerics(f, NumericsStatus::PreExisting);
        if !f.opt.strict_numerics {
            return Vec::new();
        }
        counted(ReasonCode::NumericsFailureOnBothSides, n, || {
            format!("{n} row(s) fail numerics on both sides (--strict-numerics)")
        })
    }),
];

/// Findings that make the comparison unreliable when nothing failed.
const UNRELIABLE: &[(ReasonCode, Rule)] = &[(ReasonCode::ControlMoved, control_moved)];

/// Findings that leave the comparison inconclusive.
const GAPS: &[(ReasonCode, Rule)] = &[
    (ReasonCode::BaseRunFailed, |f| {
        failed_runs(ReasonCode::BaseRunFailed, "base", &f.ev.base.failed_runs)
    }),
    (ReasonCode::MixedHardware, |f| {
        one_if(f.mixed, ReasonCode::MixedHardware, || {
            format!(
                "the sides ran on different hardware ({}); --allow-mixed-hardware to compare anyway",
                f.ev.mixed_hardware.join("; ")
            )
        })
    }),
    (ReasonCode::MixedMethods, |f| {
        one_if(
            !f.ev.mixed_methods.is_empty(),
            ReasonCode::MixedMethods,
            || {
                format!(
                    "the sides were measured differently ({}): values of two methods are never \
                 compared (ingest both sides the same way, or give the same --method)",
                    f.ev.mixed_methods.join("; ")
                )
            },
        )
    }),
    (ReasonCode::ControlOnOneSide, |f| {
        one_if(
            !f.ev.control_one_sided.is_empty(),
            ReasonCode::ControlOnOneSide,
            || {
                format!(
                    "the control is on one side only ({})",
                    f.ev.control_one_sided.join("; ")
                )
            },
        )
    }),
    (ReasonCode::MissingOnHead, |f| {
        let n = if f.opt.allow_missing { 0 } else { f.ev.missing };
        counted(ReasonCode::MissingOnHead, n, || {
            format!(
                "{n} row(s) measured on base are missing on head (--allow-missing accepts that)"
            )
        })
    }),
    (ReasonCode::UncheckedOnHead, |f| {
        let n = if f.opt.allow_unchecked {
            0
        } else {
            numerics(f, NumericsStatus::UncheckedOnHead)
        };
        counted(ReasonCode::UncheckedOnHead, n, || {
            format!("{n} row(s) checked numerics on base but not on head (--allow-unchecked accepts that)")
        })
    }),
    (ReasonCode::UnpairedTables, |f| {
        one_if(f.ev.unpaired_tables > 0, ReasonCode::UnpairedTables, || {
            format!(
                "{} repeated table(s) cannot be paired between the sides",
                f.ev.unpaired_tables
            )
        })
    }),
    (ReasonCode::NothingMatched, |f| {
        if f.judged.is_empty() {
            vec![Reason::new(
                ReasonCode::NothingMatched,
                Some(0),
                "no row matched across the two sides".to_string(),
            )]
        } else {
            Vec::new()
        }
    }),
    (ReasonCode::SizeUnknown, |f| {
        let rows: Vec<&&Row> = f
            .judged
            .iter()
            .filter(|r| r.verdict == Verdict::SizeUnknown)
            .collect();
        let most = rows.iter().filter_map(|r| r.trials_needed).max();
        counted(ReasonCode::SizeUnknown, rows.len(), || {
            format!(
                "{} row(s) moved significantly and past the threshold by their estimate, but their interval does not show it past the threshold{}",
                rows.len(),
                most.map_or_else(String::new, |k| format!(" (~{k} trials a side would tell)"))
            )
        })
    }),
    (ReasonCode::NotCompared, |f| {
        let n = f.judged.iter().filter(|r| !r.verdict.is_decided()).count();
        counted(ReasonCode::NotCompared, n, || {
            format!(
                "{n} of {} row(s) could not be compared (insufficient, invalid or withheld)",
                f.judged.len()
            )
        })
    }),
];

fn failed_runs(code: ReasonCode, side: &str, runs: &[FailedRun]) -> Vec<Reason> {
    runs.iter()
        .map(|r| {
            Reason::new(
                code,
                None,
                format!(
                    "{side} run {} ({}) failed: {}",
                    r.run_id, r.source_path, r.detail
                ),
            )
        })
        .collect()
}

/// One reason counting `n` rows, when there are any.
fn counted(code: ReasonCode, n: usize, text: impl FnOnce() -> String) -> Vec<Reason> {
    if n == 0 {
        return Vec::new();
    }
    vec![Reason::new(code, Some(n), text())]
}

/// One reason without a count, when `found`.
fn one_if(found: bool, code: ReasonCode, text: impl FnOnce() -> String) -> Vec<Reason> {
    if !found {
        return Vec::new();
    }
    vec![Reason::new(code, None, text())]
}

fn numerics(f: &Facts, status: NumericsStatus) -> usize {
    f.rows.iter().filter(|r| r.numerics == status).count()
}

/// On other hardware, or measured another way, a slower row is not evidence of a
/// regression (a failed run or a new numerics failure still is): without
/// --allow-mixed-hardware, nothing is judged; two methods, never.
fn regressed(f: &Facts) -> Vec<Reason> {
    if f.mixed || !f.ev.mixed_methods.is_empty() {
        return Vec::new();
    }
    let regressed = regressed_rows(f.rows.iter().filter(|r| !is_energy(r)));
    let metric_rows: usize = regressed.iter().map(|(_, m)| m.len()).sum();
    counted(ReasonCode::Regressed, regressed.len(), || {
        format!(
            "{} kernel/shape row(s) regressed ({metric_rows} metric row(s))",
            regressed.len()
        )
    })
}

/// A trial's GPU energy beyond its threshold, judged like a row's time (and, like it,
/// not on mixed hardware): "same speed, more energy" fails as a slower row does.
fn energy_regressed(f: &Facts) -> Vec<Reason> {
    if f.mixed || !f.ev.mixed_methods.is_empty() {
        return Vec::new();
    }
    let rows: Vec<&Row> = f
        .rows
        .iter()
        .filter(|r| is_energy(r) && r.verdict == Verdict::Regression)
        .collect();
    counted(ReasonCode::EnergyRegressed, rows.len(), || {
        let change = |r: &&Row| fmt_pct(r.change.unwrap_or(0.0));
        let trial: Vec<String> = rows
            .iter()
            .filter(|r| is_trial_energy(r))
            .map(|r| format!("{} {}", r.key_text, change(r)))
            .collect();
        let per_call: Vec<String> = rows
            .iter()
            .filter(|r| !is_trial_energy(r))
            .map(|r| format!("{} {} {} {}", r.table, r.variant, r.key_text, change(r)))
            .collect();
        let mut said = Vec::new();
        if !trial.is_empty() {
            said.push(format!(
                "the GPU energy of a trial regressed ({})",
                trial.join(", ")
            ));
        }
        if !per_call.is_empty() {
            said.push(format!(
                "the energy per call regressed ({})",
                per_call.join(", ")
            ));
        }
        said.join("; ")
    })
}

fn control_moved(f: &Facts) -> Vec<Reason> {
    let Some(c) = f.control else {
        return Vec::new();
    };
    let failed: Vec<String> = c
        .metrics
        .iter()
        .filter(|m| !m.passed)
        .map(|m| format!("{} {}", m.metric, ratio_pct(m.ratio)))
        .collect();
    one_if(!failed.is_empty(), ReasonCode::ControlMoved, || {
        format!(
            "the control moved beyond ±{:.0}% ({}): those metrics cannot be judged",
            c.tolerance * 100.0,
            failed.join(", ")
        )
    })
}

fn apply(rules: &[(ReasonCode, Rule)], f: &Facts) -> Vec<Reason> {
    let mut out = Vec::new();
    for (code, rule) in rules {
        let found = rule(f);
        debug_assert!(found.iter().all(|r| r.code == *code), "{code:?}");
        out.extend(found);
    }
    out
}

/// The overall verdict, and why: one [`Reason`] per finding, in the order a person
/// should read them.
pub(super) fn overall(
    rows: &[Row],
    control: &Option<ControlStatus>,
    ev: &Evidence,
) -> (Overall, Vec<Reason>) {
    let f = Facts {
        rows,
        control,
        ev,
        opt: ev.opt,
        mixed: !ev.mixed_hardware.is_empty() && !ev.opt.allow_mixed_hardware,
        judged: rows.iter().filter(|r| !r.control).collect(),
    };
    for (verdict, rules) in [
        (Overall::Regression, FAILURES),
        (Overall::Unreliable, UNRELIABLE),
        (Overall::Inconclusive, GAPS),
    ] {
        let found = apply(rules, &f);
        if !found.is_empty() {
            return (verdict, found);
        }
    }
    let kernels: Vec<&Row> = f.judged.iter().copied().filter(|r| !is_energy(r)).collect();
    let trial = f.judged.iter().filter(|r| is_trial_energy(r)).count();
    let per_call = f.judged.len() - kernels.len() - trial;
    let shapes = kernel_shapes(kernels.iter().copied());
    let also = match (trial, per_call) {
        (0, 0) => String::new(),
        (t, 0) => format!(", nor in the GPU energy of a trial ({t} GPU(s))"),
        (0, c) => format!(", nor in the energy per call ({c} row(s))"),
        (t, c) => format!(
            ", nor in the GPU energy of a trial ({t} GPU(s)) or the energy per call ({c} row(s))"
        ),
    };
    (
        Overall::Ok,
        vec![Reason::new(
            ReasonCode::NoRegression,
            Some(shapes),
            format!(
                "no regression in {shapes} kernel/shape row(s) ({} metric row(s)){also}",
                kernels.len()
            ),
        )],
    )
}
