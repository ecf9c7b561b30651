//! The search over a commit range, on its commit graph as `git bisect` searches it:
//! merges, side branches and commit dates in any order. A commit found good clears itself
//! and every ancestor; one found bad leaves only its own ancestors open. A step that
//! cannot be built is skipped, and one the trials cannot decide ends the search at the
//! commits still open.
//!
//! Commits are indexed in topological order (every parent before its children): the
//! range is every commit the bad end reaches that the good end does not (`git rev-list
//! good..bad`), the bad end last (taken as bad here: the ends' trials verified it before
//! the search began). Each step tests the open commit that splits the open set most
//! evenly by ancestry, so a search with no skips on a line of commits takes at most
//! ceil(log2 n) steps.

pub use super::record::Found;
use std::collections::BTreeSet;

/// The commits of a range and who is whose parent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Graph {
    /// Oldest first: every parent in the range before its children; the bad end last.
    pub commits: Vec<String>,
    /// Each commit's parents in the range (a parent outside it is an ancestor of the
    /// good end: known good).
    pub parents: Vec<Vec<usize>>,
    /// Each commit's parents as git lists them, in the range or not (for the culprit's
    /// record).
    pub all_parents: Vec<Vec<String>>,
}

impl Graph {
    /// A line of commits, each the parent of the next (the first's parent the good end).
    pub fn linear(commits: &[String], good: &str) -> Graph {
        Graph {
            commits: commits.to_vec(),
            parents: (0..commits.len())
                .map(|i| if i == 0 { vec![] } else { vec![i - 1] })
                .collect(),
            all_parents: (0..commits.len())
                .map(|i| {
                    vec![if i == 0 {
                        good.to_string()
                    } else {
                        commits[i - 1].clone()
                    }]
                })
                .collect(),
        }
    }

    /// From `git rev-list --topo-order --reverse --parents good..bad` lines (`sha
    /// parent...`, oldest first). None when a line names no commit or a parent comes
    /// after its child.
    pub fn from_rev_list(text: &str) -> Option<Graph> {
        let mut commits = Vec::new();
        let mut all_parents = Vec::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let mut words = line.split_ascii_whitespace();
            commits.push(words.next()?.to_string());
            all_parents.push(words.map(str::to_string).collect::<Vec<_>>());
        }
        let index: std::collections::HashMap<&str, usize> = commits
            .iter()
            .enumerate()
            .map(|(i, c)| (c.as_str(), i))
            .collect();
        let mut parents = Vec::with_capacity(commits.len());
        for (i, ps) in all_parents.iter().enumerate() {
            let mut mine = Vec::new();
            for p in ps {
                if let Some(&j) = index.get(p.as_str()) {
                    if j >= i {
                        return None;
                    }
                    mine.push(j);
                }
            }
            parents.push(mine);
        }
        Some(Graph {
            commits,
            parents,
            all_parents,
        })
    }

    pub fn len(&self) -> usize {
        self.commits.len()
    }

    pub fn is_empty(&self) -> bool {
        self.commits.is_empty()
    }

    /// `from` and every ancestor of it in the range.
    pub fn ancestors(&self, from: usize) -> BTreeSet<usize> {
        let mut seen = BTreeSet::from([from]);
        let mut stack = vec![from];
        while let Some(c) = stack.pop() {
            for &p in &self.parents[c] {
                if seen.insert(p) {
                    stack.push(p);
                }
            }
        }
        seen
    }
}

#[derive(Debug, Clone)]
pub struct Search<'g> {
    graph: &'g Graph,
    /// Commits known good: measured so, or where a part starts.
    pub good: Vec<usize>,
    /// The commit known bad whose ancestors are searched.
    pub bad: usize,
    pub skipped: BTreeSet<usize>,
    /// A step no trials could decide: the search stopped there.
    pub undecided: Option<usize>,
}

