//! Helpers for end-to-end tests of the real binary.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn sample(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sample-data")
        .join(rel)
}

pub struct Wh {
    pub dir: tempfile::TempDir,
    /// A remote warehouse's URL (`s3://...`); none: the directory `wh` in `dir`.
    pub url: Option<String>,
}

impl Wh {
    pub fn new() -> Wh {
        Wh {
            dir: tempfile::tempdir().expect("temp dir"),
            url: None,
        }
    }
    /// A warehouse at `url` (its cache in a temp dir of its own).
    pub fn remote(url: String) -> Wh {
        Wh {
            url: Some(url),
            ..Wh::new()
        }
    }
    pub fn path(&self) -> PathBuf {
        match &self.url {
            Some(url) => PathBuf::from(url),
            None => self.dir.path().join("wh"),
        }
    }
    pub fn cmd(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_perfdb"));
        c.env("PERFDB_WAREHOUSE", self.path())
            .env("PERFDB_CACHE_DIR", self.dir.path().join("cache"))
            .env("NO_COLOR", "1")
            .current_dir(self.dir.path());
        c
    }
    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd().args(args).output().expect("run perfdb")
    }
    /// Run and require success.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "perfdb {args:?} failed: {}\n{}",
            stderr(&out),
            stdout(&out)
        );
        stdout(&out)
    }
    pub fn ingest(&self, path: &Path, label: &str) -> String {
        self.ok(&["ingest", path.to_str().unwrap(), "--label", label])
    }
    /// `perfdb sql --format json` as parsed JSON objects.
    pub fn sql(&self, q: &str) -> Vec<serde_json::Value> {
        self.ok(&["sql", q, "--format", "json"])
            .lines()
            .map(|l| serde_json::from_str(l).expect("json line"))
            .collect()
    }
    pub fn count(&self, q: &str) -> i64 {
        let rows = self.sql(q);
        rows[0]
            .as_object()
            .unwrap()
            .values()
            .next()
            .unwrap()
            .as_i64()
            .unwrap()
    }
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
pub fn code(o: &Output) -> i32 {
    o.status.code().expect("exit code")
}

/// Replace the temp-dir and repository paths so snapshots are stable.
pub fn scrub(text: &str, wh: &Wh) -> String {
    text.replace(&wh.dir.path().display().to_string(), "[TMP]")
        .replace(env!("CARGO_MANIFEST_DIR"), "[REPO]")
}

/// `perfdb compare ARGS --format json`: the exit code and the parsed report.
pub fn compare_json(wh: &Wh, args: &[&str]) -> (i32, serde_json::Value) {
    let mut a = vec!["compare"];
    a.extend_from_slice(args);
    a.extend_from_slice(&["--format", "json"]);
    let out = wh.run(&a);
    let v: serde_json::Value = serde_json::from_str(&stdout(&out))
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&out), stderr(&out)));
    (code(&out), v)
}

/// Ingest `dir` under `main` as `commit`, made at `time` (RFC 3339), plus `extra` args.
pub fn ingest_commit(wh: &Wh, dir: &Path, commit: &str, time: &str, extra: &[&str]) {
    let mut args = vec![
        "ingest",
        dir.to_str().unwrap(),
        "--label",
        "main",
        "--commit",
        commit,
        "--commit-time",
        time,
    ];
    args.extend_from_slice(extra);
    wh.ok(&args);
}

/// Ingest the 20-commit H200 history under `main`, commits in `order`, commit `cNN` made
/// at `2026-07-01TNN:00:00Z`.
pub fn ingest_history(wh: &Wh, order: &[usize]) {
    for &c in order {
        let dir = sample(&format!("h200-gemm/history/c{c:02}"));
        let time = format!("2026-07-01T{c:02}:00:00Z");
        ingest_commit(wh, &dir, &format!("c{c:02}"), &time, &[]);
    }
}

/// Read one HTTP request from `stream`: its JSON body.
pub fn read_json_request(stream: &std::net::TcpStream) -> serde_json::Value {
    read_request(stream).1
}

/// Read one HTTP request from `stream`: its header lines (request line first) and its
/// JSON body.
pub fn read_request(stream: &std::net::TcpStream) -> (Vec<String>, serde_json::Value) {
    use std::io::{BufRead, BufReader, Read};
    let mut reader = BufReader::new(stream);
    let mut len = 0;
    let mut head = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            len = v.trim().parse().unwrap();
        }
        if line == "\r\n" || line.is_empty() {
            break;
        }
        head.push(line.trim_end().to_string());
    }
    let mut body = vec![0u8; len];
    reader.read_exact(&mut body).unwrap();
    (head, serde_json::from_slice(&body).unwrap())
}

