//! What every request passes before a route, and every response after it: its `Host`
//! one the server answers to (when it keeps a list: DNS rebinding), query values
//! checked (a NUL byte, a control character or bytes that are not UTF-8 answer `400`
//! naming the parameter, never reaching a query), and the security headers: a
//! Content-Security-Policy without inline script (the page's one `<style>` allowed by
//! its hash), no MIME sniffing, no framing, no referrer.

use crate::AppError;
use axum::extract::Request;
use axum::http::{header, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The script every page loads (`/app.js`): submits a picker's form when it changes.
/// Pages carry no inline script or handler, so the policy can forbid them.
pub const APP_JS: &str = "document.querySelectorAll('select[data-submit]').forEach(function (s) {\n  s.addEventListener('change', function () { s.form.submit(); });\n});\n";

pub async fn app_js() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (header::CACHE_CONTROL, "max-age=3600"),
        ],
        APP_JS,
    )
        .into_response()
}

fn policy() -> &'static HeaderValue {
    static POLICY: std::sync::OnceLock<HeaderValue> = std::sync::OnceLock::new();
    POLICY.get_or_init(|| {
        use base64::Engine;
        use sha2::Digest;
        let hash = base64::engine::general_purpose::STANDARD
            .encode(sha2::Sha256::digest(crate::page::STYLE.as_bytes()));
        HeaderValue::from_str(&format!(
            "default-src 'none'; script-src 'self'; style-src 'sha256-{hash}'; img-src 'self' data:; \
             connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        ))
        .expect("an ASCII header value")
    })
}

/// The host of a `Host` header value (RFC 3986's `host [ ":" port ]`), parsed and then
/// compared: an IPv6 address in brackets (`[::1]`, written canonically), an IPv4 address,
/// or a DNS name (letters, digits, `-` and `.`; lower case, one final dot dropped); the
/// port, when given, digits only. `None` for anything else: `[::1].attacker.example`,
/// `[::1]evil.example:80` and `127.0.0.1:8080.attacker.example` are no host at all,
/// never a prefix of one the server answers to.
pub fn host_name(value: &str) -> Option<String> {
    let v = value.trim().to_ascii_lowercase();
    let port_ok = |p: &str| p.is_empty() || (p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()));
    if let Some(rest) = v.strip_prefix('[') {
        let (addr, after) = rest.split_once(']')?;
        let ip: std::net::Ipv6Addr = addr.parse().ok()?;
        return match after.strip_prefix(':') {
            Some(p) if port_ok(p) => Some(format!("[{ip}]")),
            None if after.is_empty() => Some(format!("[{ip}]")),
            _ => None,
        };
    }
    let (name, port) = v.split_once(':').unwrap_or((&v, ""));
    if !port_ok(port) || name.is_empty() {
        return None;
    }
    if let Ok(ip) = name.parse::<std::net::Ipv4Addr>() {
        return Some(ip.to_string());
    }
    let name = name.strip_suffix('.').unwrap_or(name);
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    };
    (name.len() <= 253 && name.split('.').all(label_ok)).then(|| name.to_string())
}

/// The `Host` check: a request naming a host the server does not answer to is refused
/// (421) before any route runs. A request without `Host` (HTTP/1.0 tools) passes: a
/// browser always sends one.
pub async fn host_layer(
    axum::extract::State(s): axum::extract::State<crate::AppState>,
    req: Request,
    next: Next,
) -> Response {
    if let (Some(allowed), Some(host)) = (&s.allowed_hosts, req.headers().get(header::HOST)) {
        let raw = host.to_str().unwrap_or("");
        let name = host_name(raw);
        if !name.as_ref().is_some_and(|n| allowed.contains(n)) {
            let shown: String = name
                .as_deref()
                .unwrap_or(raw)
                .chars()
                .filter(|c| !c.is_control())
                .take(80)
                .collect();
            let e = AppError {
                status: axum::http::StatusCode::MISDIRECTED_REQUEST,
                json: false,
                retry_after: None,
                message: format!(
                    "this server does not answer to the host name '{shown}' (it answers to {}); \
                     start it with `perfdb serve --host {shown}` to allow it",
                    allowed.join(", ")
                ),
            };
            let json = req.uri().path().starts_with("/api/");
            let mut res = (if json { e.json() } else { e }).into_response();
            secure(res.headers_mut());
            return res;
        }
    }
    next.run(req).await
}

/// The middleware: check the query, run the route, add the headers.
pub async fn layer(req: Request, next: Next) -> Response {
    let json = req.uri().path().starts_with("/api/");
    let mut res = match req.uri().query().map(check_query).unwrap_or(Ok(())) {
        Ok(()) => next.run(req).await,
        Err(message) => {
            let e = AppError::bad_request(message);
            (if json { e.json() } else { e }).into_response()
        }
    };
    secure(res.headers_mut());
    res
}

