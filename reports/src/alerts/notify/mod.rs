//! Delivering alerts (`perfdb detect --notify URL`): the active alerts are grouped as a
//! team triages them ([`crate::alerts::group`]: one change, one label and machine class,
//! overlapping commit ranges) and each group is POSTed once to each target as JSON, with
//! retries and backoff. A group is delivered under its id (its earliest active alert's),
//! so an alert that joins a delivered group is not sent again: the group's first message
//! told the team about the change.
//!
//! Once across machines: before sending, a run claims each (alert, target) with a
//! conditional commit to `alert_delivery` (a row with `http_status` 0); a pair that is
//! delivered, or claimed by another run within the lease, is left alone. The answer is
//! recorded at once (its status and attempts; a 2xx is delivered, anything else frees
//! the pair for the next run), so a restart never sends a delivered alert again.
//!
//! The payload (docs/alerts.md) is the alert as `perfdb alerts show --format json`
//! prints it, plus `text`, a one-line summary (the field Slack-compatible webhooks show).
//! Each request carries `Idempotency-Key` (the same on every retry of one alert to one
//! target) and `X-Perfdb-Attempt`. Targets are `http://` or `https://` URLs (rustls,
//! Mozilla's roots plus the certificates of `PERFDB_CA_FILE`), with Basic auth from
//! `user:password@`, and a payload preset by prefix: `slack+https://...` (an incoming
//! webhook: `text` and `blocks`), `github+https://.../issues/N/comments` (an issue
//! comment through the REST API, the token from `GITHUB_TOKEN`). A target is printed
//! and stored redacted: the password, query values and secret-looking path segments are
//! `***`, with a short hash of the whole URL to keep targets apart; a token read from the
//! environment is never printed or stored.

use crate::alerts::notify::http::post;
mod http;
mod payload;
mod target;

pub use payload::*;
pub use target::*;

use crate::alerts::{self, AlertView};
use crate::db::{Db, DbError};
use perfdb_ingest::hash::sha256_hex;
use perfdb_ingest::model::{AlertStatus, Delivery};
use perfdb_ingest::warehouse::Warehouse;
use serde::Serialize;
use std::sync::Arc;
use std::time::Duration;

