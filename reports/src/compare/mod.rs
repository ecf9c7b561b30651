//! `compare BASE HEAD`: match rows like with like, reduce trials, test, gate on a
//! control, apply thresholds, and decide. The method is documented in docs/STATS.md.
//!
//! One file per step: [`select`] the runs of each side, [`load`] their values,
//! [`matching`] rows whose tables were printed differently, [`decide`] each row and the
//! whole, [`summarise`], and show the hardware [`counters`] that moved with each changed
//! row; the report types every exporter reads are in [`types`], the
//! options (asked and resolved) in [`options`]. [`memory`] judges values held in memory
//! (replays, simulations, the experiment's tests) by the same steps.

pub mod counters;
pub(crate) mod decide;
mod files;
mod load;
mod margin;
mod matching;
mod memory;
mod not_timed;
pub use not_timed::NotTimed;
mod options;
mod pair;
mod peaks;
mod select;
pub mod sequential;
pub mod strata;
mod summarise;
#[cfg(test)]
pub(crate) mod test_row;
mod types;
mod verdict;

pub use files::FileRuns;
pub use memory::{compare_values, MemoryRow};
pub use options::{variant_matches, JudgeArgs, Options, Override, Reduce, Strata, Test};
pub use select::select_runs;
pub use types::*;

use crate::db::Db;
use crate::stats;
use decide::{decide, gate_on_control, note_modes, relative_to_control};
pub use decide::{is_energy, is_trial_energy, kernel_shapes, regressed_rows};
use load::{load_side, Loaded};
use summarise::summarize;

/// A side of a comparison: runs of the warehouse named by a selector, or runs read
/// straight from files ([`FileRuns`]).
pub enum Side<'a> {
    Warehouse(&'a str),
    Files(&'a FileRuns),
}

/// Compare two sides, each of the warehouse or of files: a file side is selected and
/// loaded in memory ([`files`]), a warehouse side by its queries, and from there both go
/// through the same steps. `db` is needed for a warehouse side only.
pub fn compare_sides(
    db: Option<&Db>,
    devices: &Table,
    base: Side,
    head: Side,
    opt: &Options,
) -> Result<Report, CompareError> {
    let (db, base, head) = match (db, base, head) {
        (Some(db), Side::Warehouse(b), Side::Warehouse(h)) => return compare(db, b, h, opt),
        (db, b, h) => (db, b, h),
    };
    let mut t = std::time::Instant::now();
    let select = |s: &Side, which: &'static str| -> Result<SideInfo, CompareError> {
        match s {
            Side::Files(f) => {
                files::nonempty(f)?;
                Ok(files::side_info(f, devices))
            }
            Side::Warehouse(spec) => {
                let db = db.ok_or(CompareError::NoWarehouse(which))?;
                match (which, opt.baseline_window) {
                    ("base", Some(n)) => select::select_window(db, spec, n),
                    _ => select::select_side(db, spec, which),
                }
            }
        }
    };
    let (base_side, head_side) = (select(&base, "base")?, select(&head, "head")?);
    select::check_disjoint(&base_side, &head_side)?;
    trace("select runs", &mut t);
    let load = |s: &Side, info: &SideInfo| -> Result<Loaded, CompareError> {
        match s {
            Side::Files(f) => Ok(files::loaded(f, info, &opt.filters)),
            Side::Warehouse(_) => {
                let db = db.expect("a warehouse side was selected in a warehouse");
                load_side(db, info, opt)
            }
        }
    };
    // Two file sides load on two cores (a connection is one thread's).
    let (b, h) = match (&base, &head) {
        (Side::Files(bf), Side::Files(hf)) => std::thread::scope(|s| {
            let head = s.spawn(|| files::loaded(hf, &head_side, &opt.filters));
            let base = files::loaded(bf, &base_side, &opt.filters);
            (base, head.join().expect("loading thread panicked"))
        }),
        _ => (load(&base, &base_side)?, load(&head, &head_side)?),
    };
    trace("load both sides", &mut t);
    report(db, devices, base_side, head_side, b, h, opt)
}

