//! The search against a mock measurer: a range whose commits each have a known time,
//! some that do not build, some flaky, and a signal at a chosen step.

use super::*;
use crate::fmt::OutputFormat;
use std::collections::{BTreeMap, BTreeSet};

/// A kernel's history: the time of each commit ("g" the good end, then c00, c01...).
struct Mock {
    time: BTreeMap<String, f64>,
    unbuildable: BTreeSet<String>,
    flaky: BTreeSet<String>,
    /// The alert's ratio (bad end over good), for each row's share.
    alert_ratio: f64,
    /// Stop after this many measurements.
    stop_after: Option<usize>,
    /// (against, commit) of every measurement, in order.
    measured: Vec<(String, String)>,
}

/// The range after "g": `n` commits, the time multiplied by `steps[i].1` at `steps[i].0`.
fn mock(n: usize, steps: &[(usize, f64)]) -> (Mock, Vec<String>) {
    let commits: Vec<String> = (0..n).map(|i| format!("c{i:02}")).collect();
    let mut time = BTreeMap::from([("g".to_string(), 1.0)]);
    let mut t = 1.0;
    for (i, c) in commits.iter().enumerate() {
        for &(at, by) in steps {
            if at == i {
                t *= by;
            }
        }
        time.insert(c.clone(), t);
    }
    let m = Mock {
        alert_ratio: t,
        time,
        unbuildable: BTreeSet::new(),
        flaky: BTreeSet::new(),
        stop_after: None,
        measured: Vec::new(),
    };
    (m, commits)
}

impl Measure for Mock {
    type Error = String;

    fn measure(&mut self, against: &str, commit: &str) -> Result<Step, String> {
        self.measured.push((against.into(), commit.into()));
        let mut step = Step::new(against, commit);
        if self.unbuildable.contains(against) {
            return Err(format!("{against} cannot be built"));
        }
        if self.unbuildable.contains(commit) {
            step.why = Some("the build exited with 1".into());
            return Ok(step);
        }
        step.seconds = 10.0;
        if self.flaky.contains(commit) {
            step.why = Some("1 trial(s) failed (exit 1); flaky".into());
            return Ok(step);
        }
        let ratio = self.time[commit] / self.time[against];
        step.trials_a_side = 4;
        step.found = if ratio > 1.05 {
            Found::Bad
        } else {
            Found::Good
        };
        step.evidence = vec![Evidence {
            row: "add triton n=1048576 latency".into(),
            share: Some(ratio.ln().abs() / self.alert_ratio.ln().abs()),
            state: Some(
                if step.found == Found::Bad {
                    "regression"
                } else {
                    "cleared"
                }
                .into(),
            ),
            ratio: Some(ratio),
            ratio_ci: Some((ratio * 0.99, ratio * 1.01)),
            trials: (4, 4),
        }];
        Ok(step)
    }

    fn info(&mut self, sha: &str) -> Result<CommitInfo, String> {
        Ok(CommitInfo {
            sha: sha.into(),
            subject: format!("{sha}: a change"),
            author: "Ada Kernel <ada@example.com>".into(),
            date: "2026-12-01T00:00:00+00:00".into(),
        })
    }

    fn interrupted(&self) -> bool {
        self.stop_after.is_some_and(|n| self.measured.len() >= n)
    }
}

fn bisect(m: &mut Mock, commits: &[String]) -> (Ended, Bisected) {
    bisect_graph(m, &Graph::linear(commits, "g"))
}

fn bisect_graph(m: &mut Mock, g: &Graph) -> (Ended, Bisected) {
    let mut out = bisect_record(&g.commits);
    let ended = run(m, g, &mut out).unwrap();
    (ended, out)
}

fn culprits(b: &Bisected) -> Vec<&str> {
    b.parts.iter().map(|p| p.culprit.sha.as_str()).collect()
}

#[test]
fn one_step_is_found_in_the_ends_and_log2_steps_at_every_place() {
    for at in 0..32 {
        let (mut m, commits) = mock(32, &[(at, 1.3)]);
        let (ended, b) = bisect(&mut m, &commits);
        assert_eq!(ended, Ended::Done);
        assert_eq!(culprits(&b), [commits[at].as_str()], "at {at}");
        // The ends, then at most log2(32) = 5 steps; the culprit's evidence is a
        // measurement of it (a step's, or the ends' for the bad end), never none.
        assert!(m.measured.len() <= 6, "at {at}: {:?}", m.measured);
        assert_eq!(m.measured[0], ("g".into(), "c31".into()));
        let e = &b.parts[0].evidence;
        assert!(!e.is_empty() && e[0].ratio.unwrap() > 1.2, "at {at}: {e:?}");
        assert!((b.parts[0].share.unwrap() - 1.0).abs() < 1e-9);
        assert_eq!(b.gpu_seconds, 10.0 * m.measured.len() as f64);
    }
}