impl<'g> Search<'g> {
    /// The search of `graph` (its last commit the bad end), `good` known good.
    pub fn new(graph: &'g Graph, good: Vec<usize>) -> Search<'g> {
        assert!(!graph.is_empty(), "a range holds at least the bad commit");
        Search {
            graph,
            good,
            bad: graph.len() - 1,
            skipped: BTreeSet::new(),
            undecided: None,
        }
    }

    /// The commits the culprit may be: ancestors of the bad commit (itself included)
    /// that no good commit has as an ancestor.
    pub fn candidates(&self) -> BTreeSet<usize> {
        let mut cleared = BTreeSet::new();
        for &g in &self.good {
            cleared.extend(self.graph.ancestors(g));
        }
        self.graph
            .ancestors(self.bad)
            .into_iter()
            .filter(|c| !cleared.contains(c))
            .collect()
    }

    /// The commits still open: candidates other than the bad commit.
    pub fn open(&self) -> BTreeSet<usize> {
        let mut c = self.candidates();
        c.remove(&self.bad);
        c
    }

    /// The commit to test next, or None when the search is over: the unskipped open
    /// commit whose ancestors among the candidates come closest to half of them.
    pub fn next(&self) -> Option<usize> {
        if self.undecided.is_some() {
            return None;
        }
        let candidates = self.candidates();
        let n = candidates.len();
        let below = self.below_counts(&candidates);
        candidates
            .iter()
            .filter(|&&c| c != self.bad && !self.skipped.contains(&c))
            .map(|&c| (c, below[&c].min(n - below[&c])))
            // The best split; of equals, the older commit (the line's lower middle).
            .max_by_key(|&(c, split)| (split, std::cmp::Reverse(c)))
            .map(|(c, _)| c)
    }

    /// For each candidate, how many candidates it has as ancestors (itself included), in
    /// one pass in topological order: a commit of one parent counts its parent's and
    /// one (a parent that is no candidate is cleared, and so is all below it); only a
    /// merge walks its ancestry, so a line of N commits costs N, not N².
    fn below_counts(
        &self,
        candidates: &BTreeSet<usize>,
    ) -> std::collections::HashMap<usize, usize> {
        let mut below = std::collections::HashMap::with_capacity(candidates.len());
        for &c in candidates {
            let parents: Vec<usize> = self.graph.parents[c]
                .iter()
                .copied()
                .filter(|p| candidates.contains(p))
                .collect();
            let count = match parents.as_slice() {
                [] => 1,
                [p] => below[p] + 1,
                _ => self.graph.ancestors(c).intersection(candidates).count(),
            };
            below.insert(c, count);
        }
        below
    }

    pub fn record(&mut self, commit: usize, found: Found) {
        match found {
            Found::Bad => self.bad = commit,
            Found::Good => self.good.push(commit),
            Found::Skip => {
                self.skipped.insert(commit);
            }
            Found::Undecided => self.undecided = Some(commit),
        }
    }

    /// The culprit: the bad commit, once no commit is open before it (every parent is
    /// good, or an ancestor of a good one); with a skipped or undecided commit open,
    /// only a range.
    pub fn culprit(&self) -> Option<usize> {
        (self.undecided.is_none() && self.open().is_empty()).then_some(self.bad)
    }

    /// The range the culprit is proven to lie in: after the newest good commit that the
    /// bad one descends from (None: the part's start), up to the bad commit.
    pub fn range(&self) -> (Option<usize>, usize) {
        let below = self.graph.ancestors(self.bad);
        let good = self
            .good
            .iter()
            .copied()
            .filter(|g| below.contains(g))
            .max();
        (good, self.bad)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(n: usize) -> Graph {
        let commits: Vec<String> = (0..n).map(|i| format!("c{i:02}")).collect();
        Graph::linear(&commits, "g")
    }

    /// Runs the search against culprits `bad` (a commit is bad when one of them is its
    /// ancestor or itself) with `skip` unbuildable: (culprit, steps, search).
    fn run<'g>(g: &'g Graph, bad: &[usize], skip: &[usize]) -> (Option<usize>, usize, Search<'g>) {
        let mut s = Search::new(g, vec![]);
        let mut steps = 0;
        while let Some(i) = s.next() {
            steps += 1;
            let below = g.ancestors(i);
            let found = if skip.contains(&i) {
                Found::Skip
            } else if bad.iter().any(|b| below.contains(b)) {
                Found::Bad
            } else {
                Found::Good
            };
            s.record(i, found);
        }
        (s.culprit(), steps, s)
    }

    #[test]
    fn finds_every_culprit_in_at_most_log2_steps() {
        for n in 1..=70 {
            let g = line(n);
            let bound = (n as f64).log2().ceil() as usize;
            for at in 0..n {
                let (c, steps, _) = run(&g, &[at], &[]);
                assert_eq!(c, Some(at), "n {n} at {at}");
                assert!(steps <= bound, "n {n} at {at}: {steps} > {bound}");
            }
        }
    }

    #[test]
    fn a_skip_costs_at_most_a_step_each() {
        let n = 33;
        let g = line(n);
        let bound = (n as f64).log2().ceil() as usize;
        for at in 0..n {
            for skip in [16usize, 8, 24] {
                if skip == at {
                    continue;
                }
                let (c, steps, s) = run(&g, &[at], &[skip]);
                let skipped = s.skipped.len();
                assert!(steps <= bound + skipped, "at {at} skip {skip}: {steps}");
                if c.is_none() {
                    // Only when the skipped commit sits right before the culprit.
                    assert_eq!((s.range().1, skip + 1), (at, at), "at {at}");
                } else {
                    assert_eq!(c, Some(at));
                }
            }
        }
    }

    #[test]
    fn an_undecided_step_ends_at_the_range_proven() {
        let g = line(16);
        let mut s = Search::new(&g, vec![]);
        let first = s.next().unwrap();
        s.record(first, Found::Good);
        let second = s.next().unwrap();
        s.record(second, Found::Undecided);
        assert_eq!(s.next(), None);
        assert_eq!(s.culprit(), None);
        assert_eq!(s.range(), (Some(first), 15));
    }

    /// c0 <- c1 <- {s1 <- s2 <- s3} and m2 <- merge(m2, s3) <- c8, listed as git's
    /// topological order lists them.
    fn merged() -> Graph {
        let text = "c1 c0\ns1 c1\ns2 s1\ns3 s2\nm2 c1\nmerge m2 s3\nc8 merge\n";
        Graph::from_rev_list(text).unwrap()
    }

    fn at(g: &Graph, name: &str) -> usize {
        g.commits.iter().position(|c| c == name).unwrap()
    }

    /// Every commit of a graph with a side branch and a merge, as the culprit: found,
    /// and each culprit's parents in the range are all cleared (good or below a good).
    #[test]
    fn every_culprit_of_a_merged_side_branch_is_found() {
        let g = merged();
        for c in 0..g.len() {
            let (found, _, s) = run(&g, &[c], &[]);
            assert_eq!(found, Some(c), "culprit {}", g.commits[c]);
            let open = s.candidates();
            assert!(g.parents[c].iter().all(|p| !open.contains(p)));
        }
        // The side branch's slowdown, with main's m2 between it and its next commit:
        // s2, never s3 (as a line by date, m2 would have cleared s2).
        let (found, _, _) = run(&g, &[at(&g, "s2")], &[]);
        assert_eq!(g.commits[found.unwrap()], "s2");
    }

    /// A line of 20,000 commits (a year of a busy repository) is searched in log2 steps,
    /// each step's choice a pass over the open commits, not a walk per commit.
    #[test]
    fn a_long_line_is_searched_in_log2_steps() {
        let g = line(20_000);
        let (c, steps, _) = run(&g, &[12_345], &[]);
        assert_eq!(c, Some(12_345));
        assert!(steps <= 15, "{steps}");
    }

    #[test]
    fn a_parent_after_its_child_is_no_graph() {
        assert!(Graph::from_rev_list("b c\na b\n").is_some());
        assert!(Graph::from_rev_list("a b\nb a\n").is_none());
    }
}
