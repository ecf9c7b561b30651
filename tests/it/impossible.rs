//! The impossible-number rule end to end: values no device can produce (a GEMM time
//! too short for its work, a TFLOPS or TB/s above the peak) are warned at ingest, whatever
//! names the device (`--device`, or the GPU the file prints), `invalid` in compare and in
//! the web app's comparison — never an improvement — and never raise or resolve an alert.

use crate::common::*;
use std::io::{Read, Write};

/// An aiter `summary (markdown):` table of one 4096^3 bf16 GEMM and one 512x4096x4096,
/// with the triton time of the 4096^3 row given (and, with `tflops`, TFLOPS columns
/// computed from the times, as aiter prints them).
fn aiter_log(triton_us: f64, jitter: f64, tflops: bool) -> String {
    let rows = [
        (512u64, 27.52 + jitter, 32.864 + jitter),
        (4096, 184.752 + jitter, triton_us + jitter),
    ];
    let tf = |m: u64, us: f64| 2.0 * m as f64 * 4096.0 * 4096.0 / (us * 1e-6) / 1e12;
    let mut s = String::from("[aiter] gemm_a16w16 summary (markdown):\n");
    if tflops {
        s.push_str("|    M |    N |    K | dtype          |   torch us |   torch TFLOPS |   triton us |   triton TFLOPS |\n");
        s.push_str("|-----:|-----:|-----:|:---------------|-----------:|---------------:|------------:|----------------:|\n");
        for (m, t, x) in rows {
            s.push_str(&format!(
                "| {m:>4} | 4096 | 4096 | torch.bfloat16 | {t:>10.3} | {:>14.3} | {x:>11.3} | {:>15.3} |\n",
                tf(m, t),
                tf(m, x)
            ));
        }
    } else {
        s.push_str("|    M |    N |    K | dtype          |   torch us |   triton us |\n");
        s.push_str("|-----:|-----:|-----:|:---------------|-----------:|------------:|\n");
        for (m, t, x) in rows {
            s.push_str(&format!(
                "| {m:>4} | 4096 | 4096 | torch.bfloat16 | {t:>10.3} | {x:>11.3} |\n"
            ));
        }
    }
    s
}

