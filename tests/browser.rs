//! End to end in a real headless Chromium: `perfdb serve` on the sample data, the chart
//! page loaded by the browser, its SVG checked, a screenshot saved.
//!
//! Needs Debian's `chromium` (`.ci/run` installs it). Without it the test fails under CI
//! (CI=true) and is reported as skipped elsewhere.

mod common;
use common::*;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

const CHROMIUM_FLAGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
];

fn chromium() -> Option<String> {
    ["chromium", "chromium-browser"].iter().find_map(|b| {
        Command::new(b)
            .arg("--version")
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|_| b.to_string())
    })
}

struct Server(Child);
impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Start `perfdb serve` on a free loopback port; returns the server and its base URL.
fn serve(wh: &Wh) -> (Server, String) {
    let mut child = wh
        .cmd()
        .args(["serve", "--addr", "127.0.0.1:0"])
        .stderr(Stdio::piped())
        .spawn()
        .expect("start perfdb serve");
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut line)
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

fn browser(
    bin: &str,
    profile: &std::path::Path,
    extra: &[&str],
    url: &str,
) -> std::process::Output {
    Command::new(bin)
        .args(CHROMIUM_FLAGS)
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .output()
        .expect("run chromium")
}

#[test]
fn chart_page_in_headless_chromium() {
    let Some(bin) = chromium() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "chromium is required under CI (.ci/run installs it)"
        );
        eprintln!("SKIPPED: chromium not installed (apt-get install chromium chromium-driver)");
        return;
    };
    let wh = Wh::new();
    wh.ingest(&sample("h200-gemm/ab/aiter/base"), "base");
    wh.ingest(&sample("h200-gemm/ab/aiter/head"), "head");
    let (_server, url) = serve(&wh);
    let profile = wh.dir.path().join("chromium-profile");
    let page = format!("{url}/chart?table=gemm_a16w16&metric=throughput&runs=base");
    let out = browser(&bin, &profile, &["--dump-dom"], &page);
    let dom = stdout(&out);
    assert!(
        dom.contains("<svg"),
        "no SVG in the DOM: {}\n{}",
        dom,
        stderr(&out)
    );
    let svg = &dom[dom.find("<svg").unwrap()..dom.find("</svg>").unwrap()];
    for text in [
        "torch",
        "triton",
        "512×4096×4096",
        "8192×8192×8192",
        "throughput (TFLOPS)",
    ] {
        assert!(svg.contains(text), "{text} missing from the rendered SVG");
    }
    let shot = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("chart-page.png");
    let _ = std::fs::remove_file(&shot);
    let out = browser(
        &bin,
        &profile,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1280,1100",
            "--hide-scrollbars",
        ],
        &page,
    );
    let png = std::fs::read(&shot).unwrap_or_else(|_| panic!("no screenshot: {}", stderr(&out)));
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "screenshot is not a PNG of a page"
    );
    eprintln!("screenshot saved to {}", shot.display());
}
