//! `perfdb run -- CMD`: a benchmark command run, passed through and ingested as one run.

use crate::common::*;
use serde_json::Value;

/// `perfdb run -- CMD`: the command's output reaches the terminal unchanged, is ingested
/// as one run like the same file would be, and the run records the command line, exit
/// code and duration.
#[test]
fn run_streams_and_ingests_a_benchmark_command() {
    let wh = Wh::new();
    let log = sample("h200-gemm/ab/aiter/base/trial1.log");
    let text = std::fs::read_to_string(&log).unwrap();
    let script = format!("cat '{}'; echo 'a note on stderr' >&2", log.display());
    let out = wh.run(&["run", "--label", "ci", "--", "sh", "-c", &script]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with(&text),
        "output not passed through unchanged"
    );
    assert!(stderr(&out).contains("a note on stderr"));
    assert!(
        stdout(&out).contains(": aiter-table run "),
        "{}",
        stdout(&out)
    );
    let runs = wh.sql("SELECT n_measurements, verdict, tags FROM runs");
    assert_eq!(runs.len(), 1);
    let tags = tags_of(&runs[0]);
    let command = tags["command"].as_str();
    assert!(command.starts_with("sh -c 'cat '\\''"), "{command}");
    assert!(command.ends_with("a note on stderr'\\'' >&2'"), "{command}");
    assert_eq!(tags["exit_code"], "0");
    assert!(tags["duration_s"].parse::<f64>().unwrap() >= 0.0);
    assert!(runs[0]["verdict"].is_null());
    // JSON on stdout, chatter on stderr: --stdout-only reads the JSON alone.
    let json = sample("formats/20_aorta_tokenspeed_bench_serve_export_fixture.json");
    let script = format!("echo 'warming up' >&2; cat '{}'", json.display());
    let out = wh.run(&["run", "--label", "serve", "--", "sh", "-c", &script]);
    assert_eq!(code(&out), 2, "stderr mixed into the JSON must not parse");
    let out = wh.run(&[
        "run",
        "--stdout-only",
        "--label",
        "serve",
        "--",
        "sh",
        "-c",
        &script,
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stderr(&out).contains("warming up"));
    assert!(stdout(&out).contains(": serving run "), "{}", stdout(&out));
    // The same values as ingesting the file.
    let other = Wh::new();
    other.ingest(&log, "file");
    assert_eq!(
        runs[0]["n_measurements"],
        other.sql("SELECT n_measurements FROM runs")[0]["n_measurements"]
    );
}

/// A command that exits non-zero is a failed run — with its values when it printed
/// some, with none when it printed nothing readable — and `run` exits 1.
#[test]
fn a_failing_command_is_stored_as_a_failed_run() {
    let wh = Wh::new();
    let log = sample("h200-gemm/ab/perf/base/trial1.log");
    let script = format!("cat '{}'; exit 3", log.display());
    let out = wh.run(&["run", "--label", "ci", "--", "sh", "-c", &script]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    assert!(stderr(&out).contains("command exited with code 3; stored as a failed run"));
    let out = wh.run(&[
        "run",
        "--label",
        "ci",
        "--",
        "sh",
        "-c",
        "echo segfault; exit 139",
    ]);
    assert_eq!(code(&out), 1);
    assert!(stderr(&out).contains("output not read: no recognizable benchmark data"));
    let runs = wh.sql(
        "SELECT format, verdict, verdict_detail, n_measurements, tags FROM runs ORDER BY trial",
    );
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["format"], "perf-lines");
    assert_eq!(runs[0]["verdict"], "fail");
    assert_eq!(runs[0]["verdict_detail"], "command exited with code 3");
    assert!(runs[0]["n_measurements"].as_i64().unwrap() > 0);
    assert_eq!(
        (&runs[1]["format"], &runs[1]["n_measurements"]),
        (&Value::from("none"), &Value::from(0))
    );
    assert_eq!(tags_of(&runs[1])["exit_code"], "139");
    // A command that succeeded but printed nothing perfdb reads: an input error, nothing
    // written.
    let empty = Wh::new();
    let out = empty.run(&["run", "--", "echo", "hello"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("no recognizable benchmark data"));
    assert!(!empty.path().exists());
}
