//! The search over a commit range: `git bisect`'s halving, with a step that cannot be
//! built skipped and a step the trials cannot decide ending the search at the range it
//! did prove.
//!
//! Commits are indexed oldest first: 0 .. n-1 after the good end, the last the bad end
//! (taken as bad here: the ends' trials verified it before the search began). Each step tests the
//! untested, unskipped commit nearest the middle of the open range, so a search with no
//! skips takes at most ceil(log2 n) steps.

pub use super::record::Found;
use std::collections::BTreeSet;

#[derive(Debug, Clone)]
pub struct Search {
    /// Newest commit known good (None: the good end).
    pub good: Option<usize>,
    /// Oldest commit known bad.
    pub bad: usize,
    pub skipped: BTreeSet<usize>,
    /// A step no trials could decide: the search stopped there.
    pub undecided: Option<usize>,
}

impl Search {
    /// A range of `n` commits after the good end (n >= 1; the last is the bad end).
    pub fn new(n: usize) -> Search {
        assert!(n >= 1, "a range holds at least the bad commit");
        Search {
            good: None,
            bad: n - 1,
            skipped: BTreeSet::new(),
            undecided: None,
        }
    }

    /// The commits still open: after the newest good, before the oldest bad.
    fn open(&self) -> std::ops::Range<usize> {
        self.good.map_or(0, |g| g + 1)..self.bad
    }

    /// The commit to test next, or None when the search is over.
    pub fn next(&self) -> Option<usize> {
        if self.undecided.is_some() {
            return None;
        }
        let open = self.open();
        let mid = (open.start + open.end) / 2;
        open.filter(|i| !self.skipped.contains(i))
            .min_by_key(|&i| (i.abs_diff(mid), i))
    }

    pub fn record(&mut self, commit: usize, found: Found) {
        match found {
            Found::Bad => self.bad = commit,
            Found::Good => self.good = Some(commit),
            Found::Skip => {
                self.skipped.insert(commit);
            }
            Found::Undecided => self.undecided = Some(commit),
        }
    }

    /// The culprit: the oldest bad commit, once the commit before it is known good (or
    /// is the good end); with a skipped or undecided commit between, only a range.
    pub fn culprit(&self) -> Option<usize> {
        (self.next().is_none() && self.undecided.is_none() && self.open().is_empty())
            .then_some(self.bad)
    }

    /// The range the culprit is proven to lie in: (newest good, oldest bad].
    pub fn range(&self) -> (Option<usize>, usize) {
        (self.good, self.bad)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the search against a culprit at `at` with `skip` unbuildable: (culprit, steps).
    fn run(n: usize, at: usize, skip: &[usize]) -> (Option<usize>, usize, Search) {
        let mut s = Search::new(n);
        let mut steps = 0;
        while let Some(i) = s.next() {
            steps += 1;
            let found = if skip.contains(&i) {
                Found::Skip
            } else if i >= at {
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
            let bound = (n as f64).log2().ceil() as usize;
            for at in 0..n {
                let (c, steps, _) = run(n, at, &[]);
                assert_eq!(c, Some(at), "n {n} at {at}");
                assert!(steps <= bound, "n {n} at {at}: {steps} > {bound}");
            }
        }
    }

    #[test]
    fn a_skip_costs_at_most_a_step_each() {
        let n = 33;
        let bound = (n as f64).log2().ceil() as usize;
        for at in 0..n {
            for skip in [16usize, 8, 24] {
                if skip == at {
                    continue;
                }
                let (c, steps, s) = run(n, at, &[skip]);
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
        let mut s = Search::new(16);
        let first = s.next().unwrap();
        s.record(first, Found::Good);
        let second = s.next().unwrap();
        s.record(second, Found::Undecided);
        assert_eq!(s.next(), None);
        assert_eq!(s.culprit(), None);
        assert_eq!(s.range(), (Some(first), 15));
    }
}