/// A loopback HTTP receiver answering with `statuses` in turn (then 200), recording the
/// JSON bodies it accepted. Stops with the test process.
pub fn receiver(
    statuses: Vec<u16>,
) -> (
    String,
    std::sync::Arc<std::sync::Mutex<Vec<serde_json::Value>>>,
) {
    use std::io::Write;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let got = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = got.clone();
    std::thread::spawn(move || {
        let mut answers = statuses.into_iter();
        for stream in listener.incoming() {
            let mut stream = stream.unwrap();
            let body = read_json_request(&stream);
            let status = answers.next().unwrap_or(200);
            if status == 200 {
                seen.lock().unwrap().push(body);
            }
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
        }
    });
    (url, got)
}

/// Three trials of one `[perf]` row at `us` (a little noise), as commit `c` of `main`.
pub fn perf_commit(wh: &Wh, c: usize, us: f64) {
    perf_commit_with(wh, c, us, &[]);
}

/// [`perf_commit`] with more `ingest` arguments (`--tag triton=3.6.0`).
pub fn perf_commit_with(wh: &Wh, c: usize, us: f64, extra: &[&str]) {
    let dir = wh.dir.path().join(format!("perf/c{c:02}"));
    std::fs::create_dir_all(&dir).unwrap();
    for t in 0..3 {
        let v = us * (1.0 + 0.002 * t as f64);
        std::fs::write(
            dir.join(format!("t{t}.log")),
            format!("[perf] dim: (64,) dtype: bf16, torch avg: 5.00 us, ck avg: {v:.3} us\n"),
        )
        .unwrap();
    }
    let time = format!("2026-07-{:02}T{:02}:00:00Z", 1 + c / 24, c % 24);
    ingest_commit(wh, &dir, &format!("c{c:02}"), &time, extra);
}

/// Write `text` to `path` as an executable script (a stand-in for a tool).
pub fn executable(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// PATH with `bin` first: the stand-ins there are found before the real tools.
pub fn path_with(bin: &Path) -> std::ffi::OsString {
    let mut path = std::ffi::OsString::from(bin);
    path.push(":");
    path.push(std::env::var_os("PATH").unwrap_or_default());
    path
}

/// The rows a comparison calls regressions, as `table variant key metric`.
pub fn regressed(v: &serde_json::Value) -> std::collections::BTreeSet<String> {
    v["rows"]
        .as_array()
        .expect("rows array")
        .iter()
        .filter(|r| r["verdict"] == "regression")
        .map(|r| {
            format!(
                "{} {} {} {}",
                r["table"].as_str().unwrap(),
                r["variant"].as_str().unwrap(),
                r["key_text"].as_str().unwrap(),
                r["metric"].as_str().unwrap()
            )
        })
        .collect()
}

/// Copy the directory tree `from` to `to` (a warehouse, to detect on a copy).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), dst).unwrap();
        }
    }
}

/// A run's tags (stored as a JSON object) as a map.
pub fn tags_of(run: &serde_json::Value) -> std::collections::HashMap<String, String> {
    let text = run["tags"].as_str().expect("tags as JSON text");
    serde_json::from_str(text).unwrap_or_else(|e| panic!("tags {text}: {e}"))
}

/// `git -C dir ARGS` as a fixed author, asserting it succeeds: its stdout, trimmed.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "Ada")
        .env("GIT_AUTHOR_EMAIL", "ada@example.com")
        .env("GIT_COMMITTER_NAME", "Ada")
        .env("GIT_COMMITTER_EMAIL", "ada@example.com")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", stderr(&out));
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A `perfdb serve` child, killed when dropped.
pub struct Server(pub std::process::Child);
impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Start `perfdb serve` on a free loopback port; returns the server and its base URL.
pub fn serve(wh: &Wh) -> (Server, String) {
    serve_with(wh, &[])
}

pub fn serve_with(wh: &Wh, extra: &[&str]) -> (Server, String) {
    let mut child = wh
        .cmd()
        .args(["serve", "--bind", "127.0.0.1:0"])
        .args(extra)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start perfdb serve");
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stderr.take().unwrap()),
        &mut line,
    )
    .unwrap();

    let url = line
        .split("on ")
        .last()
        .unwrap()
        .trim()
        .trim_end_matches('/')
        .to_string();
    assert!(url.starts_with("http://127.0.0.1:"), "{line}");
    (Server(child), url)
}
