//! The server against hostile clients, over a real loopback socket: hostile query values
//! on every route and parameter, oversized and malformed requests, and slow clients
//! (bounded in count and time). What must hold: no 5xx, no hang, bad values answered
//! `400` naming the parameter, the security headers on every answer, and the server
//! still answering a good request at once while slow clients hold connections.

use perfdb_web::server::{serve, ServerLimits};
use perfdb_web::{app, AppState};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use crate::common::ingest;

/// A server on an ephemeral loopback port, with short timeouts for the slow-client cases.
fn start(limits: ServerLimits) -> (SocketAddr, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("wh");
    ingest(&root, "h200-gemm/ab/aiter/base", "base", Some("b4se"));
    ingest(&root, "h200-gemm/ab/aiter/head", "head", Some("he4d"));
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap()).unwrap();
            serve(
                listener,
                app(AppState::new(&root)
                    .with_triage()
                    .with_hosts(["perf.internal".to_string()])),
                limits,
                std::future::pending(),
            )
            .await
        })
    });
    (rx.recv().unwrap(), dir)
}

struct Answer {
    status: u16,
    head: String,
    body: String,
}

/// Send raw request bytes and read the whole answer (the server closes after it).
fn raw(addr: SocketAddr, request: &[u8]) -> Answer {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.set_write_timeout(Some(Duration::from_secs(20))).unwrap();
    // The server may answer and close before reading a large request to its end.
    let _ = s.write_all(request);
    let mut out = Vec::new();
    let started = Instant::now();
    if let Err(e) = s.read_to_end(&mut out) {
        assert!(
            !matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ),
            "no answer within 20 s (hang) to {:?}",
            String::from_utf8_lossy(&request[..request.len().min(120)])
        );
    }
    assert!(started.elapsed() < Duration::from_secs(20));
    let text = String::from_utf8_lossy(&out).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Answer {
        status,
        head: head.to_string(),
        body: body.to_string(),
    }
}

fn get(addr: SocketAddr, target: &str) -> Answer {
    raw(
        addr,
        format!("GET {target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").as_bytes(),
    )
}

/// Every route with the query parameters it reads.
const ROUTES: &[(&str, &[&str])] = &[
    (
        "/",
        &["label", "machine", "commits", "table", "variant", "metric"],
    ),
    (
        "/api/overview",
        &["label", "machine", "commits", "table", "variant", "metric"],
    ),
    ("/runs", &["limit", "offset"]),
    ("/api/runs", &["limit", "offset"]),
    ("/chart", &["table", "metric", "runs", "machine"]),
    ("/chart.svg", &["table", "metric", "runs", "machine"]),
    ("/api/chart", &["table", "metric", "runs", "machine"]),
    (
        "/history",
        &["table", "variant", "key", "metric", "label", "machine"],
    ),
    (
        "/api/history",
        &["table", "variant", "key", "metric", "label", "machine"],
    ),
    (
        "/compare",
        &[
            "saved",
            "base",
            "head",
            "control",
            "threshold",
            "alpha",
            "control_tol",
            "reduce",
            "test",
            "filters",
            "overrides",
            "allow_missing",
            "strict_numerics",
            "mann_whitney_p",
            "baseline_window",
        ],
    ),
    (
        "/api/compare",
        &[
            "saved",
            "base",
            "head",
            "control",
            "threshold",
            "alpha",
            "reduce",
            "test",
            "filters",
            "overrides",
            "baseline_window",
        ],
    ),
    ("/alerts", &["status", "limit", "offset"]),
    ("/api/alerts", &["status", "limit", "offset"]),
    ("/api/alerts/detected", &["limit", "offset"]),
];

/// Query values (already percent-encoded) a hostile or careless client sends.
const HOSTILE: &[&str] = &[
    "%00",
    "a%00b",
    "%FF%FE",
    "%C0%AF",
    "%0D%0ASet-Cookie:%20x=1",
    "%1B%5B31m",
    "'%20OR%201=1%20--",
    "x';%20COPY%20(SELECT%201)%20TO%20'%2Ftmp%2Fpwn.csv';%20--",
    "read_text('%2Fetc%2Fpasswd')",
    "..%2F..%2F..%2Fetc%2Fpasswd",
    "%3Cscript%3Ealert(1)%3C%2Fscript%3E",
    "%22%3E%3Cimg%20src=x%3E",
    "-1",
    "1e309",
    "NaN",
    "-0",
    "99999999999999999999999999",
    "",
    "%25",
    "%",
    "%E2%9C%93%F0%9F%94%A5",
    "%7B%22a%22:%5B1,2%5D%7D",
    "base,head,base",
    "a=b=c",
];

