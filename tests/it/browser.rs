//! End to end in a real headless Chromium: `perfdb serve` on the sample data, the chart
//! page loaded by the browser, its SVG checked, a screenshot saved; and an alert
//! acknowledged from the alerts page by clicking its button (through `chromedriver`).
//!
//! Needs Debian's `chromium` and `chromium-driver`, so plain `cargo test` lists these
//! tests as ignored with that reason; `scripts/test` installs the browser and runs them.
//! Run without the browser (`--include-ignored` by hand), a test fails saying what is
//! missing: a browser test never passes without its browser.

use crate::common::*;
use std::process::{Command, Stdio};

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

/// Without its browser a browser test fails: it never passes for want of one.
fn missing(what: &str) -> ! {
    panic!(
        "{what} not installed: run scripts/test (it installs them), \
         or apt-get install chromium chromium-driver"
    );
}

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
#[ignore = "needs chromium: run scripts/test"]
fn chart_page_in_headless_chromium() {
    let Some(bin) = chromium() else {
        missing("chromium");
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

/// One WebDriver call (HTTP/1.1, JSON) to chromedriver on loopback.
fn webdriver(port: u16, method: &str, path: &str, body: &serde_json::Value) -> serde_json::Value {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("chromedriver");
    let json = body.to_string();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{json}",
        json.len()
    )
    .unwrap();
    // chromedriver keeps the connection open: read the headers, then Content-Length bytes.
    let mut reader = std::io::BufReader::new(s);
    let mut len = 0usize;
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if std::io::BufRead::read_line(&mut reader, &mut line).unwrap() == 0 {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            len = v.trim().parse().unwrap_or(0);
        }
        head.push_str(&line);
        if line == "\r\n" {
            break;
        }
    }
    let mut buf = vec![0u8; len];
    reader.read_exact(&mut buf).unwrap();
    let resp = format!("{head}{}", String::from_utf8_lossy(&buf));
    let body = String::from_utf8_lossy(&buf).into_owned();
    let start = body.find('{').unwrap_or(0);
    let end = body.rfind('}').map(|e| e + 1).unwrap_or(body.len());
    serde_json::from_str(&body[start..end]).unwrap_or_else(|e| panic!("{e}: {resp}"))
}

