//! A kernel's energy per call in `perfdb ab`: the benchmark measures its calls with
//! `perfdb_energy.per_call` (the Python helper `ab --energy` puts on the trials'
//! PYTHONPATH, reading the stand-in NVML through ctypes), or `--energy-per-call`
//! measures after each Triton `do_bench` through perfdb's sitecustomize (a stand-in
//! `triton.testing` here); each reading is judged as its row's `energy_per_call`.

use crate::common::*;
use crate::energy::standin;
use std::path::Path;

/// A benchmark that spends `MJ` millijoules (±1%) a call on the stand-in GPU, measures
/// ten calls with perfdb_energy when it is there, and prints an add of ~100 us (±0.5%).
const BENCH: &str = r#"
import os, random, time
d = os.path.join(os.environ["STANDIN_NVML_DIR"], "gpu0")
os.makedirs(d, exist_ok=True)
counter = os.path.join(d, "energy_mj")
seen = os.path.join(os.environ["STANDIN_NVML_DIR"], "n")
n = int(open(seen).read()) + 1 if os.path.exists(seen) else 1
open(seen, "w").write(str(n))
rng = random.Random(n * 7919 + 3)

def call():
    time.sleep(0.02)
    e = int(open(counter).read()) if os.path.exists(counter) else 1000000
    open(counter, "w").write(str(int(e + float(os.environ["MJ"]) * (1 + 0.02 * (rng.random() - 0.5)))))

if os.environ.get("PERFDB_ENERGY_DO_BENCH"):
    from triton.testing import do_bench
    do_bench(call)
else:
    try:
        import perfdb_energy
    except ImportError:
        perfdb_energy = None
    if perfdb_energy is not None:
        perfdb_energy.per_call(call, calls=10)
print("[perf][add] dim: (4096,), dtype: torch.float32, torch avg: %.3f us" % (100 * (1 + 0.01 * (rng.random() - 0.5))))
"#;

/// A stand-in `triton.testing.do_bench` (three calls, a fixed time) and a sitecustomize
/// of the user's own, which perfdb's must still run.
fn stand_in_triton(dir: &Path) {
    std::fs::create_dir_all(dir.join("triton")).unwrap();
    std::fs::write(dir.join("triton/__init__.py"), "").unwrap();
    std::fs::write(
        dir.join("triton/testing.py"),
        "def do_bench(fn, warmup=25, rep=100):\n    for _ in range(3):\n        fn()\n    return 0.1\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("sitecustomize.py"),
        "import os\nopen(os.path.join(os.environ['STANDIN_NVML_DIR'], 'user_sitecustomize'), 'w').write('ran')\n",
    )
    .unwrap();
}

fn ab(wh: &Wh, flags: &[&str], base_mj: &str, head_mj: &str) -> std::process::Output {
    let state = wh.dir.path().join("nvml");
    std::fs::create_dir_all(&state).unwrap();
    let bench = wh.dir.path().join("bench.py");
    std::fs::write(&bench, BENCH).unwrap();
    let site = wh.dir.path().join("site");
    stand_in_triton(&site);
    wh.cmd()
        .current_dir(wh.dir.path())
        .env("PERFDB_NVML_LIBRARY", standin())
        .env("STANDIN_NVML_DIR", &state)
        .env("PYTHONPATH", &site)
        .args(["ab", "--quiet", "--seed", "7"])
        .args(flags)
        .args(["--base-env", &format!("MJ={base_mj}")])
        .args(["--head-env", &format!("MJ={head_mj}")])
        .args(["--", "python3"])
        .arg(&bench)
        .output()
        .unwrap()
}

/// The percent printed right after `prefix` in `text`.
fn pct_after(text: &str, prefix: &str) -> f64 {
    let rest = &text[text
        .find(prefix)
        .unwrap_or_else(|| panic!("{prefix:?} in\n{text}"))
        + prefix.len()..];
    rest[..rest.find('%').unwrap()].parse().unwrap()
}

fn per_call_rows(wh: &Wh) -> Vec<serde_json::Value> {
    wh.sql(
        "select m.value, m.unit, m.line, m.note, r.label from measurements m join runs r using (run_id) where m.metric = 'energy_per_call'",
    )
}

