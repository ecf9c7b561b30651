//! One ingest's commit: its values written, `measurements` and `summaries` appended
//! with the batch tag, then the gate on `runs`; a lost race re-reads and retries (the
//! module documentation of [`super`] gives the protocol).

use super::files::read_columns;
use super::read::summary_of;
use super::schema::{self, measurements_batch, runs_batch};
use super::summary;
use super::tables::{block_on, rel_of, Logs, Table};
use super::tables::{label_of, BATCH_TAG, GATE_TAG, MEASUREMENTS_DIR, RUNS_DIR};
use super::{Result, Warehouse};
use crate::delta::{Action, Add, Backoff, Snapshot};
use crate::model::{Keys, Measurement, Run, Warning};
use arrow::array::{Int32Array, StringArray};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// A parsed file, ready to commit.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub run: Run,
    pub measurements: Vec<Measurement>,
    /// The keys of `measurements`, shared with `repetitions`.
    pub keys: Arc<Keys>,
    pub tables: Vec<(String, usize)>,
    /// What the parser skipped or could not classify (the rest is ingested).
    pub warnings: Vec<Warning>,
    /// The runs of the output's further trials ([`Parsed::repetitions`]), committed
    /// with this one.
    pub repetitions: Vec<Prepared>,
    /// Throughput (TFLOPS) and bandwidth values of a run on no known device: their
    /// percent of peak is not computed.
    pub unknown_device_rows: usize,
}

/// What happened to one prepared file at commit.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Added {
        run_id: String,
        trial: i32,
    },
    /// The same file with the same metadata is already in the warehouse.
    AlreadyPresent {
        run_id: String,
    },
}

impl Outcome {
    /// The run id, and its trial when it was added.
    pub fn run_and_trial(self) -> (String, Option<i32>) {
        match self {
            Outcome::Added { run_id, trial } => (run_id, Some(trial)),
            Outcome::AlreadyPresent { run_id } => (run_id, None),
        }
    }
}

impl Warehouse {
    /// Commit prepared runs together: one file per table and label. Returns one outcome
    /// per input, in order.
    pub fn commit(&self, mut prepared: Vec<Prepared>) -> Result<Vec<Outcome>> {
        if prepared.is_empty() {
            // Nothing parsed: do not create a warehouse just to say so.
            return Ok(Vec::new());
        }
        let logs = self.logs_creating()?;
        let runs_t = logs.table(Table::Runs);
        let mut snap = block_on(runs_t.snapshot())?;
        let mut known = FileIndex::default();
        let mut backoff = Backoff::default();
        let mut written: Option<Written> = None;
        for attempt in 0.. {
            known.refresh(
                self,
                Table::Runs,
                &snap,
                &[schema::runs::RUN_ID, schema::runs::TRIAL],
            )?;
            let (outcomes, fresh) = assign(&mut prepared, &known);
            if fresh.is_empty() {
                return Ok(outcomes);
            }
            let mut by_label: BTreeMap<String, Vec<usize>> = BTreeMap::new();
            for &i in &fresh {
                by_label
                    .entry(prepared[i].run.label.clone())
                    .or_default()
                    .push(i);
            }
            let batch = match &written {
                Some(w) if w.runs == fresh => w.batch.clone(),
                _ => {
                    // The first attempt, or another writer committed some of these runs
                    // meanwhile: the values of exactly the runs still to add, as a new
                    // batch. An earlier attempt's files are never gated.
                    let batch = new_batch_id(&attempt.to_string());
                    let (m_adds, s_adds) = self.write_values(&prepared, &by_label, &batch)?;
                    let mut t = std::time::Instant::now();
                    block_on(async {
                        append(&logs, Table::Measurements, m_adds.clone()).await?;
                        append(&logs, Table::Summaries, s_adds.clone()).await
                    })?;
                    crate::timing::trace("measurements and summaries committed", &mut t);
                    let adds = [(Table::Measurements, m_adds), (Table::Summaries, s_adds)];
                    written = Some(Written {
                        runs: fresh.clone(),
                        batch: batch.clone(),
                        adds,
                    });
                    batch
                }
            };
            let mut actions = Vec::new();
            for (label, idx) in &by_label {
                let runs: Vec<&Run> = idx.iter().map(|i| &prepared[*i].run).collect();
                let rel = format!("{RUNS_DIR}/label={label}/part-{batch}-r{attempt}.parquet");
                let tags = BTreeMap::from([(GATE_TAG.to_string(), batch.clone())]);
                let add =
                    self.write_file(&rel, Table::Runs, &[runs_batch(&runs)], None, Some(tags))?;
                actions.push(Action::Add(add));
            }
            actions.push(commit_info("WRITE"));
            let mut t = std::time::Instant::now();
            let won =
                block_on(runs_t.commit_next(&mut snap, || logs.metadata(Table::Runs), actions))?;
            crate::timing::trace("runs committed", &mut t);
            if won {
                if let Some(w) = &written {
                    keep_gated(&logs, &w.adds)?;
                }
                crate::timing::trace("values checked live", &mut t);
                return Ok(outcomes);
            }
            block_on(async {
                backoff.wait().await?;
                runs_t.update(&mut snap).await
            })?;
        }
        unreachable!("the backoff gives up first")
    }