/// The guard of the routes that read no query string: any parameter is a `400` naming
/// it (a script's `?status=active` on a route that does not filter must not be answered
/// as if it had).
pub async fn no_query(req: Request, next: Next) -> Response {
    let first = req
        .uri()
        .query()
        .and_then(|q| q.split('&').find(|p| !p.is_empty()))
        .map(|p| {
            let name = decode(p.split_once('=').map_or(p, |(n, _)| n));
            String::from_utf8_lossy(&name)
                .chars()
                .filter(|c| !c.is_control())
                .take(40)
                .collect::<String>()
        });
    match first {
        None => next.run(req).await,
        Some(name) => {
            let e = AppError::bad_request(format!(
                "query: unknown field `{name}`: {} takes no query parameters",
                req.uri().path()
            ));
            let json = req.uri().path().starts_with("/api/");
            (if json { e.json() } else { e }).into_response()
        }
    }
}

/// The security headers every answer carries (docs/security.md), errors and refusals
/// made before any route runs (421, 431) included.
pub fn secure(h: &mut axum::http::HeaderMap) {
    h.insert(header::CONTENT_SECURITY_POLICY, policy().clone());
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
}

/// Every name and value of a query string, percent-decoded: an error naming the
/// parameter whose bytes are not UTF-8 or hold a control character.
pub fn check_query(query: &str) -> Result<(), String> {
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let name_bytes = decode(name);
        let shown = String::from_utf8_lossy(&name_bytes);
        let shown: String = shown.chars().filter(|c| !c.is_control()).take(40).collect();
        for (what, bytes) in [("name", &name_bytes), ("value", &decode(value))] {
            let Ok(text) = std::str::from_utf8(bytes) else {
                return Err(format!(
                    "query parameter `{shown}`: its {what} is not UTF-8 text"
                ));
            };
            if let Some(c) = text.chars().find(|c| c.is_control() && *c != '\t') {
                let c = match c {
                    '\0' => "a NUL byte".to_string(),
                    c => format!("the control character U+{:04X}", c as u32),
                };
                return Err(format!("query parameter `{shown}`: its {what} holds {c}"));
            }
        }
    }
    Ok(())
}

/// `application/x-www-form-urlencoded` decoding to bytes: `+` is a space, `%XX` a byte
/// (a `%` not followed by two hex digits stays as it is, as browsers and axum read it).
fn decode(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
        match b[i] {
            b'+' => out.push(b' '),
            b'%' => {
                match (
                    b.get(i + 1).and_then(|&c| hex(c)),
                    b.get(i + 2).and_then(|&c| hex(c)),
                ) {
                    (Some(h), Some(l)) => {
                        out.push(h << 4 | l);
                        i += 3;
                        continue;
                    }
                    _ => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_values_are_named_and_good_ones_pass() {
        assert!(check_query("base=main&head=pr%2F12&q=a+b&x=%E2%9C%93&t=%").is_ok());
        assert_eq!(
            check_query("base=%00").unwrap_err(),
            "query parameter `base`: its value holds a NUL byte"
        );
        assert_eq!(
            check_query("a=1&head=x%0Ay").unwrap_err(),
            "query parameter `head`: its value holds the control character U+000A"
        );
        assert_eq!(
            check_query("key=%FF%FE").unwrap_err(),
            "query parameter `key`: its value is not UTF-8 text"
        );
        assert_eq!(
            check_query("ba%00se=1").unwrap_err(),
            "query parameter `base`: its name holds a NUL byte"
        );
        assert_eq!(decode("a%2"), b"a%2");
        let host = |v: &str| host_name(v);
        assert_eq!(host("LocalHost:8080").as_deref(), Some("localhost"));
        assert_eq!(host("localhost.").as_deref(), Some("localhost"));
        assert_eq!(host("127.0.0.1:").as_deref(), Some("127.0.0.1"));
        assert_eq!(host("[::1]:8080").as_deref(), Some("[::1]"));
        assert_eq!(host("[0:0:0:0:0:0:0:1]").as_deref(), Some("[::1]"));
        assert_eq!(host("evil.example").as_deref(), Some("evil.example"));
        for bad in [
            "127.0.0.1:8080.attacker.example",
            "[::1].attacker.example",
            "[::1]evil.example:80",
            "[::1]:80:80",
            "[evil.example]",
            "[::1",
            "local host",
            "localhost:http",
            "a..b",
            "-x.example",
            "::1",
            "",
            "127.0.0.1:123456",
        ] {
            assert_eq!(host(bad), None, "{bad}");
        }
        assert_eq!(decode("%41%4a+%zz"), b"AJ %zz");
    }
}
