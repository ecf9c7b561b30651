//! Every number against the hardware: the H200 samples as a percent of the H200's
//! peaks, a file doctored past the peak warned at ingest, invalid in compare and never
//! an alert, an MI300X log held against the MI300X, and `perfdb devices`.

use crate::common::*;

/// c01 as base and c02 as head, on the H200 they were measured on.
fn h200_pair(wh: &Wh) {
    for (c, label) in [("c01", "base"), ("c02", "head")] {
        let dir = sample(&format!("h200-gemm/history/{c}"));
        wh.ok(&[
            "ingest",
            dir.to_str().unwrap(),
            "--label",
            label,
            "--device",
            "h200",
        ]);
    }
}

/// A copy of `rel` at `dest` with the field `field=` set to `value` on each line that
/// holds every one of `on`; the lines changed (1-based).
fn doctored(
    rel: &str,
    on: &[&str],
    field: &str,
    value: &str,
    dest: &std::path::Path,
) -> Vec<usize> {
    let text = std::fs::read_to_string(sample(rel)).unwrap();
    let mut changed = Vec::new();
    let lines: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if !on.iter().all(|w| l.contains(w)) {
                return l.to_string();
            }
            changed.push(i + 1);
            l.split(' ')
                .map(|w| match w.split_once('=') {
                    Some((k, _)) if k == field => format!("{k}={value}"),
                    _ => w.to_string(),
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    assert!(!changed.is_empty(), "{rel}: no line holds {on:?}");
    std::fs::write(dest, lines.join("\n") + "\n").unwrap();
    changed
}

/// The torch_mm 8192^3 line of a probe log.
const TORCH_MM_8192: &[&str] = &["kernel=torch_mm ", "shape=K8192xM8192xN8192 "];

fn rows<'a>(
    report: &'a serde_json::Value,
    variant: &str,
    key_has: &str,
    metric: &str,
) -> Vec<&'a serde_json::Value> {
    report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| {
            r["variant"] == variant
                && r["metric"] == metric
                && r["key_text"].as_str().unwrap().contains(key_has)
        })
        .collect()
}

fn percent(row: &serde_json::Value) -> f64 {
    let head = row["head"]["median"].as_f64().unwrap();
    100.0 * head / row["peak"]["value"].as_f64().unwrap()
}

#[test]
fn the_h200_samples_show_percent_of_peak_on_every_tflops_and_tbs_row() {
    let wh = Wh::new();
    h200_pair(&wh);
    let (_, report) = compare_json(&wh, &["base", "head"]);
    let all = report["rows"].as_array().unwrap();
    let held: Vec<_> = all
        .iter()
        .filter(|r| {
            (r["metric"] == "throughput" && r["unit"] == "TFLOPS")
                || (r["metric"] == "bandwidth" && r["unit"] == "TB/s")
        })
        .collect();
    assert!(held.len() > 40, "{} rows", held.len());
    for r in &held {
        assert_eq!(r["peak"]["device"], "h200", "{r}");
    }
    // bf16 GEMM 8192^3: torch and the Triton kernel, about 67-80% of 989.5.
    for variant in ["torch_mm", "triton_mm_a16w16", "torch", "triton"] {
        let r = rows(&report, variant, "M=8192 N=8192", "throughput");
        let r = r
            .iter()
            .find(|r| r["key_text"].as_str().unwrap().contains("K=8192"))
            .unwrap();
        assert_eq!(r["peak"]["value"], 989.5);
        let p = percent(r);
        assert!((65.0..=80.0).contains(&p), "{variant}: {p:.1}%");
    }
    // The 2^27-element add: about 89% of 4.8 TB/s.
    for variant in ["torch_add", "triton_add"] {
        let r = rows(&report, variant, "N=134217728", "bandwidth");
        let p = percent(r[0]);
        assert!((87.0..=91.0).contains(&p), "{variant}: {p:.1}%");
    }
    // The text report carries the column.
    let text = stdout(&wh.run(&["compare", "base", "head"]));
    assert!(
        text.lines().next().unwrap_or_default().contains("% peak") || text.contains("  % peak  ")
    );
}

#[test]
fn a_file_doctored_past_the_peak_warns_at_ingest_and_compares_invalid() {
    let wh = Wh::new();
    h200_pair(&wh);
    // torch_mm 8192^3 of c02's first trial, printed at 1,200.5 TFLOPS.
    let f = wh.dir.path().join("doctored.log");
    let at = doctored(
        "h200-gemm/history/c02/trial1.probe.log",
        TORCH_MM_8192,
        "tflops",
        "1200.5",
        &f,
    );
    let out = wh.run(&[
        "ingest",
        f.to_str().unwrap(),
        "--label",
        "doctored",
        "--device",
        "h200",
    ]);
    assert_eq!(code(&out), 0, "a warning, not a refusal: {}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("doctored.log:{}: tflops 1200.5 TFLOPS", at[0]))
            && err.contains("989.5 TFLOPS"),
        "{err}"
    );
    assert!(
        err.contains("not a number this device can produce"),
        "{err}"
    );
    let (exit, report) = compare_json(&wh, &["base", "doctored"]);
    let r = rows(&report, "torch_mm", "K=8192 M=8192 N=8192", "throughput");
    assert_eq!(r[0]["verdict"], "invalid", "{}", r[0]);
    assert!(r[0]["reason"]
        .as_str()
        .unwrap()
        .contains("impossible on this device"));
    assert_ne!(exit, 0, "an invalid row is never 'no regression'");
    assert_eq!(report["verdict"], "inconclusive");
}

