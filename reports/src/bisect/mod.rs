//! The bisect (`perfdb bisect`; docs/alerts.md): from a range of commits to the one that
//! made a step. The caller measures, behind [`Measure`]: the binary checks commits out in
//! git worktrees, builds them and runs `ab`'s trials; the tests a mock.
//!
//! The steps: the ends first (the bad end against the good: no search unless the bad
//! end is worse here), then [`search`]'s halving, part by part ([`run`]); each step's
//! verdict from the watched rows of its comparison ([`verdict`]), into the one record of
//! [`record`], printed by [`render`] and kept with the alert by [`store`].

pub mod record;
pub mod render;
pub mod search;
pub mod store;
#[cfg(test)]
mod tests;
pub mod verdict;

pub use record::*;
pub use render::{render, summary};
pub use verdict::{judge, watched_counters};

pub use search::Graph;
use search::Search;

/// A culprit whose step is under this share of the alert's leaves the rest to a later
/// commit: the search goes on past it.
pub const PART: f64 = 0.75;
/// Parts of one step searched at most.
pub const MAX_PARTS: usize = 3;

/// What the search asks of the caller.
pub trait Measure {
    type Error;
    /// Trials of `commit` against `against`, judged ([`judge`]). `against` is the good
    /// end or a culprit already measured; one that cannot be built is an error. A
    /// `commit` that cannot be built, a failed trial or rows missing is a
    /// [`Found::Skip`] step with why.
    fn measure(&mut self, against: &str, commit: &str) -> Result<Step, Self::Error>;
    /// Who made `sha`, and its subject.
    fn info(&mut self, sha: &str) -> Result<CommitInfo, Self::Error>;
    /// Whether a signal asked the bisect to stop.
    fn interrupted(&self) -> bool;
    /// Where the search stands, for a person.
    fn progress(&mut self, _line: &str) {}
    /// The commits the next step may measure (one if this step finds good, one if bad),
    /// said before this step's trials: the caller may build them meanwhile.
    fn ahead(&mut self, _commits: &[String]) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// The commit the search's first step tests.
fn first_step(graph: &Graph) -> Vec<String> {
    let first = Search::new(graph, Vec::new()).next();
    first
        .map(|i| graph.commits[i].clone())
        .into_iter()
        .collect()
}

/// The commits `s`'s next step tests after `i` is found good, and after it is found bad.
fn next_after(graph: &Graph, s: &Search, i: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for found in [Found::Good, Found::Bad] {
        let mut t = s.clone();
        t.record(i, found);
        if let Some(n) = t.next() {
            let sha = &graph.commits[n];
            if !out.contains(sha) {
                out.push(sha.clone());
            }
        }
    }
    out
}

/// How a bisect ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// Searched as far as it could: `Bisected` says what it found.
    Done,
    /// A signal stopped it: the steps so far, nothing more.
    Interrupted,
}

fn short(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
}

fn why(step: &Step) -> String {
    step.why
        .as_deref()
        .map(|w| format!(": {w}"))
        .unwrap_or_default()
}

