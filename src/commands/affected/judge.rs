//! The timed rows judged, each against the run its base result came from (compare's
//! statistics, `run:R` against `run:HEAD`), and the command's exit.

use crate::Exit;
use perfdb_ingest::devices::Table;
use perfdb_ingest::kernel_identity::launches::Choice;
use perfdb_ingest::kernel_identity::rows::Identities;
use perfdb_ingest::model::key_from_json;
use perfdb_reports::affected::render::{Judged, Outcome, Spread};
use perfdb_reports::affected::{Action, Why};
use perfdb_reports::compare::{self, Options, Verdict};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// Each timed row's verdict against its base row's run.
pub fn judge(root: &Path, devices: &Arc<Table>, o: &Outcome, head: &str) -> Vec<Judged> {
    // The base run of each timed row: an audited row names it; another, the base row's.
    let mut by_run: BTreeMap<String, Vec<&perfdb_ingest::kernel_identity::rows::RowIdentity>> =
        BTreeMap::new();
    for p in o.plan.timed() {
        let against = match &p.action {
            Action::Time(Why::Audit { run, .. }) => Some(run.clone()),
            _ => o.base_measured_in(&p.row),
        };
        if let Some(r) = against {
            by_run.entry(r).or_default().push(&p.row);
        }
    }
    let mut out = Vec::new();
    let db = match perfdb_reports::db::Db::open(root, devices) {
        Ok(db) => db,
        Err(e) => {
            say!("perfdb run: cannot judge the timed rows: {e}");
            return out;
        }
    };
    for (run, rows) in by_run {
        let report = compare::compare(&db, &run, head, &Options::default());
        for row in rows {
            let j = match &report {
                Err(e) => Judged {
                    row: row.name(),
                    against: run.clone(),
                    verdict: format!("could not compare: {e}"),
                    change: None,
                    moved: false,
                },
                Ok(r) => {
                    let mut want = key_from_json(&row.key);
                    want.sort();
                    let found = r.rows.iter().filter(|c| {
                        let mut k = c.key.clone();
                        k.sort();
                        c.table == row.table && c.variant == row.variant && k == want
                    });
                    // The row's worst metric speaks for it.
                    match found.min_by_key(|c| c.verdict) {
                        Some(c) => Judged {
                            row: row.name(),
                            against: run.clone(),
                            verdict: c.verdict.as_str().to_string(),
                            change: c.change,
                            moved: matches!(c.verdict, Verdict::Regression | Verdict::Improvement),
                        },
                        None => Judged {
                            row: row.name(),
                            against: run.clone(),
                            verdict: "could not compare: not matched".to_string(),
                            change: None,
                            moved: false,
                        },
                    }
                }
            };
            out.push(j);
        }
    }
    out
}

/// The exit: a leak or a code regression fails; a row asked for and not printed, or
/// one that could not be compared, is inconclusive; a drift alone does not fail.
pub fn exit(o: &Outcome, stored: Exit) -> Exit {
    if stored != Exit::Ok {
        return stored;
    }
    if !o.leaks().is_empty() {
        return Exit::Regression;
    }
    if o.judged
        .iter()
        .any(|j| j.verdict == Verdict::Regression.as_str() && !o.drifted(&j.row))
    {
        return Exit::Regression;
    }
    if !o.missing.is_empty() || o.judged.iter().any(|j| j.verdict.starts_with("could not")) {
        return Exit::Inconclusive;
    }
    Exit::Ok
}

/// For each kernel whose autotuner's choice drifted this night, its winners over the
/// label's last identity passes (this one and up to 19 stored before it).
pub fn spreads(
    root: &Path,
    devices: &Arc<Table>,
    label: &str,
    o: &Outcome,
    head: &Identities,
) -> Vec<Spread> {
    let mut kernels: Vec<&str> = o
        .plan
        .rows
        .iter()
        .filter_map(|p| match &p.action {
            Action::Drift { kernel, .. } | Action::Time(Why::ConfigDrift { kernel, .. }) => {
                Some(kernel.as_str())
            }
            _ => None,
        })
        .collect();
    kernels.sort();
    kernels.dedup();
    if kernels.is_empty() {
        return Vec::new();
    }
    let mut passes: Vec<Vec<Choice>> = vec![head.autotune.clone()];
    let runs: Vec<String> = perfdb_reports::db::Db::open(root, devices)
        .ok()
        .and_then(|db| {
            let sql = format!(
                "SELECT run_id FROM runs WHERE label = {} AND contains(tags, '\"identity\":') \
                 ORDER BY ingested_at DESC LIMIT 200",
                perfdb_reports::db::sql_str(label)
            );
            let mut stmt = db.conn.prepare(&sql).ok()?;
            let rows = stmt.query_map([], |r| r.get::<_, String>(0)).ok()?;
            Some(rows.flatten().collect())
        })
        .unwrap_or_default();
    let wh = perfdb_ingest::warehouse::Warehouse::new(root);
    for run in runs.iter().filter(|r| !o.head_runs.contains(r)) {
        if passes.len() >= 20 {
            break;
        }
        if let Ok(Some((bytes, _))) = wh.get_document(&Identities::document(run)) {
            if let Ok(ids) = serde_json::from_slice::<Identities>(&bytes) {
                passes.push(ids.autotune);
            }
        }
    }
    let refs: Vec<&[Choice]> = passes.iter().map(Vec::as_slice).collect();
    kernels
        .into_iter()
        .map(|k| perfdb_reports::affected::render::spread(k, &refs))
        .collect()
}

/// The timed rows judged and the drifted kernels' spreads, into the outcome.
pub fn finish(
    root: &Path,
    opts: &super::super::ingest::Options,
    outcome: &mut Outcome,
    head: Option<&Identities>,
) {
    if let Some(h) = outcome.head.clone() {
        outcome.judged = judge(root, &opts.devices, outcome, &h);
    }
    if let Some(ids) = head {
        outcome.spread = spreads(root, &opts.devices, opts.label.as_str(), outcome, ids);
    }
}