#[test]
fn hostile_query_values_get_no_5xx_and_nul_is_a_400_naming_the_parameter() {
    let (addr, _dir) = start(ServerLimits::default());
    let long = "x".repeat(20_000);
    let mut n = 0;
    let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
    for (path, params) in ROUTES {
        for param in *params {
            for value in HOSTILE.iter().copied().chain([long.as_str()]) {
                // The other parameters valid, so each value reaches the code reading it.
                let valid = match *path {
                    "/compare" | "/api/compare" => "base=base&head=head&",
                    "/chart" | "/chart.svg" | "/api/chart" => {
                        "table=gemm_a16w16&metric=throughput&runs=base&"
                    }
                    "/history" | "/api/history" => "table=gemm_a16w16&metric=throughput&",
                    _ => "",
                };
                let a = get(addr, &format!("{path}?{valid}{param}={value}"));
                n += 1;
                *statuses.entry(a.status).or_default() += 1;
                assert!(
                    (200..500).contains(&a.status),
                    "{path}?{param}={value}: {} {}",
                    a.status,
                    &a.body[..a.body.len().min(300)]
                );
                if value.contains("%00") || value.starts_with("%FF") || value.starts_with("%0D") {
                    assert_eq!(a.status, 400, "{path}?{param}={value}");
                    assert!(
                        a.body.contains(&format!("query parameter `{param}`")),
                        "{path}?{param}={value}: {}",
                        a.body
                    );
                }
                for h in [
                    "content-security-policy: default-src 'none'; script-src 'self';",
                    "x-content-type-options: nosniff",
                    "x-frame-options: DENY",
                ] {
                    assert!(
                        a.head
                            .to_ascii_lowercase()
                            .contains(&h.to_ascii_lowercase()),
                        "{path}: {h} missing in {}",
                        a.head
                    );
                }
            }
        }
    }
    assert!(!std::path::Path::new("/tmp/pwn.csv").exists());
    eprintln!("{n} hostile requests: statuses {statuses:?}");
    assert!(n > 1000);
}

#[test]
fn oversized_and_malformed_requests_are_refused_without_5xx() {
    let (addr, _dir) = start(ServerLimits::default());
    let cases: Vec<(&str, Vec<u8>, &[u16])> = vec![
        (
            "a 100 KB header",
            format!(
                "GET / HTTP/1.1\r\nHost: localhost\r\nX-Big: {}\r\nConnection: close\r\n\r\n",
                "a".repeat(100_000)
            )
            .into_bytes(),
            &[431, 400, 0],
        ),
        (
            "200 headers",
            format!(
                "GET / HTTP/1.1\r\nHost: localhost\r\n{}Connection: close\r\n\r\n",
                (0..200).map(|i| format!("X-{i}: 1\r\n")).collect::<String>()
            )
            .into_bytes(),
            &[431, 400, 0],
        ),
        (
            "a 1 MB triage body",
            format!(
                "POST /alerts/a1/triage HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000000\r\nConnection: close\r\n\r\naction=ack&note={}",
                "n".repeat(999_984)
            )
            .into_bytes(),
            &[413, 403],
        ),
        ("a request line of garbage", b"\x00\x01\x02 / HTTP/1.1\r\n\r\n".to_vec(), &[400, 0]),
        ("no HTTP version", b"GET /\r\n\r\n".to_vec(), &[400, 0]),
        ("HTTP/9.9", b"GET / HTTP/9.9\r\nHost: localhost\r\n\r\n".to_vec(), &[400, 505, 0]),
        ("a bad Content-Length", b"POST /alerts/a/triage HTTP/1.1\r\nHost: localhost\r\nContent-Length: -5\r\n\r\n".to_vec(), &[400, 0]),
        ("an unknown method", b"BREW / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".to_vec(), &[405, 404]),
        ("a path with NUL", b"GET /%00 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".to_vec(), &[404, 400]),
        ("a 20 KB path", format!("GET /{} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", "p".repeat(20_000)).into_bytes(), &[404, 414, 400]),
        ("a query of 5,000 parameters", format!("GET /api/runs?{} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", (0..5000).map(|i| format!("p{i}=1&")).collect::<String>()).into_bytes(), &[400]),
    ];
    // Headers over the limit get perfdb's own 431, with the security headers.
    let big = raw(
        addr,
        format!(
            "GET / HTTP/1.1\r\nHost: localhost\r\nX-Big: {}\r\nConnection: close\r\n\r\n",
            "a".repeat(100_000)
        )
        .as_bytes(),
    );
    assert_eq!(big.status, 431, "{}", big.head);
    assert_secured(&big.head);
    for (what, request, allowed) in cases {
        let a = raw(addr, &request);
        // 0: the server closed the connection without an answer, which hyper does for
        // bytes that are not HTTP at all.
        assert!(
            allowed.contains(&a.status),
            "{what}: {} (allowed {allowed:?})\n{}",
            a.status,
            a.head
        );
    }
    // Still serving.
    assert_eq!(get(addr, "/api/runs").status, 200);
}