/// The steps after loading, whichever way the sides were read: the report, measured
/// roofs (with a warehouse), the GPU-state warnings.
fn report(
    db: Option<&Db>,
    devices: &Table,
    base_side: SideInfo,
    head_side: SideInfo,
    mut b: Loaded,
    mut h: Loaded,
    opt: &Options,
) -> Result<Report, CompareError> {
    let mut t = std::time::Instant::now();
    let gpu = gpu_state_warnings(&base_side, &head_side);
    // `ab` without `--energy`: the energy rows (a trial's, per call) are stored, not judged.
    if opt.skip_energy {
        for side in [&mut b, &mut h] {
            side.rows
                .retain(|k, _| !decide::is_energy_row(&k.table, &k.variant, &k.metric));
        }
    }
    let mut r = build_report(base_side, head_side, b, h, opt, devices)?;
    if let Some(db) = db {
        peaks::hold_to_measured(db, &mut r.rows)?;
    }
    r.warnings.extend(gpu);
    trace("the report (statistics, summary included)", &mut t);
    Ok(r)
}

/// Compare two sides of the warehouse.
pub fn compare(db: &Db, base: &str, head: &str, opt: &Options) -> Result<Report, CompareError> {
    let mut t = std::time::Instant::now();
    // Each side is selected, then loaded, on its own connection: two cores, two sides.
    let head_db = db.try_clone()?;
    let (base_side, head_side) = std::thread::scope(|s| {
        let head = s.spawn(move || select::select_side(&head_db, head, "head"));
        let base = match opt.baseline_window {
            Some(n) => select::select_window(db, base, n),
            None => select::select_side(db, base, "base"),
        };
        (base, head.join().expect("selecting thread panicked"))
    });
    let (base_side, mut head_side) = (base_side?, head_side?);
    select::check_disjoint(&base_side, &head_side)?;
    let mut record_warnings = Vec::new();
    not_timed::read(db, &mut head_side, &mut record_warnings);
    trace("select runs", &mut t);
    let head_db = db.try_clone()?;
    let (b, h) = std::thread::scope(|s| {
        let side = &head_side;
        let head = s.spawn(move || load_side(&head_db, side, opt));
        let base = load_side(db, &base_side, opt);
        (base, head.join().expect("loading thread panicked"))
    });
    let (b, h) = (b?, h?);
    trace("load both sides", &mut t);
    let mut r = report(Some(db), &db.devices, base_side, head_side, b, h, opt)?;
    r.warnings.extend(record_warnings);
    Ok(r)
}

use perfdb_ingest::devices::Table;
use perfdb_ingest::timing::trace;

/// What the GPU-state tags of the runs say against the comparison (`perfdb ab`
/// records them, docs/STATS.md): the sides' mean clocks more than 2% apart, trials that
/// ended throttled. The tags come with each side's runs (`SideInfo::gpu_tags`).
fn gpu_state_warnings(b: &SideInfo, h: &SideInfo) -> Vec<String> {
    let side = |s: &SideInfo| -> (Vec<f64>, usize) {
        let (mut clocks, mut throttled) = (Vec::new(), 0);
        for t in &s.gpu_tags {
            let Ok(serde_json::Value::Object(m)) = serde_json::from_str(t) else {
                continue;
            };
            for k in ["gpu_clock_mhz_before", "gpu_clock_mhz_after"] {
                if let Some(c) = m
                    .get(k)
                    .and_then(|v| v.as_str())
                    .and_then(|v| v.parse().ok())
                {
                    clocks.push(c);
                }
            }
            if m.get("gpu_throttle_after")
                .and_then(|v| v.as_str())
                .is_some_and(|v| v != "none")
            {
                throttled += 1;
            }
        }
        (clocks, throttled)
    };
    let ((cb, tb), (ch, th)) = (side(b), side(h));
    let mut out = Vec::new();
    if !cb.is_empty() && !ch.is_empty() {
        let (mb, mh) = (stats::mean(&cb), stats::mean(&ch));
        if (mh / mb - 1.0).abs() > 0.02 {
            out.push(format!(
                "the sides ran at different GPU clocks: base {mb:.0} MHz, head {mh:.0} MHz on average ({:+.1}%): a difference may be the clock's",
                (mh / mb - 1.0) * 100.0
            ));
        }
    }
    if tb + th > 0 {
        out.push(format!(
            "{tb} base and {th} head trial(s) ended with the GPU throttled (their runs' gpu_throttle_after tag says why)"
        ));
    }
    out
}

