//! `perfdb ab` end to end, on replays of real H200 trials: 30 a side of the GEMM sweep
//! and vector add (aiter format, ABBA-recorded), head K-padding four GEMM shapes
//! 2.5-3.2x slower and a fifth 1.025x (sample-data/README.md). Each arm's command is
//! `tests/fixtures/replay.sh`, printing the arm's next recorded trial.

use crate::common::*;
use serde_json::Value;

fn replay(dir: &str, state: &Wh, name: &str, start_step: Option<(usize, usize)>) -> String {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/replay.sh");
    let mut c = format!(
        "sh {} {} {}",
        script.display(),
        sample(dir).display(),
        state.dir.path().join(name).display()
    );
    if let Some((start, step)) = start_step {
        c.push_str(&format!(" {start} {step}"));
    }
    c
}

const AB30: &str = "h200-gemm/ab30/aiter";

fn ab_json(wh: &Wh, base: &str, head: &str, extra: &[&str]) -> (i32, Value, String) {
    ab_json_in(wh.cmd(), base, head, extra)
}

/// [`ab_json`] run by `cmd` (its environment set).
fn ab_json_in(
    mut cmd: std::process::Command,
    base: &str,
    head: &str,
    extra: &[&str],
) -> (i32, Value, String) {
    let mut args = vec![
        "ab",
        "--quiet",
        "--format",
        "json",
        "--control",
        "torch",
        "--base",
        base,
        "--head",
        head,
    ];
    args.extend_from_slice(extra);
    let out = cmd.args(&args).output().expect("run perfdb");
    let v: Value = serde_json::from_str(&stdout(&out))
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&out), stderr(&out)));
    (code(&out), v, stderr(&out))
}