#[test]
fn a_latency_too_short_for_the_work_is_reported() {
    let wh = Wh::new();
    // 8192^3 bf16 in 157 us instead of 1570: 7,000 TFLOPS implied.
    let f = wh.dir.path().join("fast.log");
    let at = doctored(
        "h200-gemm/history/c01/trial1.probe.log",
        TORCH_MM_8192,
        "median_latency_us",
        "157.0176",
        &f,
    );
    let out = wh.run(&[
        "ingest",
        f.to_str().unwrap(),
        "--label",
        "x",
        "--machine",
        "NVIDIA H200",
    ]);
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "fast.log:{}: median_latency_us 157.0 us for 2·M·N·K",
            at[0]
        )),
        "{err}"
    );
    assert!(err.contains("implies 7002.5 TFLOPS"), "{err}");
}

#[test]
fn detect_never_alerts_on_an_impossible_value() {
    let run = |device: &[&str]| -> String {
        let wh = Wh::new();
        for c in 1..=10 {
            let dir = wh.dir.path().join(format!("c{c:02}"));
            copy_dir(&sample(&format!("h200-gemm/history/c{c:02}")), &dir);
            if c > 5 {
                // From c06 on, every trial prints the add at 8.4 TB/s: past the H200's 4.8.
                for t in 1..=3 {
                    let log = format!("trial{t}.probe.log");
                    doctored(
                        &format!("h200-gemm/history/c{c:02}/{log}"),
                        &["kernel=torch_add ", "shape=N134217728 "],
                        "bandwidth_gb_s",
                        "8400.5",
                        &dir.join(&log),
                    );
                }
            }
            let time = format!("2026-07-01T{c:02}:00:00Z");
            ingest_commit(&wh, &dir, &format!("c{c:02}"), &time, device);
        }
        let out = wh.run(&["detect", "--label", "main", "--format", "json"]);
        stdout(&out)
    };
    let on_h200 = run(&["--device", "h200"]);
    let unknown = run(&[]);
    let add_alert = |json: &str| json.contains("torch_add") && json.contains("bandwidth");
    assert!(
        add_alert(&unknown),
        "the doctored step alerts where the device is unknown"
    );
    assert!(
        !add_alert(&on_h200),
        "an impossible value raised an alert: {on_h200}"
    );
}

#[test]
fn an_mi300x_record_is_held_against_the_mi300x() {
    let wh = Wh::new();
    // hipBLASLt names its device: `Device ID 0 : AMD Instinct MI300X gfx942:...`.
    let out = wh.ingest(
        &sample("formats/28_hipblaslt_rocblas_bench_csv_emulated.txt"),
        "amd",
    );
    assert!(!out.contains("device unknown"));
    let got =
        wh.sql("SELECT DISTINCT device, quantity, peak FROM percent_of_peak ORDER BY quantity");
    let got: Vec<(String, String, f64)> = got
        .iter()
        .map(|r| {
            (
                r["device"].as_str().unwrap().to_string(),
                r["quantity"].as_str().unwrap().to_string(),
                r["peak"].as_f64().unwrap(),
            )
        })
        .collect();
    assert!(
        got.contains(&("mi300x".into(), "bf16".into(), 1307.4)),
        "{got:?}"
    );
    assert!(
        got.contains(&("mi300x".into(), "bandwidth".into(), 5.3)),
        "{got:?}"
    );
    // The arch alone names the MI300X too; an MI325X team says so in perfdb.toml.
    std::fs::write(
        wh.dir.path().join("perfdb.toml"),
        "[[device]]\nid = \"ours\"\nname = \"our MI325X\"\nidentities = [\"gfx942\"]\nbf16 = 1307.4\nbandwidth = 6.0\n",
    )
    .unwrap();
    let out = wh
        .cmd()
        .current_dir(wh.dir.path())
        .args(["devices"])
        .output()
        .unwrap();
    assert!(stdout(&out).contains("ours") && stdout(&out).contains("perfdb.toml;"));
}

