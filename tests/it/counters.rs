//! Why it moved: hardware counters joined to the rows they explain (compare, `ab
//! --profile`), and the environment underneath a step (detect, `alerts show`).

use crate::common::*;
use serde_json::Value;

const NCU_HEADER: &str = "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"";

/// ncu's details page for one launch of `add_kernel` over `grid` blocks moving `mbytes`.
fn ncu_csv(grid: u64, mbytes: f64, sm_pct: f64) -> String {
    let rec = |section: &str, name: &str, unit: &str, v: String| {
        format!("\"0\",\"7\",\"python3\",\"127.0.0.1\",\"add_kernel\",\"1\",\"7\",\"(1024, 1, 1)\",\"({grid}, 1, 1)\",\"0\",\"9.0\",\"{section}\",\"{name}\",\"{unit}\",\"{v}\"\n")
    };
    let mut s = format!("{NCU_HEADER}\n");
    s += &rec(
        "GPU Speed Of Light Throughput",
        "Compute (SM) Throughput",
        "%",
        format!("{sm_pct:.2}"),
    );
    s += &rec(
        "GPU Speed Of Light Throughput",
        "DRAM Throughput",
        "%",
        "91.20".into(),
    );
    s += &rec(
        "Memory Workload Analysis",
        "dram__bytes_read.sum",
        "Mbyte",
        format!("{mbytes:.2}"),
    );
    s += &rec(
        "Launch Statistics",
        "Registers Per Thread",
        "register/thread",
        "16".into(),
    );
    s
}

/// Three timed trials a side of the H200 Triton vector-add print, head's Triton 20%
/// slower, and a fourth run a side profiled by ncu: the same print, timed under ncu's
/// replay (its Triton 10x slower), with the counters of the launch in the same output.
fn profiled_sides(wh: &Wh) {
    let stdout = std::fs::read_to_string(sample("h200-triton36/vector-add-stdout.txt")).unwrap();
    for (label, slower, grid, mbytes) in [
        ("base", 1.0, 131072, 1610.61),
        ("head", 1.25, 157287, 1932.74),
    ] {
        for t in 0..4 {
            let profiled = t == 3;
            let noise = 1.0 + 0.003 * t as f64;
            let slower = if profiled { slower * 10.0 } else { slower };
            let mut text = String::from("==PROF== Connected to process 7 (/usr/bin/python3)\n");
            for l in stdout.lines() {
                let cells: Vec<&str> = l.split_whitespace().collect();
                // `i  size  Triton  Torch`: Triton slower on head, Torch the same; each
                // number right-aligned where it was (the table is fixed-width).
                if cells.len() == 4 && cells[0].parse::<u32>().is_ok() {
                    let triton: f64 = cells[2].parse().unwrap();
                    let torch: f64 = cells[3].parse().unwrap();
                    let new = [
                        cells[0].to_string(),
                        cells[1].to_string(),
                        format!("{:.6}", triton / slower * noise),
                        format!("{:.6}", torch * noise),
                    ];
                    let mut line = String::new();
                    let mut from = 0;
                    for (old, new) in cells.iter().zip(&new) {
                        let end = from + l[from..].find(old).unwrap() + old.len();
                        let width = end - line.len();
                        line += &format!("{new:>width$}");
                        from = end;
                    }
                    text += &line;
                    text.push('\n');
                } else {
                    text += l;
                    text.push('\n');
                }
            }
            text += "==PROF== Disconnected from process 7\n";
            if profiled {
                text += &ncu_csv(grid, mbytes * noise, 23.5);
            } else {
                text = text.replace("==PROF== Connected to process 7 (/usr/bin/python3)\n", "");
                text = text.replace("==PROF== Disconnected from process 7\n", "");
            }
            let path = wh.dir.path().join(format!("{label}-{t}.txt"));
            std::fs::write(&path, text).unwrap();
            wh.ingest(&path, label);
        }
    }
}

