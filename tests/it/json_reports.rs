//! Every report's JSON, whole, on fixed inputs: the real H200 history (`detect`, the
//! alerts, `status`, `noise`, `compare`), a replayed `ab` and the device table. A change
//! of any byte shows in the snapshot; what varies from run to run (the temporary folder,
//! ids made from the clock, times taken, durations) is replaced by a mark first, and a
//! number is kept to nine significant figures with a list of numbers in order (a run's
//! trials come back in the order of their random run ids, and the sums they enter round
//! in the last bits accordingly).

use crate::common::*;
use serde_json::Value;

/// Keys whose values depend on the clock or the machine, not on the inputs.
const VOLATILE: &[&str] = &[
    "ingested_at",
    "raised_at",
    "created_at",
    "detected_at",
    "changed_at",
    "at",
    "elapsed_s",
    "seconds",
    "wall_s",
    "duration_s",
    "run_id",
    "run_ids",
    "base_runs",
    "head_runs",
    "id",
    "alert_id",
    "group_id",
    "ids",
    "source_path",
    "path",
    "log_dir",
    "runs",
    "perfdb_seconds_per_trial",
    "created_at_us",
    "at_us",
];

fn scrub_json(v: &mut Value) {
    match v {
        Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                if VOLATILE.contains(&k.as_str()) && !x.is_null() {
                    *x = Value::String("[volatile]".into());
                } else {
                    scrub_json(x);
                }
            }
        }
        Value::Array(a) => {
            a.iter_mut().for_each(scrub_json);
            if a.iter().all(Value::is_number) {
                a.sort_by(|x, y| x.as_f64().partial_cmp(&y.as_f64()).unwrap());
            }
        }
        Value::Number(n) if n.is_f64() => {
            let x: f64 = format!("{:.8e}", n.as_f64().unwrap()).parse().unwrap();
            *v = serde_json::json!(x);
        }
        _ => {}
    }
}

/// `text` (one JSON document or JSON lines), volatile values marked, pretty-printed.
fn stable(wh: &Wh, text: &str) -> String {
    let text = scrub(text, wh);
    let text = without_stamps(&text);
    let docs: Vec<Value> = match serde_json::from_str::<Value>(&text) {
        Ok(v) => vec![v],
        Err(_) => text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect(),
    };
    docs.into_iter()
        .map(|mut d| {
            scrub_json(&mut d);
            serde_json::to_string_pretty(&d).unwrap()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `text` with each `YYYYMMDDTHHMMSS.mmmZ` (the clock in `ab`'s labels) as `[TIME]`.
fn without_stamps(text: &str) -> String {
    let shape = b"ddddddddTdddddd.dddZ";
    let (b, mut out, mut i) = (text.as_bytes(), String::new(), 0);
    while i < b.len() {
        let here = b.len() - i >= shape.len()
            && shape.iter().zip(&b[i..]).all(|(&s, &c)| match s {
                b'd' => c.is_ascii_digit(),
                _ => c == s,
            });
        if here {
            out.push_str("[TIME]");
            i += shape.len();
        } else {
            let c = text[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

fn json_of(wh: &Wh, args: &[&str]) -> String {
    let out = wh.run(args);
    assert!(
        matches!(code(&out), 0 | 1 | 3),
        "perfdb {args:?}: {}",
        stderr(&out)
    );
    stable(wh, &stdout(&out))
}

#[test]
fn history_reports_keep_their_json() {
    let wh = Wh::new();
    ingest_history(&wh, &(1..=20).collect::<Vec<_>>());
    insta::assert_snapshot!(
        "detect",
        json_of(&wh, &["detect", "--label", "main", "--format", "json"])
    );
    let list = wh.ok(&["alerts", "list", "--format", "json"]);
    insta::assert_snapshot!("alerts_list", stable(&wh, &list));
    let alerts: Vec<Value> = serde_json::from_str(&list).unwrap();
    let id = alerts[0]["id"].as_str().expect("an alert").to_string();
    insta::assert_snapshot!(
        "alerts_show",
        json_of(&wh, &["alerts", "show", &id, "--format", "json"])
    );
    insta::assert_snapshot!(
        "alerts_grouped",
        json_of(&wh, &["alerts", "list", "--grouped", "--format", "json"])
    );
    insta::assert_snapshot!("status", json_of(&wh, &["status", "--format", "json"]));
    insta::assert_snapshot!(
        "noise",
        json_of(&wh, &["noise", "main", "--format", "json"])
    );
    insta::assert_snapshot!(
        "compare",
        json_of(&wh, &["compare", "c01", "c20", "--format", "json"])
    );
    insta::assert_snapshot!("devices", json_of(&wh, &["devices", "--format", "json"]));
}

#[test]
fn ab_keeps_its_json() {
    let wh = Wh::new();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/replay.sh");
    let arm = |side: &str, state: &str| {
        format!(
            "sh {} {} {}",
            script.display(),
            sample(&format!("h200-torch-ab/pad384/{side}")).display(),
            wh.dir.path().join(state).display()
        )
    };
    let (base, head) = (arm("base", "b"), arm("head", "h"));
    let text = json_of(
        &wh,
        &[
            "ab",
            "--quiet",
            "--format",
            "json",
            "--control",
            "torch",
            "--seed",
            "5",
            "--base",
            &base,
            "--head",
            &head,
        ],
    );
    insta::assert_snapshot!("ab", text);
}
