//! Detection over a label's history in passes of at most [`super::ROWS_PER_PASS`]
//! values: the window of commits read (with `--since`, what the alerts still open need),
//! the series of each pass, their events.

use crate::db::{Db, SeriesId};
use crate::detect::read;
use crate::detect::read::{runs_of, RunPoint};
use crate::detect::series::join_tails;
use crate::detect::series::series_events;
use crate::detect::series::with_kind;
use crate::detect::series::Point;
use crate::detect::types::Detection;
use crate::detect::types::Event;
use crate::detect::types::EventKind;
use crate::detect::types::MetricMove;
use crate::detect::Coding;
use crate::detect::DetectError;
use crate::detect::ROWS_PER_PASS;
use crate::stats::{self};
use perfdb_ingest::model::SeriesKey;
use std::collections::HashMap;

/// Detect change points over every series of `label`; with `since`, report only those
/// whose first bad commit is that commit (a prefix) or later.
///
/// Memory: one scan spreads the rows over groups of about [`ROWS_PER_PASS`] rows, and
/// the groups are read back one at a time, each series examined as a whole
/// ([`read`]): a group's rows are held at once, not the label's; a group's series are
/// examined on every core.
pub fn detect(
    db: &Db,
    label: &str,
    since: Option<&str>,
    params: &crate::config::DetectConfig,
) -> Result<Detection, DetectError> {
    detect_in_passes(db, label, since, params, ROWS_PER_PASS, Coding::Hashed)
}

/// What examining one series needs of the pass: each run's machine class and commit
/// as codes (machine codes in name order), and the detection settings.
struct Codes<'a> {
    runs: &'a [RunPoint<'a>],
    run_codes: Vec<(u32, u32)>,
    machines: Vec<&'a str>,
    params: &'a crate::config::DetectConfig,
}

impl<'a> Codes<'a> {
    fn new(runs: &'a [RunPoint], params: &'a crate::config::DetectConfig) -> Codes<'a> {
        let mut machines: Vec<&str> = runs.iter().map(|r| r.machine.as_str()).collect();
        machines.sort_unstable();
        machines.dedup();
        let mut commit_code: HashMap<&str, u32> = HashMap::new();
        let run_codes: Vec<(u32, u32)> = runs
            .iter()
            .map(|r| {
                let m = machines.binary_search(&r.machine.as_str()).expect("listed") as u32;
                let next = commit_code.len() as u32;
                (m, *commit_code.entry(r.commit.as_str()).or_insert(next))
            })
            .collect();
        Codes {
            runs,
            run_codes,
            machines,
            params,
        }
    }

    /// One series' events on each machine class (pure: series run on every core).
    fn examine(&self, series: &read::Series, rows: &[read::Row]) -> Vec<Vec<(Event, MetricMove)>> {
        let [table, variant, key, metric, unit] = &series.names;
        // (machine, commit, run, trial) of the series.
        let mut trials: Vec<(u32, u32, u32, f64)> = Vec::new();
        let mut vals: Vec<f64> = Vec::new();
        for run_rows in rows.chunk_by(|a, b| a.run == b.run) {
            // A run's repeats of a row are one trial: their median.
            vals.clear();
            vals.extend(run_rows.iter().map(|r| r.value));
            let ri = run_rows[0].run;
            let (m, c) = self.run_codes[ri as usize];
            trials.push((m, c, ri, stats::median_in_place(&mut vals)));
        }
        // By machine, then commit, then run: a commit's trials in run order (codes
        // follow run ids), the same sums and p however the rows arrived.
        trials.sort_unstable_by_key(|t| (t.0, t.1, t.2));
        let mut found = Vec::new();
        for of_machine in trials.chunk_by(|a, b| a.0 == b.0) {
            let points: Vec<Point> = of_machine
                .chunk_by(|a, b| a.1 == b.1)
                .map(|of_commit| {
                    let first = &self.runs[of_commit[0].2 as usize];
                    Point {
                        commit: first.commit.clone(),
                        commit_time: of_commit
                            .iter()
                            .map(|t| self.runs[t.2 as usize].commit_time)
                            .min()
                            .expect("one trial"),
                        ingested_at: of_commit
                            .iter()
                            .map(|t| self.runs[t.2 as usize].ingested_at)
                            .min()
                            .expect("one trial"),
                        trials: of_commit.iter().map(|t| t.3).collect(),
                        runs: of_commit.iter().map(|t| t.2 as usize).collect(),
                    }
                })
                .collect();
            let id = SeriesId {
                series: SeriesKey {
                    table: table.clone(),
                    variant: variant.clone(),
                    key: key.clone(),
                    metric: metric.clone(),
                    unit: unit.clone(),
                },
                machine: self.machines[of_machine[0].0 as usize].to_string(),
            };
            found.push(series_events(
                &id,
                series.direction,
                series.key_order.as_deref(),
                points,
                self.runs,
                &self.params.for_series(table, variant),
                self.params.confirm(),
            ));
        }
        found
    }
}