/// A benchmark profiled by ncu on both sides: the regressed row shows the counters that
/// moved with it, largest first, and what they say; the counters are never rows.
#[test]
fn compare_shows_the_counters_that_moved_with_a_regressed_row() {
    let wh = Wh::new();
    profiled_sides(&wh);
    let formats = wh.sql("SELECT DISTINCT format FROM runs");
    assert_eq!(
        formats,
        vec![serde_json::json!({"format": "triton-perf-report"})]
    );
    let (code, v) = compare_json(&wh, &["base", "head", "--control", "Torch"]);
    assert_eq!(code, 1, "{}", v["reason"]);
    // The profiled runs' own rows ran under ncu's replay: never a trial, said.
    assert_eq!(v["rows"][0]["base"]["n"], 3, "{}", v["rows"][0]);
    assert_eq!(
        v["profiling"][0],
        "1 base and 1 head profiled run(s) left out of the timed trials: their rows ran under the profiler's replay (only their counters are read)"
    );
    // Counters are no rows: every row is the benchmark's.
    assert!(v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["table"] == "vector-add-performance"));
    let counters = v["counters"].as_array().expect("counters");
    let regressed = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["verdict"] == "regression")
        .count();
    assert_eq!(counters.len(), regressed, "{counters:?}");
    let e = &counters[0];
    assert_eq!(e["kernel"], "add_kernel");
    assert_eq!(e["profiler"], "ncu");
    assert_eq!(e["joined_by"], "the name (add)");
    let moved: Vec<&str> = e["moved"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    let mut moved = moved;
    moved.sort();
    assert_eq!(moved, ["Grid Size", "dram__bytes_read.sum"], "{e}");
    assert_eq!(
        e["unchanged"], 4,
        "SM throughput, DRAM throughput, registers, block"
    );
    assert_eq!(
        e["reading"],
        "the kernel moves more data (+20%), its launch grew (+20%), compute unchanged"
    );
    let text = stdout(&wh.run(&["compare", "base", "head", "--control", "Torch"]));
    let section = text.split("counters that moved:").nth(1).expect(&text);
    assert!(
        section.contains("add_kernel (ncu, joined by the name (add)): the kernel moves more data"),
        "{section}"
    );
    assert!(
        section.contains(
            "dram__bytes_read.sum [Memory Workload Analysis]: 1.625e9 -> 1.950e9 byte (+20.0%)"
        ),
        "{section}"
    );
}

/// Sides that hold counters only compare nothing, and say why: never "no regression".
#[test]
fn counters_alone_are_never_judged() {
    let wh = Wh::new();
    let file = sample("realworld/ncu-csv/superbench_cublaslt_ncu.log");
    wh.ingest(&file, "a");
    let copy = wh.dir.path().join("again.log");
    std::fs::copy(&file, &copy).unwrap();
    wh.ingest(&copy, "b");
    let (code, v) = compare_json(&wh, &["a", "b"]);
    assert_eq!(code, 3, "{v}");
    assert!(v["rows"].as_array().unwrap().is_empty());
    assert!(
        v["warnings"].to_string().contains("hardware counters only"),
        "{v}"
    );
}

/// `--kernel ROW=KERNEL` joins a kernel whose name says nothing of the row; a changed row
/// no kernel joins is said, never explained by a guess.
#[test]
fn a_kernel_joins_by_the_flag_and_an_unjoined_row_is_said() {
    let wh = Wh::new();
    profiled_sides(&wh);
    let (_, v) = compare_json(
        &wh,
        &[
            "base",
            "head",
            "--control",
            "Torch",
            "--kernel",
            "size=4096=add",
        ],
    );
    let counters = v["counters"].as_array().unwrap();
    assert!(
        counters
            .iter()
            .any(|e| e["joined_by"] == "--kernel size=4096=add" && e["key_text"] == "size=4096"),
        "{counters:?}"
    );
    // The flag names the row: for it, no other join is tried.
    assert!(!counters
        .iter()
        .any(|e| e["key_text"] == "size=4096" && e["joined_by"] != "--kernel size=4096=add"));
    let (_, v) = compare_json(
        &wh,
        &[
            "base",
            "head",
            "--control",
            "Torch",
            "--kernel",
            "size=4096=gemm_kernel",
        ],
    );
    let warnings = v["warnings"].to_string();
    assert!(
        warnings.contains("join none of them by evidence (a range, a scope, a name): join them with --kernel ROW=KERNEL"),
        "{warnings}"
    );
}

/// Fake `ncu` on PATH: runs the profiled command (its output discarded) and prints the
/// details page of one launch, its DRAM bytes 20% up when the command is head's.
fn fake_ncu(dir: &std::path::Path) -> std::ffi::OsString {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let base = ncu_csv(131072, 1610.61, 23.5);
    let head = ncu_csv(131072, 1932.74, 23.5);
    let script = format!(
        "#!/bin/sh\nall=\"$*\"\nwhile [ \"$1\" != sh ]; do shift; done\n\"$@\" >/dev/null 2>&1\necho '==PROF== Disconnected from process 7'\ncase \"$all\" in\n  *head*) cat <<'EOF'\n{head}EOF\n  ;;\n  *) cat <<'EOF'\n{base}EOF\n  ;;\nesac\n"
    );
    executable(&bin.join("ncu"), &script);
    path_with(&bin)
}