#[test]
fn slow_clients_are_cut_off_and_do_not_block_others() {
    let limits = ServerLimits {
        max_connections: 64,
        header_timeout: Duration::from_millis(800),
        connection_lifetime: Duration::from_secs(3),
        ..ServerLimits::default()
    };
    let (addr, _dir) = start(limits);
    // 40 clients that send half a request line and then nothing.
    let slow: Vec<TcpStream> = (0..40)
        .map(|_| {
            let mut s = TcpStream::connect(addr).unwrap();
            s.write_all(b"GET /api/runs HT").unwrap();
            s
        })
        .collect();
    // A good request is answered at once meanwhile.
    let t = Instant::now();
    assert_eq!(get(addr, "/api/runs").status, 200);
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    // Each slow client is closed after the header timeout (read returns 0 or an error,
    // within a bound), not kept open.
    let t = Instant::now();
    for mut s in slow {
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut buf = [0u8; 512];
        match s.read(&mut buf) {
            // Closed, or an error status (408) before closing.
            Ok(n) => assert!(
                n == 0 || buf[..n].starts_with(b"HTTP/1.1 4"),
                "{:?}",
                &buf[..n]
            ),
            Err(e) => assert!(
                !matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ),
                "a slow client was never cut off"
            ),
        }
    }
    assert!(t.elapsed() < Duration::from_secs(10));
    // An idle keep-alive client past the connection lifetime is closed too.
    let mut idle = TcpStream::connect(addr).unwrap();
    idle.write_all(b"GET /api/runs HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    idle.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let t = Instant::now();
    let mut all = Vec::new();
    let _ = idle.read_to_end(&mut all);
    assert!(String::from_utf8_lossy(&all).starts_with("HTTP/1.1 200"));
    assert!(
        t.elapsed() < Duration::from_secs(8),
        "idle connection kept {:?}",
        t.elapsed()
    );
    // More clients than connection slots: the extra ones are closed, the server lives.
    let held: Vec<TcpStream> = (0..80).map(|_| TcpStream::connect(addr).unwrap()).collect();
    std::thread::sleep(Duration::from_millis(1200));
    drop(held);
    assert_eq!(get(addr, "/api/runs").status, 200);
}

#[test]
fn pages_carry_no_inline_script_or_style_attribute() {
    let (addr, _dir) = start(ServerLimits::default());
    for page in [
        "/",
        "/runs",
        "/chart",
        "/chart?table=gemm_a16w16&metric=throughput&runs=base",
        "/history",
        "/compare?base=base&head=head",
        "/alerts",
    ] {
        let a = get(addr, page);
        assert_eq!(a.status, 200, "{page}");
        let html = a.body.to_ascii_lowercase();
        let scripts: Vec<&str> = html.split("<script").skip(1).collect();
        assert!(
            scripts.iter().all(|s| s.trim_start().starts_with("src=")),
            "{page}: an inline script"
        );
        for attr in [
            " onchange=",
            " onclick=",
            " onload=",
            " onsubmit=",
            " style=",
        ] {
            assert!(!html.contains(attr), "{page}: {attr}");
        }
    }
    let js = get(addr, "/app.js");
    assert_eq!(js.status, 200);
    assert!(js
        .head
        .to_ascii_lowercase()
        .contains("content-type: text/javascript"));
}

