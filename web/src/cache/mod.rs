//! Responses cached by (host name, route, normalised query, warehouse version).
//!
//! Every page and API answer is a function of the committed warehouse and the request's
//! query, so a `GET` is answered once per warehouse version: later identical requests
//! get the stored bytes, and a client that sends the `ETag` back gets `304 Not
//! Modified`. A commit (ingest, compaction, alert, triage) adds a Delta log version, which
//! changes the warehouse version and so every key: nothing expires by a timer, and nothing stale is served.
//!
//! Identical requests that arrive while the first is still being computed wait for it
//! instead of computing it again (one flight per key), so the first page after an
//! ingest costs one query however many dashboards ask at once. Only `200` answers are
//! kept; an error is handed to the requests that waited on it, then forgotten.

pub(crate) mod store;

use crate::state::AppState;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use perfdb_ingest::hash::fnv64;
use store::Stored;
pub use store::{Cache, CAPACITY_BYTES};

/// The query string with its pairs sorted: `?b=1&a=2` and `?a=2&b=1` are one entry.
fn normalised(query: Option<&str>) -> String {
    let mut pairs: Vec<&str> = query
        .unwrap_or("")
        .split('&')
        .filter(|p| !p.is_empty())
        .collect();
    pairs.sort_unstable();
    pairs.join("&")
}

/// Does `If-None-Match` name `etag` (or `*`)?
fn matches(headers: &HeaderMap, etag: &HeaderValue) -> bool {
    headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .any(|t| t == "*" || t.trim_start_matches("W/") == etag.to_str().unwrap_or(""))
}

fn respond(stored: &Stored, request_headers: &HeaderMap) -> Response {
    if let Some(etag) = &stored.etag {
        if matches(request_headers, etag) {
            let mut r = StatusCode::NOT_MODIFIED.into_response();
            r.headers_mut().insert(header::ETAG, etag.clone());
            r.headers_mut()
                .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
            return r;
        }
    }
    let mut r = Response::new(Body::from(stored.body.clone()));
    *r.status_mut() = stored.status;
    *r.headers_mut() = stored.headers.clone();
    r
}

/// The middleware: answer `GET`s from the cache, computing each at most once per
/// warehouse version.
pub async fn layer(State(state): State<AppState>, req: Request, next: Next) -> Response {
    if req.method() != Method::GET {
        return next.run(req).await;
    }
    let sig = state.signature();
    let version = state.version_of(sig);
    // The host name is part of the key: a page carries a triage token bound to the
    // name it was served for, so `localhost`'s page is never served to another name.
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .and_then(crate::guard::host_name)
        .unwrap_or_default();
    let key = format!(
        "{host} {}?{}",
        req.uri().path(),
        normalised(req.uri().query())
    );
    let headers = req.headers().clone();
    let slot = state.cache.slot(version, &key);
    let mut computed = false;
    let stored = slot
        .get_or_init(|| async {
            computed = true;
            let resp = crate::REQUEST_SIGNATURE.scope(sig, next.run(req)).await;
            let (mut parts, body) = resp.into_parts();
            let body = axum::body::to_bytes(body, usize::MAX)
                .await
                .unwrap_or_default();
            let etag = (parts.status == StatusCode::OK).then(|| {
                let tag = format!("\"v{version}-{:016x}\"", fnv64(&key));
                HeaderValue::from_str(&tag).expect("ascii etag")
            });
            if let Some(e) = &etag {
                parts.headers.insert(header::ETAG, e.clone());
                parts
                    .headers
                    .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
            }
            Stored {
                status: parts.status,
                headers: parts.headers,
                body,
                etag,
            }
        })
        .await
        .clone();
    if computed {
        state.cache.settle(version, &key, &stored);
    }
    respond(&stored, &headers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_order_does_not_matter() {
        assert_eq!(normalised(Some("b=1&a=2")), normalised(Some("a=2&b=1")));
        assert_eq!(normalised(None), "");
    }

    #[test]
    fn if_none_match_lists_and_weak_tags() {
        let tag = HeaderValue::from_static("\"v3-00ff\"");
        let mut h = HeaderMap::new();
        h.insert(
            header::IF_NONE_MATCH,
            HeaderValue::from_static("\"x\", W/\"v3-00ff\""),
        );
        assert!(matches(&h, &tag));
        h.insert(
            header::IF_NONE_MATCH,
            HeaderValue::from_static("\"v2-00ff\""),
        );
        assert!(!matches(&h, &tag));
    }
}
