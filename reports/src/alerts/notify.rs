//! Delivering alerts (`perfdb detect --notify URL`): each active alert is POSTed once to
//! each target as JSON, with retries and backoff.
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

use crate::alerts::{self, AlertView};
use crate::db::{Db, DbError};
use perfdb_ingest::hash::sha256_hex;
use perfdb_ingest::model::{AlertStatus, Delivery};
use perfdb_ingest::warehouse::Warehouse;
use serde::Serialize;
use std::io::{Read, Write};
use std::time::{Duration, Instant};

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

/// What a target's body looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    /// The alert as JSON, plus `text` (docs/alerts.md).
    Json,
    /// A Slack incoming webhook: `text` and `blocks`.
    Slack,
    /// A GitHub issue or pull-request comment: `{"body": markdown}`, Bearer token.
    GitHub,
}

/// The environment variable `github+` targets read their token from.
pub const GITHUB_TOKEN_VAR: &str = "GITHUB_TOKEN";
/// The environment variable naming a PEM file of extra CA certificates for https.
pub const CA_FILE_VAR: &str = "PERFDB_CA_FILE";

/// A delivery target, parsed.
#[derive(Clone)]
pub struct Target {
    /// `host:port`.
    host: String,
    /// The TLS server name, for `https://`.
    tls: Option<String>,
    preset: Preset,
    /// Path and query, as sent.
    path: String,
    /// `Basic ...` from the URL's userinfo.
    auth: Option<String>,
    /// The URL as printed and stored.
    shown: String,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown)
    }
}

impl Target {
    /// `[slack+|github+]http[s]://[user[:password]@]host[:port][/path][?query]`.
    pub fn parse(url: &str) -> Result<Target, NotifyError> {
        let bad = |why| NotifyError::BadTarget(redact(url), why);
        let (preset, plain) = if let Some(u) = url.strip_prefix("slack+") {
            (Preset::Slack, u)
        } else if let Some(u) = url.strip_prefix("github+") {
            (Preset::GitHub, u)
        } else {
            (Preset::Json, url)
        };
        let (tls, rest) = match (
            plain.strip_prefix("https://"),
            plain.strip_prefix("http://"),
        ) {
            (Some(r), _) => (true, r),
            (None, Some(r)) => (false, r),
            _ => {
                return Err(bad(
                    "expected http:// or https:// (with slack+ or github+ for those payloads)",
                ))
            }
        };
        let end = authority_end(rest);
        let (authority, path) = match rest.as_bytes().get(end) {
            Some(b'/') => (&rest[..end], rest[end..].to_string()),
            Some(_) => (&rest[..end], format!("/{}", &rest[end..])),
            None => (rest, "/".to_string()),
        };
        let (userinfo, hostport) = match authority.rfind('@') {
            Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
            None => (None, authority),
        };
        if hostport.is_empty() {
            return Err(bad("no host"));
        }
        if path.contains(['\r', '\n', ' ']) || hostport.contains(['\r', '\n', ' ', '/']) {
            return Err(bad("spaces and line breaks are not allowed in a URL"));
        }
        // `[v6]:port`, `[v6]`, `name:port`, `name`.
        let (name, port) = match hostport.strip_prefix('[') {
            Some(v6) => match v6.split_once(']') {
                Some((_, rest)) => (
                    &hostport[..v6.len() - rest.len() + 1],
                    rest.strip_prefix(':'),
                ),
                None => return Err(bad("an IPv6 address needs its closing ']'")),
            },
            None => match hostport.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (hostport, None),
            },
        };
        if name.is_empty() || port.is_some_and(|p| p.parse::<u16>().is_err()) {
            return Err(bad(
                "expected HOST or HOST:PORT (a port number up to 65535)",
            ));
        }
        let host = format!("{name}:{}", port.unwrap_or(if tls { "443" } else { "80" }));
        let mut auth = userinfo.map(|u| {
            let (user, pass) = u.split_once(':').unwrap_or((u, ""));
            let plain = format!("{}:{}", percent_decode(user), percent_decode(pass));
            format!("Basic {}", base64(plain.as_bytes()))
        });
        if preset == Preset::GitHub {
            let token = std::env::var(GITHUB_TOKEN_VAR)
                .ok()
                .filter(|t| !t.trim().is_empty())
                .ok_or_else(|| bad("github+ targets need a token in $GITHUB_TOKEN"))?;
            if !path.contains("/issues/") || !path.ends_with("/comments") {
                return Err(bad(
                    "a github+ target is an issue's comments: https://api.github.com/repos/OWNER/REPO/issues/N/comments",
                ));
            }
            auth = Some(format!("Bearer {}", token.trim()));
        }
        Ok(Target {
            tls: tls.then(|| {
                name.trim_start_matches('[')
                    .trim_end_matches(']')
                    .to_string()
            }),
            preset,
            host,
            path,
            auth,
            shown: redact(url),
        })
    }

    /// The URL as printed and stored (see the module docs).
    pub fn shown(&self) -> &str {
        &self.shown
    }
}