/// Trials of a `[perf]` row, head's 20% slower, named `add`.
fn arm(wh: &Wh, name: &str, us: f64) -> String {
    let script = wh.dir.path().join(format!("{name}.sh"));
    std::fs::write(
        &script,
        format!("#!/bin/sh\necho \"[perf] dim: (64,) dtype: bf16, torch avg: 5.00 us, add avg: {us} us\"\n"),
    )
    .unwrap();
    format!("sh {}", script.display())
}

/// `ab --profile ncu`: the timed trials decide, then one profiled trial a side whose
/// counters (never its time) are stored and shown with the regressed row.
#[test]
fn ab_profiles_each_arm_once_after_the_trials_decide() {
    let wh = Wh::new();
    let path = fake_ncu(wh.dir.path());
    let out = ab_profiled(&wh, &path, &[]);
    let v: Value =
        serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)));
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let profiled = wh.sql(
        "SELECT regexp_extract(tags, '\"arm\":\"([^\"]*)\"', 1) AS arm, format FROM runs \
         WHERE contains(tags, '\"profiled\":\"ncu\"') ORDER BY arm",
    );
    assert_eq!(
        profiled,
        vec![
            serde_json::json!({"arm": "base", "format": "ncu-csv"}),
            serde_json::json!({"arm": "head", "format": "ncu-csv"})
        ]
    );
    // The profiled trials stored counters only: the timed rows are the trials'.
    let timed = wh.count(
        "SELECT count(*) FROM measurements m JOIN runs r USING (run_id) \
         WHERE contains(r.tags, '\"profiled\"') AND m.table_name = 'perf'",
    );
    assert_eq!(timed, 0);
    let e = &v["counters"][0];
    assert_eq!(e["kernel"], "add_kernel", "{v}");
    assert_eq!(e["moved"][0]["name"], "dram__bytes_read.sum");
    let cost = v["profiling"][0].as_str().unwrap();
    assert!(
        cost.starts_with("one profiled trial a side under ncu: base "),
        "{cost}"
    );
}

/// A profiler that is not there is an error before any trial runs.
#[test]
fn ab_without_its_profiler_runs_no_trial() {
    let wh = Wh::new();
    let (base, head) = (arm(&wh, "base", 10.0), arm(&wh, "head", 12.0));
    let out = wh
        .cmd()
        .env("PATH", "/usr/bin:/bin")
        .args([
            "ab",
            "--quiet",
            "--no-gpu-state",
            "--profile",
            "ncu",
            "--base",
            &base,
            "--head",
            &head,
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("`ncu` is not on PATH"),
        "{}",
        stderr(&out)
    );
    let runs = wh.run(&["sql", "SELECT count(*) AS n FROM runs", "--format", "csv"]);
    assert!(
        code(&runs) != 0 || stdout(&runs).ends_with("\n0\n"),
        "no trial stored"
    );
}

/// A history with a toolchain change (triton 3.5.1 -> 3.6.0 at c05) and a code change
/// (at c12) raises two alerts, each saying which it is.
#[test]
fn a_toolchain_step_and_a_code_step_say_which_they_are() {
    let wh = Wh::new();
    for c in 0..18 {
        let us = match c {
            0..=4 => 10.0,
            5..=11 => 11.0,
            _ => 12.5,
        };
        let triton = if c < 5 { "3.5.1" } else { "3.6.0" };
        let tag = format!("triton={triton}");
        perf_commit_with(&wh, c, us, &["--tag", &tag, "--tag", "driver=570.124.06"]);
    }
    let out = wh.run(&["detect", "--label", "main", "--format", "json"]);
    let v: Value =
        serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)));
    let events: Vec<&Value> = v["detection"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "regression" && e["variant"] == "ck")
        .collect();
    let at: Vec<(&str, &Value)> = events
        .iter()
        .map(|e| (e["first_bad_commit"].as_str().unwrap(), &e["underneath"]))
        .collect();
    assert_eq!(at.len(), 2, "{at:?}");
    assert_eq!(at[0].0, "c05");
    assert_eq!(
        at[0].1["changed"],
        serde_json::json!([{"name": "triton", "before": "3.5.1", "after": "3.6.0"}])
    );
    assert_eq!(at[1].0, "c12");
    assert_eq!(at[1].1["changed"], serde_json::json!([]));
    assert_eq!(
        at[1].1["unchanged"],
        serde_json::json!(["driver", "triton"])
    );
    // The terminal table says it beside each step, and `alerts show` says it first.
    let text = stdout(&wh.run(&["detect", "--label", "main"]));
    assert!(text.contains("triton 3.5.1 -> 3.6.0"), "{text}");
    assert!(
        text.contains("not the environment (driver, triton unchanged)"),
        "{text}"
    );
    let alerts = wh.sql("SELECT alert_id, first_bad_commit FROM alerts ORDER BY first_bad_commit");
    let first = alerts[0]["alert_id"].as_str().unwrap();
    let shown = stdout(&wh.run(&["alerts", "show", first]));
    let lines: Vec<&str> = shown.lines().collect();
    assert!(
        lines[2].contains("underneath: triton 3.5.1 -> 3.6.0 between c04 and c05"),
        "{shown}"
    );
    // The control beside it: torch did not move across the same commits.
    assert!(
        lines[3].contains("beside it, the same shape across the same commits: torch +0.0%"),
        "{shown}"
    );
    let page = crate::bisect::alert_page(&wh, first);
    assert!(
        page.contains(
            "<p id=\"underneath\">Underneath: triton 3.5.1 -&gt; 3.6.0 between c04 and c05</p>"
        ),
        "{page}"
    );
    // The message says it first too: the code step's (the toolchain step's alert was
    // superseded by it), and, on a history that ends before the code step, the
    // toolchain step's.
    let (url, got) = receiver(vec![]);
    wh.run(&["detect", "--label", "main", "--notify", &url]);
    let text = got.lock().unwrap()[0]["text"].as_str().unwrap().to_string();
    assert!(text.starts_with("perfdb: perf ck"), "{text}");
    let wh2 = Wh::new();
    for c in 0..11 {
        let us = if c < 5 { 10.0 } else { 11.0 };
        let tag = format!("triton={}", if c < 5 { "3.5.1" } else { "3.6.0" });
        perf_commit_with(&wh2, c, us, &["--tag", &tag]);
    }
    let (url, got) = receiver(vec![]);
    wh2.run(&["detect", "--label", "main", "--notify", &url]);
    let got = got.lock().unwrap();
    let text = got[0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("triton 3.5.1 -> 3.6.0 between c04 and c05 · perfdb: perf ck"),
        "{text}"
    );
    assert_eq!(got[0]["underneath"]["changed"][0]["name"], "triton");
}

