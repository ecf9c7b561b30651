//! Alerts as a team triages them: one bad commit moves many series (every shape of a
//! kernel, latency and throughput), and the team triages the change, not each series.
//! Alerts of one label, one machine class and one kind whose commit ranges share a
//! commit are one group (Skia groups anomalies whose ranges overlap; Mozilla's
//! Perfherder groups a push's alerts into one summary).
//!
//! A range is (last good, first bad]: the step landed after the last good commit, at or
//! before the first bad one, in the label's commit order (commit time, then first ingest,
//! as detect orders them). Groups are cut so that every member holds one common commit:
//! alerts sorted by their first bad commit, a group takes every alert whose range holds
//! the first open alert's first bad commit (interval stabbing), so its narrowest common
//! range is never empty. An alert whose commits the runs no longer name groups only with
//! alerts of the very same range.
//!
//! A machine class that names no GPU (the runs' output printed none: aiter's tables)
//! joins the one class of its label that names a GPU under the same machine tag and
//! method (`default` with `cuda:9.0/default`: the probe lines of the same trials): to a
//! team they are one machine. Where the label's runs name two GPUs under that tag, which
//! one the bare class ran on is unknown, and it stays apart.
//!
//! A group's id is its earliest alert's id (created first, then by id): it does not
//! change as later alerts join, and a group of one is its alert.

use super::store::{AlertKind, AlertView, TriageError};
use crate::db::{sql_str, Db, MACHINE_CLASS_SQL};
use perfdb_ingest::model::AlertStatus;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// Alerts that one change raised.
#[derive(Debug, Clone, Serialize)]
pub struct AlertGroup {
    /// The earliest member's id.
    pub id: String,
    pub kind: AlertKind,
    pub label: String,
    pub machine: String,
    /// The narrowest range every member holds: after this commit...
    pub last_good_commit: String,
    /// ...at or before this one.
    pub first_bad_commit: String,
    /// The group's status: active while any member is, else the most pressing of the
    /// members' (acknowledged, then pending, dismissed, resolved, silenced, withdrawn).
    pub status: AlertStatus,
    /// The members, worst first (the largest change; then by id).
    pub alerts: Vec<AlertView>,
}

impl AlertGroup {
    /// The worst member: what a one-line summary leads with.
    pub fn worst(&self) -> &AlertView {
        &self.alerts[0]
    }

    /// The series the group holds, one line each: `table variant key (metrics) change`.
    pub fn series(&self) -> Vec<String> {
        self.alerts
            .iter()
            .map(|a| {
                format!(
                    "{} {} {} ({}) {}",
                    a.table,
                    a.variant,
                    a.key_text,
                    a.metrics.join("/"),
                    a.change_text()
                )
            })
            .collect()
    }
}

/// How far an alert moved its series, for ordering: |ln ratio| (a stale alert: 0).
fn severity(a: &AlertView) -> f64 {
    match a.kind {
        AlertKind::Regression if a.ratio > 0.0 => a.ratio.ln().abs(),
        _ => 0.0,
    }
}

fn pressing(s: AlertStatus) -> u8 {
    match s {
        AlertStatus::Active => 0,
        AlertStatus::Acknowledged => 1,
        AlertStatus::Pending => 2,
        AlertStatus::Dismissed => 3,
        AlertStatus::Resolved => 4,
        AlertStatus::Silenced => 5,
        AlertStatus::Withdrawn => 6,
    }
}

/// Each label's commits in history order: commit -> position.
pub fn commit_positions(
    db: &Db,
    labels: &[&str],
) -> Result<HashMap<String, HashMap<String, usize>>, TriageError> {
    let mut out = HashMap::new();
    for label in labels {
        let sql = format!(
            "SELECT coalesce(\"commit\", run_id) AS c, min(epoch_us(coalesce(commit_time, ingested_at))) AS t, \
                    min(epoch_us(ingested_at)) AS i \
             FROM runs WHERE label = {} GROUP BY c ORDER BY t, i, c",
            sql_str(label)
        );
        let mut stmt = db.conn.prepare(&sql)?;
        let commits: Vec<String> = stmt
            .query_map([], |r| r.get::<_, String>(0))?
            .collect::<Result<_, _>>()?;
        let pos = commits
            .into_iter()
            .enumerate()
            .map(|(i, c)| (c, i))
            .collect();
        out.insert(label.to_string(), pos);
    }
    Ok(out)
}

