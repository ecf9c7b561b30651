//! The query string of every route, read strictly: an unknown parameter (`treshold=`)
//! is a `400` naming it, never silently ignored, answered as JSON under `/api`.

use crate::AppError;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

/// `axum::extract::Query`, with its rejection as the app's error page or JSON.
pub struct Query<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for Query<T> {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, AppError> {
        match axum::extract::Query::<T>::try_from_uri(&parts.uri) {
            Ok(axum::extract::Query(v)) => Ok(Query(v)),
            Err(e) => {
                let text = e.body_text();
                let text = text
                    .strip_prefix("Failed to deserialize query string: ")
                    .unwrap_or(&text);
                let e = AppError::bad_request(format!("query: {text}"));
                Err(if parts.uri.path().starts_with("/api/") {
                    e.json()
                } else {
                    e
                })
            }
        }
    }
}