fn build_report(
    base_side: SideInfo,
    head_side: SideInfo,
    mut b: Loaded,
    mut h: Loaded,
    opt: &Options,
    devices: &Table,
) -> Result<Report, CompareError> {
    let control_one_sided = check_control(&b, &h, opt)?;
    let mixed_hardware = mixed_hardware(&base_side, &head_side);
    let mixed_methods = mixed_methods(&base_side, &head_side);
    let derived = [
        std::mem::take(&mut b.derived_columns),
        std::mem::take(&mut h.derived_columns),
    ];
    let counters = [
        std::mem::take(&mut b.counters),
        std::mem::take(&mut h.counters),
    ];
    let profiling = profiled_left_out([base_side.profiled_runs, head_side.profiled_runs]);
    let mut t = std::time::Instant::now();
    let paired = pair::pair(b, h, opt);
    trace("pair and assess each row", &mut t);
    let pair::Paired {
        mut rows,
        only_in_base,
        only_in_head,
        not_measured,
        key_names,
        mut warnings,
        unpaired_tables,
    } = paired;
    let (not_timed, only_in_base) = not_timed::split(only_in_base, &head_side);
    if let Some(from) = not_timed.first().and_then(|o| o.filled_from.as_deref()) {
        warnings.push(format!(
            "{} row(s) not timed on head: their identity equalled the runs they are filled from ({from}{}); not compared",
            not_timed.len(),
            if not_timed.iter().any(|o| o.filled_from.as_deref() != Some(from)) { ", ..." } else { "" }
        ));
    }
    peaks::hold(&mut rows, &base_side, &head_side, devices);
    let control = judge(&mut rows, opt);
    trace("judge every row", &mut t);
    let summary = summarize(&rows, opt);
    trace("summary bootstrap", &mut t);
    warnings.extend(set_and_control_warnings(
        only_in_base.len(),
        only_in_head.len(),
        control.as_ref(),
        opt,
    ));
    worst_first(&mut rows);
    let key_basis = key_names
        .into_iter()
        .map(|(table, key_columns)| KeyBasis {
            derived_columns_excluded: derived[0]
                .get(&table)
                .or(derived[1].get(&table))
                .cloned()
                .unwrap_or_default(),
            table,
            key_columns,
        })
        .collect();
    for m in &mixed_hardware {
        warnings.push(format!("different hardware: {m}"));
    }
    for m in &mixed_methods {
        warnings.push(format!("measured differently: {m}"));
    }
    for c in &control_one_sided {
        warnings.push(format!("control on one side only: {c}"));
    }
    let evidence = verdict::Evidence {
        base: &base_side,
        head: &head_side,
        missing: only_in_base.len(),
        control_one_sided,
        mixed_hardware,
        mixed_methods,
        unpaired_tables,
        opt,
    };
    let (verdict, reasons) = verdict::overall(&rows, &control, &evidence);
    let explained = counters::section(&rows, &counters, opt, &mut warnings);
    Ok(Report {
        verdict,
        reason: Reason::prose(&reasons),
        reasons,
        base: base_side,
        head: head_side,
        options: opt.clone(),
        control,
        summary,
        rows,
        only_in_base,
        only_in_head,
        not_timed,
        not_measured,
        key_basis,
        warnings,
        counters: explained,
        profiling,
    })
}

/// What the report says of the profiled runs whose own timing rows it left out (base,
/// head): their times ran under the profiler's replay and are never a trial.
fn profiled_left_out(runs: [usize; 2]) -> Vec<String> {
    if runs == [0, 0] {
        return Vec::new();
    }
    vec![format!(
        "{} base and {} head profiled run(s) left out of the timed trials: their rows ran under the profiler's replay (only their counters are read)",
        runs[0], runs[1]
    )]
}