/// The bisect of `graph` (the commits after `out.good` up to `out.bad`, the bad end
/// last), its steps and parts written into `out`.
pub fn run<M: Measure>(m: &mut M, graph: &Graph, out: &mut Bisected) -> Result<Ended, M::Error> {
    // The ends first: a bad end that is not worse than the good one here ends the
    // bisect with no culprit, whatever the alert said.
    m.progress(&format!(
        "the ends: {} against {}",
        short(&out.bad),
        short(&out.good)
    ));
    // While the ends run, the first step's commit may be built.
    m.ahead(&first_step(graph))?;
    let ends = m.measure(&out.good.clone(), &out.bad.clone())?;
    m.progress(&format!("the ends: {}{}", ends.found, why(&ends)));
    out.gpu_seconds += ends.seconds;
    let verified = ends.found == Found::Bad;
    let ends_evidence = (ends.evidence.clone(), ends.counters.clone());
    out.ends = Some(ends);
    if m.interrupted() {
        return Ok(Ended::Interrupted);
    }
    if !verified {
        return Ok(Ended::Done);
    }
    let bad_end = graph.len() - 1;
    let mut against = out.good.clone();
    // The part's start (a culprit found before), known good for the part.
    let mut start: Option<usize> = None;
    for _ in 0..MAX_PARTS {
        let mut s = Search::new(graph, start.into_iter().collect());
        let mut evidence_of = std::collections::HashMap::new();
        while let Some(i) = s.next() {
            let sha = &graph.commits[i];
            let (lo, _) = s.range();
            let subject = m.info(sha).map(|c| c.subject).unwrap_or_default();
            m.progress(&format!(
                "step {}: {} \"{subject}\" ({} commit(s) open after {})",
                out.steps.len() + 1,
                short(sha),
                s.open().len() + 1,
                short(lo.map_or(&against, |g| &graph.commits[g]))
            ));
            m.ahead(&next_after(graph, &s, i))?;
            let step = m.measure(&against, sha)?;
            m.progress(&format!(
                "{} {} ({} trials a side, {:.0} s){}",
                short(sha),
                step.found,
                step.trials_a_side,
                step.seconds,
                why(&step)
            ));
            out.gpu_seconds += step.seconds;
            let found = step.found;
            if found == Found::Skip {
                out.skipped.push(sha.clone());
            }
            evidence_of.insert(i, (step.evidence.clone(), step.counters.clone()));
            out.steps.push(step);
            if m.interrupted() {
                return Ok(Ended::Interrupted);
            }
            s.record(i, found);
        }
        let Some(c) = s.culprit() else {
            let (g, b) = s.range();
            out.range = Some((
                g.map_or(against.clone(), |g| graph.commits[g].clone()),
                graph.commits[b].clone(),
            ));
            return Ok(Ended::Done);
        };
        // The bad end, never stepped: its evidence is the ends' trials (first part), or
        // its own trials against the part's start (a later part): a culprit is never
        // named on the alert's word alone.
        let (evidence, counters) = match evidence_of.remove(&c) {
            Some(e) => e,
            None if start.is_none() && c == bad_end => ends_evidence.clone(),
            None => {
                let sha = &graph.commits[c];
                let step = m.measure(&against, sha)?;
                out.gpu_seconds += step.seconds;
                let found = step.found;
                let evidence = (step.evidence.clone(), step.counters.clone());
                if found != Found::Bad {
                    // Not worse than the part's start after all: no culprit here.
                    out.range = Some((against.clone(), sha.clone()));
                }
                out.steps.push(step);
                if m.interrupted() {
                    return Ok(Ended::Interrupted);
                }
                if found != Found::Bad {
                    return Ok(Ended::Done);
                }
                evidence
            }
        };
        // The culprit's share of the alerts' step: the watched rows' median.
        let shares: Vec<f64> = evidence.iter().filter_map(|e| e.share).collect();
        let share = (!shares.is_empty()).then(|| crate::stats::median(&shares));
        out.parts.push(Part {
            culprit: m.info(&graph.commits[c])?,
            share,
            evidence,
            counters,
            parents: parents_of(graph, &s, c, start, &out.good),
        });
        let covered: f64 = out.parts.iter().filter_map(|p| p.share).sum();
        // Less than the step, with commits after it: search on from this culprit.
        if c == bad_end || share.is_none() || covered >= PART {
            return Ok(Ended::Done);
        }
        against = graph.commits[c].clone();
        start = Some(c);
    }
    Ok(Ended::Done)
}

/// How each parent of the culprit `c` is known good: a culprit is a bad commit whose
/// parents are all good.
fn parents_of(
    graph: &Graph,
    s: &Search,
    c: usize,
    start: Option<usize>,
    good_end: &str,
) -> Vec<Parent> {
    let index = |sha: &str| graph.commits.iter().position(|x| x == sha);
    graph.all_parents[c]
        .iter()
        .map(|p| {
            let known = match index(p) {
                _ if p == good_end => "the good end".to_string(),
                None => "an ancestor of the good end".to_string(),
                Some(i) if Some(i) == start => "the part's start".to_string(),
                Some(i) if s.good.contains(&i) => "measured good".to_string(),
                Some(i) => match s.good.iter().find(|&&g| graph.ancestors(g).contains(&i)) {
                    Some(&g) if Some(g) == start => "an ancestor of the part's start".to_string(),
                    Some(&g) => {
                        format!("an ancestor of {}, measured good", short(&graph.commits[g]))
                    }
                    // Not cleared: the search never names such a culprit.
                    None => "not known good".to_string(),
                },
            };
            Parent {
                sha: p.clone(),
                known,
            }
        })
        .collect()
}
