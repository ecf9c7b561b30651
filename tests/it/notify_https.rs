//! Alert delivery over https (rustls): a loopback receiver with a certificate from a test
//! CA the delivery trusts only through `PERFDB_CA_FILE`, and the Slack and GitHub
//! payload presets. Tokens and webhook secrets are never printed or stored.

use crate::common::*;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

fn tls_file(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/tls")
        .join(name)
}

/// One request as the receiver read it: its head lines and JSON body.
type Got = Arc<Mutex<Vec<(Vec<String>, Value)>>>;

/// An https receiver on loopback answering 200 to every request it can read.
fn https_receiver() -> (String, Got) {
    use rustls_pki_types::pem::PemObject;
    let certs: Vec<_> = rustls_pki_types::CertificateDer::pem_file_iter(tls_file("localhost.crt"))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let key = rustls_pki_types::PrivateKeyDer::from_pem_file(tls_file("localhost.key")).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .unwrap();
    let config = Arc::new(config);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let got: Got = Arc::new(Mutex::new(Vec::new()));
    let seen = got.clone();
    std::thread::spawn(move || {
        for tcp in listener.incoming() {
            let Ok(tcp) = tcp else { continue };
            let conn = rustls::ServerConnection::new(config.clone()).unwrap();
            let mut tls = rustls::StreamOwned::new(conn, tcp);
            // A client that refuses the certificate ends the handshake: nothing read.
            let mut reader = BufReader::new(&mut tls);
            let mut head = Vec::new();
            let mut len = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                let line = line.trim_end().to_string();
                if line.is_empty() {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
                head.push(line);
            }
            if head.is_empty() {
                continue;
            }
            let mut body = vec![0u8; len];
            if reader.read_exact(&mut body).is_err() {
                continue;
            }
            seen.lock()
                .unwrap()
                .push((head, serde_json::from_slice(&body).unwrap_or(Value::Null)));
            let _ =
                tls.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            let _ = tls.flush();
            tls.conn.send_close_notify();
            let _ = tls.flush();
        }
    });
    (format!("https://127.0.0.1:{}", addr.port()), got)
}

/// `perfdb detect --notify TARGET` over the 20-commit history, with `env` set.
fn detect(wh: &Wh, target: &str, env: &[(&str, &str)]) -> std::process::Output {
    let mut c = wh.cmd();
    c.args([
        "detect",
        "--label",
        "main",
        "--notify",
        target,
        "--notify-timeout",
        "5",
    ]);
    c.env_remove("PERFDB_CA_FILE").env_remove("GITHUB_TOKEN");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

#[test]
fn alerts_reach_an_https_receiver_only_through_a_trusted_certificate() {
    let wh = Wh::new();
    ingest_history(&wh, &(1..=20).collect::<Vec<_>>());
    let (base, got) = https_receiver();
    let target = format!("{base}/hook");
    // Not trusted: refused by the TLS check, nothing delivered, exit 2 says so.
    let out = detect(&wh, &target, &[]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("TLS: invalid peer certificate: UnknownIssuer"),
        "{}",
        stderr(&out)
    );
    assert!(got.lock().unwrap().is_empty());
    // Trusted through PERFDB_CA_FILE: every group of active alerts, once (c13's six
    // alerts are one group).
    let ca = tls_file("ca.crt");
    let out = detect(&wh, &target, &[("PERFDB_CA_FILE", ca.to_str().unwrap())]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let bodies: Vec<Value> = got.lock().unwrap().iter().map(|(_, b)| b.clone()).collect();
    let active = wh.count("SELECT count(*) FROM alerts");
    assert!(
        bodies.len() == 1 && active == 6,
        "{active} alerts: {bodies:?}"
    );
    assert!(
        bodies.iter().all(|b| b["group"]["alerts"] == 6),
        "{bodies:?}"
    );
    assert!(bodies
        .iter()
        .all(|b| b["text"].as_str().unwrap().starts_with("perfdb: ")));
    let out = detect(&wh, &target, &[("PERFDB_CA_FILE", ca.to_str().unwrap())]);
    assert_eq!(code(&out), 0);
    assert_eq!(got.lock().unwrap().len(), bodies.len(), "delivered once");
    // A CA file that is not one is said at the first delivery.
    let out = detect(
        &wh,
        &format!("{base}/other"),
        &[("PERFDB_CA_FILE", tls_file("README.md").to_str().unwrap())],
    );
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("$PERFDB_CA_FILE"), "{}", stderr(&out));
}

#[test]
fn slack_and_github_presets_and_their_secrets() {
    let wh = Wh::new();
    ingest_history(&wh, &(1..=20).collect::<Vec<_>>());
    let (base, got) = https_receiver();
    let ca = tls_file("ca.crt");
    let ca = ca.to_str().unwrap();
    let secret = "XyZ0123456789abcdefGHIJK";
    let slack = format!("slack+{base}/services/T0000/B0000/{secret}");
    let out = detect(&wh, &slack, &[("PERFDB_CA_FILE", ca)]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let (head, body) = got.lock().unwrap()[0].clone();
    assert!(head[0].starts_with(&format!("POST /services/T0000/B0000/{secret} HTTP/1.1")));
    assert!(
        body["text"].as_str().unwrap().starts_with("perfdb: "),
        "{body}"
    );
    assert_eq!(body["blocks"][0]["type"], "section");
    assert!(body["blocks"][0]["text"]["text"]
        .as_str()
        .unwrap()
        .contains("*perfdb alert `"));
    // The group's series, listed.
    let listed = body["blocks"][1]["text"]["text"].as_str().unwrap();
    assert!(listed.starts_with("6 series:\n• "), "{listed}");
    // GitHub: a comment on an issue, the token from the environment.
    let github = format!("github+{base}/repos/acme/kernels/issues/7/comments");
    let out = detect(&wh, &github, &[("PERFDB_CA_FILE", ca)]);
    assert_eq!(code(&out), 2, "no token: {}", stderr(&out));
    assert!(stderr(&out).contains("$GITHUB_TOKEN"), "{}", stderr(&out));
    let token = "ghp_notARealToken0123456789";
    let n = got.lock().unwrap().len();
    let out = detect(
        &wh,
        &github,
        &[("PERFDB_CA_FILE", ca), ("GITHUB_TOKEN", token)],
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let sent = got.lock().unwrap()[n..].to_vec();
    assert!(!sent.is_empty());
    let (head, body) = &sent[0];
    assert!(
        head.contains(&format!("Authorization: Bearer {token}")),
        "{head:?}"
    );
    assert!(
        head.contains(&"Accept: application/vnd.github+json".to_string()),
        "{head:?}"
    );
    assert!(
        body["body"]
            .as_str()
            .unwrap()
            .starts_with("### perfdb alert `"),
        "{body}"
    );
    assert!(
        body["body"].as_str().unwrap().contains("6 series:\n- "),
        "{body}"
    );
    // Neither secret is printed or stored.
    let all = format!(
        "{}{}{:?}",
        stdout(&out),
        stderr(&out),
        wh.sql("SELECT * FROM alert_delivery_log")
    );
    assert!(!all.contains(token) && !all.contains(secret), "{all}");
    let json = detect(&wh, &slack, &[("PERFDB_CA_FILE", ca)]);
    assert!(!stdout(&json).contains(secret));
}
