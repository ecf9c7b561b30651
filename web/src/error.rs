//! What went wrong in a request, rendered as an HTML page or as `{"error": ...}` for
//! `/api`.

use crate::page::{self, esc};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use axum::Json;

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
    pub(crate) fn not_found() -> Self {
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
                Json(ErrorBody {
                    error: &self.message,
                }),
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

/// An API error's JSON body.
#[derive(serde::Serialize)]
struct ErrorBody<'a> {
    error: &'a str,
}