/// Every target, or the first that cannot be used: called before anything is stored.
pub fn parse_targets(urls: &[String]) -> Result<Vec<Target>, NotifyError> {
    urls.iter().map(|u| Target::parse(u)).collect()
}

/// A path segment that looks like a token: long, or mixing letters and digits.
fn secret_like(seg: &str) -> bool {
    let letters = seg.chars().any(|c| c.is_ascii_alphabetic());
    let digits = seg.chars().any(|c| c.is_ascii_digit());
    seg.len() >= 24 || (seg.len() >= 8 && letters && digits)
}

/// The URL with its password, query values and token-like path segments as `***`, and
/// a short hash of the whole when anything was hidden.
/// Where the authority of `rest` (a URL after its `scheme://`) ends: at the first `/`,
/// `?` or `#` after the userinfo. A password that holds an unencoded `/`, `?` or `#`
/// (`user:pa/ss@host`, which a browser would misread) still belongs to the userinfo:
/// when the text before the first of those is `user:...` with no `@` (not `host:port`),
/// the userinfo runs to the last `@` that a host follows. So the password is sent as
/// given and never printed.
fn authority_end(rest: &str) -> usize {
    let first = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let head = &rest[..first];
    let cut_password = !head.contains('@')
        && head
            .split_once(':')
            .is_some_and(|(_, p)| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()));
    if cut_password {
        let host_after = |at: usize| {
            let tail = &rest[at + 1..];
            let host = &tail[..tail.find(['/', '?', '#']).unwrap_or(tail.len())];
            (!host.is_empty()
                && host
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-.:[]_".contains(&b)))
            .then_some(at + 1 + host.len())
        };
        if let Some(end) = rest
            .match_indices('@')
            .map(|(i, _)| i)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .find_map(host_after)
        {
            return end;
        }
    }
    first
}