/// What the row sets and the control say against the comparison: rows on one side
/// only, no control given, a control that matched nothing.
fn set_and_control_warnings(
    only_in_base: usize,
    only_in_head: usize,
    control: Option<&ControlStatus>,
    opt: &Options,
) -> Vec<String> {
    let mut warnings = Vec::new();
    if only_in_base > 0 || only_in_head > 0 {
        warnings.push(format!(
            "the two sides measured different row sets: {only_in_base} row(s) only in base, {only_in_head} only in head"
        ));
    }
    if opt.control.is_empty() {
        warnings.push(
            "no --control given: machine drift between the sides cannot be told from a change"
                .to_string(),
        );
    } else if control.is_some_and(|c| c.matched_variants.is_empty()) {
        warnings.push(format!(
            "--control {} matched no variant present on both sides",
            opt.control.join(",")
        ));
    }
    warnings
}

/// Numerics failures and regressions first, the control after its peers, worst change
/// first within each verdict.
fn worst_first(rows: &mut [Row]) {
    rows.sort_by(|a, b| {
        (!a.numerics_failed(), a.control, a.verdict)
            .cmp(&(!b.numerics_failed(), b.control, b.verdict))
            .then(
                b.change
                    .unwrap_or(f64::NEG_INFINITY)
                    .total_cmp(&a.change.unwrap_or(f64::NEG_INFINITY)),
            )
    });
}

/// Every row judged: the control gate, Benjamini-Hochberg over the rows still in the
/// family (the sequential rule's adjustment first when this is a look of `ab`), each
/// verdict, the rows relative to the control, and each row's power or sequential state.
fn judge(rows: &mut [Row], opt: &Options) -> Option<ControlStatus> {
    let control = gate_on_control(rows, opt);

    // Benjamini-Hochberg over every tested non-control row that is still in the family.
    let family: Vec<usize> = (0..rows.len())
        .filter(|i| {
            !rows[*i].control
                && rows[*i].p.is_some()
                && rows[*i].verdict == Verdict::NoSignificantChange
        })
        .collect();
    let mut ps: Vec<f64> = family
        .iter()
        .map(|i| rows[*i].p.expect("filtered"))
        .collect();
    if let Some(look) = &opt.sequential {
        sequential::adjust(&mut ps, look, opt.test);
    }
    let qs = stats::benjamini_hochberg(&ps);
    for (i, q) in family.iter().zip(qs) {
        rows[*i].q = Some(q);
    }
    // The same over the tests against the margin: a change beyond the threshold is
    // shown at the same false discovery rate.
    let mut pbs: Vec<f64> = family
        .iter()
        .map(|i| rows[*i].p_beyond.unwrap_or(1.0))
        .collect();
    if let Some(look) = &opt.sequential {
        sequential::adjust_one_sided(&mut pbs, look, opt.test);
    }
    for (i, q) in family.iter().zip(stats::benjamini_hochberg(&pbs)) {
        rows[*i].q_beyond = Some(q);
    }
    let by_margin = opt.sequential.is_none_or(|l| l.sized_by_margin());
    for r in rows.iter_mut() {
        decide(r, opt.alpha, by_margin, opt.test);
    }
    relative_to_control(rows, opt.alpha);
    if opt.test == Test::MannWhitney {
        beyond_reach_after_correction(rows, &family, &ps, opt.alpha);
    }
    for r in rows.iter_mut() {
        match &opt.sequential {
            Some(look) => sequential::judge(r, look, opt.alpha, opt.test),
            None => sequential::note_power(r, opt.alpha),
        }
        note_modes(r);
    }
    control
}

