//! Rows a head run did not time on purpose: `run --affected` stored its identities with
//! the runs (the warehouse document `identity/<run id>.json`), each row naming the runs
//! its result is. A row of base that head did not time because its identity equalled
//! an earlier run's is said as "not timed", with those runs, never "missing on head" and
//! never compared as if measured.

use super::{OneSided, OneSidedKind, SideInfo};
use crate::db::Db;
use perfdb_ingest::kernel_identity::rows::Identities;
use perfdb_ingest::model::key_from_json;
use perfdb_ingest::warehouse::Warehouse;
use serde::Serialize;

/// A row a head run did not time on purpose (`run --affected`): its table, variant, key
/// (canonical JSON) and the runs its result is.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct NotTimed {
    pub table: String,
    pub variant: String,
    pub key: String,
    pub filled_from: String,
}

/// The rows `side`'s identity-tagged runs did not time (their records' rows whose result
/// is other runs'); a record that cannot be read is said in `warnings`.
pub(super) fn read(db: &Db, side: &mut SideInfo, warnings: &mut Vec<String>) {
    if side.identity_runs.is_empty() {
        return;
    }
    let wh = Warehouse::new(&db.root);
    let own: Vec<String> = side
        .labels
        .iter()
        .flat_map(|l| side.commits.iter().map(move |c| format!("{l}@{c}")))
        .chain(side.runs.iter().map(|r| format!("run:{r}")))
        .collect();
    for run in &side.identity_runs {
        let ids: Identities = match wh.get_document(&Identities::document(run)) {
            Ok(None) => continue,
            Ok(Some((bytes, at))) => match serde_json::from_slice(&bytes) {
                Ok(ids) => ids,
                Err(e) => {
                    warnings.push(format!("{at}: not an identity record ({e}): its rows not timed are read as missing"));
                    continue;
                }
            },
            Err(e) => {
                warnings.push(format!(
                    "run {run}: its identity record cannot be read ({e})"
                ));
                continue;
            }
        };
        for row in ids.rows {
            if let Some(from) = row.measured_in.filter(|m| !own.contains(m)) {
                let n = NotTimed {
                    table: row.table,
                    variant: row.variant,
                    key: row.key,
                    filled_from: from,
                };
                if !side.not_timed.contains(&n) {
                    side.not_timed.push(n);
                }
            }
        }
    }
}

/// `only_in_base` split: the rows head did not time on purpose (kind
/// [`OneSidedKind::NotTimed`], with the runs they are filled from), and those missing.
pub(super) fn split(
    only_in_base: Vec<OneSided>,
    head: &SideInfo,
) -> (Vec<OneSided>, Vec<OneSided>) {
    if head.not_timed.is_empty() {
        return (Vec::new(), only_in_base);
    }
    let sorted = |mut k: Vec<(String, String)>| {
        k.sort();
        k
    };
    let mut not_timed = Vec::new();
    let mut missing = Vec::new();
    for mut o in only_in_base {
        let key = sorted(o.key.clone());
        let found = head.not_timed.iter().find(|n| {
            n.table == o.table && n.variant == o.variant && sorted(key_from_json(&n.key)) == key
        });
        match found {
            Some(n) => {
                o.verdict = OneSidedKind::NotTimed;
                o.filled_from = Some(n.filled_from.clone());
                not_timed.push(o);
            }
            None => missing.push(o),
        }
    }
    (not_timed, missing)
}