/// (label, machine class) -> the class it is grouped under, for the classes that name no
/// GPU and have exactly one class naming a GPU under the same tag and method in the
/// label's runs.
pub type Merges = HashMap<(String, String), String>;

/// The [`Merges`] of `labels`' runs.
pub fn class_merges(db: &Db, labels: &[&str]) -> Result<Merges, TriageError> {
    if labels.is_empty() {
        return Ok(Merges::new());
    }
    let list: Vec<String> = labels.iter().map(|l| sql_str(l)).collect();
    let sql = format!(
        "SELECT DISTINCT r.label, {MACHINE_CLASS_SQL} AS class, nullif(r.arch, '') AS arch \
         FROM runs r WHERE r.label IN ({})",
        list.join(", ")
    );
    let mut stmt = db.conn.prepare(&sql)?;
    let rows: Vec<(String, String, Option<String>)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<Result<_, _>>()?;
    Ok(merges_of(rows))
}

/// [`class_merges`] from (label, class, arch) rows.
fn merges_of(rows: Vec<(String, String, Option<String>)>) -> Merges {
    // (label, tag and method) -> the classes naming a GPU there.
    let mut named: HashMap<(String, String), Vec<String>> = HashMap::new();
    let mut bare = Vec::new();
    for (label, class, arch) in rows {
        match arch {
            Some(arch) => {
                let rest = class.strip_prefix(&format!("{arch}/")).unwrap_or(&class);
                let v = named.entry((label.clone(), rest.to_string())).or_default();
                if !v.contains(&class) {
                    v.push(class.clone());
                }
            }
            None => bare.push((label, class)),
        }
    }
    bare.into_iter()
        .filter_map(
            |(label, class)| match named.get(&(label.clone(), class.clone())) {
                Some(one) if one.len() == 1 => Some(((label, class), one[0].clone())),
                _ => None,
            },
        )
        .collect()
}

/// The alerts grouped, the groups with an active member first, then newest first.
pub fn group(db: &Db, alerts: Vec<AlertView>) -> Result<Vec<AlertGroup>, TriageError> {
    let mut labels: Vec<&str> = alerts.iter().map(|a| a.label.as_str()).collect();
    labels.sort_unstable();
    labels.dedup();
    let positions = commit_positions(db, &labels)?;
    let merges = class_merges(db, &labels)?;
    Ok(group_with(alerts, &positions, &merges))
}

/// [`group`] with the commit order and the class merges given.
pub fn group_with(
    alerts: Vec<AlertView>,
    positions: &HashMap<String, HashMap<String, usize>>,
    merges: &Merges,
) -> Vec<AlertGroup> {
    let mut parts: BTreeMap<(String, String, bool), Vec<AlertView>> = BTreeMap::new();
    for a in alerts {
        let class = merges
            .get(&(a.label.clone(), a.machine.clone()))
            .unwrap_or(&a.machine)
            .clone();
        let key = (a.label.clone(), class, a.kind == AlertKind::Stale);
        parts.entry(key).or_default().push(a);
    }
    let mut groups = Vec::new();
    for ((label, class, _), members) in parts {
        let empty = HashMap::new();
        let pos = positions.get(&label).unwrap_or(&empty);
        // Each alert's range as positions, or None when a commit is not in the runs.
        let range = |a: &AlertView| -> Option<(usize, usize)> {
            let (lg, fb) = (pos.get(&a.last_good_commit)?, pos.get(&a.first_bad_commit)?);
            (lg < fb).then_some((*lg, *fb))
        };
        let (mut placed, unplaced): (Vec<_>, Vec<_>) =
            members.into_iter().partition(|a| range(a).is_some());
        placed.sort_by_key(|a| (range(a).map(|r| r.1), a.id.clone()));
        let mut open: Vec<AlertView> = placed;
        while !open.is_empty() {
            let stab = range(&open[0]).expect("placed").1;
            let (inside, rest): (Vec<_>, Vec<_>) = open.into_iter().partition(|a| {
                let (lg, fb) = range(a).expect("placed");
                lg < stab && stab <= fb
            });
            groups.push(make_group(
                inside,
                &class,
                |a| range(a).expect("placed"),
                pos,
            ));
            open = rest;
        }
        // Alerts whose commits the runs do not name: one group per identical range.
        let mut same: BTreeMap<(String, String), Vec<AlertView>> = BTreeMap::new();
        for a in unplaced {
            same.entry((a.last_good_commit.clone(), a.first_bad_commit.clone()))
                .or_default()
                .push(a);
        }
        for (_, v) in same {
            groups.push(make_group(v, &class, |_| (0, 0), &HashMap::new()));
        }
    }
    groups.sort_by(|a, b| {
        let newest = |g: &AlertGroup| g.alerts.iter().map(|a| a.created_at_us).max();
        pressing(a.status)
            .cmp(&pressing(b.status))
            .then(newest(b).cmp(&newest(a)))
            .then(a.id.cmp(&b.id))
    });
    groups
}