#[test]
#[ignore = "needs chromium and chromedriver: run scripts/test"]
fn an_alert_is_acknowledged_from_the_page_in_chromium() {
    let (Some(bin), Some(driver)) = (chromium(), which("chromedriver")) else {
        missing("chromium and chromedriver");
    };
    let wh = Wh::new();
    ingest_history(&wh, &(1..=20).collect::<Vec<_>>());
    wh.run(&["detect", "--label", "main"]);
    let alerts: Vec<serde_json::Value> =
        serde_json::from_str(&wh.ok(&["alerts", "--format", "json"])).unwrap();
    let id = alerts[0]["id"].as_str().unwrap().to_string();
    let (_server, url) = serve_with(&wh, &["--allow-triage"]);
    let profile = wh.dir.path().join("chromium-profile-triage");
    let (_driver, port, sid) = session(&bin, &driver, &profile);
    let go = |path: &str| {
        webdriver(
            port,
            "POST",
            &format!("/session/{sid}/url"),
            &serde_json::json!({"url": format!("{url}{path}")}),
        );
    };
    go("/alerts");
    // Click the button `selector` names, then read the page until it holds `until`.
    let click_until = |selector: &str, until: &str| -> String {
        let found = webdriver(
            port,
            "POST",
            &format!("/session/{sid}/element"),
            &serde_json::json!({"using": "css selector", "value": selector}),
        );
        let element = found["value"]
            .as_object()
            .and_then(|o| o.values().next())
            .and_then(|v| v.as_str())
            .unwrap_or_else(|| panic!("no {selector}: {found}"))
            .to_string();
        webdriver(
            port,
            "POST",
            &format!("/session/{sid}/element/{element}/click"),
            &serde_json::json!({}),
        );
        let mut source = String::new();
        for _ in 0..50 {
            let v = webdriver(
                port,
                "GET",
                &format!("/session/{sid}/source"),
                &serde_json::json!({}),
            );
            source = v["value"].as_str().unwrap_or("").to_string();
            if source.contains(until) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        source
    };
    // The form posts and the server redirects back to /alerts, now acknowledged.
    let source = click_until(&format!("button#ack-{id}"), &format!("reopen-{id}"));
    assert!(
        source.contains(&format!("reopen-{id}")),
        "not acknowledged: {source}"
    );
    let shown: serde_json::Value =
        serde_json::from_str(&wh.ok(&["alerts", "show", &id, "--format", "json"])).unwrap();
    assert_eq!(shown["status"], "acknowledged");
    assert_eq!(shown["history"][1]["who"], "web");

    // The changes table: c13's six alerts are one group (the aiter rows carry no GPU,
    // the probe rows of the same trials name cuda:9.0: one machine); the group, still
    // active with one member acknowledged, is acknowledged whole from its row.
    assert!(source.contains("<table id=\"changes\">"), "{source}");
    let groups: Vec<serde_json::Value> =
        serde_json::from_str(&wh.ok(&["alerts", "list", "--grouped", "--format", "json"])).unwrap();
    assert_eq!(groups.len(), 1, "{groups:?}");
    assert_eq!(groups[0]["status"], "active", "{groups:?}");
    let gid = groups[0]["id"].as_str().unwrap().to_string();
    let source = click_until(
        &format!("button#ack-group-{gid}"),
        &format!("reopen-group-{gid}"),
    );
    webdriver(
        port,
        "DELETE",
        &format!("/session/{sid}"),
        &serde_json::json!({}),
    );
    assert!(
        source.contains(&format!("reopen-group-{gid}")),
        "group not acknowledged: {source}"
    );
    let groups: Vec<serde_json::Value> =
        serde_json::from_str(&wh.ok(&["alerts", "list", "--grouped", "--format", "json"])).unwrap();
    let other = groups.iter().find(|g| g["id"] == gid.as_str()).unwrap();
    let members = other["alerts"].as_array().unwrap();
    assert_eq!(members.len(), 6);
    assert!(
        members.iter().all(|a| a["status"] == "acknowledged"),
        "{other}"
    );
}

/// The pages run under the server's Content-Security-Policy (no inline script, the
/// one stylesheet allowed by its hash): the style applies, and a picker still submits
/// its form when changed, through `/app.js`.
#[test]
#[ignore = "needs chromium and chromedriver: run scripts/test"]
fn pages_work_under_the_security_policy_in_chromium() {
    let (Some(bin), Some(driver)) = (chromium(), which("chromedriver")) else {
        missing("chromium and chromedriver");
    };
    let wh = Wh::new();
    ingest_history(&wh, &(1..=5).collect::<Vec<_>>());
    let (_server, url) = serve(&wh);
    let profile = wh.dir.path().join("chromium-profile-csp");
    let (_driver, port, sid) = session(&bin, &driver, &profile);
    let run = |script: &str| execute(port, &sid, script);
    webdriver(
        port,
        "POST",
        &format!("/session/{sid}/url"),
        &serde_json::json!({"url": format!("{url}/history")}),
    );
    let nav = run("return getComputedStyle(document.querySelector('nav')).backgroundColor");
    // The picker for the shape: pick its last option; app.js submits the form.
    let picked = run(
        "const s = document.querySelector('select[data-submit][name=key]'); \
         s.selectedIndex = s.options.length - 1; s.dispatchEvent(new Event('change')); \
         return s.value",
    );
    let mut at = String::new();
    for _ in 0..50 {
        at = run("return location.search")
            .as_str()
            .unwrap_or("")
            .to_string();
        if at.contains("key=") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    webdriver(
        port,
        "DELETE",
        &format!("/session/{sid}"),
        &serde_json::json!({}),
    );
    assert_eq!(nav, "rgb(31, 41, 55)", "the inline style was blocked");
    assert!(picked.as_str().is_some_and(|p| !p.is_empty()), "{picked}");
    assert!(at.contains("key="), "the picker did not submit: {at:?}");
}

/// The overview opens with the stepped series first, and its link opens that series'
/// history, change point drawn.
#[test]
#[ignore = "needs chromium and chromedriver: run scripts/test"]
fn the_overview_leads_to_a_history_in_chromium() {
    let (Some(bin), Some(driver)) = (chromium(), which("chromedriver")) else {
        missing("chromium and chromedriver");
    };
    let wh = Wh::new();
    ingest_history(&wh, &(1..=20).collect::<Vec<_>>());
    wh.run(&["detect", "--label", "main"]);
    let (_server, url) = serve(&wh);
    let profile = wh.dir.path().join("chromium-profile-overview");
    let (_driver, port, sid) = session(&bin, &driver, &profile);
    let run = |script: &str| execute(port, &sid, script);
    webdriver(
        port,
        "POST",
        &format!("/session/{sid}/url"),
        &serde_json::json!({"url": format!("{url}/")}),
    );
    let title = run("return document.querySelector('h1').textContent");
    let first_group = run("return document.querySelector('tr.group').textContent");
    let sparks = run("return document.querySelectorAll('svg.spark polyline').length");
    run("document.querySelector('a.history').click(); return true");
    let mut at = String::new();
    for _ in 0..50 {
        at = run("return location.pathname + location.search")
            .as_str()
            .unwrap_or("")
            .to_string();
        if at.starts_with("/history") && run("return document.readyState") == "complete" {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let chart = run("return document.querySelector('figure svg') ? document.querySelector('figure svg').outerHTML : ''");
    webdriver(
        port,
        "DELETE",
        &format!("/session/{sid}"),
        &serde_json::json!({}),
    );
    assert_eq!(title, "Overview");
    assert_eq!(
        first_group, "gemm.mm · triton_mm_a16w16",
        "worst group first"
    );
    assert!(sparks.as_u64().is_some_and(|n| n > 10), "{sparks}");
    assert!(
        at.starts_with("/history?table=gemm.mm&variant=triton_mm_a16w16"),
        "{at}"
    );
    assert!(
        chart.as_str().is_some_and(|c| c.contains("c13")),
        "no step at c13: {chart}"
    );
}

#[test]
#[ignore = "needs chromium: run scripts/test"]
fn the_device_table_and_the_peak_ceiling_in_chromium() {
    let Some(bin) = chromium() else {
        missing("chromium");
    };
    let wh = Wh::new();
    for c in 1..=4 {
        let dir = sample(&format!("h200-gemm/history/c{c:02}"));
        let time = format!("2026-07-01T{c:02}:00:00Z");
        ingest_commit(&wh, &dir, &format!("c{c:02}"), &time, &["--device", "h200"]);
    }
    let (_server, url) = serve(&wh);
    let profile = wh.dir.path().join("chromium-profile-devices");
    let dom = stdout(&browser(
        &bin,
        &profile,
        &["--dump-dom"],
        &format!("{url}/devices"),
    ));
    let table = &dom[dom.find("<table id=\"devices\"").expect("the device table")..];
    for text in [
        "h200",
        "989.5",
        "4.8",
        "mi300x",
        "1307.4",
        "gfx942",
        "datasheet",
    ] {
        assert!(table.contains(text), "{text} missing from the device table");
    }
    let key = r#"{"K":"8192","M":"8192","N":"8192","dtype":"bf16","mode":"bench","role":"a"}"#;
    let page = format!(
        "{url}/history?table=gemm.mm&metric=throughput&variant=torch_mm&key={}",
        key.bytes()
            .map(|b| if b.is_ascii_alphanumeric() {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            })
            .collect::<String>()
    );
    let dom = stdout(&browser(&bin, &profile, &["--dump-dom"], &page));
    assert!(
        dom.contains("id=\"peak\""),
        "no peak line on the history page: {dom}"
    );
    assert!(
        dom.contains("989.5 TFLOPS") && dom.contains("NVIDIA H200 SXM"),
        "{dom}"
    );
    let svg = &dom[dom.find("<svg").unwrap()..dom.find("</svg>").unwrap()];
    assert!(
        svg.contains("peak: 989.5 TFLOPS"),
        "no ceiling in the chart"
    );
    assert!(
        svg.contains("% of the NVIDIA H200 SXM's bf16 peak"),
        "no percent on hover"
    );
    // The chart of TFLOPS per shape: each shape's ceiling, each point's percent.
    let page = format!("{url}/chart?table=gemm.mm&metric=throughput&runs=main");
    let dom = stdout(&browser(&bin, &profile, &["--dump-dom"], &page));
    let svg = &dom[dom.find("<svg").expect("a chart")..dom.find("</svg>").unwrap()];
    assert!(
        svg.contains(": peak: 989.5 TFLOPS (NVIDIA H200 SXM dense bf16)"),
        "no ceilings in the chart of shapes"
    );
    assert!(
        svg.contains("% of the NVIDIA H200 SXM's bf16 peak"),
        "no percent on hover in the chart of shapes"
    );
}

/// The roofline of a comparison in Chromium: the H200's bf16 roof, each GEMM row of
/// the PyTorch v3 history at its intensity, an arrow from base, the regressed ones red.
#[test]
#[ignore = "needs chromium: run scripts/test"]
fn the_roofline_draws_roofs_points_and_arrows_in_chromium() {
    let Some(bin) = chromium() else {
        missing("chromium");
    };
    let wh = Wh::new();
    for c in [12, 13] {
        let dir = sample(&format!("h200-gemm/history/c{c:02}"));
        let time = format!("2026-07-01T{c:02}:00:00Z");
        ingest_commit(&wh, &dir, &format!("c{c:02}"), &time, &["--device", "h200"]);
    }
    // What `devices measure` stored: a second, dashed roof under the datasheet's.
    let python = crate::counters::fake_roofs_python(wh.dir.path(), 4150.0, 712.0);
    wh.ok(&["devices", "measure", "--python", &python]);
    let (_, v) = compare_json(&wh, &["c12", "c13"]);
    let gemm_tflops = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| {
            r["unit"] == "TFLOPS" && r["key"]["M"].is_string() && r["key"]["dtype"].is_string()
        })
        .count();
    assert!(gemm_tflops > 0, "{v}");
    let (_server, url) = serve(&wh);
    let profile = wh.dir.path().join("chromium-profile-roofline");
    let dom = stdout(&browser(
        &bin,
        &profile,
        &["--dump-dom"],
        &format!("{url}/roofline?base=c12&head=c13"),
    ));
    let svg = &dom[dom.find("<svg").expect("a roofline")..dom.find("</svg>").unwrap()];
    assert!(svg.contains("class=\"roof\""), "no roof: {svg}");
    assert!(
        svg.contains("NVIDIA H200 SXM bf16 (datasheet): 4.800 TB/s, 989.5 TFLOPS"),
        "{svg}"
    );
    assert!(
        svg.contains("class=\"roof measured\""),
        "no measured roof: {svg}"
    );
    assert!(
        svg.contains("NVIDIA H200 SXM bf16 (measured): 4.150 TB/s, 712.0 TFLOPS"),
        "{svg}"
    );
    assert_eq!(svg.matches("class=\"point\"").count(), gemm_tflops, "{svg}");
    assert_eq!(svg.matches("class=\"arrow\"").count(), gemm_tflops, "{svg}");
    assert!(
        svg.contains("fill=\"#c00\""),
        "the regressed rows are red: {svg}"
    );
    assert!(dom.contains("id=\"roofline-counts\""), "{dom}");
    // The comparison links to it.
    let dom = stdout(&browser(
        &bin,
        &profile,
        &["--dump-dom"],
        &format!("{url}/compare?base=c12&head=c13"),
    ));
    assert!(
        dom.contains("id=\"to-roofline\" href=\"/roofline?base=c12&amp;head=c13\""),
        "{dom}"
    );
}

/// `/devices` at 1400 px: one heading, and the table within the window (no scrolling
/// sideways, the "matched by" column not squeezed to a word a line).
#[test]
#[ignore = "needs chromium and chromedriver: run scripts/test"]
fn the_devices_page_reads_without_scrolling_sideways_in_chromium() {
    let (Some(bin), Some(driver)) = (chromium(), which("chromedriver")) else {
        missing("chromium and chromedriver");
    };
    let wh = Wh::new();
    wh.ingest(&sample("h200-gemm/history/c01"), "main");
    let (_server, url) = serve(&wh);
    let profile = wh.dir.path().join("chromium-profile-devices-width");
    let (_driver, port, sid) = session(&bin, &driver, &profile);
    let run = |script: &str| execute(port, &sid, script);
    webdriver(
        port,
        "POST",
        &format!("/session/{sid}/window/rect"),
        &serde_json::json!({"width": 1400, "height": 900}),
    );
    webdriver(
        port,
        "POST",
        &format!("/session/{sid}/url"),
        &serde_json::json!({"url": format!("{url}/devices")}),
    );
    let headings = run("return document.querySelectorAll('h1').length");
    let inner = run("return window.innerWidth");
    let scroll = run("return document.documentElement.scrollWidth");
    let table = run("return document.getElementById('devices').getBoundingClientRect().right");
    // The "matched by" cells: each at least 12em wide, never a word a line.
    let narrowest = run(
        "return Math.min(...[...document.querySelectorAll('td.names')].map(c => c.getBoundingClientRect().width))",
    );
    webdriver(
        port,
        "DELETE",
        &format!("/session/{sid}"),
        &serde_json::json!({}),
    );
    assert_eq!(headings, 1, "the heading once");
    let (inner, scroll) = (inner.as_f64().unwrap(), scroll.as_f64().unwrap());
    assert!(
        scroll <= inner,
        "the page scrolls sideways: {scroll} > {inner}"
    );
    assert!(
        table.as_f64().unwrap() <= inner,
        "the table is wider than the window"
    );
    assert!(
        narrowest.as_f64().unwrap() >= 12.0 * 14.0,
        "matched by squeezed: {narrowest}"
    );
}

/// The value `script` returns in the page of session `sid`.
fn execute(port: u16, sid: &str, script: &str) -> serde_json::Value {
    webdriver(
        port,
        "POST",
        &format!("/session/{sid}/execute/sync"),
        &serde_json::json!({"script": script, "args": []}),
    )["value"]
        .clone()
}

/// chromedriver on a free loopback port with a headless Chromium session: the driver
/// (stopped on drop), its port and the session id.
fn session(bin: &str, driver: &str, profile: &std::path::Path) -> (Server, u16, String) {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let server = Server(
        Command::new(driver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver"),
    );
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let mut args: Vec<String> = CHROMIUM_FLAGS.iter().map(|f| f.to_string()).collect();
    args.push(format!("--user-data-dir={}", profile.display()));
    let session = webdriver(
        port,
        "POST",
        "/session",
        &serde_json::json!({"capabilities": {"alwaysMatch": {"goog:chromeOptions": {
            "binary": which(bin).unwrap(), "args": args
        }}}}),
    );
    let sid = session["value"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("no session: {session}"))
        .to_string();
    (server, port, sid)
}

#[test]
#[ignore = "needs chromium and chromedriver: run scripts/test"]
fn the_exported_site_opens_from_disk_and_every_link_resolves() {
    let (Some(bin), Some(driver)) = (chromium(), which("chromedriver")) else {
        missing("chromium and chromedriver");
    };
    let wh = Wh::new();
    ingest_history(&wh, &(1..=20).collect::<Vec<_>>());
    wh.run(&["detect", "--label", "main"]);
    wh.ingest(&sample("h200-gemm/ab/aiter/base"), "base");
    wh.ingest(&sample("h200-gemm/ab/aiter/head"), "head");
    wh.run(&["compare", "base", "head", "--control", "torch", "--save"]);
    let site = wh.dir.path().join("site");
    let out = wh.ok(&["export-site", site.to_str().unwrap()]);
    assert!(out.starts_with("exported "), "{out}");
    let files: std::collections::BTreeSet<String> = std::fs::read_dir(&site)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".html"))
        .collect();
    assert!(files.contains("index.html") && files.contains("alerts.html"));
    assert!(files.iter().any(|f| f.starts_with("history-")));
    assert!(files.iter().any(|f| f.starts_with("chart-")));

    let profile = wh.dir.path().join("chromium-profile-site");
    let (_driver, port, sid) = session(&bin, &driver, &profile);
    let exec = |script: &str| execute(port, &sid, script);
    let start = format!("file://{}/index.html", site.display());
    let mut queue = std::collections::VecDeque::from([start.clone()]);
    let mut visited = std::collections::BTreeSet::new();
    let mut links = 0;
    while let Some(url) = queue.pop_front() {
        if !visited.insert(url.clone()) {
            continue;
        }
        webdriver(
            port,
            "POST",
            &format!("/session/{sid}/url"),
            &serde_json::json!({ "url": url }),
        );
        // A page perfdb wrote: its layout, its export note, no error page of the browser.
        let page = exec(
            "return {title: document.title, main: !!document.querySelector('main #exported'), \
             href: location.href, forms: document.forms.length, \
             links: Array.from(document.querySelectorAll('a[href]')).map(a => a.href)}",
        );
        assert!(
            page["main"] == true && page["title"].as_str().unwrap_or("").ends_with("· perfdb"),
            "{url} did not open as an exported page: {page}"
        );
        assert_eq!(page["forms"], 0, "{url} kept a form");
        for l in page["links"].as_array().unwrap() {
            let l = l.as_str().unwrap().split('#').next().unwrap().to_string();
            assert!(l.starts_with("file://"), "{url} links off the site: {l}");
            links += 1;
            if !visited.contains(&l) {
                queue.push_back(l);
            }
        }
    }
    webdriver(
        port,
        "DELETE",
        &format!("/session/{sid}"),
        &serde_json::json!({}),
    );
    let reached: std::collections::BTreeSet<String> = visited
        .iter()
        .map(|u| u.rsplit('/').next().unwrap().to_string())
        .collect();
    // Every page is reachable from the index by following links, and every link opened.
    let unreached: Vec<&String> = files.difference(&reached).collect();
    assert!(unreached.is_empty(), "pages no link reaches: {unreached:?}");
    assert!(
        links > files.len(),
        "{links} links over {} pages",
        files.len()
    );
    eprintln!(
        "followed {links} links over {} exported pages",
        visited.len()
    );
}

/// The full path of a program on PATH.
fn which(program: &str) -> Option<String> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|d| std::path::Path::new(d).join(program))
        .find(|p| p.is_file())
        .map(|p| p.display().to_string())
}
