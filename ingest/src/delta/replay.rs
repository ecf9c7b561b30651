//! A table's state: the replay of its actions, version by version, into the live files.

use crate::delta::Action;
use crate::delta::Add;
use crate::delta::DeltaError;
use crate::delta::Metadata;
use crate::delta::Protocol;
use crate::delta::Result;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

/// The table as of one version: its live files and what the log says about it.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// The last committed version; `None` for a table with no log yet.
    pub version: Option<u64>,
    pub metadata: Option<Metadata>,
    /// Live files by path.
    pub files: BTreeMap<String, Add>,
    /// Each application's last `txn` version.
    pub txns: HashMap<String, i64>,
    pub protocol: Option<Protocol>,
}

impl Snapshot {
    /// The version the next commit must create.
    pub fn next_version(&self) -> u64 {
        self.version.map_or(0, |v| v + 1)
    }
}

/// Apply one log file's actions (JSON lines) to `snap`.
pub(super) fn apply(snap: &mut Snapshot, path: &str, bytes: &[u8]) -> Result<()> {
    for (i, line) in bytes.split(|b| *b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let action: Action = match serde_json::from_slice(line) {
            Ok(a) => a,
            Err(e) => {
                // Actions this reader does not use (cdc, domainMetadata...) are skipped;
                // a known action of the wrong shape, or a line that is not a JSON
                // object, is corruption.
                let known = ["protocol", "metaData", "add", "remove", "txn", "commitInfo"];
                match serde_json::from_slice::<serde_json::Map<String, Value>>(line) {
                    Ok(m) if !m.keys().any(|k| known.contains(&k.as_str())) => continue,
                    _ => {
                        return Err(DeltaError::Corrupt {
                            path: path.to_string(),
                            line: i + 1,
                            reason: e.to_string(),
                        })
                    }
                }
            }
        };
        apply_action(snap, action)
            .map_err(|reason| DeltaError::Rejected(format!("{path}: {reason}")))?;
    }
    Ok(())
}

/// Apply actions this writer just committed.
pub(super) fn apply_all(snap: &mut Snapshot, actions: &[Action]) {
    for a in actions {
        // Our own actions: protocol version 1, so this cannot fail.
        let _ = apply_action(snap, a.clone());
    }
}

pub(super) fn apply_action(snap: &mut Snapshot, action: Action) -> std::result::Result<(), String> {
    match action {
        Action::Add(a) => {
            snap.files.insert(a.path.clone(), a);
        }
        Action::Remove(r) => {
            snap.files.remove(&r.path);
        }
        Action::Metadata(m) => snap.metadata = Some(m),
        Action::Txn(t) => {
            snap.txns.insert(t.app_id, t.version);
        }
        Action::Protocol(p) => {
            if p.min_reader_version > 1 {
                return Err(format!(
                    "the table needs Delta reader version {}; perfdb reads version 1",
                    p.min_reader_version
                ));
            }
            snap.protocol = Some(p);
        }
        Action::CommitInfo(_) => {}
    }
    Ok(())
}
