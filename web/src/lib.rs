//! perfdb-web: the web app over the warehouse. `app(state)` builds the router; one file
//! per route under `routes/`; one error type that renders as a page or JSON.

pub mod cache;
pub mod export;
pub mod guard;
mod page;
pub mod paging;
pub mod query;
mod routes;
pub mod server;
pub mod url;

use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use page::esc;

/// The warehouse's committed state, cheaply told apart (`Warehouse::state_signature`).
type Signature = Option<u64>;

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

#[derive(Clone)]
pub struct AppState {
    pub root: Arc<PathBuf>,
    /// `perfdb.toml` as `perfdb serve` found it: comparisons resolve their options
    /// through it exactly as `perfdb compare` does.
    pub config: Arc<perfdb_reports::config::Config>,
    /// With `perfdb serve --allow-triage`: the token every triage form carries (random
    /// per server start), so another site cannot post one. `None`: read-only.
    pub triage_token: Option<Arc<String>>,
    /// With `perfdb serve`: the host names a request's `Host` may carry (the bound
    /// address, `localhost`, loopback and `--host` names); others answer 421, so a page
    /// elsewhere cannot reach the server through a name it rebinds to this address.
    /// `None`: any (the app inside a test or another server).
    pub allowed_hosts: Option<Arc<Vec<String>>>,
    /// One DuckDB database over the committed state; reopened when a table's log gains a version.
    open: Arc<std::sync::Mutex<Option<(Signature, perfdb_reports::db::Db)>>>,
    /// Responses of this warehouse version (see `cache`).
    pub cache: Arc<cache::Cache>,
    pub limits: Limits,
    work: Arc<tokio::sync::Semaphore>,
}

impl AppState {
    pub fn new(root: &Path) -> Self {
        let limits = Limits::default();
        AppState {
            root: Arc::new(root.to_path_buf()),
            config: Default::default(),
            triage_token: None,
            allowed_hosts: None,
            open: Default::default(),
            cache: Default::default(),
            work: Arc::new(tokio::sync::Semaphore::new(limits.workers)),
            limits,
        }
    }

    /// The same state with other limits on concurrent work.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.work = Arc::new(tokio::sync::Semaphore::new(limits.workers.max(1)));
        self.limits = limits;
        self
    }

    /// The committed state's version: the tables' log versions mixed with the time of
    /// the saved-comparisons folder, so any commit or save, by any perfdb, changes it.
    pub fn version(&self) -> u64 {
        self.version_of(self.signature())
    }

    /// The committed state's signature, read now.
    pub fn signature(&self) -> Signature {
        perfdb_reports::db::state_signature(&self.root)
    }

    /// [`AppState::version`] of a signature just read.
    pub fn version_of(&self, sig: Signature) -> u64 {
        // Saved comparisons live beside the tables (`alerts/`): their folder's times
        // count too.
        let saved = std::fs::metadata(perfdb_reports::saved::dir_of(&self.root))
            .and_then(|m| m.modified())
            .ok();
        perfdb_ingest::hash::fnv64(&format!("{:?}", sig.map(|s| (s, saved))))
    }

    /// The same state, accepting triage actions (acknowledge, dismiss, reopen) from the
    /// alerts page.
    pub fn with_triage(mut self) -> Self {
        let mut seed = [0u8; 16];
        if let Ok(mut f) = std::fs::File::open("/dev/urandom") {
            let _ = std::io::Read::read_exact(&mut f, &mut seed);
        }
        let stamp = format!(
            "{:?}{:?}{}",
            seed,
            std::time::SystemTime::now(),
            std::process::id()
        );
        self.triage_token = Some(Arc::new(perfdb_ingest::hash::sha256_hex(stamp.as_bytes())));
        self
    }

    /// The same state, answering only requests whose `Host` names one of `names` (as
    /// well as `localhost` and the loopback addresses), whatever the port.
    pub fn with_hosts(mut self, names: impl IntoIterator<Item = String>) -> Self {
        let mut all: Vec<String> = ["localhost", "127.0.0.1", "[::1]"]
            .into_iter()
            .map(String::from)
            .chain(names.into_iter().map(|n| n.to_ascii_lowercase()))
            .collect();
        all.sort();
        all.dedup();
        self.allowed_hosts = Some(Arc::new(all));
        self
    }

    /// The triage token of forms served for `host`: a request for another name (a
    /// rebound one) can never present the token of this one.
    pub fn triage_token_for(&self, host: &str) -> Option<String> {
        self.triage_token.as_ref().map(|secret| {
            perfdb_ingest::hash::sha256_hex(
                format!("{secret}\u{1f}{}", host.to_ascii_lowercase()).as_bytes(),
            )
        })
    }

    /// The same state, comparing with `config`'s defaults and overrides.
    pub fn with_config(mut self, config: perfdb_reports::config::Config) -> Self {
        self.config = Arc::new(config);
        self
    }

    /// A connection for one request, read-only over the warehouse as last committed.
    pub fn db(&self) -> Result<perfdb_reports::db::Db, AppError> {
        let internal = |e: perfdb_reports::db::DbError| AppError::internal(e.to_string());
        let sig = WORK_SIGNATURE
            .with(|s| s.get())
            .unwrap_or_else(|| self.signature());
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let conn = match open.as_ref() {
            Some((s, db)) if *s == sig => db.try_clone().map_err(internal)?,
            _ => {
                let db = perfdb_reports::db::Db::open(&self.root).map_err(internal)?;
                let conn = db.try_clone().map_err(internal)?;
                *open = Some((sig, db));
                conn
            }
        };
        INTERRUPTS.with(|i| {
            if let Some(list) = i.borrow().as_ref() {
                list.lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(conn.conn.interrupt_handle());
            }
        });
        Ok(conn)
    }
}