/// Attempts per alert and target before giving up until the next run.
pub const ATTEMPTS: u32 = 4;
/// Wait before the second attempt; doubled before each further one.
pub const FIRST_BACKOFF: Duration = Duration::from_millis(200);
/// The default deadline of one attempt, from connect to the status line's last byte.
pub const TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub enum NotifyError {
    #[error(transparent)]
    Db(#[from] DbError),
    #[error(transparent)]
    Triage(#[from] alerts::TriageError),
    #[error("--notify {0}: {1}")]
    BadTarget(String, &'static str),
}

// A query or the warehouse failing is a reading error: one route for each, through
// [`DbError`].
impl From<duckdb::Error> for NotifyError {
    fn from(e: duckdb::Error) -> Self {
        NotifyError::Db(DbError::Query(e))
    }
}

impl From<perfdb_ingest::warehouse::WarehouseError> for NotifyError {
    fn from(e: perfdb_ingest::warehouse::WarehouseError) -> Self {
        NotifyError::Db(DbError::Warehouse(e))
    }
}

/// What a delivery round did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Delivered {
    /// (group id, target) delivered now (a group's id is its earliest alert's).
    pub sent: Vec<(String, String)>,
    /// (alert id, target, last error) that failed every attempt: tried again next run.
    pub failed: Vec<(String, String, String)>,
    /// (alert id, target) another run holds a claim on (it is delivering them).
    pub claimed_elsewhere: Vec<(String, String)>,
}

/// How long a claim holds: every attempt of one alert to its deadline, the waits
/// between them, and one more deadline to record the answer.
pub fn lease(timeout: Duration) -> Duration {
    let waits: Duration = (0..ATTEMPTS - 1).map(|k| FIRST_BACKOFF * 2u32.pow(k)).sum();
    timeout * (ATTEMPTS + 1) + waits
}

/// Deliver every active alert of `label` not yet delivered to each target, each attempt
/// within `timeout`.
pub fn deliver(
    root: &std::path::Path,
    devices: &Arc<perfdb_ingest::devices::Table>,
    label: &str,
    targets: &[Target],
    timeout: Duration,
) -> Result<Delivered, NotifyError> {
    let db = Db::open(root, devices)?;
    let active: Vec<AlertView> = alerts::list(&db, Some(AlertStatus::Active))?
        .into_iter()
        .filter(|a| a.label == label)
        .collect();
    let groups = alerts::group(&db, active)?;
    let wh = Warehouse::new(root);
    let mut wanted = Vec::new();
    for t in targets {
        for g in &groups {
            wanted.push((g.id.clone(), t.shown.clone()));
        }
    }
    let lease_us = lease(timeout).as_micros() as i64;
    let claimed = wh.claim_deliveries(&wanted, lease_us, now_us())?;
    let mut out = Delivered::default();
    for (pair, mine) in wanted.iter().zip(&claimed) {
        match mine {
            perfdb_ingest::warehouse::Claim::Delivered => {}
            perfdb_ingest::warehouse::Claim::Elsewhere => out.claimed_elsewhere.push(pair.clone()),
            perfdb_ingest::warehouse::Claim::Ours => {
                let t = targets
                    .iter()
                    .find(|t| t.shown == pair.1)
                    .expect("a wanted target");
                let g = groups
                    .iter()
                    .find(|g| g.id == pair.0)
                    .expect("a wanted group");
                // What changed underneath its step, read for the groups sent only.
                let underneath = crate::alerts::beside::underneath(&db, g.worst())?;
                let key = format!("{}-{}", g.id, &sha256_hex(t.shown.as_bytes())[..8]);
                let (status, attempts, err) = match post_with_retries(
                    t,
                    &body_for(t.preset, g, Some(&underneath)),
                    &key,
                    timeout,
                ) {
                    Ok((status, attempts)) => (status as i32, attempts, None),
                    Err((status, e)) => (status, ATTEMPTS, Some(e)),
                };
                wh.commit_delivery(&Delivery {
                    alert_id: g.id.clone(),
                    target: t.shown.clone(),
                    delivered_at_us: now_us(),
                    http_status: status,
                    attempts: attempts as i32,
                })?;
                match err {
                    None => out.sent.push(pair.clone()),
                    Some(e) => out.failed.push((pair.0.clone(), pair.1.clone(), e)),
                }
            }
        }
    }
    Ok(out)
}

/// Tell each target what `perfdb bisect` found for group `g` (its `result`): the group's
/// body with `bisect` and a text naming the culprit, one POST with retries a target (the
/// same `Idempotency-Key` on each retry). Returns the targets that failed, with why.
pub fn deliver_bisect(
    targets: &[Target],
    g: &alerts::AlertGroup,
    result: &crate::bisect::Bisected,
    timeout: Duration,
) -> Vec<(String, String)> {
    let mut failed = Vec::new();
    let text = serde_json::to_string(result).expect("a bisect record serialises");
    for t in targets {
        let key = format!(
            "bisect-{}-{}",
            g.id,
            &sha256_hex(format!("{}{text}", t.shown).as_bytes())[..8]
        );
        if let Err((_, e)) = post_with_retries(t, &bisect_body(t.preset, g, result), &key, timeout)
        {
            failed.push((t.shown.clone(), e));
        }
    }
    failed
}

fn now_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|t| t.as_micros() as i64)
        .unwrap_or(0)
}

