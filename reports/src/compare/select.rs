//! Step 1: which runs make up each side.
//!
//! A selector is one of:
//! - `LABEL` — every run of the label, refused when they span several commits (a reused
//!   `head` label would pool pull requests as trials);
//! - `LABEL@COMMIT` — the label's runs at a commit (prefix);
//! - `LABEL@latest` — the label's runs at its newest commit (by commit time, then ingest);
//! - a commit prefix, or `run:ID` (a run id prefix); a bare run id prefix still works
//!   when nothing else matches.

use super::{CompareError, FailedRun, MatchedBy, SideInfo};
use crate::db::{run_device, sql_str, Db, MACHINE_TAG_SQL, METHOD_TAG_SQL, RUN_DEVICE_SQL};

/// One run as the selection sees it.
struct RunRow {
    run_id: String,
    label: String,
    commit: String,
    verdict: String,
    detail: String,
    arch: String,
    image_digest: String,
    source_path: String,
    /// The `machine` tag, `""` without one.
    machine: String,
    /// The `method` tag, `""` without one.
    method: String,
    /// The device the run names (`ingest::devices`), `""` when none.
    device: String,
    /// The run's tags when they hold GPU state (`gpu_*`), else none.
    gpu_tags: Option<String>,
    /// Whether the run is tagged `profiled`.
    profiled: bool,
    /// Whether `run --affected` stored it (tagged `identity`): its identity record may
    /// list rows it did not time.
    identity: bool,
}

const RUN_COLUMNS: &str = "run_id, label, coalesce(\"commit\", ''), coalesce(verdict, ''), \
     coalesce(verdict_detail, ''), coalesce(arch, ''), coalesce(image_digest, ''), source_path";

