//! The warehouse work behind a request: off the async executor, at most
//! [`Limits::workers`] at once, interrupted past [`Limits::timeout`]; the warehouse state
//! the request's cache lookup read, carried to the thread that does its work.

use crate::error::AppError;
use std::sync::Arc;

/// The warehouse's committed state, cheaply told apart (`Warehouse::state_signature`).
pub type Signature = Option<u64>;

/// How much work the server takes on at once, and for how long.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Requests doing warehouse work at once (each may use every core in DuckDB).
    pub workers: usize,
    /// How long a request waits for a worker before `503 Retry-After`.
    pub queue_wait: std::time::Duration,
    /// How long one request's work may take before it is interrupted (`503`).
    pub timeout: std::time::Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            workers: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2)
                .max(2),
            queue_wait: std::time::Duration::from_secs(5),
            timeout: std::time::Duration::from_secs(30),
        }
    }
}

thread_local! {
    /// While a request's work runs on this thread: where `AppState::db` leaves each
    /// connection's interrupt handle, so a timed-out request can stop its query.
    static INTERRUPTS: std::cell::RefCell<Option<Interrupts>> = const { std::cell::RefCell::new(None) };
}

type Interrupts = Arc<std::sync::Mutex<Vec<Arc<duckdb::InterruptHandle>>>>;

tokio::task_local! {
    /// The signature the cache layer read for this request: its warehouse work opens
    /// the state of that signature instead of reading every log again (on a remote
    /// warehouse, a round trip to the store).
    pub(crate) static REQUEST_SIGNATURE: Signature;
}

thread_local! {
    /// [`REQUEST_SIGNATURE`] carried onto the thread doing the request's work.
    static WORK_SIGNATURE: std::cell::Cell<Option<Signature>> = const { std::cell::Cell::new(None) };
}

/// The state a request's work should open: the one its cache lookup read, if any.
pub(crate) fn work_signature() -> Option<Signature> {
    WORK_SIGNATURE.with(|s| s.get())
}

/// Leave a connection's interrupt handle where a timed-out request can stop it.
pub(crate) fn on_timeout_interrupt(handle: Arc<duckdb::InterruptHandle>) {
    INTERRUPTS.with(|i| {
        if let Some(list) = i.borrow().as_ref() {
            list.lock().unwrap_or_else(|p| p.into_inner()).push(handle);
        }
    });
}

/// What bounds the work: the limits, and the permits of the workers.
#[derive(Clone)]
pub struct Workers {
    pub limits: Limits,
    permits: Arc<tokio::sync::Semaphore>,
}

impl Workers {
    pub fn new(limits: Limits) -> Workers {
        Workers {
            permits: Arc::new(tokio::sync::Semaphore::new(limits.workers.max(1))),
            limits,
        }
    }
}

/// Run blocking warehouse work off the async executor, bounded by `state.limits`: at
/// most `workers` at once; a request that waits longer than `queue_wait` for a worker,
/// or whose work runs past `timeout` (its queries interrupted), gets `503` with
/// `Retry-After` instead of a socket that hangs.
pub(crate) async fn blocking<T: Send + 'static>(
    state: impl AsRef<Workers>,
    f: impl FnOnce() -> Result<T, AppError> + Send + 'static,
) -> Result<T, AppError> {
    let workers = state.as_ref().clone();
    let limits = workers.limits;
    let permit =
        match tokio::time::timeout(limits.queue_wait, workers.permits.acquire_owned()).await {
            Ok(Ok(p)) => p,
            _ => {
                return Err(AppError::unavailable(
                    format!(
                        "the server is busy ({} requests at work, more waiting): try again shortly",
                        limits.workers
                    ),
                    1,
                ))
            }
        };
    let handles: Interrupts = Default::default();
    let mine = handles.clone();
    let sig = REQUEST_SIGNATURE.try_with(|s| *s).ok();
    let task = tokio::task::spawn_blocking(move || {
        // The permit is held until the work really ends, timed out or not.
        let _permit = permit;
        INTERRUPTS.with(|i| *i.borrow_mut() = Some(mine));
        WORK_SIGNATURE.with(|s| s.set(sig));
        let r = f();
        WORK_SIGNATURE.with(|s| s.set(None));
        INTERRUPTS.with(|i| *i.borrow_mut() = None);
        r
    });
    match tokio::time::timeout(limits.timeout, task).await {
        Ok(joined) => joined.map_err(|e| AppError::internal(e.to_string()))?,
        Err(_) => {
            for h in handles.lock().unwrap_or_else(|p| p.into_inner()).iter() {
                h.interrupt();
            }
            Err(AppError::unavailable(
                format!(
                    "this request took longer than {} s and was stopped: try again shortly, or narrow it",
                    limits.timeout.as_secs()
                ),
                5,
            ))
        }
    }
}