    /// Write the measurements and summaries of the runs `by_label` names, one file of
    /// each per label, as `batch`; their `add`s.
    pub(crate) fn write_values(
        &self,
        prepared: &[Prepared],
        by_label: &BTreeMap<String, Vec<usize>>,
        batch: &str,
    ) -> Result<(Vec<Add>, Vec<Add>)> {
        let tags = Some(BTreeMap::from([(BATCH_TAG.to_string(), batch.to_string())]));
        let (mut m_adds, mut s_adds) = (Vec::new(), Vec::new());
        for (label, idx) in by_label {
            let ms: Vec<(&str, &[Measurement], &Keys)> = idx
                .iter()
                .map(|i| {
                    let p = &prepared[*i];
                    (
                        p.run.run_id.as_str(),
                        p.measurements.as_slice(),
                        p.keys.as_ref(),
                    )
                })
                .collect();
            let m_rel = format!("{MEASUREMENTS_DIR}/label={label}/part-{batch}.parquet");
            let s_rel = summary_of(&m_rel);
            // The measurements and their summaries are written side by side (two cores).
            let mut t = std::time::Instant::now();
            let values = measurements_batch(&ms);
            crate::timing::trace("measurements batch", &mut t);
            let (written, summarised) = std::thread::scope(|s| {
                let summaries = s.spawn(|| {
                    let mut t = std::time::Instant::now();
                    let sums = summary::from_batch(&values);
                    crate::timing::trace("summaries batch", &mut t);
                    let r = self.write_file(
                        &s_rel,
                        Table::Summaries,
                        &[sums],
                        Some(summary::ROW_GROUP),
                        tags.clone(),
                    );
                    crate::timing::trace("summaries file", &mut t);
                    r
                });
                let written = self.write_file(
                    &m_rel,
                    Table::Measurements,
                    std::slice::from_ref(&values),
                    None,
                    tags.clone(),
                );
                (written, summaries.join().expect("summary thread panicked"))
            });
            m_adds.push(written?);
            s_adds.push(summarised?);
            crate::timing::trace("measurements and summaries", &mut t);
        }
        Ok((m_adds, s_adds))
    }
}

/// After the gate: the values of the batch (`adds`) are still in their logs. A
/// compaction given a grace shorter than this commit took may have taken them out as
/// never gated; they are still there (only `vacuum` deletes, after hours), so they go
/// back in.
pub(crate) fn keep_gated(logs: &Logs, adds: &[(Table, Vec<Add>); 2]) -> Result<()> {
    block_on(async {
        for (t, adds) in adds {
            let snap = logs.table(*t).snapshot().await?;
            let missing: Vec<Add> = adds
                .iter()
                .filter(|a| !snap.files.contains_key(&a.path))
                .cloned()
                .collect();
            append(logs, *t, missing).await?;
        }
        Ok::<_, crate::delta::DeltaError>(())
    })?;
    Ok(())
}

/// Give each prepared run its outcome against the runs `known` holds (and the ones
/// before it in `prepared`): already present, or added with the next trial number of
/// its label. Returns the outcomes and the places of the runs to add.
pub(crate) fn assign(prepared: &mut [Prepared], known: &FileIndex) -> (Vec<Outcome>, Vec<usize>) {
    let mut ids = known.ids();
    let mut trials = known.trials_by_label();
    let now = now_us();
    let mut outcomes = Vec::with_capacity(prepared.len());
    let mut fresh = Vec::new();
    for (i, p) in prepared.iter_mut().enumerate() {
        if !ids.insert(p.run.run_id.clone()) {
            outcomes.push(Outcome::AlreadyPresent {
                run_id: p.run.run_id.clone(),
            });
            continue;
        }
        let t = trials.entry(p.run.label.clone()).or_insert(0);
        *t += 1;
        p.run.trial = *t;
        // No --commit-time (or the time an earlier attempt gave it): the commit is
        // taken to be as new as the ingest.
        let no_commit_time =
            p.run.commit_time_us == 0 || p.run.commit_time_us == p.run.ingested_at_us;
        p.run.ingested_at_us = now;
        if no_commit_time {
            p.run.commit_time_us = now;
        }
        outcomes.push(Outcome::Added {
            run_id: p.run.run_id.clone(),
            trial: *t,
        });
        fresh.push(i);
    }
    (outcomes, fresh)
}