/// A configured device's name holding terminal escapes prints them escaped, in the
/// table and in its JSON alike (as ingest's warning does), never raw.
#[test]
fn a_configured_device_name_prints_its_escapes_visible() {
    let wh = Wh::new();
    std::fs::write(
        wh.dir.path().join("perfdb.toml"),
        "[[device]]\nid = \"ours\"\nname = \"our \\u001b]0;owned\\u0007 \\u009b2J GPU\"\nidentities = [\"ci-box-9\"]\nbf16 = 900.0\nbandwidth = 4.0\n",
    )
    .unwrap();
    for format in ["text", "json"] {
        let out = wh.run(&["devices", "--format", format]);
        let text = stdout(&out);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        assert!(
            !text.contains('\x1b') && !text.contains('\x07') && !text.contains('\u{9b}'),
            "{format}: raw escapes reached the terminal"
        );
        assert!(text.contains("our \\u"), "{format}: {text}");
    }
}

#[test]
fn a_run_on_no_known_device_says_so_once() {
    let wh = Wh::new();
    let dir = sample("h200-gemm/history/c01");
    let out = wh.run(&["ingest", dir.to_str().unwrap(), "--label", "main"]);
    let err = stderr(&out);
    assert_eq!(
        err.matches("device unknown: percent of peak not computed")
            .count(),
        1,
        "{err}"
    );
    let out = wh.run(&[
        "ingest",
        dir.to_str().unwrap(),
        "--label",
        "x",
        "--device",
        "h300",
    ]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("--device h300: not a device perfdb knows; `perfdb devices`"));
    // Without a device no percent is made up.
    assert_eq!(wh.count("SELECT count(*) FROM percent_of_peak"), 0);
}

#[test]
fn perfdb_devices_lists_the_table() {
    let wh = Wh::new();
    insta::assert_snapshot!(wh.ok(&["devices"]));
}

/// A `[[device]]` of perfdb.toml is the table each command reads runs against, passed
/// from the config it loaded: the device ingest stores, the peak compare holds a row
/// to, and `sql`'s percent of peak all name it.
#[test]
fn a_configured_device_is_the_one_every_command_reads() {
    let wh = Wh::new();
    std::fs::write(
        wh.dir.path().join("perfdb.toml"),
        "[[device]]\nid = \"ours\"\nname = \"our H200\"\nidentities = [\"ci-box-7\"]\nbf16 = 900.0\nbandwidth = 4.0\n",
    )
    .unwrap();
    for (c, label) in [("c01", "base"), ("c02", "head")] {
        let dir = sample(&format!("h200-gemm/history/{c}"));
        let dir = dir.to_str().unwrap();
        wh.ok(&["ingest", dir, "--label", label, "--machine", "ci-box-7"]);
    }
    let stored = wh.sql("SELECT DISTINCT device FROM percent_of_peak");
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert_eq!(stored[0]["device"], "ours");
    let (_, r) = compare_json(&wh, &["base", "head", "--control", "torch"]);
    let held: Vec<&serde_json::Value> = r["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|row| row["unit"] == "TFLOPS")
        .collect();
    assert!(!held.is_empty());
    for row in held {
        assert_eq!(row["peak"]["device"], "ours", "{row}");
        assert_eq!(row["peak"]["value"], 900.0, "{row}");
    }
    // `--device` names it by its id or an identity, once, in ingest.
    let dir = sample("h200-gemm/history/c03");
    wh.ok(&[
        "ingest",
        dir.to_str().unwrap(),
        "--label",
        "x",
        "--device",
        "ci-box-7",
    ]);
    let x = wh.sql("SELECT DISTINCT device FROM percent_of_peak WHERE label = 'x'");
    assert_eq!(x.len(), 1, "{x:?}");
    assert_eq!(x[0]["device"], "ours");
}

/// An nvbench output that names its GPU (`NVIDIA H200`) is held to that GPU's peaks as
/// one ingested with `--device h200` is: the same warnings, JSON and markdown alike.
#[test]
fn a_device_named_by_the_nvbench_file_warns_as_the_flag_does() {
    let wh = Wh::new();
    let dir = wh.dir.path();
    let md = std::fs::read_to_string(sample("gpu-harness/nvbench/h200_run1.md")).unwrap();
    let md = md.replace("|   4.154 TB/s |", "|   9.600 TB/s |");
    assert!(md.contains("9.600 TB/s"));
    std::fs::write(dir.join("run.md"), md).unwrap();
    let json = std::fs::read_to_string(sample("gpu-harness/nvbench/h200_run1.json")).unwrap();
    let json = json.replace("\"940304703340.735\"", "\"9600000000000.0\"");
    assert!(json.contains("9600000000000.0"));
    std::fs::write(dir.join("run.json"), json).unwrap();
    for file in ["run.md", "run.json"] {
        let path = dir.join(file);
        let path = path.to_str().unwrap();
        let named = wh.run(&["ingest", path, "--label", "named"]);
        let flagged = wh.run(&["ingest", path, "--label", "flag", "--device", "h200"]);
        let warnings = |o: &std::process::Output| -> Vec<String> {
            stderr(o)
                .lines()
                .filter(|l| l.contains("above what"))
                .map(String::from)
                .collect()
        };
        assert!(
            warnings(&named).iter().any(|w| w.contains("9.600 TB/s")),
            "{file}: {}",
            stderr(&named)
        );
        assert_eq!(warnings(&named), warnings(&flagged), "{file}");
    }
}
