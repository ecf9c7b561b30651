//! The cache's store: each key's one flight and its answer, for one warehouse version,
//! the oldest dropped past [`CAPACITY_BYTES`].

use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use tokio::sync::OnceCell;

/// Bytes of response bodies kept; the oldest entries go first beyond it.
pub const CAPACITY_BYTES: usize = 64 << 20;
/// A body larger than this is served but not kept.
const MAX_BODY: usize = 16 << 20;

#[derive(Clone)]
pub(super) struct Stored {
    pub(super) status: StatusCode,
    pub(super) headers: HeaderMap,
    pub(super) body: Bytes,
    pub(super) etag: Option<HeaderValue>,
}

pub(super) type Slot = Arc<OnceCell<Stored>>;

#[derive(Default)]
pub struct Cache {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    slots: HashMap<String, Slot>,
    /// Keys in insertion order, with their body sizes, for eviction.
    order: VecDeque<(String, usize)>,
    bytes: usize,
    /// The warehouse version the entries belong to; a new one drops them all.
    version: u64,
}

impl Cache {
    /// The slot for `key` at `version` (a fresh one when absent).
    pub(super) fn slot(&self, version: u64, key: &str) -> Slot {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if g.version != version {
            *g = Inner {
                version,
                ..Default::default()
            };
        }
        g.slots.entry(key.to_string()).or_default().clone()
    }

    /// After the slot's flight (once per slot: a key has one slot until it is evicted):
    /// keep a good answer and account for it, forget others.
    pub(super) fn settle(&self, version: u64, key: &str, stored: &Stored) {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if g.version != version {
            return;
        }
        if stored.status != StatusCode::OK || stored.body.len() > MAX_BODY {
            g.slots.remove(key);
            return;
        }
        g.order.push_back((key.to_string(), stored.body.len()));
        g.bytes += stored.body.len();
        while g.bytes > CAPACITY_BYTES {
            let Some((old, n)) = g.order.pop_front() else {
                break;
            };
            g.slots.remove(&old);
            g.bytes -= n;
        }
    }

    /// Entries kept now (for tests and the server's own stats).
    pub fn len(&self) -> usize {
        self.inner
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .order
            .len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