/// POST, retrying with doubling backoff; the status and attempts of the success, or the
/// last status (-1: no answer) and error.
fn post_with_retries(
    target: &Target,
    body: &serde_json::Value,
    key: &str,
    timeout: Duration,
) -> Result<(u16, u32), (i32, String)> {
    let mut wait = FIRST_BACKOFF;
    let mut last = (-1, String::new());
    for attempt in 1..=ATTEMPTS {
        match post(target, body, key, attempt, timeout) {
            Ok(status) if (200..300).contains(&status) => return Ok((status, attempt)),
            Ok(status) => last = (status as i32, format!("HTTP {status}")),
            Err(e) => last = (-1, e),
        }
        if attempt < ATTEMPTS {
            std::thread::sleep(wait);
            wait *= 2;
        }
    }
    Err((last.0, format!("{} after {ATTEMPTS} attempts", last.1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets() {
        let t = Target::parse("http://127.0.0.1:9000/hook").unwrap();
        assert_eq!(
            (t.host.as_str(), t.path.as_str()),
            ("127.0.0.1:9000", "/hook")
        );
        assert_eq!(t.shown(), "http://127.0.0.1:9000/hook");
        let t = Target::parse("http://relay").unwrap();
        assert_eq!((t.host.as_str(), t.path.as_str()), ("relay:80", "/"));
        let t = Target::parse("http://relay?x=1").unwrap();
        assert_eq!(t.path, "/?x=1");
        let t = Target::parse("https://hooks.example.com/x").unwrap();
        assert_eq!(
            (t.host.as_str(), t.tls.as_deref(), t.preset),
            (
                "hooks.example.com:443",
                Some("hooks.example.com"),
                Preset::Json
            )
        );
        let t =
            Target::parse("slack+https://hooks.slack.com/services/T0/B0/abcdefghijklmnopqrstuvwx")
                .unwrap();
        assert_eq!(t.preset, Preset::Slack);
        assert!(
            !t.shown().contains("abcdefghijklmnopqrstuvwx"),
            "{}",
            t.shown()
        );
        for bad in [
            "ftp://hooks.example.com/x",
            "slack+ftp://x/",
            "http:///x",
            "http://host:port/x",
            "http://host:99999/",
            "http://a b/",
        ] {
            assert!(Target::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn userinfo_is_basic_auth_and_never_shown() {
        let t = Target::parse("http://ci:s3cr%40t@relay:8080/perf").unwrap();
        assert_eq!((t.host.as_str(), t.path.as_str()), ("relay:8080", "/perf"));
        // base64("ci:s3cr@t")
        assert_eq!(t.auth.as_deref(), Some("Basic Y2k6czNjckB0"));
        assert!(
            t.shown().starts_with("http://ci:***@relay:8080/perf #"),
            "{}",
            t.shown()
        );
        assert!(!format!("{t:?}").contains("s3cr"));
        let e = Target::parse("ftp://ci:hunter2@relay/x")
            .unwrap_err()
            .to_string();
        assert!(!e.contains("hunter2"), "{e}");
    }

    #[test]
    fn tokens_in_paths_and_queries_are_redacted() {
        let r = redact("http://relay/services/T024BE7LD/B0123ABCD/abcdefXYZ123456789?token=abc&v");
        assert!(
            r.starts_with("http://relay/services/***/***/***?token=***&v #"),
            "{r}"
        );
        assert_eq!(
            redact("http://relay:8080/perf/hook"),
            "http://relay:8080/perf/hook"
        );
        // Two secret URLs stay apart.
        assert_ne!(redact("http://r/x?k=1"), redact("http://r/x?k=2"));
    }

    #[test]
    fn a_password_with_an_unencoded_delimiter_is_never_shown() {
        for (url, shown) in [
            ("http://ci:pa?ss@relay/hook", "http://ci:***@relay/hook #"),
            (
                "http://ci:pa/ss@relay:8080/hook",
                "http://ci:***@relay:8080/hook #",
            ),
            (
                "https://ci:a#b/c?d@relay/hook?x=1",
                "https://ci:***@relay/hook?x=*** #",
            ),
        ] {
            let r = redact(url);
            assert!(r.starts_with(shown), "{url}: {r}");
            let t = Target::parse(url).unwrap();
            assert!(t.shown().starts_with(shown), "{}", t.shown());
            assert_eq!(
                t.host,
                format!(
                    "relay:{}",
                    if url.contains("8080") {
                        8080
                    } else if url.starts_with("https") {
                        443
                    } else {
                        80
                    }
                )
            );
            assert!(t.path.starts_with("/hook"), "{}", t.path);
            // The password as given, in the Authorization header.
            let pass = &url[url.find(':').unwrap() + 3..].split_once('@').unwrap().0[3..];
            assert_eq!(
                t.auth.as_deref(),
                Some(format!("Basic {}", base64(format!("ci:{pass}").as_bytes())).as_str())
            );
        }
        // A host with a port, an address in the query: no userinfo to find.
        assert_eq!(redact("http://relay:8080/hook"), "http://relay:8080/hook");
        assert!(redact("http://relay/hook?to=a@b.org").starts_with("http://relay/hook?to=*** #"));
        // A URL refused for another reason still hides the password.
        let e = Target::parse("http://ci:pa?ss@relay:99999/hook")
            .unwrap_err()
            .to_string();
        assert!(!e.contains("pa?ss") && !e.contains("ss@"), "{e}");
    }

    #[test]
    fn base64_pads() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foob"), "Zm9vYg==");
    }
}