/// A stand-in for the GPU's Python: prints what the bundled microbenchmark prints (its
/// PyTorch v3 records) with the figures given; the real one needs a GPU.
pub(crate) fn fake_roofs_python(dir: &std::path::Path, gbps: f64, tflops: f64) -> String {
    fake_roofs(
        dir,
        "NVIDIA H200",
        &[gbps * 0.99, gbps, gbps * 1.01],
        &[tflops * 0.99, tflops, tflops * 1.01],
    )
}

/// [`fake_roofs_python`] on GPU `gpu`, each roof's repeats as given.
fn fake_roofs(dir: &std::path::Path, gpu: &str, gbps: &[f64], tflops: &[f64]) -> String {
    let rec = |model: &str, dtype: Option<&str>, metric: &str, v: &[f64]| {
        let dtype = dtype
            .map(|d| format!(",\"dtype\":\"{d}\""))
            .unwrap_or_default();
        let values: Vec<String> = v.iter().map(|x| x.to_string()).collect();
        format!(
            "{{\"benchmark\":{{\"name\":\"roofs\"{dtype},\"extra_info\":{{\"roof\":\"x\"}}}},\"model\":{{\"name\":\"{model}\",\"backend\":\"torch\"}},\"metric\":{{\"name\":\"{metric}\",\"benchmark_values\":[{}]}},\"runners\":[{{\"name\":\"{gpu}\",\"gpu_info\":\"{gpu}\"}}]}}",
            values.join(",")
        )
    };
    let json = format!(
        "[{},{}]",
        rec("copy", None, "bandwidth_gbps", gbps),
        rec("gemm", Some("bf16"), "tflops", tflops)
    );
    let path = dir.join(format!("fake-python-{}", gpu.len() + gbps.len()));
    executable(&path, &format!("#!/bin/sh\ncat <<'EOF'\n{json}\nEOF\n"));
    path.to_string_lossy().into_owned()
}

