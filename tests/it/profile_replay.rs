//! `ab --profile ncu` and `bisect --profile ncu` on a real H100, replayed: the trials'
//! own output and both arms' ncu captures recorded by `examples/h200/profile_ab.sh`
//! (`sample-data/h100-profile-ab/`, PROVENANCE.md there) ingested as a user would, then
//! compared. A padding change and a GEMM tile change, each row explained by its own
//! kernel, first, with the right reading; the recorded reports and the bisect's culprit
//! read back.

use crate::common::*;
use serde_json::Value;

/// One recorded A/B (`ab-pad`, `ab-tile`) into `wh`: the timed trials' stdout (warm-ups
/// aside) under `base`/`head`, each arm's ncu capture (the program's own lines and ncu's
/// CSV, as ncu wrote them) under the same label.
fn replay(wh: &Wh, name: &str) {
    let dir = sample(&format!("h100-profile-ab/{name}"));
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "out"))
        .filter(|p| {
            !p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("warmup")
        })
        .collect();
    files.sort();
    assert!(files.len() >= 8, "{files:?}");
    for f in &files {
        let arm = if f.to_string_lossy().ends_with("-base.out") {
            "base"
        } else {
            "head"
        };
        wh.ingest(f, arm);
    }
    for arm in ["base", "head"] {
        let capture = dir.join(format!("profile-{arm}/profile.csv"));
        let out = wh.run(&["ingest", "--label", arm, capture.to_str().unwrap()]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
    }
}

/// The changed rows' counters: (row table, kernel, reading, also joined).
fn explained(v: &Value) -> Vec<(String, String, String, usize)> {
    v["counters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["table"].as_str().unwrap().to_string(),
                e["kernel"].as_str().unwrap().to_string(),
                e["reading"].as_str().unwrap_or("").to_string(),
                e["also_joined"].as_array().map_or(0, Vec::len),
            )
        })
        .collect()
}

/// c01 -> c02 pads the add's buffers by 20%: on the H100 its time went +143%, its DRAM
/// bytes up (and, the padded length no longer a multiple of 16, Triton's code for it
/// changed: more instructions and registers). The add's row is explained by add_kernel,
/// joined by the table's name; torch's own add kernel joins by the same word and did not
/// move: one line, never a reading of its own. The profiled runs are no trials.
#[test]
fn a_padding_change_reads_as_more_data_on_its_own_kernel() {
    let wh = Wh::new();
    replay(&wh, "ab-pad");
    let (code, v) = compare_json(&wh, &["base", "head", "--control", "torch"]);
    assert_eq!(code, 1, "{}", v["reason"]);
    let regressed: Vec<&Value> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["verdict"] == "regression")
        .collect();
    assert_eq!(regressed.len(), 1, "{v}");
    assert_eq!(
        (&regressed[0]["table"], &regressed[0]["variant"]),
        (&Value::from("perf[add]"), &Value::from("triton"))
    );
    // Four timed trials a side; the profiled run of each arm left out and said.
    assert_eq!(regressed[0]["base"]["n"], 4);
    assert_eq!(regressed[0]["head"]["n"], 4);
    assert!(
        v["profiling"][0]
            .as_str()
            .unwrap()
            .starts_with("1 base and 1 head profiled run(s) left out"),
        "{}",
        v["profiling"]
    );
    let e = explained(&v);
    assert_eq!(e.len(), 1, "{e:?}");
    let (table, kernel, reading, also) = &e[0];
    assert_eq!(
        (table.as_str(), kernel.as_str()),
        ("perf[add]", "add_kernel")
    );
    assert!(
        reading.starts_with("the kernel moves more data (+"),
        "{reading}"
    );
    assert!(reading.contains("its launch grew (+20%)"), "{reading}");
    assert_eq!(
        *also, 1,
        "torch's CUDAFunctor_add kernel, joined by `add`, did not move"
    );
    let first = &v["counters"][0];
    assert!(first["also_joined"][0]
        .as_str()
        .unwrap()
        .contains("CUDAFunctor_add"));
    assert_eq!(first["joined_by"], "the name (add)");
    assert!(first["duration_change"].as_f64().unwrap() > 0.5);
    // No dtype joins: torch's bfloat16 RNG and fill kernels explain nothing.
    let text = v["counters"].to_string();
    assert!(!text.contains("bfloat16)"), "{text}");
}

/// c03 -> c04 halves the GEMM's tile, 128 -> 64: +60% on the H100. matmul_kernel explains
/// the matmul row: its compute throughput fell, its launch grew, and DRAM traffic (bytes
/// read and written) did not move (its operands fit in L2).
#[test]
fn a_tile_change_reads_as_compute_falling_with_dram_unchanged() {
    let wh = Wh::new();
    replay(&wh, "ab-tile");
    let (code, v) = compare_json(&wh, &["base", "head", "--control", "torch"]);
    assert_eq!(code, 1, "{}", v["reason"]);
    let e = explained(&v);
    assert_eq!(e.len(), 1, "{e:?}");
    let (table, kernel, reading, _) = &e[0];
    assert_eq!(
        (table.as_str(), kernel.as_str()),
        ("perf[matmul]", "matmul_kernel")
    );
    assert!(
        reading.contains("its compute throughput fell (-3"),
        "{reading}"
    );
    assert!(reading.contains("DRAM traffic unchanged"), "{reading}");
    assert!(!reading.contains("moves more data"), "{reading}");
    // cuBLAS's kernel (torch's control) is named for nothing in the row: not joined.
    assert!(!v["counters"].to_string().contains("nvjet"));
}

/// What the device printed: each `ab` named the right kernel first, and the bisect over
/// c00..c06 watching the matmul rows named c04, its counters those of the watched row.
#[test]
fn the_recorded_device_runs_name_the_kernel_and_the_culprit() {
    let read = |f: &str| -> Value {
        serde_json::from_str(
            &std::fs::read_to_string(sample(&format!("h100-profile-ab/{f}"))).unwrap(),
        )
        .unwrap()
    };
    for (f, table, kernel, said) in [
        (
            "ab-pad.json",
            "perf[add]",
            "add_kernel",
            "the kernel moves more data (+",
        ),
        (
            "ab-tile.json",
            "perf[matmul]",
            "matmul_kernel",
            "DRAM traffic unchanged",
        ),
    ] {
        let v = read(f);
        assert_eq!(v["verdict"], "regression", "{f}");
        assert_eq!(v["counters"].as_array().unwrap().len(), 1, "{f}");
        assert_eq!(v["counters"][0]["table"], table, "{f}");
        assert_eq!(v["counters"][0]["kernel"], kernel, "{f}");
        assert!(
            v["counters"][0]["reading"].as_str().unwrap().contains(said),
            "{f}: {}",
            v["counters"][0]["reading"]
        );
        assert!(v["profiling"][0]
            .as_str()
            .unwrap()
            .starts_with("one profiled trial a side under ncu"));
    }
    let commits = std::fs::read_to_string(sample("h100-profile-ab/commits.txt")).unwrap();
    let c04 = commits
        .lines()
        .find(|l| l.contains(" c04: "))
        .and_then(|l| l.split_whitespace().next())
        .unwrap();
    let b = read("bisect.json");
    let part = &b["parts"][0];
    assert_eq!(part["culprit"]["sha"], c04);
    let counters = part["counters"].as_array().unwrap();
    assert!(!counters.is_empty());
    assert!(
        counters.iter().all(|e| e["table"] == "perf[matmul]"),
        "only the watched row's counters: {counters:?}"
    );
    assert_eq!(counters[0]["kernel"], "matmul_kernel");
}
