//! One POST over http or https (rustls, Mozilla's roots plus `PERFDB_CA_FILE`), with
//! a deadline on every read and write.

use crate::alerts::notify::target::Preset;
use crate::alerts::notify::target::Target;
use crate::alerts::notify::target::CA_FILE_VAR;
use std::io::{Read, Write};
use std::time::{Duration, Instant};

/// One HTTP/1.1 POST of `body` as JSON within `timeout` from connect to the end of the
/// status line; the response status.
pub(super) fn post(
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
pub(super) trait ReadWrite: Read + Write {
    fn timeouts(&mut self, left: Duration) -> std::io::Result<()>;
}

/// A TCP stream (the socket under TLS too).
pub(super) struct Timed(std::net::TcpStream);

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
pub(super) fn tls_error(e: std::io::Error) -> String {
    match e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
        Some(t) => format!("TLS: {t}"),
        None => e.to_string(),
    }
}

/// The https client's configuration, built once: Mozilla's roots (webpki-roots) and
/// the certificates of `PERFDB_CA_FILE`, when set.
pub(super) fn tls_config() -> Result<std::sync::Arc<rustls::ClientConfig>, String> {
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