#[test]
fn an_end_that_does_not_reproduce_names_no_culprit_and_searches_nothing() {
    let (mut m, commits) = mock(16, &[]);
    let (ended, b) = bisect(&mut m, &commits);
    assert_eq!(ended, Ended::Done);
    assert_eq!(m.measured.len(), 1);
    assert!(b.parts.is_empty() && b.steps.is_empty() && b.range.is_none());
    assert_eq!(b.ends_not_bad().map(|e| e.found), Some(Found::Good));
    assert!(summary(&b).contains("does not reproduce here"));
}

#[test]
fn an_end_that_cannot_be_built_is_not_verified() {
    let (mut m, commits) = mock(16, &[(3, 1.5)]);
    m.unbuildable.insert("c15".into());
    let (_, b) = bisect(&mut m, &commits);
    assert_eq!(m.measured.len(), 1);
    assert!(b.parts.is_empty());
    assert!(
        summary(&b).contains("could not be verified"),
        "{}",
        summary(&b)
    );
}

#[test]
fn a_skip_next_to_the_culprit_leaves_a_range_not_a_culprit() {
    let (mut m, commits) = mock(16, &[(9, 1.3)]);
    m.unbuildable.insert("c08".into());
    let (_, b) = bisect(&mut m, &commits);
    assert!(b.parts.is_empty(), "{:?}", culprits(&b));
    assert_eq!(b.range, Some(("c07".into(), "c09".into())));
    assert_eq!(b.skipped, ["c08"]);
    assert!(
        summary(&b).contains("after c07 up to c09"),
        "{}",
        summary(&b)
    );
}

#[test]
fn a_skip_away_from_the_culprit_costs_a_step_and_still_finds_it() {
    let (mut m, commits) = mock(16, &[(3, 1.3)]);
    m.unbuildable.insert("c07".into());
    let (_, b) = bisect(&mut m, &commits);
    assert_eq!(culprits(&b), ["c03"]);
    assert_eq!(b.skipped, ["c07"]);
}

#[test]
fn a_flaky_commit_is_skipped_and_said_flaky_never_judged() {
    let (mut m, commits) = mock(16, &[(3, 1.3)]);
    m.flaky.insert("c07".into());
    let (_, b) = bisect(&mut m, &commits);
    assert_eq!(culprits(&b), ["c03"]);
    let flaky = b.steps.iter().find(|s| s.commit == "c07").unwrap();
    assert_eq!(flaky.found, Found::Skip);
    assert!(flaky.why.as_deref().unwrap().contains("flaky"));
    assert!(render(&b, OutputFormat::Table).contains("c07 against g: skipped: 1 trial(s) failed"));
}

#[test]
fn a_two_part_step_names_both_parts_with_their_shares() {
    // 1.2x at c05, then 1.2x more at c20: each half the alert's step (in log terms).
    let (mut m, commits) = mock(32, &[(5, 1.2), (20, 1.2)]);
    let (_, b) = bisect(&mut m, &commits);
    assert_eq!(culprits(&b), ["c05", "c20"]);
    for p in &b.parts {
        assert!((p.share.unwrap() - 0.5).abs() < 1e-9, "{:?}", p.share);
        assert!(!p.evidence.is_empty());
    }
    // The second part is searched against the first culprit, not the good end.
    assert!(b.steps.iter().any(|s| s.against == "c05"));
    assert!(render(&b, OutputFormat::Table).contains("the step is in 2 parts"));
}

#[test]
fn a_later_part_at_the_bad_end_is_measured_against_the_part_start() {
    // 1.2x at c05 and 1.2x at the bad end c31: the bad end is the second culprit, and
    // its evidence is its own trials against c05, never the ends' against the good end.
    let (mut m, commits) = mock(32, &[(5, 1.2), (31, 1.2)]);
    let (_, b) = bisect(&mut m, &commits);
    assert_eq!(culprits(&b), ["c05", "c31"]);
    assert!(m.measured.contains(&("c05".into(), "c31".into())));
    let r = b.parts[1].evidence[0].ratio.unwrap();
    assert!((r - 1.2).abs() < 1e-9, "{r}");
}

#[test]
fn a_signal_stops_the_search_where_it_is() {
    let (mut m, commits) = mock(32, &[(20, 1.3)]);
    m.stop_after = Some(3);
    let (ended, b) = bisect(&mut m, &commits);
    assert_eq!(ended, Ended::Interrupted);
    assert_eq!(m.measured.len(), 3);
    assert_eq!(b.steps.len(), 2);
    assert!(b.parts.is_empty());
}