pub fn redact(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let (authority, tail) = rest.split_at(authority_end(rest));
    let authority = match authority.rfind('@') {
        Some(i) => {
            let user = authority[..i].split(':').next().unwrap_or("");
            format!("{user}:***@{}", &authority[i + 1..])
        }
        None => authority.to_string(),
    };
    let (path, query) = match tail.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (tail, None),
    };
    let path: Vec<&str> = path
        .split('/')
        .map(|seg| if secret_like(seg) { "***" } else { seg })
        .collect();
    let mut out = format!(
        "{scheme}{}{authority}{}",
        if scheme.is_empty() { "" } else { "://" },
        path.join("/")
    );
    if let Some(q) = query {
        let q: Vec<String> = q
            .split('&')
            .map(|kv| match kv.split_once('=') {
                Some((k, _)) => format!("{k}=***"),
                None => kv.to_string(),
            })
            .collect();
        out.push('?');
        out.push_str(&q.join("&"));
    }
    if out != url {
        out.push_str(&format!(" #{}", &sha256_hex(url.as_bytes())[..8]));
    }
    out
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 3 <= b.len() {
            let hex = std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("");
            if let Ok(v) = u8::from_str_radix(hex, 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.len();
        let v = (chunk[0] as u32) << 16
            | (*chunk.get(1).unwrap_or(&0) as u32) << 8
            | *chunk.get(2).unwrap_or(&0) as u32;
        for k in 0..4 {
            if k <= n {
                out.push(A[(v >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// What a delivery round did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Delivered {
    /// (alert id, target) delivered now.
    pub sent: Vec<(String, String)>,
    /// (alert id, target, last error) that failed every attempt: tried again next run.
    pub failed: Vec<(String, String, String)>,
    /// (alert id, target) another run holds a claim on (it is delivering them).
    pub claimed_elsewhere: Vec<(String, String)>,
}

/// The body of one alert for a target's preset.
pub fn body_for(preset: Preset, a: &AlertView) -> serde_json::Value {
    let plain = payload(a);
    let text = plain["text"].as_str().unwrap_or_default().to_string();
    match preset {
        Preset::Json => plain,
        Preset::Slack => serde_json::json!({
            "text": text,
            "blocks": [
                {"type": "section", "text": {"type": "mrkdwn", "text": format!(
                    "*perfdb alert `{}`* ({}): {} {} `{}` on {}\n{}",
                    a.id, a.status, a.table, a.variant, a.key_text, a.machine, text
                )}},
                {"type": "context", "elements": [{"type": "mrkdwn", "text": format!(
                    "label {} · first bad {} · last good {} · `perfdb alerts show {}`",
                    a.label, a.first_bad_commit, a.last_good_commit, a.id
                )}]}
            ]
        }),
        Preset::GitHub => serde_json::json!({
            "body": format!(
                "### perfdb alert `{}` ({})\n\n{}\n\n| | |\n|---|---|\n| kernel | {} {} |\n| shape | {} |\n| machine | {} |\n| first bad | {} (last good {}) |\n| change | {} |\n\n`perfdb alerts show {}` says how to confirm it.",
                a.id, a.status, text, a.table, a.variant, a.key_text, a.machine,
                a.first_bad_commit, a.last_good_commit, a.change_text(), a.id
            )
        }),
    }
}

/// The JSON body of one alert.
pub fn payload(a: &AlertView) -> serde_json::Value {
    let mut v = serde_json::to_value(a).expect("alert serialises");
    let text = match a.kind {
        crate::alerts::AlertKind::Regression => format!(
            "perfdb: {} {} {} on {} regressed at {} (last good {}): {} {} [{}]",
            a.table,
            a.variant,
            a.key_text,
            a.machine,
            a.first_bad_commit,
            a.last_good_commit,
            a.metrics.join("/"),
            a.change_text(),
            a.id
        ),
        crate::alerts::AlertKind::Stale => format!(
            "perfdb: {} {} {} on {} stopped reporting after {} ({}) [{}]",
            a.table,
            a.variant,
            a.key_text,
            a.machine,
            a.last_good_commit,
            a.change_text(),
            a.id
        ),
    };
    v["text"] = serde_json::Value::String(text);
    v
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
    label: &str,
    targets: &[Target],
    timeout: Duration,
) -> Result<Delivered, NotifyError> {
    let db = Db::open(root)?;
    let alerts: Vec<AlertView> = alerts::list(&db, Some(AlertStatus::Active))?
        .into_iter()
        .filter(|a| a.label == label)
        .collect();
    let wh = Warehouse::new(root);
    let mut wanted = Vec::new();
    for t in targets {
        for a in &alerts {
            wanted.push((a.id.clone(), t.shown.clone()));
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
                let a = alerts
                    .iter()
                    .find(|a| a.id == pair.0)
                    .expect("a wanted alert");
                let key = format!("{}-{}", a.id, &sha256_hex(t.shown.as_bytes())[..8]);
                let (status, attempts, err) =
                    match post_with_retries(t, &body_for(t.preset, a), &key, timeout) {
                        Ok((status, attempts)) => (status as i32, attempts, None),
                        Err((status, e)) => (status, ATTEMPTS, Some(e)),
                    };
                wh.commit_delivery(&Delivery {
                    alert_id: a.id.clone(),
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

/// One HTTP/1.1 POST of `body` as JSON within `timeout` from connect to the end of the
/// status line; the response status.
fn post(
    target: &Target,
    body: &serde_json::Value,
    key: &str,
    attempt: u32,
    timeout: Duration,
) -> Result<u16, String> {
    let deadline = Instant::now() + timeout;
    let left = || {
        deadline
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
            .ok_or_else(|| format!("no answer within {} s", timeout.as_secs_f64()))
    };
    let host = &target.host;
    let addr = std::net::ToSocketAddrs::to_socket_addrs(host)
        .map_err(|e| format!("{host}: {e}"))?
        .next()
        .ok_or_else(|| format!("{host}: no address"))?;
    let tcp = std::net::TcpStream::connect_timeout(&addr, left()?).map_err(|e| e.to_string())?;
    let mut s: Box<dyn ReadWrite> = match &target.tls {
        None => Box::new(Timed(tcp)),
        Some(name) => {
            let server = rustls_pki_types::ServerName::try_from(name.clone())
                .map_err(|e| format!("{name}: {e}"))?;
            let conn = rustls::ClientConnection::new(tls_config()?, server)
                .map_err(|e| format!("TLS: {e}"))?;
            Box::new(rustls::StreamOwned::new(conn, Timed(tcp)))
        }
    };
    let json = serde_json::to_vec(body).expect("payload serialises");
    let auth = target
        .auth
        .as_deref()
        .map(|a| format!("Authorization: {a}\r\n"))
        .unwrap_or_default();
    let accept = if target.preset == Preset::GitHub {
        "Accept: application/vnd.github+json\r\nX-GitHub-Api-Version: 2022-11-28\r\n"
    } else {
        ""
    };
    let head = format!(
        "POST {} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{auth}{accept}Idempotency-Key: {key}\r\nX-Perfdb-Attempt: {attempt}\r\nUser-Agent: perfdb\r\nConnection: close\r\n\r\n",
        target.path,
        json.len()
    );
    let mut out = head.into_bytes();
    out.extend_from_slice(&json);
    s.timeouts(left()?).map_err(|e| e.to_string())?;
    s.write_all(&out).map_err(tls_error)?;
    s.flush().map_err(tls_error)?;
    let mut resp = Vec::new();
    // The status line is all that matters; read until it is complete, within the
    // deadline however slowly it trickles.
    let mut buf = [0u8; 512];
    while !resp.windows(2).any(|w| w == b"\r\n") {
        s.timeouts(left()?).map_err(|e| e.to_string())?;
        let n = match s.read(&mut buf) {
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Err(format!("no answer within {} s", timeout.as_secs_f64()))
            }
            Err(e) => return Err(tls_error(e)),
        };
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

/// A connection, plain or TLS, whose socket timeouts can be set.
trait ReadWrite: Read + Write {
    fn timeouts(&mut self, left: Duration) -> std::io::Result<()>;
}

/// A TCP stream (the socket under TLS too).
struct Timed(std::net::TcpStream);

impl Read for Timed {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf)
    }
}

impl Write for Timed {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

impl ReadWrite for Timed {
    fn timeouts(&mut self, left: Duration) -> std::io::Result<()> {
        self.0.set_read_timeout(Some(left))?;
        self.0.set_write_timeout(Some(left))
    }
}

impl ReadWrite for rustls::StreamOwned<rustls::ClientConnection, Timed> {
    fn timeouts(&mut self, left: Duration) -> std::io::Result<()> {
        self.sock.timeouts(left)
    }
}

/// An I/O error, with rustls' reason when TLS failed (`invalid peer certificate:
/// UnknownIssuer`).
fn tls_error(e: std::io::Error) -> String {
    match e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
        Some(t) => format!("TLS: {t}"),
        None => e.to_string(),
    }
}

/// The https client's configuration, built once: Mozilla's roots (webpki-roots) and
/// the certificates of `PERFDB_CA_FILE`, when set.
fn tls_config() -> Result<std::sync::Arc<rustls::ClientConfig>, String> {
    static CONFIG: std::sync::OnceLock<Result<std::sync::Arc<rustls::ClientConfig>, String>> =
        std::sync::OnceLock::new();
    CONFIG
        .get_or_init(|| {
            use rustls_pki_types::pem::PemObject;
            let mut roots = rustls::RootCertStore::empty();
            roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
            if let Some(file) = std::env::var_os(CA_FILE_VAR).filter(|f| !f.is_empty()) {
                let shown = std::path::Path::new(&file).display().to_string();
                let certs: Vec<_> = rustls_pki_types::CertificateDer::pem_file_iter(&file)
                    .map_err(|e| format!("${CA_FILE_VAR} {shown}: {e}"))?
                    .collect::<Result<_, _>>()
                    .map_err(|e| format!("${CA_FILE_VAR} {shown}: {e}"))?;
                if certs.is_empty() {
                    return Err(format!("${CA_FILE_VAR} {shown}: no certificate in it"));
                }
                for c in certs {
                    roots
                        .add(c)
                        .map_err(|e| format!("${CA_FILE_VAR} {shown}: {e}"))?;
                }
            }
            let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
            let config = rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .map_err(|e| format!("TLS: {e}"))?
                .with_root_certificates(roots)
                .with_no_client_auth();
            Ok(std::sync::Arc::new(config))
        })
        .clone()
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