fn make_group(
    mut members: Vec<AlertView>,
    class: &str,
    range: impl Fn(&AlertView) -> (usize, usize),
    pos: &HashMap<String, usize>,
) -> AlertGroup {
    let first = members
        .iter()
        .min_by(|a, b| a.created_at_us.cmp(&b.created_at_us).then(a.id.cmp(&b.id)))
        .expect("a group has members")
        .clone();
    // The narrowest common range: the latest last good, the earliest first bad.
    let (mut lg, mut fb) = (
        first.last_good_commit.clone(),
        first.first_bad_commit.clone(),
    );
    if !pos.is_empty() {
        let lo = members
            .iter()
            .map(&range)
            .max_by_key(|r| r.0)
            .expect("members");
        let hi = members
            .iter()
            .map(&range)
            .min_by_key(|r| r.1)
            .expect("members");
        let name = |p: usize| {
            pos.iter()
                .find(|(_, &v)| v == p)
                .map(|(k, _)| k.clone())
                .unwrap_or_default()
        };
        (lg, fb) = (name(lo.0), name(hi.1));
    }
    members.sort_by(|a, b| severity(b).total_cmp(&severity(a)).then(a.id.cmp(&b.id)));
    let status = members
        .iter()
        .map(|a| a.status)
        .min_by_key(|s| pressing(*s))
        .expect("members");
    AlertGroup {
        id: first.id,
        kind: first.kind,
        label: first.label,
        machine: class.to_string(),
        last_good_commit: lg,
        first_bad_commit: fb,
        status,
        alerts: members,
    }
}