/// (state, "variant M", metric) of the rows in `state`.
fn rows_in(v: &Value, state: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["state"] == state)
        .map(|r| {
            (
                format!(
                    "{} {}",
                    r["table"].as_str().unwrap(),
                    r["key_text"].as_str().unwrap()
                ),
                r["metric"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn the_changed_shapes_are_flagged_and_the_run_stops_early() {
    let wh = Wh::new();
    let base = replay(&format!("{AB30}/base"), &wh, "b", None);
    let head = replay(&format!("{AB30}/head"), &wh, "h", None);
    let (rc, v, err) = ab_json(&wh, &base, &head, &["--seed", "7"]);
    assert_eq!(rc, 1, "{err}");
    let seq = &v["sequential"];
    assert_eq!(seq["stopped"], "decided", "{seq}");
    let n = seq["trials_per_arm"].as_u64().unwrap();
    assert!(n < 20, "stopped at {n} a side");
    let regressed: Vec<String> = rows_in(&v, "regression")
        .into_iter()
        .filter(|(_, m)| m == "latency")
        .map(|(k, _)| k)
        .collect();
    assert_eq!(
        regressed,
        [
            "gemm_a16w16 M=2048 N=8192 K=8192 dtype=torch.bfloat16",
            "gemm_a16w16 M=256 N=8192 K=8192 dtype=torch.bfloat16",
            "gemm_a16w16 M=4096 N=14336 K=4096 dtype=torch.bfloat16",
            "gemm_a16w16 M=512 N=4096 K=4096 dtype=torch.bfloat16",
        ]
    );
    // The 1.025x shape is smaller than the threshold: cleared, not flagged.
    let cleared = rows_in(&v, "cleared");
    assert!(
        cleared.contains(&(
            "gemm_a16w16 M=4096 N=4096 K=4096 dtype=torch.bfloat16".to_string(),
            "latency".to_string()
        )),
        "{cleared:?}"
    );
    assert!(rows_in(&v, "improvement").is_empty());
    assert!(rows_in(&v, "undecided").is_empty());
    // Every trial is a run with its tags, in its own label; the warm-up is not.
    let runs = wh.sql(
        "SELECT label, count(*) AS n, count(DISTINCT regexp_extract(tags, '\"block\":\"([0-9]+)\"', 1)) AS blocks \
         FROM runs WHERE contains(tags, '\"arm\":') GROUP BY label ORDER BY label",
    );
    assert_eq!(runs.len(), 2, "{runs:?}");
    for r in &runs {
        assert_eq!(r["n"].as_i64().unwrap() as u64, n, "{r}");
        assert_eq!(r["blocks"].as_i64().unwrap() as u64, n / 2, "{r}");
    }
    let logs = std::path::Path::new(seq["logs"].as_str().unwrap());
    let logs = wh.dir.path().join(logs);
    // Each trial's output is kept: the measured ones and the warm-up.
    let kept = |suffix: &str| {
        std::fs::read_dir(&logs)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(suffix)
            })
            .count() as u64
    };
    assert_eq!(kept("-base.out"), n + 1);
    assert_eq!(kept("-head.log"), n + 1);
}

#[test]
fn an_a_a_split_flags_nothing() {
    // Base and head both replay the recorded base arm: odd trials and even trials.
    let wh = Wh::new();
    let base = replay(&format!("{AB30}/base"), &wh, "b", Some((1, 2)));
    let head = replay(&format!("{AB30}/base"), &wh, "h", Some((2, 2)));
    let (rc, v, err) = ab_json(&wh, &base, &head, &["--seed", "11", "--max-trials", "14"]);
    assert!(rows_in(&v, "regression").is_empty(), "{err}");
    assert!(rows_in(&v, "improvement").is_empty());
    assert_ne!(rc, 1, "{err}");
    assert!(!rows_in(&v, "cleared").is_empty());
}

#[test]
fn a_failing_head_trial_ends_the_run_with_exit_1_and_is_stored() {
    let wh = Wh::new();
    let base = replay(&format!("{AB30}/base"), &wh, "b", None);
    // The third head call: the warm-up is the first, so the second measured trial.
    let head = format!(
        "FAIL_AT=3 {}",
        replay(&format!("{AB30}/head"), &wh, "h", None)
    );
    let (rc, v, err) = ab_json(
        &wh,
        &base,
        &head,
        &["--seed", "7", "--label-head", "h1", "--label-base", "b1"],
    );
    assert_eq!(rc, 1, "{err}");
    assert_eq!(v["sequential"]["stopped"], "failed_run");
    assert_eq!(v["sequential"]["failed"][0], "head");
    assert_eq!(
        wh.count("SELECT count(*) FROM runs WHERE label = 'h1' AND verdict = 'fail'"),
        1
    );
    assert!(
        v["reason"].as_str().unwrap().contains("failed"),
        "{}",
        v["reason"]
    );
}

#[test]
fn a_failing_base_trial_is_inconclusive() {
    let wh = Wh::new();
    let base = format!(
        "FAIL_AT=2 {}",
        replay(&format!("{AB30}/base"), &wh, "b", None)
    );
    let head = replay(&format!("{AB30}/head"), &wh, "h", None);
    let out = wh.run(&[
        "ab",
        "--quiet",
        "--seed",
        "7",
        "--control",
        "torch",
        "--base",
        &base,
        "--head",
        &head,
    ]);
    assert_eq!(code(&out), 3, "{}{}", stdout(&out), stderr(&out));
}

#[test]
fn max_trials_is_honoured_and_the_blocks_follow_the_seed() {
    let wh = Wh::new();
    // Threshold 1%: the noisy rows cannot be decided in 4 a side.
    let base = replay(&format!("{AB30}/base"), &wh, "b", None);
    let head = replay(&format!("{AB30}/head"), &wh, "h", None);
    let (_, v, err) = ab_json(
        &wh,
        &base,
        &head,
        &[
            "--seed",
            "12345",
            "--max-trials",
            "4",
            "--threshold",
            "0.01",
            "--warmup",
            "0",
        ],
    );
    let seq = &v["sequential"];
    assert_eq!(seq["trials_per_arm"], 4, "{err}");
    assert_eq!(seq["planned_looks"], serde_json::json!([4]));
    // Block orientations from the seed: one draw a block, even = ABBA.
    let mut rng = perfdb_reports::stats::SplitMix64::new(12345);
    let want: Vec<&str> = (0..2)
        .map(|_| {
            if rng.next_u64() & 1 == 0 {
                "ABBA"
            } else {
                "BAAB"
            }
        })
        .collect();
    assert_eq!(seq["blocks"], serde_json::json!(want));
    assert_eq!(seq["seed"], 12345);
    // A row still open at the last look says what it would need.
    let open: Vec<&Value> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["state"] == "undecided" || r["state"] == "undecidable")
        .collect();
    assert!(!open.is_empty(), "{err}");
    for r in open {
        assert!(r["trials_needed"].as_u64().is_some_and(|k| k > 4), "{r}");
        assert_eq!(r["verdict"], "insufficient");
    }
}

#[test]
fn the_arms_are_given_one_way() {
    let wh = Wh::new();
    let out = wh.run(&["ab", "--base", "true"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    let out = wh.run(&["ab", "--base-env", "X=1", "--head-env", "X=2"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("after `--`"), "{}", stderr(&out));
    let out = wh.run(&[
        "ab",
        "--base",
        "true",
        "--head",
        "true",
        "--max-trials",
        "5",
    ]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("even number"), "{}", stderr(&out));
}

#[test]
fn env_and_dir_forms_run_one_command_two_ways() {
    let wh = Wh::new();
    let (b, h) = (wh.dir.path().join("b"), wh.dir.path().join("h"));
    for (d, arm) in [(&b, "base"), (&h, "head")] {
        std::fs::create_dir_all(d).unwrap();
        std::fs::write(d.join("which"), format!("{}/{arm}", sample(AB30).display())).unwrap();
    }
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/replay.sh");
    let cmd = format!("sh {} \"$(cat which)\" state", script.display());
    let out = wh.run(&[
        "ab",
        "--quiet",
        "--seed",
        "3",
        "--control",
        "torch",
        "--max-trials",
        "4",
        "--base-dir",
        b.to_str().unwrap(),
        "--head-dir",
        h.to_str().unwrap(),
        "--",
        "sh",
        "-c",
        &cmd,
    ]);
    assert_eq!(code(&out), 1, "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("ab: stopped at 4 trial(s) a side"),
        "{}",
        stdout(&out)
    );
    let cmd = format!(
        "sh {} {}/$ARM {}/$ARM.n",
        script.display(),
        sample(AB30).display(),
        wh.dir.path().display()
    );
    let out = wh.run(&[
        "ab",
        "--quiet",
        "--seed",
        "3",
        "--control",
        "torch",
        "--max-trials",
        "4",
        "--base-env",
        "ARM=base",
        "--head-env",
        "ARM=head",
        "--",
        "sh",
        "-c",
        &cmd,
    ]);
    assert_eq!(code(&out), 1, "{}{}", stdout(&out), stderr(&out));
}

/// Trials `perfdb ab` recorded on an H200 (sample-data/h200-torch-ab/PROVENANCE.md),
/// replayed: the states the GPU run reported come back.
#[test]
fn recorded_gpu_runs_replay_to_the_same_states() {
    // pad160's M=4096 reads +5.1% for +3.9% more work: significantly slower, but not
    // shown past 5% (the reference rule's point estimate called it a regression at 8 a
    // side); M=2048 (+4.7%) neither. Both undecidable at 6: the report is inconclusive.
    for (set, rc_expected, n, regressed, undecidable) in [
        (
            "pad384",
            1,
            4,
            vec!["(2048, 4096, 4096)", "(4096, 4096, 4096)"],
            vec![],
        ),
        (
            "pad160",
            3,
            6,
            vec![],
            vec!["(2048, 4096, 4096)", "(4096, 4096, 4096)"],
        ),
        // Recorded under the rule as built (the adaptive test): K padded by 256 reads
        // +5.9% (M=2048) and +5.0% (M=4096), on the threshold: undecidable at 6, as on
        // the GPU; an A/A of the same benchmark clears every row at the first look.
        (
            "pad256",
            3,
            6,
            vec![],
            vec!["(2048, 4096, 4096)", "(4096, 4096, 4096)"],
        ),
        ("aa", 0, 4, vec![], vec![]),
    ] {
        let wh = Wh::new();
        let base = replay(&format!("h200-torch-ab/{set}/base"), &wh, "b", None);
        let head = replay(&format!("h200-torch-ab/{set}/head"), &wh, "h", None);
        let (rc, v, err) = ab_json(&wh, &base, &head, &["--seed", "5"]);
        assert_eq!(rc, rc_expected, "{set}: {err}");
        assert_eq!(v["sequential"]["stopped"], "decided", "{set}");
        assert_eq!(v["sequential"]["trials_per_arm"], n, "{set}");
        let dims = |state: &str| -> Vec<String> {
            let mut d: Vec<String> = rows_in(&v, state)
                .into_iter()
                .map(|(k, _)| {
                    k.split("dim=")
                        .nth(1)
                        .unwrap()
                        .split(" dtype")
                        .next()
                        .unwrap()
                        .to_string()
                })
                .collect();
            d.sort();
            d
        };
        assert_eq!(dims("regression"), regressed, "{set}");
        assert_eq!(dims("undecidable"), undecidable, "{set}");
        // An open row names one count of trials it needs: the look's, not also the
        // one-shot test's.
        for r in v["rows"].as_array().unwrap() {
            if r["state"] == "undecidable" {
                let reason = r["reason"].as_str().unwrap();
                assert_eq!(reason.matches("needs ~").count(), 1, "{reason}");
            }
        }
        assert_eq!(
            dims("cleared").len(),
            5 - regressed.len() - undecidable.len(),
            "{set}"
        );
    }
}

/// `compare` reads the GPU state `ab` stores in each run's tags and warns when the
/// sides' clocks differ or a trial ended throttled.
#[test]
fn compare_warns_of_clocks_and_throttling_from_the_runs_tags() {
    let wh = Wh::new();
    for (side, clock, throttle) in [("base", "1980", "none"), ("head", "1890", "sw_power_cap")] {
        wh.ok(&[
            "ingest",
            sample(&format!("h200-gemm/ab/aiter/{side}"))
                .to_str()
                .unwrap(),
            "--label",
            side,
            "--tag",
            &format!("gpu_clock_mhz_before={clock}"),
            "--tag",
            &format!("gpu_clock_mhz_after={clock}"),
            "--tag",
            &format!("gpu_throttle_after={throttle}"),
        ]);
    }
    let (_, v) = compare_json(&wh, &["base", "head", "--control", "torch"]);
    let warnings: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert!(
        warnings.iter().any(|w| w
            .starts_with("the sides ran at different GPU clocks: base 1980 MHz, head 1890 MHz")),
        "{warnings:?}"
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("0 base and 5 head trial(s) ended with the GPU throttled")),
        "{warnings:?}"
    );
}

#[test]
fn max_time_stops_at_the_last_complete_block() {
    let wh = Wh::new();
    let base = format!(
        "sleep 0.25; {}",
        replay(&format!("{AB30}/base"), &wh, "b", None)
    );
    let head = format!(
        "sleep 0.25; {}",
        replay(&format!("{AB30}/head"), &wh, "h", None)
    );
    let (_, v, err) = ab_json(
        &wh,
        &base,
        &head,
        &[
            "--seed",
            "7",
            "--warmup",
            "0",
            "--max-time",
            "2s",
            "--threshold",
            "0.001",
        ],
    );
    let seq = &v["sequential"];
    assert_eq!(seq["stopped"], "max_time", "{err}");
    let n = seq["trials_per_arm"].as_u64().unwrap();
    assert!((2..=4).contains(&n), "{n} a side in 2 s of 0.25 s trials");
    assert_eq!(seq["looks"].as_array().unwrap().last().unwrap(), n, "{seq}");
}

#[test]
fn noise_per_series_of_a_history_and_of_an_a_a_label() {
    let wh = Wh::new();
    ingest_history(&wh, &(1..=20).collect::<Vec<_>>());
    let out = wh.ok(&[
        "noise",
        "main",
        "--format",
        "json",
        "--where",
        "variant=triton",
    ]);
    let v: Value = serde_json::from_str(&out).unwrap();
    let series = v["series"].as_array().unwrap();
    assert!(!series.is_empty());
    for s in series {
        assert_eq!(s["variant"], "triton");
        // Grouped by commit: 20 commits of 3 trials (the c13 step is not noise).
        assert_eq!(s["groups"], 20, "{s}");
        // Real history: a few slow trials make sigma much larger than its robust twin
        // on some shapes, and the report marks them.
        let (sigma, robust) = (
            s["sigma"].as_f64().unwrap(),
            s["sigma_robust"].as_f64().unwrap(),
        );
        assert!(sigma > 0.0 && (0.0..0.05).contains(&robust), "{s}");
        let outliers = robust > 0.0 && (sigma > 2.0 * robust || robust > 2.0 * sigma);
        assert_eq!(s["outliers"], outliers, "{s}");
        let needed = s["trials_needed"].as_array().unwrap();
        assert_eq!(needed.len(), 3, "1%, 2%, 5% (the threshold is 5%): {s}");
        // More trials for a smaller change.
        let n: Vec<u64> = needed.iter().map(|p| p[1].as_u64().unwrap()).collect();
        assert!(n[0] >= n[1] && n[1] >= n[2], "{s}");
    }
    let text = wh.ok(&["noise", "main", "--threshold", "0.03"]);
    assert!(text.contains("n for 3%"), "{text}");
    let out = wh.run(&["noise", "nosuchlabel"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("no runs with label 'nosuchlabel'"));
}

#[test]
fn compare_says_when_three_trials_cannot_see_the_threshold() {
    let wh = Wh::new();
    for side in ["base", "head"] {
        for t in 1..=3 {
            let f = sample(&format!("{AB30}/{side}/trial{t}.log"));
            wh.ok(&["ingest", f.to_str().unwrap(), "--label", side]);
        }
    }
    let (_, v) = compare_json(&wh, &["base", "head", "--control", "torch"]);
    let under: Vec<&Value> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| {
            r["reason"]
                .as_str()
                .unwrap()
                .starts_with("underpowered: cannot see 5% at n = 3")
        })
        .collect();
    assert!(!under.is_empty(), "{}", v["rows"]);
    for r in under {
        assert_eq!(r["verdict"], "no_significant_change");
        assert!(r["trials_needed"].as_u64().is_some_and(|n| n > 3), "{r}");
    }
}

/// A control that moves stops the run as unreliable at the look that sees it (exit 3):
/// the recorded H200 head with its `torch` column made 20% slower.
#[test]
fn a_moving_control_stops_the_run_as_unreliable() {
    let wh = Wh::new();
    let moved = wh.dir.path().join("moved-head");
    std::fs::create_dir_all(&moved).unwrap();
    // pad384 holds the warm-up and 4 measured trials an arm: the first look.
    for t in 1..=5 {
        let text =
            std::fs::read_to_string(sample(&format!("h200-torch-ab/pad384/head/trial{t}.log")))
                .unwrap();
        let slowed: String = text
            .lines()
            .map(|l| {
                let (pre, rest) = l.split_once("torch avg: ").unwrap();
                let (v, post) = rest.split_once(" us").unwrap();
                let v: f64 = v.parse().unwrap();
                format!("{pre}torch avg: {:.2} us{post}\n", v * 1.2)
            })
            .collect();
        std::fs::write(moved.join(format!("trial{t}.log")), slowed).unwrap();
    }
    let base = replay("h200-torch-ab/pad384/base", &wh, "b", None);
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/replay.sh");
    let head = format!(
        "sh {} {} {}",
        script.display(),
        moved.display(),
        wh.dir.path().join("h").display()
    );
    let (rc, v, err) = ab_json(&wh, &base, &head, &["--seed", "5"]);
    assert_eq!(rc, 3, "{err}");
    assert_eq!(v["verdict"], "unreliable");
    assert_eq!(v["sequential"]["stopped"], "unreliable");
    assert_eq!(v["sequential"]["trials_per_arm"], 4);
}

/// A fake `nvidia-smi` in `dir` naming `product` and printing the recorded H200 reading
/// for the state query; PATH with it first.
fn fake_nvidia_smi(dir: &std::path::Path, product: &str) -> std::ffi::OsString {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let reading = std::fs::read_to_string(sample("h200-triton36/nvidia-smi-query.txt")).unwrap();
    let script = format!(
        "#!/bin/sh\ncase \"$*\" in\n  *--query-gpu=name*) echo '{product}' ;;\n  *--query-gpu=driver_version*) echo '570.124.06' ;;\n  *) echo '{}' ;;\nesac\n",
        reading.lines().next().unwrap()
    );
    executable(&bin.join("nvidia-smi"), &script);
    path_with(&bin)
}

/// `ab` asks the GPU tool which GPU it runs on: a GPU the device table knows holds every
/// TFLOPS and TB/s row to its peak with no flag; one it lacks is stored by its name and
/// said, with no percent.
#[test]
fn ab_names_the_device_from_the_gpu_tool() {
    // What nvidia-smi printed on the H200 (sample-data/gpu-state/PROVENANCE.md).
    let h200 = std::fs::read_to_string(sample("gpu-state/nvidia-smi-name-h200.txt")).unwrap();
    for (product, device, said) in [
        (
            h200.trim(),
            "h200",
            "the GPU is NVIDIA H200: TFLOPS and TB/s held to the NVIDIA H200 SXM's peaks",
        ),
        (
            "NVIDIA GeForce RTX 4090",
            "NVIDIA GeForce RTX 4090",
            "the GPU is NVIDIA GeForce RTX 4090, not in the device table: no percent of peak",
        ),
    ] {
        let wh = Wh::new();
        let path = fake_nvidia_smi(wh.dir.path(), product);
        let base = replay(&format!("{AB30}/base"), &wh, "b", None);
        let head = replay(&format!("{AB30}/head"), &wh, "h", None);
        let mut cmd = wh.cmd();
        cmd.env("PATH", &path);
        let (_, v, err) = ab_json_in(cmd, &base, &head, &["--seed", "7", "--max-trials", "4"]);
        assert!(err.contains(said), "{err}");
        let tags = wh.sql(
            "SELECT DISTINCT regexp_extract(tags, '\"device\":\"([^\"]*)\"', 1) AS d, \
                           regexp_extract(tags, '\"gpu_clock_mhz_before\":\"([^\"]*)\"', 1) AS c, \
                           regexp_extract(tags, '\"driver\":\"([^\"]*)\"', 1) AS v FROM runs",
        );
        assert_eq!(
            tags,
            vec![serde_json::json!({"d": device, "c": "1980", "v": "570.124.06"})],
            "{err}"
        );
        let rows = v["rows"].as_array().unwrap();
        let held = rows.iter().filter(|r| !r["peak"].is_null()).count();
        let throughputs = rows.iter().filter(|r| r["metric"] == "throughput").count();
        assert!(throughputs > 0);
        if device == "h200" {
            assert_eq!(
                held,
                throughputs + rows.iter().filter(|r| r["metric"] == "bandwidth").count()
            );
            assert!(rows
                .iter()
                .filter(|r| !r["peak"].is_null())
                .all(|r| r["peak"]["device"] == "h200"));
        } else {
            assert_eq!(held, 0, "no percent on an unknown GPU");
        }
    }
}