#[test]
fn other_host_names_are_refused_and_the_triage_token_is_bound_to_its_host() {
    let (addr, _dir) = start(ServerLimits::default());
    let with_host = |host: &str, target: &str| {
        raw(
            addr,
            format!("GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
    };
    for host in [
        "evil.example",
        "evil.example:8080",
        "127.0.0.1.nip.io",
        "localhost.evil",
    ] {
        for target in ["/", "/api/runs", "/alerts"] {
            let a = with_host(host, target);
            assert_eq!(a.status, 421, "{host} {target}: {}", a.head);
            assert!(a.body.contains("--host"), "{}", a.body);
            assert_secured(&a.head);
        }
    }
    for host in [
        "localhost",
        "LOCALHOST:1",
        &addr.to_string(),
        "perf.internal:80",
        "[::1]:9",
    ] {
        assert_eq!(with_host(host, "/api/runs").status, 200, "{host}");
    }
    // A triage POST needs the token of the page served for its own host name.
    let post = |host: &str, token: &str| {
        let body = format!("token={token}&action=ack&note=x");
        raw(
            addr,
            format!(
                "POST /alerts/0000/triage HTTP/1.1\r\nHost: {host}\r\nSec-Fetch-Site: same-origin\r\n\
                 Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        )
    };
    let a = post("perf.internal", "not-the-token");
    assert_eq!(a.status, 403, "{}", a.head);
}

#[test]
fn routes_that_read_no_query_refuse_one_naming_it() {
    let (addr, _dir) = start(ServerLimits::default());
    for target in [
        "/devices?x=1",
        "/api/devices?status=active",
        "/api/alerts/groups?status=active",
        "/app.js?v=2",
        "/alerts/0000?status=active",
    ] {
        let a = get(addr, target);
        assert_eq!(a.status, 400, "{target}: {}", a.head);
        let name = target.split_once('?').unwrap().1.split('=').next().unwrap();
        assert!(
            a.body.contains(&format!("`{name}`")),
            "{target}: {}",
            a.body
        );
        assert_secured(&a.head);
    }
    for target in ["/devices", "/api/devices", "/api/alerts/groups", "/app.js"] {
        assert_eq!(get(addr, target).status, 200, "{target}");
    }
}

#[test]
fn a_port_is_digits_so_a_name_after_the_colon_is_refused() {
    let (addr, _dir) = start(ServerLimits::default());
    for host in [
        "127.0.0.1:8080.attacker.example",
        "localhost:80.evil.example",
    ] {
        let a = raw(
            addr,
            format!("GET /api/runs HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        );
        assert_eq!(a.status, 421, "{host}: {}", a.head);
    }
}

#[test]
fn one_client_cannot_take_every_connection() {
    let limits = ServerLimits {
        max_connections: 32,
        max_per_client: 8,
        header_timeout: Duration::from_secs(30),
        ..ServerLimits::default()
    };
    let (addr, _dir) = start(limits);
    // Eight idle sockets from 127.0.0.1: its share.
    let idle: Vec<TcpStream> = (0..8).map(|_| TcpStream::connect(addr).unwrap()).collect();
    std::thread::sleep(Duration::from_millis(200));
    // A ninth from it is closed unanswered...
    let mut ninth = TcpStream::connect(addr).unwrap();
    ninth
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let _ = ninth.write_all(b"GET /api/runs HTTP/1.1\r\nHost: localhost\r\n\r\n");
    let mut buf = Vec::new();
    let _ = ninth.read_to_end(&mut buf);
    assert!(buf.is_empty(), "{}", String::from_utf8_lossy(&buf));
    // ...while another client (127.0.0.2) is answered.
    let sock = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    sock.bind(&"127.0.0.2:0".parse::<SocketAddr>().unwrap().into())
        .unwrap();
    sock.connect(&addr.into()).unwrap();
    let mut other: TcpStream = sock.into();
    other
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    other
        .write_all(b"GET /api/runs HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut out = Vec::new();
    let _ = other.read_to_end(&mut out);
    assert!(
        String::from_utf8_lossy(&out).starts_with("HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&out)
    );
    drop(idle);
}

/// The security headers docs/security.md promises for every answer.
fn assert_secured(head: &str) {
    let h = head.to_ascii_lowercase();
    for name in [
        "content-security-policy:",
        "x-content-type-options: nosniff",
        "x-frame-options: deny",
        "referrer-policy: no-referrer",
    ] {
        assert!(h.contains(name), "{name} missing in {head}");
    }
}
