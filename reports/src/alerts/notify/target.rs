//! Where alerts go: a target URL with its payload preset (`slack+`, `github+`), its
//! credentials, and the redacted form every output prints.

use crate::alerts::notify::NotifyError;
use perfdb_ingest::hash::sha256_hex;

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
    pub(super) host: String,
    /// The TLS server name, for `https://`.
    pub(super) tls: Option<String>,
    pub(super) preset: Preset,
    /// Path and query, as sent.
    pub(super) path: String,
    /// `Basic ...` from the URL's userinfo.
    pub(super) auth: Option<String>,
    /// The URL as printed and stored.
    pub(super) shown: String,
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
pub(super) fn secret_like(seg: &str) -> bool {
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
pub(super) fn authority_end(rest: &str) -> usize {
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

pub(super) fn percent_decode(s: &str) -> String {
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

pub(super) fn base64(bytes: &[u8]) -> String {
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