fn query(db: &Db, cond: &str) -> Result<Vec<RunRow>, CompareError> {
    let sql = format!(
        "SELECT {RUN_COLUMNS}, {MACHINE_TAG_SQL}, {METHOD_TAG_SQL}, {RUN_DEVICE_SQL}, \
         CASE WHEN contains(tags, '\"gpu_') THEN tags END, contains(tags, '\"profiled\":'), \
         contains(tags, '\"identity\":') \
         FROM runs r WHERE {cond} \
         ORDER BY label, trial"
    );
    let mut stmt = db.conn.prepare(&sql)?;
    let rows = stmt
        .query_map([], |r| {
            Ok(RunRow {
                run_id: r.get(0)?,
                label: r.get(1)?,
                commit: r.get(2)?,
                verdict: r.get(3)?,
                detail: r.get(4)?,
                arch: r.get(5)?,
                image_digest: r.get(6)?,
                source_path: r.get(7)?,
                machine: r.get(8)?,
                method: r.get(9)?,
                device: run_device(&db.devices, r, 10)?
                    .map(|d| d.id.clone())
                    .unwrap_or_default(),
                gpu_tags: r.get(13)?,
                profiled: r.get(14)?,
                identity: r.get(15)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}

/// The distinct non-empty values `f` gives of `rows`, sorted (a side's commits, archs...).
pub(super) fn distinct<'a, T>(rows: &'a [T], f: impl Fn(&'a T) -> &'a str) -> Vec<String> {
    let mut v: Vec<String> = rows
        .iter()
        .map(|r| f(r).to_string())
        .filter(|s| !s.is_empty())
        .collect();
    v.sort();
    v.dedup();
    v
}

fn side(spec: &str, by: MatchedBy, rows: Vec<RunRow>) -> SideInfo {
    let mut labels: Vec<String> = rows.iter().map(|r| r.label.clone()).collect();
    labels.dedup();
    SideInfo {
        selector: spec.to_string(),
        matched_by: by,
        commits: distinct(&rows, |r| &r.commit),
        archs: distinct(&rows, |r| &r.arch),
        image_digests: distinct(&rows, |r| &r.image_digest),
        machines: distinct(&rows, |r| &r.machine),
        methods: distinct(&rows, |r| &r.method),
        devices: distinct(&rows, |r| &r.device),
        failed_runs: rows
            .iter()
            .filter(|r| r.verdict == "fail")
            .map(|r| FailedRun {
                run_id: r.run_id.clone(),
                source_path: r.source_path.clone(),
                detail: r.detail.clone(),
            })
            .collect(),
        labels,
        gpu_tags: rows.iter().filter_map(|r| r.gpu_tags.clone()).collect(),
        profiled_runs: rows.iter().filter(|r| r.profiled).count(),
        profiled_run_ids: rows
            .iter()
            .filter(|r| r.profiled)
            .map(|r| r.run_id.clone())
            .collect(),
        not_timed: Vec::new(),
        identity_runs: rows
            .iter()
            .filter(|r| r.identity)
            .map(|r| r.run_id.clone())
            .collect(),
        runs: rows.into_iter().map(|r| r.run_id).collect(),
    }
}

/// Resolve a selector (see the module docs). `which` names the side in errors.
pub fn select_side(db: &Db, spec: &str, which: &'static str) -> Result<SideInfo, CompareError> {
    let spec = spec.trim();
    if spec.is_empty() {
        return Err(CompareError::EmptySelector(which));
    }
    if let Some(id) = spec.strip_prefix("run:") {
        if id.is_empty() {
            return Err(CompareError::EmptySelector(which));
        }
        let rows = query(db, &format!("starts_with(run_id, {})", sql_str(id)))?;
        return nonempty(spec, MatchedBy::RunId, rows);
    }
    if let Some((label, at)) = spec.split_once('@') {
        if label.is_empty() || at.is_empty() {
            return Err(CompareError::EmptySelector(which));
        }
        let l = sql_str(label);
        if at == "latest" {
            // The newest commit of the label: by commit time, then by ingest time.
            let rows = query(
                db,
                &format!(
                    "label = {l} AND coalesce(\"commit\", '') = (SELECT coalesce(\"commit\", '') FROM runs \
                     WHERE label = {l} ORDER BY commit_time DESC NULLS LAST, ingested_at DESC LIMIT 1)"
                ),
            )?;
            return nonempty(spec, MatchedBy::LabelAtLatest, rows);
        }
        let rows = query(
            db,
            &format!("label = {l} AND starts_with(\"commit\", {})", sql_str(at)),
        )?;
        return nonempty(spec, MatchedBy::LabelAtCommit, rows);
    }
    let rows = query(db, &format!("label = {}", sql_str(spec)))?;
    if !rows.is_empty() {
        let commits = distinct(&rows, |r| &r.commit);
        if commits.len() > 1 {
            return Err(CompareError::LabelSpansCommits {
                label: spec.to_string(),
                commits,
            });
        }
        return Ok(side(spec, MatchedBy::Label, rows));
    }
    let rows = query(db, &format!("starts_with(\"commit\", {})", sql_str(spec)))?;
    if !rows.is_empty() {
        return Ok(side(spec, MatchedBy::Commit, rows));
    }
    let rows = query(db, &format!("starts_with(run_id, {})", sql_str(spec)))?;
    nonempty(spec, MatchedBy::RunId, rows)
}

fn nonempty(spec: &str, by: MatchedBy, rows: Vec<RunRow>) -> Result<SideInfo, CompareError> {
    if rows.is_empty() {
        Err(CompareError::NoRuns(spec.to_string()))
    } else {
        Ok(side(spec, by, rows))
    }
}

/// The base as history: the runs of `label`'s last `n` commits (by commit time, then
/// ingest), pooled as one distribution (`compare --baseline-window N`).
pub fn select_window(db: &Db, label: &str, n: usize) -> Result<SideInfo, CompareError> {
    let label = label.split('@').next().unwrap_or(label).trim();
    if label.is_empty() || n == 0 {
        return Err(CompareError::EmptySelector("base"));
    }
    let l = sql_str(label);
    let rows = query(
        db,
        &format!(
            "label = {l} AND coalesce(\"commit\", '') IN (SELECT c FROM (SELECT coalesce(\"commit\", '') AS c, \
             max(commit_time) AS t, min(ingested_at) AS i FROM runs WHERE label = {l} GROUP BY c \
             ORDER BY t DESC NULLS LAST, i DESC LIMIT {n}))"
        ),
    )?;
    nonempty(label, MatchedBy::LabelWindow(n), rows)
}

/// Resolve a selector outside a comparison (charts): see [`select_side`].
pub fn select_runs(db: &Db, spec: &str) -> Result<SideInfo, CompareError> {
    select_side(db, spec, "runs")
}

/// Two sides that share runs compare a thing with itself.
pub fn check_disjoint(base: &SideInfo, head: &SideInfo) -> Result<(), CompareError> {
    let b: std::collections::HashSet<&String> = base.runs.iter().collect();
    let shared: Vec<&String> = head.runs.iter().filter(|r| b.contains(r)).collect();
    match shared.first() {
        None => Ok(()),
        Some(example) => Err(CompareError::SidesOverlap {
            base: base.selector.clone(),
            head: head.selector.clone(),
            n: shared.len(),
            example: example.to_string(),
        }),
    }
}