/// Each roof is the median of its repeats (the same figure in `devices`, compare and the
/// roofline); an impossible roof and an unknown GPU are refused, nothing stored.
#[test]
fn devices_measure_takes_the_median_and_refuses_what_no_gpu_reaches() {
    let wh = Wh::new();
    let python = fake_roofs(
        wh.dir.path(),
        "NVIDIA H200",
        &[4100.0, 4150.0, 4160.0],
        &[100.0, 700.0, 712.0],
    );
    let out = wh.run(&["devices", "measure", "--python", &python]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let said = stdout(&out);
    assert!(
        said.contains("NVIDIA H200 SXM bf16: 700.0 TFLOPS measured"),
        "{said}"
    );
    let listed = stdout(&wh.run(&["devices"]));
    assert!(listed.contains("bf16: 700.0 TFLOPS measured"), "{listed}");
    let before = wh.count("SELECT count(*) FROM runs");
    // 12 TB/s on an H200 (datasheet 4.8): no roof it has.
    let python = fake_roofs(wh.dir.path(), "NVIDIA H200", &[12000.0; 3], &[700.0; 3]);
    let out = wh.run(&["devices", "measure", "--python", &python]);
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    let err = stderr(&out);
    assert!(
        err.contains("measured 12.00 TB/s for bandwidth on NVIDIA H200 SXM, 250% of the datasheet's 4.800 TB/s")
            && err.contains("nothing was stored"),
        "{err}"
    );
    // Zero.
    let python = fake_roofs(wh.dir.path(), "NVIDIA H200", &[4000.0; 3], &[0.0; 3]);
    let out = wh.run(&["devices", "measure", "--python", &python]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("no roof this GPU has"),
        "{}",
        stderr(&out)
    );
    // A GPU the table does not know: named, nothing stored.
    let python = fake_roofs(
        wh.dir.path(),
        "Quantum Frobnicator 9000",
        &[100.0; 3],
        &[10.0; 3],
    );
    let out = wh.run(&["devices", "measure", "--python", &python]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out)
            .contains("ran on `Quantum Frobnicator 9000`, a GPU the device table does not know"),
        "{}",
        stderr(&out)
    );
    assert_eq!(wh.count("SELECT count(*) FROM runs"), before);
}

/// `devices measure` stores what the microbenchmark reached under `roofs`, says it
/// against the datasheet, and `perfdb devices` shows it after; a Python that cannot run
/// it is an error saying why, nothing stored.
#[test]
fn devices_measure_stores_the_roofs_and_devices_shows_them() {
    let wh = Wh::new();
    let python = fake_roofs_python(wh.dir.path(), 4150.0, 712.0);
    let out = wh.run(&["devices", "measure", "--python", &python]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let said = stdout(&out);
    assert!(
        said.contains(
            "NVIDIA H200 SXM bandwidth: 4.150 TB/s measured, 86% of the datasheet's 4.800"
        ),
        "{said}"
    );
    assert!(
        said.contains("NVIDIA H200 SXM bf16: 712.0 TFLOPS measured, 72% of the datasheet's 989.5"),
        "{said}"
    );
    let listed = stdout(&wh.run(&["devices"]));
    assert!(
        listed.contains("measured on this machine's GPUs"),
        "{listed}"
    );
    let v: Value =
        serde_json::from_str(&stdout(&wh.run(&["devices", "--format", "json"]))).unwrap();
    let h200 = v
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["id"] == "h200")
        .unwrap();
    assert_eq!(h200["measured"].as_array().unwrap().len(), 2, "{h200}");
    // Percent of peak, of the datasheet's and of what was measured.
    for c in [12, 13] {
        let dir = sample(&format!("h200-gemm/history/c{c:02}"));
        let time = format!("2026-07-01T{c:02}:00:00Z");
        ingest_commit(&wh, &dir, &format!("c{c:02}"), &time, &["--device", "h200"]);
    }
    let (_, v) = compare_json(&wh, &["c12", "c13"]);
    let bf16: Vec<&Value> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["peak"]["quantity"] == "bf16")
        .collect();
    assert!(!bf16.is_empty());
    assert!(bf16.iter().all(|r| r["measured_peak"] == 712.0), "{bf16:?}");
    let text = stdout(&wh.run(&["compare", "c12", "c13"]));
    assert!(text.contains("% of measured)"), "{text}");
    // No torch, no GPU: the script's own words, exit 2, nothing stored.
    let failing = wh.dir.path().join("no-torch");
    std::fs::write(
        &failing,
        "#!/bin/sh\necho 'perfdb devices measure needs torch: No module named torch' >&2\nexit 1\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&failing, std::fs::Permissions::from_mode(0o755)).unwrap();
    let before = wh.count("SELECT count(*) FROM runs");
    let out = wh.run(&["devices", "measure", "--python", failing.to_str().unwrap()]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("needs torch: No module named torch"),
        "{}",
        stderr(&out)
    );
    assert_eq!(wh.count("SELECT count(*) FROM runs"), before);
}

