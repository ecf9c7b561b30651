//! A table over its store: the snapshot of its latest version, and the commit as the
//! conditional create of the next version's file, retried with bounded backoff.

use crate::delta::apply;
use crate::delta::apply_all;
use crate::delta::Action;
use crate::delta::DeltaError;
use crate::delta::Metadata;
use crate::delta::Protocol;
use crate::delta::Result;
use crate::delta::Snapshot;
use object_store::path::Path as StorePath;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// One Delta table under `root` in `store`.
#[derive(Clone)]
pub struct DeltaTable {
    pub(super) store: Arc<dyn ObjectStore>,
    pub(super) root: StorePath,
}

/// A checkpoint after every this many versions (Delta's default interval), so a
/// snapshot reads one Parquet file and at most this many JSON files.
pub const CHECKPOINT_INTERVAL: u64 = 10;

/// How often and how long a commit that keeps losing the race retries.
pub(super) const MAX_ATTEMPTS: u32 = 64;
pub(super) const FIRST_BACKOFF: Duration = Duration::from_millis(2);
pub(super) const MAX_BACKOFF: Duration = Duration::from_millis(500);

impl DeltaTable {
    pub fn new(store: Arc<dyn ObjectStore>, root: StorePath) -> DeltaTable {
        DeltaTable { store, root }
    }

    /// The table's prefix in its store.
    pub fn root(&self) -> &StorePath {
        &self.root
    }

    pub(super) fn log_file(&self, version: u64) -> StorePath {
        self.root
            .clone()
            .join("_delta_log")
            .join(format!("{version:020}.json"))
    }

    /// The table as of its latest version: the last checkpoint (if any), then every
    /// JSON version after it, in order. A table without a log is empty.
    pub async fn snapshot(&self) -> Result<Snapshot> {
        let mut snap = Snapshot::default();
        if let Some(v) = self.last_checkpoint().await? {
            self.read_checkpoint(v, &mut snap).await?;
            snap.version = Some(v);
        }
        // The versions after it, by direct reads (a listing would grow with the log).
        self.update(&mut snap).await?;
        if snap.version.is_none() && self.first_version().await? == Some(0) {
            // Version 0 was created since we looked: read again.
            self.update(&mut snap).await?;
        }
        Ok(snap)
    }

    /// The lowest JSON version in the log. A log whose version 0 is missing while later
    /// ones exist is broken, not empty.
    pub(super) async fn first_version(&self) -> Result<Option<u64>> {
        use futures::TryStreamExt;
        let dir = self.root.clone().join("_delta_log");
        let listed: Vec<_> = self
            .store
            .list(Some(&dir))
            .try_collect()
            .await
            .map_err(|source| DeltaError::Store {
                path: dir.to_string(),
                source,
            })?;
        let first = listed
            .iter()
            .filter_map(|m| {
                let v = m.location.filename()?.strip_suffix(".json")?;
                (v.len() == 20).then(|| v.parse::<u64>().ok()).flatten()
            })
            .min();
        match first {
            Some(v) if v > 0 => Err(DeltaError::Corrupt {
                path: dir.to_string(),
                line: 0,
                reason: format!("version 0 is missing (the log starts at {v})"),
            }),
            other => Ok(other),
        }
    }

    /// `_delta_log/_last_checkpoint`'s version, when there is one.
    pub(super) async fn last_checkpoint(&self) -> Result<Option<u64>> {
        let path = self
            .root
            .clone()
            .join("_delta_log")
            .join("_last_checkpoint");
        let bytes = match self.store.get(&path).await {
            Ok(r) => r.bytes().await,
            Err(e) => Err(e),
        };
        match bytes {
            Ok(b) => {
                let v: Value = serde_json::from_slice(&b).map_err(|e| DeltaError::Corrupt {
                    path: path.to_string(),
                    line: 1,
                    reason: e.to_string(),
                })?;
                Ok(v["version"].as_u64())
            }
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(source) => Err(DeltaError::Store {
                path: path.to_string(),
                source,
            }),
        }
    }

    /// Bring `snap` up to the latest version by reading the versions after it, one GET
    /// each until the next does not exist: after a lost race that is one or two reads,
    /// not a listing and a replay of the whole log.
    pub async fn update(&self, snap: &mut Snapshot) -> Result<()> {
        loop {
            let v = snap.next_version();
            let path = self.log_file(v);
            let got = match self.store.get(&path).await {
                Ok(r) => r.bytes().await,
                Err(e) => Err(e),
            };
            match got {
                Ok(bytes) => {
                    apply(snap, path.as_ref(), &bytes)?;
                    snap.version = Some(v);
                }
                Err(object_store::Error::NotFound { .. }) => {
                    // The end of the log, unless a version is missing in the middle
                    // (a deleted file): a commit there would fork the history. A
                    // writer creates v + 1 only after v exists, so when v + 1 is there,
                    // a second look at v is conclusive (v may have appeared meanwhile).
                    let after = self.log_file(v + 1);
                    if self.store.head(&after).await.is_err() {
                        return Ok(());
                    }
                    if self.store.head(&path).await.is_ok() {
                        continue;
                    }
                    return Err(DeltaError::Corrupt {
                        path: path.to_string(),
                        line: 0,
                        reason: format!("version {v} is missing (the log continues at {})", v + 1),
                    });
                }
                Err(source) => {
                    return Err(DeltaError::Store {
                        path: path.to_string(),
                        source,
                    })
                }
            }
        }
    }