#[test]
fn more_energy_a_call_at_the_same_speed_fails_on_the_rows_energy_per_call() {
    let wh = Wh::new();
    let out = ab(&wh, &["--energy"], "100", "112");
    let report = stdout(&out);
    assert_eq!(code(&out), 1, "{report}\n{}", stderr(&out));
    // Ten calls and nothing else on the counter: the trial's energy moves as its calls'.
    let said = report.lines().next().unwrap();
    assert!(
        said.starts_with("REGRESSION: the GPU energy of a trial regressed (gpu=0 +"),
        "{report}"
    );
    let row = "the energy per call regressed (perf[add] torch dim=(4096,) dtype=torch.float32 +";
    assert!((10.0..14.0).contains(&pct_after(said, row)), "{said}");
    assert!(
        report.contains("(a trial's GPU energy and energy per call)"),
        "{report}"
    );
    let summary = "energy per call over 1 row(s): geomean +";
    assert!(
        (10.0..14.0).contains(&pct_after(&report, summary)),
        "{report}"
    );
    let time = report
        .lines()
        .find(|l| l.contains("latency (us)"))
        .unwrap_or_else(|| panic!("{report}"));
    assert!(time.starts_with("no significant change"), "{time}");
    // One reading a trial, on the line it was printed (the row's is the next), its
    // value the calls' mean (~0.1 J base, ~0.112 J head): power between the counter's
    // steps times the loop's time, so a loaded machine's sleeps move it a little.
    let rows = per_call_rows(&wh);
    assert!(rows.len() >= 8, "{rows:?}");
    for r in &rows {
        let v = r["value"].as_f64().unwrap();
        let base = r["label"].as_str().unwrap().starts_with("ab-base");
        let want = if base { 0.1 } else { 0.112 };
        assert!((v / want - 1.0).abs() < 0.05, "{r:?}");
        assert_eq!(r["unit"], "J");
        assert_eq!(r["line"], 1);
        assert!(r["note"]
            .as_str()
            .unwrap()
            .contains("over 10 back-to-back calls"));
        // The counter stepped with each call: the power between its steps.
        assert!(r["note"]
            .as_str()
            .unwrap()
            .contains("power between the counter's 10 steps"));
    }
}