/// A new batch id: the time, the process, and `suffix`.
pub(crate) fn new_batch_id(suffix: &str) -> String {
    let id = format!("{:x}-{:x}", now_us(), std::process::id());
    if suffix.is_empty() {
        id
    } else {
        format!("{id}-{suffix}")
    }
}

/// The `commitInfo` of a perfdb commit.
pub(crate) fn commit_info(operation: &str) -> Action {
    Action::CommitInfo(serde_json::json!({
        "timestamp": crate::delta::now_ms(),
        "operation": operation,
        "engineInfo": concat!("perfdb/", env!("CARGO_PKG_VERSION")),
    }))
}

/// Append `adds` to `t`: commits that commute with any other writer's, retried until
/// they land.
pub(crate) async fn append(
    logs: &Logs,
    t: Table,
    adds: Vec<Add>,
) -> std::result::Result<(), crate::delta::DeltaError> {
    if adds.is_empty() {
        return Ok(());
    }
    let mut actions: Vec<Action> = adds.into_iter().map(Action::Add).collect();
    actions.push(commit_info("WRITE"));
    logs.table(t)
        .commit(|| logs.metadata(t), |_| Ok(Some(actions.clone())))
        .await?;
    Ok(())
}

/// Columns of a table's live files, read once per file and kept across the attempts
/// of a commit: run ids and trials, or alert ids.
#[derive(Default)]
pub(crate) struct FileIndex {
    /// By live file: its label and rows (first column; second as a number, if asked).
    files: HashMap<String, (String, Vec<(String, i32)>)>,
}

impl FileIndex {
    /// Read the files live in `snap` not read yet; forget those no longer live.
    pub(crate) fn refresh(
        &mut self,
        wh: &Warehouse,
        t: Table,
        snap: &Snapshot,
        columns: &[&str],
    ) -> Result<()> {
        let live: HashSet<String> = snap.files.keys().map(|p| rel_of(t, p)).collect();
        self.files.retain(|rel, _| live.contains(rel));
        let unread: Vec<String> = live
            .iter()
            .filter(|r| !self.files.contains_key(*r))
            .cloned()
            .collect();
        wh.local_all(&unread)?;
        for rel in live {
            if self.files.contains_key(&rel) {
                continue;
            }
            let mut rows = Vec::new();
            for b in read_columns(&wh.local(&rel)?, columns)? {
                let ids = b.column(0).as_any().downcast_ref::<StringArray>();
                let nums = (b.num_columns() > 1)
                    .then(|| b.column(1).as_any().downcast_ref::<Int32Array>())
                    .flatten();
                if let Some(ids) = ids {
                    for i in 0..b.num_rows() {
                        rows.push((ids.value(i).to_string(), nums.map_or(0, |n| n.value(i))));
                    }
                }
            }
            self.files
                .insert(rel.clone(), (label_of(&rel).unwrap_or_default(), rows));
        }
        Ok(())
    }

    pub(crate) fn ids(&self) -> HashSet<String> {
        self.files
            .values()
            .flat_map(|(_, rows)| rows.iter().map(|(id, _)| id.clone()))
            .collect()
    }

    /// The highest trial number per label.
    pub(crate) fn trials_by_label(&self) -> HashMap<String, i32> {
        let mut out: HashMap<String, i32> = HashMap::new();
        for (label, rows) in self.files.values() {
            for (_, trial) in rows {
                let t = out.entry(label.clone()).or_insert(0);
                *t = (*t).max(*trial);
            }
        }
        out
    }
}

pub(crate) fn now_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

/// The values an ingest committed: for which runs, as which batch, and their `add`s.
struct Written {
    runs: Vec<usize>,
    batch: String,
    adds: [(Table, Vec<Add>); 2],
}