/// The router: HTML pages and their JSON twins under `/api`.
pub fn app(state: AppState) -> Router {
    let cached = axum::middleware::from_fn_with_state(state.clone(), cache::layer);
    Router::new()
        .route("/", get(routes::overview::page))
        .route("/api/overview", get(routes::overview::api))
        .route("/runs", get(routes::runs::page))
        .route("/api/runs", get(routes::runs::api))
        .route("/chart", get(routes::chart::page))
        .route("/chart.svg", get(routes::chart::svg))
        .route("/api/chart", get(routes::chart::api))
        .route("/history", get(routes::history::page))
        .route("/api/history", get(routes::history::api))
        .route("/compare", get(routes::compare::page))
        .route("/api/alerts/detected", get(routes::alerts::detected_api))
        .route("/alerts/{id}", get(routes::alerts::one))
        .route(
            "/alerts/{id}/triage",
            axum::routing::post(routes::alerts::triage),
        )
        .route("/api/compare", get(routes::compare::api))
        .route("/alerts", get(routes::alerts::page))
        .route("/api/alerts", get(routes::alerts::api))
        .route("/app.js", get(guard::app_js))
        .fallback(|| async { AppError::not_found() })
        .layer(cached)
        .layer(axum::middleware::from_fn(guard::layer))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            guard::host_layer,
        ))
        .with_state(state)
}

/// What went wrong, rendered as an HTML page or as `{"error": ...}` for `/api`.
#[derive(Debug)]
pub struct AppError {
    pub status: StatusCode,
    pub message: String,
    pub json: bool,
    /// Seconds for `Retry-After` (with `503`).
    pub retry_after: Option<u32>,
}

impl AppError {
    pub fn bad_request(message: impl Into<String>) -> Self {
        AppError {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
            json: false,
            retry_after: None,
        }
    }
    pub fn internal(message: impl Into<String>) -> Self {
        AppError {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            message: message.into(),
            json: false,
            retry_after: None,
        }
    }
    pub fn forbidden(message: impl Into<String>) -> Self {
        AppError {
            status: StatusCode::FORBIDDEN,
            message: message.into(),
            json: false,
            retry_after: None,
        }
    }
    /// 404 with what was not found.
    pub fn unknown(message: impl Into<String>) -> Self {
        AppError {
            status: StatusCode::NOT_FOUND,
            message: message.into(),
            json: false,
            retry_after: None,
        }
    }
    fn not_found() -> Self {
        AppError {
            status: StatusCode::NOT_FOUND,
            message: "no such page".into(),
            json: false,
            retry_after: None,
        }
    }
    /// The server is saturated or the work took too long: try again in `secs`.
    pub fn unavailable(message: impl Into<String>, secs: u32) -> Self {
        AppError {
            status: StatusCode::SERVICE_UNAVAILABLE,
            message: message.into(),
            json: false,
            retry_after: Some(secs),
        }
    }
    pub fn json(mut self) -> Self {
        self.json = true;
        self
    }
}

impl From<perfdb_reports::chart::ChartError> for AppError {
    fn from(e: perfdb_reports::chart::ChartError) -> Self {
        use perfdb_reports::chart::ChartError::*;
        match e {
            Db(d) => AppError::internal(d.to_string()),
            other => AppError::bad_request(other.to_string()),
        }
    }
}

impl From<perfdb_reports::compare::CompareError> for AppError {
    fn from(e: perfdb_reports::compare::CompareError) -> Self {
        use perfdb_reports::compare::CompareError::*;
        match e {
            Db(d) => AppError::internal(d.to_string()),
            other => AppError::bad_request(other.to_string()),
        }
    }
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let mut r = self.render();
        if let Some(secs) = self.retry_after {
            r.headers_mut()
                .insert(axum::http::header::RETRY_AFTER, secs.into());
        }
        r
    }
}

impl AppError {
    fn render(&self) -> Response {
        if self.json {
            (
                self.status,
                Json(serde_json::json!({ "error": self.message })),
            )
                .into_response()
        } else {
            let body = page::layout(
                self.status.canonical_reason().unwrap_or("Error"),
                &format!(
                    "<p class=\"error\">{}</p><p><a href=\"/\">Back to the overview</a></p>",
                    esc(&self.message)
                ),
            );
            (self.status, Html(body)).into_response()
        }
    }
}

/// Run blocking warehouse work off the async executor, bounded by `state.limits`: at
/// most `workers` at once; a request that waits longer than `queue_wait` for a worker,
/// or whose work runs past `timeout` (its queries interrupted), gets `503` with
/// `Retry-After` instead of a socket that hangs.
pub(crate) async fn blocking<T: Send + 'static>(
    state: AppState,
    f: impl FnOnce() -> Result<T, AppError> + Send + 'static,
) -> Result<T, AppError> {
    let limits = state.limits;
    let permit =
        match tokio::time::timeout(limits.queue_wait, state.work.clone().acquire_owned()).await {
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

#[cfg(test)]
mod tests {
    #[test]
    fn a_triage_token_is_bound_to_its_host_name() {
        let s = super::AppState::new(std::path::Path::new("/nonexistent")).with_triage();
        let a = s.triage_token_for("localhost").unwrap();
        assert_eq!(a, s.triage_token_for("LocalHost").unwrap());
        assert_ne!(a, s.triage_token_for("evil.example").unwrap());
        assert!(super::AppState::new(std::path::Path::new("/x"))
            .triage_token_for("localhost")
            .is_none());
    }
}