/// The alert `prefix` names and the group that holds it (the alerts read once).
pub fn find_group(db: &Db, prefix: &str) -> Result<(AlertView, AlertGroup), TriageError> {
    let all = super::list(db, None)?;
    let alert = super::store::pick(all.clone(), prefix)?;
    let group = group(db, all)?
        .into_iter()
        .find(|g| g.alerts.iter().any(|a| a.id == alert.id))
        .ok_or_else(|| TriageError::NotFound(prefix.to_string()))?;
    Ok((alert, group))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alert(id: &str, key: &str, lg: &str, fb: &str, ratio: f64, at: i64) -> AlertView {
        AlertView {
            id: id.to_string(),
            kind: AlertKind::Regression,
            status: AlertStatus::Active,
            label: "main".to_string(),
            table: "gemm".to_string(),
            variant: "triton".to_string(),
            key: vec![("M".to_string(), key.to_string())],
            key_json: String::new(),
            fingerprint: String::new(),
            key_text: format!("M={key}"),
            metrics: vec!["latency".to_string()],
            metric_detail: serde_json::Value::Null,
            machine: "h200".to_string(),
            last_good_commit: lg.to_string(),
            first_bad_commit: fb.to_string(),
            ratio,
            p: 0.001,
            runs: serde_json::Value::Null,
            created_at_us: at,
            history: Vec::new(),
        }
    }

    fn order(n: usize) -> HashMap<String, HashMap<String, usize>> {
        let pos = (0..n).map(|i| (format!("c{i:02}"), i)).collect();
        HashMap::from([("main".to_string(), pos)])
    }

    #[test]
    fn overlapping_ranges_are_one_group_with_the_narrowest_range() {
        // Nightly measured every few commits: the ranges differ but share c07.
        let a = vec![
            alert("a1", "1", "c04", "c08", 1.10, 2),
            alert("a2", "2", "c06", "c07", 1.40, 1),
            alert("a3", "3", "c05", "c09", 1.20, 3),
            // Later and apart: its own group.
            alert("b1", "4", "c12", "c14", 1.30, 4),
        ];
        let g = group_with(a, &order(20), &Merges::new());
        assert_eq!(g.len(), 2);
        let first = g.iter().find(|g| g.alerts.len() == 3).unwrap();
        assert_eq!(first.id, "a2", "the earliest alert names the group");
        assert_eq!(
            (
                first.last_good_commit.as_str(),
                first.first_bad_commit.as_str()
            ),
            ("c06", "c07")
        );
        let worst: Vec<&str> = first.alerts.iter().map(|a| a.id.as_str()).collect();
        assert_eq!(worst, ["a2", "a3", "a1"], "worst first");
        assert_eq!(g.iter().find(|g| g.alerts.len() == 1).unwrap().id, "b1");
    }

    #[test]
    fn touching_ranges_are_two_changes() {
        // (c02, c05] and (c05, c08] share no commit.
        let a = vec![
            alert("a", "1", "c02", "c05", 1.1, 1),
            alert("b", "1", "c05", "c08", 1.1, 2),
        ];
        assert_eq!(group_with(a, &order(10), &Merges::new()).len(), 2);
    }

    #[test]
    fn machines_labels_and_kinds_stay_apart() {
        let mut other_machine = alert("m", "1", "c02", "c05", 1.1, 1);
        other_machine.machine = "mi300x".to_string();
        let mut stale = alert("s", "1", "c02", "c05", 1.0, 1);
        stale.kind = AlertKind::Stale;
        let a = vec![alert("a", "1", "c02", "c05", 1.1, 1), other_machine, stale];
        assert_eq!(group_with(a, &order(10), &Merges::new()).len(), 3);
    }

    #[test]
    fn unknown_commits_group_only_with_the_same_range() {
        let a = vec![
            alert("a", "1", "x1", "x2", 1.1, 1),
            alert("b", "2", "x1", "x2", 1.2, 2),
            alert("c", "3", "x1", "x3", 1.2, 3),
        ];
        let g = group_with(a, &order(3), &Merges::new());
        assert_eq!(g.len(), 2);
        assert!(g.iter().any(|g| g.alerts.len() == 2 && g.id == "a"));
    }

    #[test]
    fn an_active_member_makes_the_group_active() {
        let mut a = alert("a", "1", "c02", "c05", 1.1, 1);
        a.status = AlertStatus::Acknowledged;
        let b = alert("b", "2", "c02", "c05", 1.2, 2);
        let g = group_with(vec![a, b], &order(10), &Merges::new());
        assert_eq!(g[0].status, AlertStatus::Active);
    }

    fn row(label: &str, class: &str, arch: Option<&str>) -> (String, String, Option<String>) {
        (
            label.to_string(),
            class.to_string(),
            arch.map(str::to_string),
        )
    }

    #[test]
    fn a_class_naming_no_gpu_joins_the_one_that_names_one() {
        let merges = merges_of(vec![
            row("main", "default", None),
            row("main", "cuda:9.0/default", Some("cuda:9.0")),
            // Another tag, another method: their own.
            row("main", "lab2", None),
            row("main", "gfx942/lab3", Some("gfx942")),
            row("main", "default/ncu", None),
        ]);
        assert_eq!(
            merges,
            Merges::from([(("main".into(), "default".into()), "cuda:9.0/default".into())])
        );
        let mut bare = alert("bare", "1", "c02", "c05", 1.3, 2);
        bare.machine = "default".into();
        let mut named = alert("named", "1", "c02", "c05", 1.3, 1);
        named.machine = "cuda:9.0/default".into();
        let g = group_with(vec![bare, named], &order(10), &merges);
        assert_eq!(g.len(), 1, "one machine, one change");
        assert_eq!(g[0].machine, "cuda:9.0/default");
        assert_eq!(g[0].alerts.len(), 2);
        assert!(
            g[0].alerts.iter().any(|a| a.machine == "default"),
            "each alert keeps its own class"
        );
    }

    #[test]
    fn a_bare_class_between_two_gpus_stays_apart() {
        let merges = merges_of(vec![
            row("main", "default", None),
            row("main", "cuda:9.0/default", Some("cuda:9.0")),
            row("main", "gfx942/default", Some("gfx942")),
            // Another label's runs do not decide this one's.
            row("nightly", "default", None),
        ]);
        assert!(merges.is_empty(), "{merges:?}");
    }
}
