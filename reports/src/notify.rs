//! Delivering alerts (`perfdb detect --notify URL`): each open alert is POSTed once to
//! each target as JSON, with retries and backoff; a delivery the receiver acknowledged
//! (2xx) is recorded in the warehouse at once (`alert_delivery`), so a restart never
//! sends it again and an alert that could not be delivered is tried again next time.
//!
//! The payload (docs/alerts.md) is the alert as `perfdb alerts show --format json`
//! prints it, plus `text`, a one-line summary (the field Slack-compatible webhooks show).
//! Targets are plain `http://` URLs (a relay on the CI network); there is no TLS client
//! in perfdb.

use crate::db::{Db, DbError};
use crate::triage::{self, AlertView};
use perfdb_ingest::model::Delivery;
use perfdb_ingest::warehouse::Warehouse;
use serde::Serialize;
use std::io::{Read, Write};
use std::time::Duration;

/// Attempts per alert and target before giving up until the next run.
pub const ATTEMPTS: u32 = 4;
/// Wait before the second attempt; doubled before each further one.
pub const FIRST_BACKOFF: Duration = Duration::from_millis(200);
/// Connect, write and read timeout of one attempt.
pub const TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub enum NotifyError {
    #[error(transparent)]
    Db(#[from] DbError),
    #[error("query failed: {0}")]
    Query(#[from] duckdb::Error),
    #[error(transparent)]
    Triage(#[from] triage::TriageError),
    #[error(transparent)]
    Warehouse(#[from] perfdb_ingest::warehouse::WarehouseError),
    #[error("--notify {0}: only http://HOST[:PORT]/PATH targets are supported (no TLS client; use a relay)")]
    BadTarget(String),
}

/// What a delivery round did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Delivered {
    /// (alert id, target) delivered now.
    pub sent: Vec<(String, String)>,
    /// (alert id, target, last error) that failed every attempt: tried again next run.
    pub failed: Vec<(String, String, String)>,
}

/// The JSON body of one alert.
pub fn payload(a: &AlertView) -> serde_json::Value {
    let mut v = serde_json::to_value(a).expect("alert serialises");
    v["text"] = serde_json::Value::String(format!(
        "perfdb: {} {} {} on {} regressed at {} (last good {}): {} {:+.1}% [{}]",
        a.table,
        a.variant,
        a.key_text,
        a.machine,
        a.first_bad_commit,
        a.last_good_commit,
        a.metrics.join("/"),
        (a.ratio - 1.0) * 100.0,
        a.id
    ));
    v
}

/// Deliver every active alert of `label` not yet delivered to each target.
pub fn deliver(
    root: &std::path::Path,
    label: &str,
    targets: &[String],
) -> Result<Delivered, NotifyError> {
    for t in targets {
        parse_target(t)?;
    }
    let db = Db::open(root)?;
    let alerts: Vec<AlertView> = triage::list(&db, Some("active"))?
        .into_iter()
        .filter(|a| a.label == label)
        .collect();
    let done = delivered(&db)?;
    let wh = Warehouse::new(root);
    let mut out = Delivered::default();
    for target in targets {
        for a in &alerts {
            if done.contains(&(a.id.clone(), target.clone())) {
                continue;
            }
            match post_with_retries(target, &payload(a)) {
                Ok((status, attempts)) => {
                    wh.commit_delivery(&Delivery {
                        alert_id: a.id.clone(),
                        target: target.clone(),
                        delivered_at_us: now_us(),
                        http_status: status as i32,
                        attempts: attempts as i32,
                    })?;
                    out.sent.push((a.id.clone(), target.clone()));
                }
                Err(e) => out.failed.push((a.id.clone(), target.clone(), e)),
            }
        }
    }
    Ok(out)
}

fn now_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|t| t.as_micros() as i64)
        .unwrap_or(0)
}

fn delivered(db: &Db) -> Result<std::collections::HashSet<(String, String)>, NotifyError> {
    let mut stmt = db
        .conn
        .prepare("SELECT alert_id, target FROM alert_delivery")?;
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}

/// `http://host:port/path` -> ("host:port", "/path").
fn parse_target(url: &str) -> Result<(String, String), NotifyError> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| NotifyError::BadTarget(url.to_string()))?;
    let (host, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    if host.is_empty() {
        return Err(NotifyError::BadTarget(url.to_string()));
    }
    let host = if host.contains(':') {
        host.to_string()
    } else {
        format!("{host}:80")
    };
    Ok((host, path.to_string()))
}

/// POST, retrying with doubling backoff; the status and attempts of the success, or the
/// last error.
fn post_with_retries(target: &str, body: &serde_json::Value) -> Result<(u16, u32), String> {
    let mut wait = FIRST_BACKOFF;
    let mut last = String::new();
    for attempt in 1..=ATTEMPTS {
        match post(target, body) {
            Ok(status) if (200..300).contains(&status) => return Ok((status, attempt)),
            Ok(status) => last = format!("HTTP {status}"),
            Err(e) => last = e,
        }
        if attempt < ATTEMPTS {
            std::thread::sleep(wait);
            wait *= 2;
        }
    }
    Err(format!("{last} after {ATTEMPTS} attempts"))
}

/// One HTTP/1.1 POST of `body` as JSON; the response status.
fn post(target: &str, body: &serde_json::Value) -> Result<u16, String> {
    let (host, path) = parse_target(target).map_err(|e| e.to_string())?;
    let addr = std::net::ToSocketAddrs::to_socket_addrs(&host)
        .map_err(|e| format!("{host}: {e}"))?
        .next()
        .ok_or_else(|| format!("{host}: no address"))?;
    let mut s = std::net::TcpStream::connect_timeout(&addr, TIMEOUT).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(TIMEOUT))
        .map_err(|e| e.to_string())?;
    s.set_write_timeout(Some(TIMEOUT))
        .map_err(|e| e.to_string())?;
    let json = serde_json::to_vec(body).expect("payload serialises");
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nUser-Agent: perfdb\r\nConnection: close\r\n\r\n",
        json.len()
    );
    s.write_all(head.as_bytes()).map_err(|e| e.to_string())?;
    s.write_all(&json).map_err(|e| e.to_string())?;
    let mut resp = Vec::new();
    // The status line is all that matters; read until it is complete.
    let mut buf = [0u8; 512];
    while !resp.windows(2).any(|w| w == b"\r\n") {
        let n = s.read(&mut buf).map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        resp.extend_from_slice(&buf[..n]);
    }
    let line = String::from_utf8_lossy(&resp);
    line.split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| {
            format!(
                "not an HTTP response: {:?}",
                line.lines().next().unwrap_or("")
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets() {
        assert_eq!(
            parse_target("http://127.0.0.1:9000/hook").unwrap(),
            ("127.0.0.1:9000".into(), "/hook".into())
        );
        assert_eq!(
            parse_target("http://relay").unwrap(),
            ("relay:80".into(), "/".into())
        );
        assert!(parse_target("https://hooks.slack.com/x").is_err());
        assert!(parse_target("http:///x").is_err());
    }
}