/// [`detect`], holding about `rows_per_pass` rows at once, the rows coded as `coding`
/// asks (hashed falls back to joined when hashes collide).
pub fn detect_in_passes(
    db: &Db,
    label: &str,
    since: Option<&str>,
    params: &crate::config::DetectConfig,
    rows_per_pass: usize,
    coding: Coding,
) -> Result<Detection, DetectError> {
    let mut t = std::time::Instant::now();
    let runs = runs_of(db, label)?;
    perfdb_ingest::timing::trace("detect: runs", &mut t);
    if runs.is_empty() {
        return Err(DetectError::NoRuns(label.to_string()));
    }
    let order_of_commits = commit_order(&runs);
    let position: HashMap<&str, usize> = order_of_commits
        .iter()
        .enumerate()
        .map(|(i, c)| (c.as_str(), i))
        .collect();
    let since_at = match since {
        None => None,
        Some(s) => Some(
            order_of_commits
                .iter()
                .position(|c| c.starts_with(s))
                .ok_or_else(|| DetectError::NoSuchCommit {
                    label: label.to_string(),
                    since: s.to_string(),
                })?,
        ),
    };
    // With --since, a window of the history: what a new commit changed is read against
    // the recent past, not the whole history again ([`window`]).
    let (start, scope_from) = match since_at {
        None => (0, 0),
        Some(at) => window(db, label, &order_of_commits, at, params.context())?,
    };
    let (runs, scope) = if start > 0 {
        let runs: Vec<RunPoint> = runs
            .into_iter()
            .filter(|r| position.get(r.commit.as_str()).is_some_and(|p| *p >= start))
            .collect();
        let ids: Vec<String> = runs.iter().map(|r| r.run_id.clone()).collect();
        let scope = read::Scope::new(db, label, Some(&ids))?;
        (runs, scope)
    } else {
        (runs, read::Scope::new(db, label, None)?)
    };
    let mut n_series = 0;
    let mut events: Vec<Event> = Vec::new();
    let codes = Codes::new(&runs, params);
    // Events of one series and machine class, merged in series order: a series' metrics
    // moving at one commit are one event.
    let mut index: HashMap<(SeriesKey, String, String), usize> = HashMap::new();
    let mut flush = |found: Vec<(Event, MetricMove)>| {
        n_series += 1;
        for (ev, mv) in found {
            let pos = |c: &str| position.get(c).copied().unwrap_or(usize::MAX);
            if pos(&ev.first_bad_commit) < scope_from {
                continue;
            }
            let at = (
                SeriesKey::row(ev.table.clone(), ev.variant.clone(), ev.key_json.clone()),
                ev.machine.clone(),
                ev.first_bad_commit.clone(),
            );
            match index.get(&at) {
                Some(&i) => events[i].metrics.push(mv),
                None => {
                    index.insert(at, events.len());
                    events.push(Event {
                        metrics: vec![mv],
                        ..ev
                    });
                }
            }
        }
    };
    let held = read::held_to_devices(&runs);
    read::for_each_group(db, &scope, &runs, rows_per_pass, coding, |group| {
        let examine = |(s, r): &(&_, &[_])| codes.examine(s, &read::possible(s, r, held));
        for found in crate::par::parallel_map(group, examine) {
            for per_machine in found {
                flush(per_machine);
            }
        }
    })?;
    let events = join_tails(events, &position);
    let mut events: Vec<Event> = events.into_iter().map(with_kind).collect();
    perfdb_ingest::timing::trace("detect: series and events", &mut t);
    underneath(db, &mut events)?;
    perfdb_ingest::timing::trace("detect: the environment under each step", &mut t);
    sort_events(&mut events);
    Ok(Detection {
        label: label.to_string(),
        since: since.map(String::from),
        series: n_series,
        commits: order_of_commits.len() - start,
        events,
        order: order_of_commits,
        since_at,
        scope_from,
    })
}