    /// Create version `version` holding `actions`; `Ok(false)` when another writer
    /// created it first.
    pub async fn try_commit(&self, version: u64, actions: &[Action]) -> Result<bool> {
        let mut body = Vec::new();
        for a in actions {
            serde_json::to_writer(&mut body, a).expect("actions serialise");
            body.push(b'\n');
        }
        let path = self.log_file(version);
        let opts = PutOptions {
            mode: PutMode::Create,
            ..Default::default()
        };
        match self
            .store
            .put_opts(&path, PutPayload::from(body), opts)
            .await
        {
            Ok(_) => Ok(true),
            Err(object_store::Error::AlreadyExists { .. }) => Ok(false),
            Err(source) => Err(DeltaError::Store {
                path: path.to_string(),
                source,
            }),
        }
    }

    /// Commit what `build` makes of the current snapshot; on losing the race, read the
    /// log again and ask `build` again (it re-checks idempotency against what the other
    /// writer committed, and may answer `None`: nothing left to do). Version 0 gets the
    /// table's `protocol` and `metaData` from `create`. Returns the committed version,
    /// or `None` when `build` found nothing to commit.
    pub async fn commit(
        &self,
        create: impl Fn() -> Metadata,
        mut build: impl FnMut(&Snapshot) -> Result<Option<Vec<Action>>>,
    ) -> Result<Option<u64>> {
        let mut backoff = Backoff::default();
        let mut snap = self.snapshot().await?;
        loop {
            let Some(actions) = build(&snap)? else {
                return Ok(None);
            };
            if self.commit_next(&mut snap, &create, actions).await? {
                return Ok(snap.version);
            }
            backoff.wait().await?;
            // What the winner (and anyone since) committed.
            self.update(&mut snap).await?;
        }
    }

    /// Try to commit `actions` as the version after `snap`; on success `snap` becomes
    /// that version (and a checkpoint is written at each interval). `Ok(false)`: another
    /// writer committed that version first; `snap` is unchanged.
    pub async fn commit_next(
        &self,
        snap: &mut Snapshot,
        create: impl Fn() -> Metadata,
        mut actions: Vec<Action>,
    ) -> Result<bool> {
        let version = snap.next_version();
        if version == 0 {
            let mut first = vec![
                Action::Protocol(Protocol {
                    min_reader_version: 1,
                    min_writer_version: 2,
                }),
                Action::Metadata(create()),
            ];
            first.append(&mut actions);
            actions = first;
        }
        if !self.try_commit(version, &actions).await? {
            return Ok(false);
        }
        apply_all(snap, &actions);
        snap.version = Some(version);
        if (version + 1).is_multiple_of(CHECKPOINT_INTERVAL) {
            // The commit stands whatever happens here: a checkpoint only saves readers
            // work, and `_last_checkpoint` is written after it, so a failed one leaves
            // readers on the JSON versions and the next interval writes another.
            let _ = self.write_checkpoint(snap).await;
        }
        Ok(true)
    }

    /// The latest version, found without reading the log: from `known` (or the last
    /// checkpoint) one existence check per version after it. `None`: no log.
    pub async fn latest_version(&self, known: Option<u64>) -> Result<Option<u64>> {
        // A known version that is gone (the table was made again) is no start.
        let known = match known {
            Some(v) if self.store.head(&self.log_file(v)).await.is_ok() => Some(v),
            _ => None,
        };
        let mut v = match known {
            Some(v) => Some(v),
            None => self.last_checkpoint().await?,
        };
        loop {
            let next = v.map_or(0, |v| v + 1);
            match self.store.head(&self.log_file(next)).await {
                Ok(_) => v = Some(next),
                Err(object_store::Error::NotFound { .. }) => return Ok(v),
                Err(source) => {
                    return Err(DeltaError::Store {
                        path: self.log_file(next).to_string(),
                        source,
                    })
                }
            }
        }
    }
}

/// Bounded, jittered exponential backoff between attempts of a commit that keeps
/// losing the race.
pub struct Backoff {
    pub(super) next: Duration,
    pub(super) attempts: u32,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            next: FIRST_BACKOFF,
            attempts: 0,
        }
    }
}

impl Backoff {
    /// Sleep before the next attempt; an error once the attempts are used up.
    pub async fn wait(&mut self) -> Result<()> {
        self.attempts += 1;
        if self.attempts >= MAX_ATTEMPTS {
            return Err(DeltaError::Contended {
                attempts: MAX_ATTEMPTS,
            });
        }
        // Jitter from the clock: writers that collided do not retry in step.
        let jitter = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos() as u64 % 1000);
        tokio::time::sleep(
            self.next + Duration::from_micros(jitter * self.next.as_millis() as u64),
        )
        .await;
        self.next = (self.next * 2).min(MAX_BACKOFF);
        Ok(())
    }
}