/// A history profiled at every commit: the alert of a step says which counters moved
/// across it, in `alerts show` (text and JSON) and on its page.
#[test]
fn an_alert_shows_the_counters_that_moved_across_its_step() {
    let wh = Wh::new();
    for c in 0..16 {
        let (us, mbytes) = if c < 8 {
            (10.0, 1610.61)
        } else {
            (12.0, 1932.74)
        };
        let dir = wh.dir.path().join(format!("prof/c{c:02}"));
        std::fs::create_dir_all(&dir).unwrap();
        // Three timed trials, and one run profiled by ncu (its own line timed under the
        // replay: never a trial).
        for t in 0..4 {
            let v = us * (1.0 + 0.002 * t as f64);
            let line =
                format!("[perf] dim: (64,) dtype: bf16, torch avg: 5.00 us, ck avg: {v:.3} us\n");
            let text = if t == 3 {
                line + &ncu_csv(131072, mbytes * (1.0 + 0.001 * t as f64), 23.5)
            } else {
                line
            };
            std::fs::write(dir.join(format!("t{t}.log")), text).unwrap();
        }
        let time = format!("2026-07-01T{c:02}:00:00Z");
        ingest_commit(&wh, &dir, &format!("c{c:02}"), &time, &[]);
    }
    wh.run(&["detect", "--label", "main"]);
    let alerts = wh.sql("SELECT alert_id FROM alerts WHERE first_bad_commit = 'c08'");
    let id = alerts[0]["alert_id"].as_str().expect("an alert at c08");
    let shown = stdout(&wh.run(&["alerts", "show", id]));
    assert!(shown.contains("counters at the step, perf ck"), "{shown}");
    assert!(
        shown.contains(
            "add_kernel (ncu, joined by the only kernel profiled): the kernel moves more data"
        ),
        "{shown}"
    );
    assert!(
        shown.contains("dram__bytes_read.sum [Memory Workload Analysis]"),
        "{shown}"
    );
    let v: Value = serde_json::from_str(&stdout(
        &wh.run(&["alerts", "show", id, "--format", "json"]),
    ))
    .unwrap();
    assert_eq!(
        v["counters"][0]["moved"][0]["name"], "dram__bytes_read.sum",
        "{v}"
    );
    let page = crate::bisect::alert_page(&wh, id);
    assert!(
        page.contains("<h2>Counters that moved at the step</h2>"),
        "{page}"
    );
}

/// A benchmark table named like a profiler (`proton`, `ncu`) is a benchmark table: its
/// Triton 30% slower on head is a regression, never taken for counters.
#[test]
fn a_table_named_like_a_profiler_is_judged_like_any_other() {
    let stdout_text =
        std::fs::read_to_string(sample("h200-triton36/vector-add-stdout.txt")).unwrap();
    for name in ["proton", "ncu"] {
        let wh = Wh::new();
        for (label, slower) in [("base", 1.0), ("head", 1.3)] {
            for t in 0..5 {
                let noise = 1.0 + 0.002 * t as f64;
                let mut text = String::new();
                for l in stdout_text.lines() {
                    let cells: Vec<&str> = l.split_whitespace().collect();
                    if l.starts_with("vector-add-performance:") {
                        text += &format!("{name}:\n");
                    } else if cells.len() == 4 && cells[0].parse::<u32>().is_ok() {
                        let triton: f64 = cells[2].parse().unwrap();
                        let torch: f64 = cells[3].parse().unwrap();
                        text += &format!(
                            "{:<2}{:>12}{:>15.6}{:>14.6}\n",
                            cells[0],
                            cells[1],
                            triton / slower * noise,
                            torch * noise
                        );
                    } else {
                        text += l;
                        text.push('\n');
                    }
                }
                let path = wh.dir.path().join(format!("{label}-{t}.txt"));
                std::fs::write(&path, text).unwrap();
                wh.ingest(&path, label);
            }
        }
        let (code, v) = compare_json(&wh, &["base", "head", "--control", "Torch"]);
        assert_eq!(code, 1, "{name}: {}", v["reason"]);
        let regressed: Vec<&Value> = v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["verdict"] == "regression")
            .collect();
        assert!(!regressed.is_empty(), "{name}: {v}");
        assert!(regressed.iter().all(|r| r["table"] == name), "{name}");
    }
}

/// Real captures from an H100 (`sample-data/h100-counters/full`): five timed runs a side
/// of the GEMM at tile 128 and at tile 64, and head's ncu capture of a timing-loop run
/// (its `[perf][matmul]` line timed under ncu's replay) ingested by hand under the same
/// label: five trials a side, the profiled run left out and said, the regression found.
#[test]
fn an_ncu_capture_ingested_by_hand_is_never_a_timed_trial() {
    let wh = Wh::new();
    for (label, file) in [
        ("base", "timing-gemm-tile128.txt"),
        ("head", "timing-gemm-tile64.txt"),
    ] {
        let text = std::fs::read_to_string(sample(&format!("h100-counters/full/{file}"))).unwrap();
        for (t, line) in text.lines().enumerate() {
            let path = wh.dir.path().join(format!("{label}-{t}.log"));
            std::fs::write(&path, format!("{line}\n")).unwrap();
            wh.ingest(&path, label);
        }
    }
    let capture = sample("h100-counters/full/ncu-everylaunch-gemm.csv");
    let out = wh.run(&["ingest", "--label", "head", capture.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("ran under ncu's replay: stored marked profiled"),
        "{}",
        stderr(&out)
    );
    let (code, v) = compare_json(&wh, &["base", "head", "--control", "torch"]);
    assert_eq!(code, 1, "{}", v["reason"]);
    let row = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["table"] == "perf[matmul]" && r["variant"] == "triton")
        .unwrap();
    assert_eq!(
        (row["base"]["n"].as_u64(), row["head"]["n"].as_u64()),
        (Some(5), Some(5))
    );
    assert_eq!(row["verdict"], "regression");
    assert!(
        v["profiling"][0]
            .as_str()
            .unwrap()
            .starts_with("0 base and 1 head profiled run(s) left out"),
        "{v}"
    );
    let tagged = wh.count("SELECT count(*) FROM runs WHERE contains(tags, '\"profiled\":\"ncu\"')");
    assert_eq!(tagged, 1);
}

