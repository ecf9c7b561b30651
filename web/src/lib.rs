//! perfdb-web: the web app over the warehouse. `app(state)` builds the router; one file
//! per route under `routes/`; the shared state ([`state`]), the one error type that
//! renders as a page or JSON ([`error`]), and the bounded warehouse work behind each
//! request ([`work`]).

pub mod cache;
pub mod error;
pub mod guard;
mod page;
pub mod paging;
pub mod query;
mod routes;
pub mod server;
pub mod state;
pub mod static_site;
pub mod url;
pub mod work;

use axum::routing::get;
use axum::Router;

pub use error::AppError;
pub use page::esc;
pub use state::AppState;
pub(crate) use work::{blocking, REQUEST_SIGNATURE};
pub use work::{Limits, Signature};

/// The router: HTML pages and their JSON twins under `/api`.
pub fn app(state: AppState) -> Router {
    let cached = axum::middleware::from_fn_with_state(state.clone(), cache::layer);
    // The routes that read no query string: a parameter is refused, never ignored.
    let without_query = Router::new()
        .route("/api/alerts/groups", get(routes::alerts::groups_api))
        .route("/alerts/{id}", get(routes::alerts::one))
        .route(
            "/alerts/{id}/triage",
            axum::routing::post(routes::alerts::triage),
        )
        .route("/devices", get(routes::devices::page))
        .route("/api/devices", get(routes::devices::api))
        .route("/app.js", get(guard::app_js))
        .route_layer(axum::middleware::from_fn(guard::no_query));
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
        .route("/roofline", get(routes::roofline::page))
        .route("/api/alerts/detected", get(routes::alerts::detected_api))
        .route("/api/compare", get(routes::compare::api))
        .route("/alerts", get(routes::alerts::page))
        .route("/api/alerts", get(routes::alerts::api))
        .merge(without_query)
        .fallback(|| async { AppError::not_found() })
        .layer(cached)
        .layer(axum::middleware::from_fn(guard::layer))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            guard::host_layer,
        ))
        .with_state(state)
}