#[test]
fn without_energy_the_helper_is_not_there_and_nothing_per_call_is_stored() {
    let wh = Wh::new();
    let out = ab(&wh, &[], "100", "112");
    assert_eq!(code(&out), 0, "{}\n{}", stdout(&out), stderr(&out));
    assert!(per_call_rows(&wh).is_empty());
    assert!(
        !stdout(&out).contains("energy per call"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn energy_per_call_measures_after_each_do_bench_without_changing_the_benchmark() {
    let wh = Wh::new();
    let out = ab(&wh, &["--energy-per-call"], "100", "88");
    let report = stdout(&out);
    assert_eq!(code(&out), 0, "{report}\n{}", stderr(&out));
    // Nothing regressed: the headline counts the energy per call apart from the trial's.
    assert!(
        report.lines().next().unwrap().ends_with(
            ", nor in the GPU energy of a trial (1 GPU(s)) or the energy per call (1 row(s))"
        ),
        "{report}"
    );
    let summary = "energy per call over 1 row(s): geomean -";
    assert!(
        (10.0..14.0).contains(&pct_after(&report, summary)),
        "{report}"
    );
    let rows = per_call_rows(&wh);
    assert!(rows.len() >= 8, "{rows:?}");
    // perfdb's sitecustomize ran the one it shadows.
    assert!(wh.dir.path().join("nvml/user_sitecustomize").exists());
    // Each trial measured for at least PERFDB_ENERGY_SECONDS (0.5 s): up to ~25 calls
    // of 20 ms (fewer where a loaded machine's sleeps run long).
    for r in &rows {
        let note = r["note"].as_str().unwrap();
        let word_after = |what: &str| -> f64 {
            note.split(what)
                .nth(1)
                .and_then(|s| s.split(' ').next())
                .and_then(|s| s.parse().ok())
                .unwrap_or_else(|| panic!("{what:?} in {note}"))
        };
        assert!((10.0..=30.0).contains(&word_after(" over ")), "{note}");
        assert!(word_after("calls (") >= 0.5, "{note}");
    }
}

/// The trials of one experiment recorded on an H100 (sample-data/h100-energy-per-call/),
/// each arm's outputs ingested under a label of its own, compared: each row's verdict by
/// `table variant key metric`.
fn recorded(set: &str, experiment: &str) -> (Wh, std::collections::HashMap<String, String>) {
    let wh = Wh::new();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sample-data/h100-energy-per-call")
        .join(set)
        .join(experiment);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for f in &files {
        let arm = if f.to_string_lossy().ends_with("-base.out") {
            "base"
        } else {
            "head"
        };
        wh.ingest(f, &format!("{experiment}-{arm}"));
    }
    let out = wh.run(&[
        "compare",
        &format!("{experiment}-base"),
        &format!("{experiment}-head"),
        "--format",
        "json",
    ]);
    let report: serde_json::Value = serde_json::from_str(&stdout(&out))
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(&out), stderr(&out)));
    let verdicts = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                format!(
                    "{} {}",
                    r["key_text"].as_str().unwrap(),
                    r["metric"].as_str().unwrap()
                ),
                r["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    (wh, verdicts)
}

#[test]
fn the_recorded_h100_outputs_read_to_the_devices_verdicts() {
    let set = "counter-around-loop";
    // INPUT=zeros: the add's energy a call down a quarter at the same speed.
    let (wh, v) = recorded(set, "planted");
    let row = "dim=(134217728,) dtype=torch.float32";
    assert_eq!(v[&format!("{row} energy_per_call")], "improvement", "{v:?}");
    assert_eq!(
        v[&format!("{row} latency")],
        "no_significant_change",
        "{v:?}"
    );
    // What the H100 measured: ~0.28 J a call of 2^27 float32 adds, ~0.21 J on zeros.
    let rows = wh.sql(
        "select r.label, median(m.value) j from measurements m join runs r using (run_id) where m.metric = 'energy_per_call' group by r.label order by r.label",
    );
    let j: Vec<f64> = rows.iter().map(|r| r["j"].as_f64().unwrap()).collect();
    assert!(
        (0.27..0.30).contains(&j[0]) && (0.19..0.23).contains(&j[1]),
        "{rows:?}"
    );
    // Two adds a call: twice the time, about twice the energy.
    let (_, v) = recorded(set, "time");
    assert_eq!(v[&format!("{row} latency")], "regression", "{v:?}");
    assert_eq!(v[&format!("{row} energy_per_call")], "regression", "{v:?}");
    // A/A: neither moves.
    let (_, v) = recorded(set, "aa1");
    assert!(v.values().all(|x| x == "no_significant_change"), "{v:?}");
    // do_bench measured by --energy-per-call: three sizes, each a reading of its own
    // (`ab` cleared the smallest at its look, q 0.062; `compare` of all the trials flags it).
    let (_, v) = recorded(set, "dobench");
    for n in ["16777216", "67108864", "134217728"] {
        let row = format!("dim=({n},) dtype=torch.float32");
        assert_eq!(v[&format!("{row} energy_per_call")], "improvement", "{v:?}");
        assert_eq!(
            v[&format!("{row} latency")],
            "no_significant_change",
            "{v:?}"
        );
    }
}

#[test]
fn without_nvml_the_helper_says_why_once_and_time_is_judged() {
    let wh = Wh::new();
    let state = wh.dir.path().join("nvml");
    std::fs::create_dir_all(&state).unwrap();
    let bench = wh.dir.path().join("bench.py");
    std::fs::write(&bench, BENCH).unwrap();
    let out = wh
        .cmd()
        .current_dir(wh.dir.path())
        .env("PERFDB_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1")
        .env("STANDIN_NVML_DIR", &state)
        .env("PATH", "/usr/bin:/bin")
        .args(["ab", "--quiet", "--seed", "7", "--energy"])
        .args([
            "--base-env",
            "MJ=100",
            "--head-env",
            "MJ=112",
            "--",
            "python3",
        ])
        .arg(&bench)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(code(&out), 0, "{}\n{err}", stdout(&out));
    let said = "ab: energy per call not measured: NVML did not load";
    assert_eq!(err.matches(said).count(), 1, "{err}");
    assert!(per_call_rows(&wh).is_empty());
    assert!(stdout(&out).contains("latency (us)"), "{}", stdout(&out));
}