/// `ab --profile ncu` of two `[perf]` arms (head 20% slower), with `extra` flags.
fn ab_args(wh: &Wh, extra: &[&str]) -> Vec<String> {
    let (base, head) = (arm(wh, "base", 10.0), arm(wh, "head", 12.0));
    let mut args: Vec<String> = [
        "ab",
        "--quiet",
        "--no-gpu-state",
        "--format",
        "json",
        "--control",
        "torch",
        "--max-trials",
        "4",
        "--seed",
        "3",
        "--profile",
        "ncu",
        "--base",
        &base,
        "--head",
        &head,
    ]
    .map(String::from)
    .to_vec();
    args.extend(extra.iter().map(|e| e.to_string()));
    args
}

/// [`ab_args`] run with `path` as PATH: its output.
fn ab_profiled(wh: &Wh, path: &std::ffi::OsString, extra: &[&str]) -> std::process::Output {
    wh.cmd()
        .env("PATH", path)
        .args(ab_args(wh, extra))
        .output()
        .unwrap()
}

/// A stand-in `ncu` that keeps its arguments in `args.txt` beside it, then does `then`.
fn recording_ncu(dir: &std::path::Path, then: &str) -> std::ffi::OsString {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = format!(
        "#!/bin/sh\necho \"$*\" >> {}/args.txt\n{then}\n",
        bin.display()
    );
    executable(&bin.join("ncu"), &script);
    path_with(&bin)
}

