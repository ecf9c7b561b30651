//! The app on a socket, with bounds no client can lift: at most `max_connections` open
//! at once and `max_per_client` from one address (one more is closed at once, so one
//! client's idle sockets cannot lock the others out), request headers read within `header_timeout`
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
    pub max_per_client: usize,
    pub header_timeout: Duration,
    pub max_header_bytes: usize,
    pub max_body_bytes: usize,
    pub connection_lifetime: Duration,
}

impl Default for ServerLimits {
    fn default() -> Self {
        ServerLimits {
            max_connections: 256,
            max_per_client: 64,
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
                    let mut res = (
                        axum::http::StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
                        format!("the request's headers are {size} bytes, over the limit of {max_header}"),
                    )
                        .into_response();
                    crate::guard::secure(res.headers_mut());
                    return res;
                }
                next.run(req).await
            },
        ));
    let slots = Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
    let per_client: Arc<std::sync::Mutex<std::collections::HashMap<std::net::IpAddr, usize>>> =
        Arc::default();
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                // Out of descriptors or a reset before accept: wait, do not spin.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
            _ = &mut shutdown => return,
        };
        let (stream, peer) = stream;
        let Some(share) = ClientShare::take(&per_client, peer.ip(), limits.max_per_client) else {
            continue; // this client is at its share: closed unanswered
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            continue; // over the limit: the connection is closed unanswered
        };
        let service = TowerToHyperService::new(app.clone());
        tokio::spawn(async move {
            let _slot = slot;
            let _share = share;
            let mut http = hyper::server::conn::http1::Builder::new();
            http.timer(TokioTimer::new())
                .header_read_timeout(limits.header_timeout)
                // Four times the limit: headers over the limit reach the check above
                // and get its answer, with the security headers; only past four times
                // does hyper cut the connection with a bare 431.
                .max_buf_size((limits.max_header_bytes * 4).max(8192));
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

/// One connection of a client's share, given back when dropped.
struct ClientShare {
    map: Arc<std::sync::Mutex<std::collections::HashMap<std::net::IpAddr, usize>>>,
    ip: std::net::IpAddr,
}

impl ClientShare {
    fn take(
        map: &Arc<std::sync::Mutex<std::collections::HashMap<std::net::IpAddr, usize>>>,
        ip: std::net::IpAddr,
        max: usize,
    ) -> Option<ClientShare> {
        let mut m = map.lock().unwrap_or_else(|p| p.into_inner());
        let n = m.entry(ip).or_insert(0);
        if *n >= max.max(1) {
            return None;
        }
        *n += 1;
        Some(ClientShare {
            map: map.clone(),
            ip,
        })
    }
}

impl Drop for ClientShare {
    fn drop(&mut self) {
        let mut m = self.map.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = m.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                m.remove(&self.ip);
            }
        }
    }
}