/// What changed underneath each step: the environment of its runs, read once.
fn underneath(db: &Db, events: &mut [Event]) -> Result<(), DetectError> {
    let envs = crate::environment::RunEnvironments::read(
        db,
        events
            .iter()
            .flat_map(|e| e.runs.iter().map(String::as_str)),
    )?;
    for e in events {
        e.underneath = envs.across(&e.runs, &e.last_good_commit, &e.first_bad_commit);
    }
    Ok(())
}

/// Regressions first, then by first bad commit and the row.
fn sort_events(events: &mut [Event]) {
    events.sort_by(|a, b| {
        (
            a.kind != EventKind::Regression,
            &a.first_bad_commit,
            &a.table,
            &a.variant,
            &a.key,
        )
            .cmp(&(
                b.kind != EventKind::Regression,
                &b.first_bad_commit,
                &b.table,
                &b.variant,
                &b.key,
            ))
    });
}

/// The window `detect --since` reads, as positions in the label's history: (the first
/// commit read, the first commit whose steps it holds alerts to).
///
/// A step whose first bad commit is before `since` may still change: it is confirmed,
/// or first significant, a few commits later, when `since` has moved past it (CI runs
/// detect after every commit). So the steps from half the context before `since` are
/// held, each against at least half the context of history before it, and so is every
/// step with an alert still open whose last good commit is up to twice the context
/// back (read from half the context before it): its return to level, or a newer step
/// that silences it, arrives in the window. Older open alerts are left to
/// a run without `--since` (the nightly one): reaching back to each would read most of
/// a year for a team with old alerts open. With a history shorter than the window this
/// is one detect over everything.
pub(super) fn window(
    db: &Db,
    label: &str,
    order: &[String],
    since_at: usize,
    context: usize,
) -> Result<(usize, usize), DetectError> {
    let half = context.div_ceil(2);
    let mut start = since_at.saturating_sub(context);
    let mut from = since_at.saturating_sub(half);
    // The furthest back the window reaches for an open alert.
    let floor = since_at.saturating_sub(2 * context);
    let pos = |c: &str| order.iter().position(|o| o == c);
    for a in crate::alerts::list(db, None)? {
        let open = matches!(
            a.status,
            perfdb_ingest::model::AlertStatus::Pending
                | perfdb_ingest::model::AlertStatus::Active
                | perfdb_ingest::model::AlertStatus::Acknowledged
                | perfdb_ingest::model::AlertStatus::Silenced
        );
        if a.label != label || a.kind != crate::alerts::AlertKind::Regression || !open {
            continue;
        }
        if let (Some(lg), Some(fb)) = (pos(&a.last_good_commit), pos(&a.first_bad_commit)) {
            if lg < floor {
                continue;
            }
            from = from.min(fb.min(lg));
            start = start.min(lg.saturating_sub(half));
        }
    }
    Ok(if start == 0 { (0, 0) } else { (start, from) })
}

/// The label's commits in history order (commit time, then first ingest).
pub(super) fn commit_order(runs: &[RunPoint]) -> Vec<String> {
    let mut first: HashMap<&str, (i64, i64)> = HashMap::new();
    for r in runs {
        let e = first
            .entry(r.commit.as_str())
            .or_insert((r.commit_time, r.ingested_at));
        *e = ((e.0).min(r.commit_time), (e.1).min(r.ingested_at));
    }
    let mut v: Vec<(&str, (i64, i64))> = first.into_iter().collect();
    v.sort_by_key(|(c, t)| (*t, c.to_string()));
    v.into_iter().map(|(c, _)| c.to_string()).collect()
}