/// Every `--control` name must match a variant on some side (else it is a usage
/// error, listing the variants present); one that matches on one side only leaves the
/// comparison without its control (returned, for the verdict).
fn check_control(b: &Loaded, h: &Loaded, opt: &Options) -> Result<Vec<String>, CompareError> {
    let variants = |l: &Loaded| -> std::collections::BTreeSet<String> {
        l.rows.keys().map(|id| id.variant.clone()).collect()
    };
    let (vb, vh) = (variants(b), variants(h));
    let mut one_sided = Vec::new();
    for c in &opt.control {
        let on = |vs: &std::collections::BTreeSet<String>| -> Vec<String> {
            vs.iter()
                .filter(|v| variant_matches(c, v))
                .cloned()
                .collect()
        };
        let (ob, oh) = (on(&vb), on(&vh));
        match (ob.is_empty(), oh.is_empty()) {
            (true, true) => {
                return Err(CompareError::ControlMatchesNothing {
                    control: c.clone(),
                    present: vb.union(&vh).cloned().collect(),
                })
            }
            (false, true) => one_sided.push(format!(
                "'{c}' matches {} on base and nothing on head",
                ob.join(", ")
            )),
            (true, false) => one_sided.push(format!(
                "'{c}' matches {} on head and nothing on base",
                oh.join(", ")
            )),
            (false, false) => {}
        }
    }
    Ok(one_sided)
}

/// How the hardware of the two sides differs: arch, container image, `machine` tag.
fn mixed_hardware(b: &SideInfo, h: &SideInfo) -> Vec<String> {
    let mut out = Vec::new();
    for (what, vb, vh) in [
        ("arch", &b.archs, &h.archs),
        ("image digest", &b.image_digests, &h.image_digests),
        ("machine", &b.machines, &h.machines),
    ] {
        if !vb.is_empty() && !vh.is_empty() && vb != vh {
            out.push(format!(
                "{what} base {}, head {}",
                vb.join(", "),
                vh.join(", ")
            ));
        }
    }
    out
}

/// How the sides were measured, where that differs: a side whose runs name several
/// methods, or two sides that each name theirs and differ. A run that names none is
/// not held against the other side (its method is unknown, as a missing arch is).
fn mixed_methods(b: &SideInfo, h: &SideInfo) -> Vec<String> {
    let mut out = Vec::new();
    for (name, s) in [("base", b), ("head", h)] {
        if s.methods.len() > 1 {
            out.push(format!("{name} mixes methods {}", s.methods.join(", ")));
        }
    }
    if out.is_empty() && !b.methods.is_empty() && !h.methods.is_empty() && b.methods != h.methods {
        out.push(format!(
            "method base {}, head {}",
            b.methods.join(", "),
            h.methods.join(", ")
        ));
    }
    out
}

/// Under the U test a row's p cannot go below the smallest its sizes and ties allow, and
/// after Benjamini-Hochberg over the family that floor can still be above alpha: such a
/// row can never be significant, so "no significant change" would claim what its trials
/// cannot tell. It is insufficient, with the trials a side it would need.
fn beyond_reach_after_correction(rows: &mut [Row], family: &[usize], ps: &[f64], alpha: f64) {
    let m = family.len();
    for (k, &i) in family.iter().enumerate() {
        let r = &rows[i];
        if r.verdict != Verdict::NoSignificantChange {
            continue;
        }
        let (hv, bv) = (r.head.finite(), r.base.finite());
        let floor = stats::mw_min_p_given(&hv, &bv);
        // Reachable for sure (alone at the floor BH gives at most floor * m); or never
        // (q >= p); only in between is the family's BH worked out again.
        if floor * m as f64 <= alpha {
            continue;
        }
        let mut best = ps.to_vec();
        best[k] = floor.min(ps[k]);
        let q_best = stats::benjamini_hochberg(&best)[k];
        if q_best <= alpha {
            continue;
        }
        let r = &mut rows[i];
        r.verdict = Verdict::Insufficient;
        r.reason = format!(
            "{} base and {} head trial(s): the U test's smallest attainable p, {floor:.4}, \
             adjusted over the {m} row(s) compared reaches at best q = {q_best:.3} > {alpha}; \
             run at least {} a side",
            bv.len(),
            hv.len(),
            stats::mw_trials_needed(alpha / m as f64)
        );
    }
}