/// Three trials of one arm under `label` on the H200.
fn ingest_arm(wh: &Wh, label: &str, triton_us: f64, tflops: bool) -> String {
    let dir = wh.dir.path().join(format!("{label}-logs"));
    std::fs::create_dir_all(&dir).unwrap();
    for t in 0..3 {
        std::fs::write(
            dir.join(format!("trial{t}.log")),
            aiter_log(triton_us, 0.1 * t as f64, tflops),
        )
        .unwrap();
    }
    let out = wh.run(&[
        "ingest",
        dir.to_str().unwrap(),
        "--label",
        label,
        "--device",
        "h200",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    stderr(&out)
}

fn gemm_4096_rows(report: &serde_json::Value) -> Vec<&serde_json::Value> {
    report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["variant"] == "triton" && r["key_text"].as_str().unwrap().contains("M=4096"))
        .collect()
}

#[test]
fn an_impossibly_fast_gemm_time_is_invalid_never_an_improvement() {
    for tflops in [false, true] {
        let wh = Wh::new();
        ingest_arm(&wh, "base", 196.3, tflops);
        // 2·4096³ FLOPs in 114.5 us: 1,200 TFLOPS, above the H200's 989.5 bf16.
        let warned = ingest_arm(&wh, "head", 114.5, tflops);
        assert!(
            warned.contains("implies 1200")
                && warned.contains("not a number this device can produce"),
            "{warned}"
        );
        let (exit, report) = compare_json(&wh, &["base", "head", "--control", "torch"]);
        let rows = gemm_4096_rows(&report);
        assert_eq!(rows.len(), if tflops { 2 } else { 1 }, "{report}");
        for r in &rows {
            assert_eq!(r["verdict"], "invalid", "tflops={tflops}: {r}");
            assert!(
                r["reason"]
                    .as_str()
                    .unwrap()
                    .contains("impossible on this device"),
                "{r}"
            );
        }
        assert!(
            report["rows"]
                .as_array()
                .unwrap()
                .iter()
                .all(|r| r["verdict"] != "improvement"
                    || !r["key_text"].as_str().unwrap().contains("M=4096")),
            "{report}"
        );
        assert_ne!(exit, 0, "an invalid row is never 'no regression'");
        assert_ne!(report["verdict"], "ok", "{}", report["verdict"]);
        let text = stdout(&wh.run(&["compare", "base", "head", "--control", "torch"]));
        assert!(!text.contains("OK: no regression"), "{text}");

        // The web app's comparison is the same comparison.
        let (_server, url) = serve(&wh);
        let body = get(&url, "/api/compare?base=base&head=head&control=torch");
        let web: serde_json::Value =
            serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
        for r in gemm_4096_rows(&web) {
            assert_eq!(r["verdict"], "invalid", "web: {r}");
        }
    }
}

#[test]
fn impossible_times_neither_raise_nor_resolve_an_alert() {
    let wh = Wh::new();
    // Five commits print the impossible 114.5 us, the next five the real 196.3 us: the
    // fix is no regression, and nothing before it was an improvement.
    for c in 1..=10 {
        let dir = wh.dir.path().join(format!("c{c:02}"));
        std::fs::create_dir_all(&dir).unwrap();
        let us = if c <= 5 { 114.5 } else { 196.3 };
        for t in 0..3 {
            std::fs::write(
                dir.join(format!("trial{t}.log")),
                aiter_log(us, 0.1 * t as f64, false),
            )
            .unwrap();
        }
        let time = format!("2026-07-01T{c:02}:00:00Z");
        ingest_commit(&wh, &dir, &format!("c{c:02}"), &time, &["--device", "h200"]);
    }
    let out = wh.run(&["detect", "--label", "main", "--format", "json"]);
    let json = stdout(&out);
    let v: serde_json::Value =
        serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"));
    let text = v.to_string();
    assert!(
        !(text.contains("M=4096") && text.contains("triton")),
        "an impossible time raised or resolved an alert: {json}"
    );

    // The web app's history and overview read by the same rule: the impossible points are
    // drawn and flagged, never a change point, never a step.
    let key = wh.sql(
        "SELECT DISTINCT \"key\" FROM measurements WHERE variant = 'triton' AND metric = 'latency' AND \"key\" LIKE '%\"M\":\"4096\"%'",
    )[0]["key"]
        .as_str()
        .unwrap()
        .to_string();
    let (_server, url) = serve(&wh);
    let table = wh.sql("SELECT DISTINCT table_name FROM measurements")[0]["table_name"]
        .as_str()
        .unwrap()
        .to_string();
    let q = |v: &str| {
        v.bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => {
                    (b as char).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect::<String>()
    };
    let body = get(
        &url,
        &format!(
            "/api/history?table={}&variant=triton&key={}&metric=latency&label=main",
            q(&table),
            q(&key)
        ),
    );
    let h: serde_json::Value =
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
    assert_eq!(h["change_points"], serde_json::json!([]), "{h}");
    let flagged: Vec<u64> = h["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["impossible"].as_u64().unwrap_or(0))
        .collect();
    assert_eq!(flagged, [3, 3, 3, 3, 3, 0, 0, 0, 0, 0], "{h}");
    let body = get(&url, "/api/overview?label=main");
    let o: serde_json::Value =
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
    let row = o["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["variant"] == "triton" && r["key"] == key.as_str() && r["metric"] == "latency")
        .unwrap_or_else(|| panic!("{o}"));
    assert!(row["step"].is_null(), "the fix read as a step: {row}");
}

#[test]
fn a_device_the_file_names_holds_its_values_at_ingest() {
    let wh = Wh::new();
    // nvbench JSON from an H200 names its GPU; every bandwidth set to 10 TB/s, past the H200's 4.8.
    let text = std::fs::read_to_string(sample("gpu-harness/nvbench/h200_run1.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut doubled = 0;
    let mut v2 = v;
    fn walk(v: &mut serde_json::Value, n: &mut usize) {
        match v {
            serde_json::Value::Object(m) => {
                let is_bw = m
                    .get("tag")
                    .and_then(|t| t.as_str())
                    .is_some_and(|t| t.contains("bw"))
                    && m.get("hint").and_then(|h| h.as_str()) == Some("byte_rate");
                if is_bw {
                    if let Some(data) = m.get_mut("data").and_then(|d| d.as_array_mut()) {
                        for d in data {
                            if d.get("value").is_some_and(|x| x.is_string()) {
                                // 10 TB/s on a 4.8 TB/s part.
                                d["value"] = serde_json::Value::String("1e13".into());
                                *n += 1;
                            }
                        }
                    }
                }
                for (_, c) in m.iter_mut() {
                    walk(c, n);
                }
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(|c| walk(c, n)),
            _ => {}
        }
    }
    walk(&mut v2, &mut doubled);
    assert!(doubled > 0, "the sample has byte-rate summaries");
    let f = wh.dir.path().join("fast.json");
    std::fs::write(&f, serde_json::to_string_pretty(&v2).unwrap()).unwrap();
    let out = wh.run(&["ingest", f.to_str().unwrap(), "--label", "x"]);
    let err = stderr(&out);
    assert!(
        err.contains("not a number this device can produce") && err.contains("H200"),
        "no --device given, the file names its GPU: ingest still warns\n{err}"
    );
}

/// The body of `GET path` (HTTP/1.1, closed after).
fn get(url: &str, path: &str) -> String {
    let addr = url.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut res = String::new();
    s.read_to_string(&mut res).unwrap();
    let (head, body) = res.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}\n{body}");
    if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        return dechunk(body);
    }
    body.to_string()
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 {
            break;
        }
        out.push_str(&rest[..n]);
        body = &rest[n + 2..];
    }
    out
}

#[test]
fn a_pytorch_v3_record_past_the_peak_is_invalid_in_compare() {
    let wh = Wh::new();
    let text = std::fs::read_to_string(sample(
        "realworld/pytorch-v3/pytorch_transformer_test_dashboard.json",
    ))
    .unwrap();
    let records: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    // A bf16 attention on the H200: base at 700 TFLOPS and 3 TB/s, head at 1,500 TFLOPS
    // (past 989.5) and 9 TB/s (past 4.8).
    for (label, tflops, tbs) in [("base", 700.0, 3.0), ("head", 1500.0, 9.0)] {
        let dir = wh.dir.path().join(label);
        std::fs::create_dir_all(&dir).unwrap();
        for t in 0..3 {
            let jitter = 1.0 + 0.001 * t as f64;
            let out: Vec<serde_json::Value> = records
                .iter()
                .map(|r| {
                    let mut r = r.clone();
                    r["benchmark"]["extra_info"]["device"] = "cuda".into();
                    let v = match r["metric"]["name"].as_str().unwrap() {
                        "forward_tflops" => tflops * jitter,
                        "forward_memory_bandwidth" => tbs * jitter,
                        _ => r["metric"]["benchmark_values"][0].as_f64().unwrap() * jitter,
                    };
                    r["metric"]["benchmark_values"] = serde_json::json!([v]);
                    r
                })
                .collect();
            std::fs::write(
                dir.join(format!("trial{t}.json")),
                serde_json::to_string(&out).unwrap(),
            )
            .unwrap();
        }
        let out = wh.run(&[
            "ingest",
            dir.to_str().unwrap(),
            "--label",
            label,
            "--device",
            "h200",
        ]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        if label == "head" {
            assert!(
                stderr(&out).contains("not a number this device can produce"),
                "{}",
                stderr(&out)
            );
        }
    }
    let (exit, report) = compare_json(&wh, &["base", "head"]);
    let held: Vec<&serde_json::Value> = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["unit"] == "TFLOPS" || r["unit"] == "TB/s")
        .collect();
    assert_eq!(held.len(), 2, "{report}");
    for r in held {
        assert_eq!(r["verdict"], "invalid", "{r}");
    }
    assert_ne!(exit, 0);
    assert_ne!(report["verdict"], "ok");
    // `perfdb sql`'s view holds them by the same unit rule.
    assert_eq!(
        wh.count("SELECT count(*) FROM percent_of_peak WHERE impossible AND label = 'head'"),
        6,
        "three trials, a TFLOPS and a TB/s value each"
    );
}
