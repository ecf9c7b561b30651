//! The app on a socket, with bounds no client can lift: at most `max_connections` open
//! at once (one more is closed at once), request headers read within `header_timeout`
//! and within `max_header_bytes`, bodies within `max_body_bytes`, and no connection
//! kept past `connection_lifetime` (then closed after the request in flight, if any).
//! A slow or idle client therefore holds one connection slot for a bounded time, and
//! the warehouse work behind each request is bounded by [`crate::Limits`].

use axum::response::IntoResponse;
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, Clone, Copy)]
pub struct ServerLimits {
    pub max_connections: usize,
    pub header_timeout: Duration,
    pub max_header_bytes: usize,
    pub max_body_bytes: usize,
    pub connection_lifetime: Duration,
}

impl Default for ServerLimits {
    fn default() -> Self {
        ServerLimits {
            max_connections: 256,
            header_timeout: Duration::from_secs(10),
            max_header_bytes: 64 * 1024,
            max_body_bytes: 64 * 1024,
            connection_lifetime: Duration::from_secs(120),
        }
    }
}

/// Serve `app` on `listener` until `shutdown` completes.
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: Router,
    limits: ServerLimits,
    shutdown: impl Future<Output = ()>,
) {
    let max_header = limits.max_header_bytes;
    let app = app
        .layer(axum::extract::DefaultBodyLimit::max(limits.max_body_bytes))
        .layer(axum::middleware::from_fn(
            move |req: axum::extract::Request, next: axum::middleware::Next| async move {
                // hyper bounds its read buffer, not the headers a single read brings in.
                let size: usize = req
                    .headers()
                    .iter()
                    .map(|(k, v)| k.as_str().len() + v.len() + 4)
                    .sum::<usize>()
                    + req.uri().path().len()
                    + req.uri().query().map_or(0, str::len);
                if size > max_header {
                    return (
                        axum::http::StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
                        format!("the request's headers are {size} bytes, over the limit of {max_header}"),
                    )
                        .into_response();
                }
                next.run(req).await
            },
        ));
    let slots = Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // Out of descriptors or a reset before accept: wait, do not spin.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
            _ = &mut shutdown => return,
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            continue; // over the limit: the connection is closed unanswered
        };
        let service = TowerToHyperService::new(app.clone());
        tokio::spawn(async move {
            let _slot = slot;
            let mut http = hyper::server::conn::http1::Builder::new();
            http.timer(TokioTimer::new())
                .header_read_timeout(limits.header_timeout)
                .max_buf_size(limits.max_header_bytes.max(8192));
            let conn = http.serve_connection(TokioIo::new(stream), service);
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => return,
                _ = tokio::time::sleep(limits.connection_lifetime) => {}
            }
            // Past its lifetime: finish the request in flight (bounded), then close.
            conn.as_mut().graceful_shutdown();
            let _ = tokio::time::timeout(limits.connection_lifetime, conn).await;
        });
    }
}
