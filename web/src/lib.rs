//! perfdb-web: the web app over the warehouse. `app(state)` builds the router; one file
//! per route under `routes/`; one error type that renders as a page or JSON.

mod page;
mod routes;

use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use page::esc;

type Signature = Option<(u64, std::time::SystemTime)>;

#[derive(Clone)]
pub struct AppState {
    pub root: Arc<PathBuf>,
    /// `perfdb.toml` as `perfdb serve` found it: comparisons resolve their options
    /// through it exactly as `perfdb compare` does.
    pub config: Arc<perfdb_reports::config::Config>,
    /// With `perfdb serve --allow-triage`: the token every triage form carries (random
    /// per server start), so another site cannot post one. `None`: read-only.
    pub triage_token: Option<Arc<String>>,
    /// One DuckDB database over the committed state; reopened when the manifest changes.
    open: Arc<std::sync::Mutex<Option<(Signature, perfdb_reports::db::Db)>>>,
}

impl AppState {
    pub fn new(root: &Path) -> Self {
        AppState {
            root: Arc::new(root.to_path_buf()),
            config: Default::default(),
            triage_token: None,
            open: Default::default(),
        }
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
        self.triage_token = Some(Arc::new(perfdb_ingest::warehouse::sha256_hex(
            stamp.as_bytes(),
        )));
        self
    }

    /// The same state, comparing with `config`'s defaults and overrides.
    pub fn with_config(mut self, config: perfdb_reports::config::Config) -> Self {
        self.config = Arc::new(config);
        self
    }

    /// A connection for one request, read-only over the warehouse as last committed.
    pub fn db(&self) -> Result<perfdb_reports::db::Db, AppError> {
        let internal = |e: perfdb_reports::db::DbError| AppError::internal(e.to_string());
        let sig = perfdb_ingest::warehouse::Warehouse::new(self.root.as_path()).state_signature();
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        match open.as_ref() {
            Some((s, db)) if *s == sig => db.try_clone().map_err(internal),
            _ => {
                let db = perfdb_reports::db::Db::open(&self.root).map_err(internal)?;
                let conn = db.try_clone().map_err(internal)?;
                *open = Some((sig, db));
                Ok(conn)
            }
        }
    }
}

/// The router: HTML pages and their JSON twins under `/api`.
pub fn app(state: AppState) -> Router {
    Router::new()
        .route("/", get(routes::runs::page))
        .route("/api/runs", get(routes::runs::api))
        .route("/chart", get(routes::chart::page))
        .route("/chart.svg", get(routes::chart::svg))
        .route("/api/chart", get(routes::chart::api))
        .route("/history", get(routes::history::page))
        .route("/api/history", get(routes::history::api))
        .route("/compare", get(routes::compare::page))
        .route("/api/alerts/detected", get(routes::alerts::detected_api))
        .route(
            "/alerts/{id}/triage",
            axum::routing::post(routes::alerts::triage),
        )
        .route("/api/compare", get(routes::compare::api))
        .route("/alerts", get(routes::alerts::page))
        .route("/api/alerts", get(routes::alerts::api))
        .fallback(|| async { AppError::not_found() })
        .with_state(state)
}

/// What went wrong, rendered as an HTML page or as `{"error": ...}` for `/api`.
#[derive(Debug)]
pub struct AppError {
    pub status: StatusCode,
    pub message: String,
    pub json: bool,
}

impl AppError {
    pub fn bad_request(message: impl Into<String>) -> Self {
        AppError {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
            json: false,
        }
    }
    pub fn internal(message: impl Into<String>) -> Self {
        AppError {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            message: message.into(),
            json: false,
        }
    }
    pub fn forbidden(message: impl Into<String>) -> Self {
        AppError {
            status: StatusCode::FORBIDDEN,
            message: message.into(),
            json: false,
        }
    }
    fn not_found() -> Self {
        AppError {
            status: StatusCode::NOT_FOUND,
            message: "no such page".into(),
            json: false,
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
                    "<p class=\"error\">{}</p><p><a href=\"/\">Back to the runs</a></p>",
                    esc(&self.message)
                ),
            );
            (self.status, Html(body)).into_response()
        }
    }
}

/// Run blocking warehouse work off the async executor.
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, AppError> + Send + 'static,
) -> Result<T, AppError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| AppError::internal(e.to_string()))?
}