#[test]
fn a_part_start_that_cannot_be_built_is_an_error_not_a_verdict() {
    let (mut m, commits) = mock(16, &[(3, 1.3)]);
    m.unbuildable.insert("g".into());
    let mut out = bisect_record(&commits);
    assert!(run(&mut m, &Graph::linear(&commits, "g"), &mut out).is_err());
}

/// A range as `git rev-list --topo-order --reverse --parents g..bad` lists it (`g` the
/// good end), each commit's time the good end's multiplied by every step (commit, by)
/// it descends from or is.
fn mock_graph(rev_list: &str, steps: &[(&str, f64)]) -> (Mock, Graph) {
    let g = Graph::from_rev_list(rev_list).unwrap();
    let (mut m, _) = mock(0, &[]);
    for (i, c) in g.commits.iter().enumerate() {
        let below = g.ancestors(i);
        let t: f64 = steps
            .iter()
            .filter(|(s, _)| below.iter().any(|&b| g.commits[b] == *s))
            .map(|(_, by)| by)
            .product();
        m.time.insert(c.clone(), t);
    }
    m.alert_ratio = m.time[g.commits.last().unwrap()];
    (m, g)
}

/// Main g, c1; a side branch s1, s2, s3 off c1; main's m2 (dated between s2 and s3, so
/// a line by date puts it there); the merge of s3 into main; c8.
const MERGED: &str = "c1 g\ns1 c1\ns2 s1\nm2 c1\ns3 s2\nmerge m2 s3\nc8 merge\n";

#[test]
fn a_side_branch_culprit_is_found_across_the_merge() {
    let (mut m, g) = mock_graph(MERGED, &[("s2", 1.3)]);
    let (_, b) = bisect_graph(&mut m, &g);
    assert_eq!(culprits(&b), ["s2"]);
    // Its parent s1 is cleared: measured good, or below a commit measured good.
    assert_eq!(b.parts[0].parents.len(), 1);
    assert_eq!(b.parts[0].parents[0].sha, "s1");
    assert_ne!(b.parts[0].parents[0].known, "not known good");
}

#[test]
fn a_culprit_on_main_while_a_side_branch_is_open_is_found() {
    let (mut m, g) = mock_graph(MERGED, &[("m2", 1.3)]);
    let (_, b) = bisect_graph(&mut m, &g);
    assert_eq!(culprits(&b), ["m2"]);
    // No side-branch commit is ever taken for bad.
    assert!(b
        .steps
        .iter()
        .filter(|s| s.commit.starts_with('s'))
        .all(|s| s.found == Found::Good));
}

#[test]
fn a_merge_that_is_itself_the_culprit_names_both_parents_good() {
    // Each side alone is fast; together (the merge) slow.
    let (mut m, g) = mock_graph(MERGED, &[("merge", 1.3)]);
    let (_, b) = bisect_graph(&mut m, &g);
    assert_eq!(culprits(&b), ["merge"]);
    let parents: Vec<(&str, &str)> = b.parts[0]
        .parents
        .iter()
        .map(|p| (p.sha.as_str(), p.known.as_str()))
        .collect();
    assert_eq!(parents.len(), 2, "{parents:?}");
    assert!(
        parents.iter().all(|(_, k)| *k != "not known good"),
        "{parents:?}"
    );
    let text = render(&b, OutputFormat::Table);
    assert!(text.contains("parents: m2 ("), "{text}");
}

#[test]
fn every_commit_of_the_merged_range_is_found_as_the_culprit() {
    let names = ["c1", "s1", "s2", "m2", "s3", "merge", "c8"];
    for c in names {
        let (mut m, g) = mock_graph(MERGED, &[(c, 1.3)]);
        let (_, b) = bisect_graph(&mut m, &g);
        assert_eq!(
            culprits(&b),
            [c],
            "{:?}",
            b.steps
                .iter()
                .map(|s| (&s.commit, s.found))
                .collect::<Vec<_>>()
        );
    }
}

fn bisect_record(commits: &[String]) -> Bisected {
    Bisected {
        alert: None,
        label: "bisect-test".into(),
        good: "g".into(),
        bad: commits.last().unwrap().clone(),
        commits: commits.len(),
        watch: Watch {
            series: vec![],
            texts: vec![],
        },
        parts: vec![],
        range: None,
        ends: None,
        steps: vec![],
        skipped: vec![],
        gpu_seconds: 0.0,
        max_trials: 12,
    }
}