/// ncu profiles the first launch of each kernel unless `--profile-args` scopes it; a
/// profiler that fails after the trials decided leaves the verdict and its exit code,
/// with a warning.
#[test]
fn ab_profile_scopes_ncu_and_a_failing_profiler_keeps_the_verdict() {
    let wh = Wh::new();
    let path = recording_ncu(wh.dir.path(), "echo 'ncu: license error' >&2\nexit 7");
    let out = ab_profiled(&wh, &path, &[]);
    assert_eq!(code(&out), 1, "the regression stands: {}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let warnings = v["warnings"].to_string();
    assert!(
        warnings.contains("profiling under ncu failed after the trials decided")
            && warnings.contains("the verdict stands"),
        "{warnings}"
    );
    assert_eq!(
        wh.count("SELECT count(*) FROM runs WHERE contains(tags, '\"profiled\"')"),
        0
    );
    let args = std::fs::read_to_string(wh.dir.path().join("bin/args.txt")).unwrap();
    assert!(
        args.lines()
            .next()
            .unwrap()
            .contains("--kernel-id ::regex:.:1"),
        "{args}"
    );
    // Scoped by the user: the default scope gives way, the user's flags are passed.
    let wh = Wh::new();
    let path = recording_ncu(wh.dir.path(), "exit 7");
    let out = ab_profiled(&wh, &path, &["--profile-args", "-k 'regex:add|mul' -c 2"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let args = std::fs::read_to_string(wh.dir.path().join("bin/args.txt")).unwrap();
    let first = args.lines().next().unwrap();
    assert!(first.contains("-k regex:add|mul -c 2 sh -c"), "{first}");
    assert!(!first.contains("--kernel-id"), "{first}");
}

/// SIGTERM during the profiled trials: exit 130, nothing of them stored.
#[test]
fn ab_interrupted_while_profiling_exits_130_and_stores_no_profile() {
    let wh = Wh::new();
    let marker = wh.dir.path().join("profiling");
    let path = recording_ncu(
        wh.dir.path(),
        &format!("touch {}\nsleep 30", marker.display()),
    );
    let child = wh
        .cmd()
        .env("PATH", &path)
        .args(ab_args(&wh, &[]))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while !marker.exists() {
        assert!(
            start.elapsed().as_secs() < 60,
            "the profiled trial never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(code(&out), 130, "{}", stderr(&out));
    assert!(
        start.elapsed().as_secs() < 25,
        "the profiler was stopped, not waited for"
    );
    assert_eq!(
        wh.count("SELECT count(*) FROM runs WHERE contains(tags, '\"profiled\"')"),
        0
    );
}

/// `--profile proton` with `--base-dir/--head-dir`: each arm profiled in its own folder by
/// its own interpreter (a stand-in `./python3` per folder: proton writes a profile
/// whose add_kernel takes 20% longer in head's), never the displayed command's words;
/// the versions recorded are the probe's, never another `key=value` line it prints.
#[test]
fn proton_profiles_each_arm_in_its_folder_with_its_own_interpreter() {
    let wh = Wh::new();
    let hatchet = |ns: u64| {
        format!(
            r#"[{{"children":[{{"children":[],"frame":{{"name":"add_kernel","type":"function"}},"metrics":{{"count":1,"device_id":"0","device_type":"CUDA","time (ns)":{ns}}}}}],"frame":{{"name":"ROOT","type":"function"}},"metrics":{{"count":0,"time (ns)":0}}}},{{"CUDA":{{"0":{{"arch":"90"}}}}}}]"#
        )
    };
    let mut dirs = Vec::new();
    for (name, us, ns, triton) in [("a", 10.0, 10_000, "3.5.1"), ("b", 12.0, 12_000, "3.6.0")] {
        let d = wh.dir.path().join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("hatchet"), hatchet(ns)).unwrap();
        std::fs::write(
            d.join("perf.txt"),
            format!("[perf] dim: (64,) dtype: bf16, torch avg: 5.00 us, add avg: {us} us\n"),
        )
        .unwrap();
        executable(
            &d.join("python3"),
            &format!(
                "#!/bin/sh\nhere=$(cd \"$(dirname \"$0\")\" && pwd)\n\
                 [ \"$(pwd)\" = \"$here\" ] || {{ echo \"run in $(pwd), not $here\" >&2; exit 9; }}\n\
                 case \"$1\" in\n\
                 -c) case \"$2\" in *perfdb-probe*) echo machine=someone-elses-box; echo 'perfdb-probe python=3.12.0'; echo 'perfdb-probe triton={triton}';; esac; exit 0;;\n\
                 -m) out=\"$4\"; shift 4; cat \"$here/hatchet\" > \"$out.hatchet\"; exec \"$here/python3\" \"$@\";;\n\
                 esac\n\
                 cat \"$here/perf.txt\"\n"
            ),
        );
        dirs.push(d);
    }
    let out = wh
        .cmd()
        .args([
            "ab",
            "--quiet",
            "--no-gpu-state",
            "--format",
            "json",
            "--control",
            "torch",
            "--max-trials",
            "4",
            "--seed",
            "3",
            "--machine",
            "ci-box",
            "--profile",
            "proton",
            "--base-dir",
            dirs[0].to_str().unwrap(),
            "--head-dir",
            dirs[1].to_str().unwrap(),
            "--",
            "./python3",
            "bench.py",
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let e = &v["counters"][0];
    assert_eq!(e["kernel"], "add_kernel", "{v}");
    assert_eq!(e["profiler"], "proton");
    let moved = e["moved"][0]["name"].as_str().unwrap();
    assert_eq!(moved, "time", "{e}");
    let tags = wh.sql(
        "SELECT DISTINCT regexp_extract(tags, '\"triton\":\"([^\"]*)\"', 1) AS triton, \
         regexp_extract(tags, '\"machine\":\"([^\"]*)\"', 1) AS machine, label FROM runs ORDER BY triton",
    );
    let triton: Vec<(&str, &str)> = tags
        .iter()
        .map(|r| {
            (
                r["triton"].as_str().unwrap(),
                r["machine"].as_str().unwrap(),
            )
        })
        .collect();
    assert!(triton.contains(&("3.5.1", "ci-box")), "{tags:?}");
    assert!(triton.contains(&("3.6.0", "ci-box")), "{tags:?}");
    assert!(
        !format!("{tags:?}").contains("someone-elses-box"),
        "{tags:?}"
    );
    // The same arms as shell commands that `cd` first: each profiled where its `cd` leads.
    let shell = |d: &std::path::PathBuf| format!("cd {} && ./python3 bench.py", d.display());
    let out = wh
        .cmd()
        .args([
            "ab",
            "--quiet",
            "--no-gpu-state",
            "--format",
            "json",
            "--control",
            "torch",
            "--max-trials",
            "4",
            "--seed",
            "3",
            "--profile",
            "proton",
            "--base",
            &shell(&dirs[0]),
            "--head",
            &shell(&dirs[1]),
        ])
        .output()
        .unwrap();
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["counters"][0]["kernel"], "add_kernel", "{v}");
    assert_eq!(v["counters"][0]["moved"][0]["name"], "time", "{v}");
}
