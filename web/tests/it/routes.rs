//! Route tests through `app()`, without a socket, on the real sample data.

use axum::body::{to_bytes, Body};
use axum::http::{Request, StatusCode};
use perfdb_ingest::warehouse::Warehouse;
use perfdb_web::{app, AppState};
use std::path::{Path, PathBuf};
use tower::ServiceExt;

use crate::common::{ingest, sample};
use perfdb_ingest::model::RunMeta;

/// The items of a paged JSON list.
fn items(body: &str) -> Vec<serde_json::Value> {
    let v: serde_json::Value = serde_json::from_str(body).unwrap();
    v["items"]
        .as_array()
        .cloned()
        .unwrap_or_else(|| panic!("not a page: {body}"))
}

async fn get(root: &Path, uri: &str) -> (StatusCode, String) {
    get_with(AppState::new(root), uri).await
}

fn ab(dir: &tempfile::TempDir) -> PathBuf {
    let root = dir.path().join("wh");
    ingest(&root, "h200-gemm/ab/aiter/base", "base", None);
    ingest(&root, "h200-gemm/ab/aiter/head", "head", None);
    root
}

#[tokio::test]
async fn an_empty_warehouse_says_how_to_ingest() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("none");
    for uri in ["/", "/runs", "/chart", "/history", "/compare"] {
        let (status, body) = get(&root, uri).await;
        assert_eq!(status, StatusCode::OK, "{uri}");
        assert!(body.contains("perfdb ingest"), "{uri}: {body}");
    }
    let (status, body) = get(&root, "/api/runs").await;
    assert_eq!(status, StatusCode::OK);
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (v["total"].as_u64(), v["items"].as_array().map(Vec::len)),
        (Some(0), Some(0))
    );
}

#[tokio::test]
async fn runs_page_and_api() {
    let dir = tempfile::tempdir().unwrap();
    let root = ab(&dir);
    let (status, body) = get(&root, "/api/runs").await;
    assert_eq!(status, StatusCode::OK);
    let runs = items(&body);
    assert_eq!(runs.len(), 10);
    assert!(runs
        .iter()
        .all(|r| r["format"] == "aiter-table" && r["values"].as_i64() == Some(75)));
    let (_, page) = get(&root, "/runs").await;
    for link in ["/chart?runs=base", "/compare?base=base&amp;head=head"] {
        assert!(page.contains(link), "{link}");
    }
}

/// The overview: every compared series of the label with the most commits, worst
/// first: the stepped series with their open alerts lead, each row links to its history.
#[tokio::test]
async fn overview_puts_what_moved_first_and_links_each_series_to_its_history() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("wh");
    for c in 1..=20 {
        let commit = format!("c{c:02}");
        ingest(
            &root,
            &format!("h200-gemm/history/{commit}"),
            "main",
            Some(&commit),
        );
    }
    ingest(&root, "h200-gemm/ab/aiter/base", "base", None);
    let cfg = perfdb_reports::config::Config::default();
    let db = perfdb_reports::db::Db::open(&root, &perfdb_ingest::devices::builtin()).unwrap();
    perfdb_reports::detect::detect(&db, "main", None, &cfg.detect)
        .and_then(|d| perfdb_reports::detect::raise(&db, &Warehouse::new(&root), &d))
        .unwrap();
    drop(db);
    let (status, body) = get(&root, "/api/overview?commits=10").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let o: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(o["label"], "main");
    assert_eq!(o["commits"].as_array().unwrap().len(), 10);
    assert_eq!(o["commits"][9], "c20");
    let rows = o["rows"].as_array().unwrap();
    // The alerted series first: the Triton kernel whose tile config changed at c13.
    let first = &rows[0];
    assert_eq!(first["variant"], "triton_mm_a16w16", "{first}");
    assert_eq!(first["step"]["commit"], "c13");
    assert_eq!(first["step"]["worse"], true);
    assert!(!first["open_alerts"].as_array().unwrap().is_empty());
    assert!(rows.last().unwrap()["open_alerts"]
        .as_array()
        .unwrap()
        .is_empty());
    // The page: grouped, sparklines, and links that open the series' history.
    let (status, page) = get(&root, "/?metric=latency").await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        page.contains("<tr class=\"group\"><th colspan=\"7\">gemm.mm · triton_mm_a16w16</th></tr>"),
        "{page}"
    );
    assert!(page.contains("<svg class=\"spark\""));
    let href = page
        .split("<a class=\"history\" href=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap()
        .replace("&amp;", "&");
    assert!(
        href.starts_with(
            "/history?table=gemm.mm&variant=triton_mm_a16w16&metric=latency&label=main"
        ),
        "{href}"
    );
    let (status, history) = get(&root, &href).await;
    assert_eq!(status, StatusCode::OK, "{history}");
    assert!(
        history.contains("c13"),
        "no change point at c13 in the history"
    );
    // Another label, and filters that name nothing known, are said so.
    let (_, body) = get(&root, "/api/overview?label=base").await;
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&body).unwrap()["label"],
        "base"
    );
    let (status, body) = get(&root, "/?variant=nope").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        body.contains("unknown variant &#39;nope&#39;") || body.contains("unknown variant 'nope'"),
        "{body}"
    );
}

/// How a run was measured is shown beside its machine, on the page and in the API.
#[tokio::test]
async fn runs_show_machine_and_method() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("wh");
    ingest(&root, "gpu-harness/nvbench/h200_run1.json", "nv", None);
    let (_, body) = get(&root, "/api/runs").await;
    let runs = items(&body);
    assert_eq!(
        (runs[0]["machine"].as_str(), runs[0]["method"].as_str()),
        (Some("NVIDIA H200"), Some("nvbench:cold"))
    );
    let (_, page) = get(&root, "/runs").await;
    assert!(page.contains("<th>machine</th><th>method</th>"), "{page}");
    assert!(
        page.contains("<td>NVIDIA H200</td><td>nvbench:cold</td>"),
        "{page}"
    );
}

#[tokio::test]
async fn chart_shows_tflops_per_shape_for_both_variants() {
    let dir = tempfile::tempdir().unwrap();
    let root = ab(&dir);
    let (status, body) = get(
        &root,
        "/chart?table=gemm_a16w16&metric=throughput&runs=base",
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let svg = &body[body.find("<svg").unwrap()..body.find("</svg>").unwrap()];
    for text in [
        "torch",
        "triton",
        "1×4096×4096",
        "512×4096×4096",
        "8192×8192×8192",
        "TFLOPS",
    ] {
        assert!(svg.contains(text), "{text} missing from the SVG");
    }
    // Shapes in natural order: 16 before 128 before 512.
    let pos = |s: &str| {
        svg.find(&format!("\n{s}\n"))
            .unwrap_or_else(|| panic!("no label {s}"))
    };
    assert!(
        pos("16×4096×4096") < pos("128×4096×4096") && pos("128×4096×4096") < pos("512×4096×4096")
    );
    let (_, api) = get(
        &root,
        "/api/chart?table=gemm_a16w16&metric=throughput&runs=base",
    )
    .await;
    let d: serde_json::Value = serde_json::from_str(&api).unwrap();
    assert_eq!(d["variants"], serde_json::json!(["torch", "triton"]));
    assert_eq!(d["shapes"].as_array().unwrap().len(), 10);
    assert_eq!(d["points"][0]["n"], 5);
}

#[tokio::test]
async fn bad_requests_say_what_was_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let root = ab(&dir);
    let cases = [
        ("/chart?table=nope", "unknown table &#x27;nope&#x27;"),
        ("/chart?table=gemm_a16w16&metric=joules", "unknown metric"),
        ("/chart?table=gemm_a16w16&runs=nosuchlabel", "no runs match"),
        ("/compare?base=base&head=zzz", "no runs match"),
        (
            "/compare?base=base&head=head&threshold=7",
            "must be a fraction",
        ),
        ("/history?table=gemm_a16w16&variant=cuda", "unknown variant"),
        // Every parameter is checked: a typo is never silently the default.
        (
            "/compare?base=base&head=head&treshold=0.1",
            "unknown field `treshold`",
        ),
        (
            "/compare?base=base&head=head&allow_missing=maybe",
            "allow_missing: 'maybe'",
        ),
        (
            "/runs?offset=18446744073709551615",
            "past the end of any list",
        ),
        (
            "/runs?offset=99999999999999999999999",
            "offset '99999999999999999999999'",
        ),
        ("/alerts?status=bogus", "'bogus' is not a status"),
        (
            "/compare?base=base&head=head&overrides=%5B%7B%22threshold%22%3A-1%7D%5D",
            "override threshold -1 must be",
        ),
        (
            "/compare?base=base&head=head&baseline_window=0",
            "1 or more",
        ),
    ];
    for (uri, want) in cases {
        let (status, body) = get(&root, uri).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{uri}");
        let want = want.replace("&#x27;", "'");
        assert!(body.contains(&want), "{uri}: {body}");
    }
    let (status, body) = get(&root, "/api/chart?table=nope").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert!(v["error"]
        .as_str()
        .unwrap()
        .contains("unknown table 'nope'"));
    let (status, _) = get(&root, "/no/such/page").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, body) = get(&root, "/api/runs?lmit=5").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert!(v["error"].as_str().unwrap().contains("`lmit`"), "{body}");
    // Every documented status filters, `silenced` and `withdrawn` included.
    for st in [
        "pending",
        "active",
        "acknowledged",
        "dismissed",
        "resolved",
        "withdrawn",
        "silenced",
    ] {
        let (status, body) = get(&root, &format!("/api/alerts/detected?status={st}")).await;
        assert_eq!(status, StatusCode::OK, "{st}: {body}");
    }
}

#[tokio::test]
async fn compare_rows_come_a_page_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let root = ab(&dir);
    let (_, all) = get(&root, "/compare?base=base&head=head&control=torch").await;
    let n = all.matches("<svg class=\"trials\"").count();
    assert!(n > 4, "{n}");
    let (status, body) = get(&root, "/compare?base=base&head=head&control=torch&limit=2").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body.matches("<svg class=\"trials\"").count(), 2);
    assert!(body.contains(&format!("showing 1–2 of {n}")), "{body}");
    assert!(
        body.contains(
            "href=\"/compare?base=base&amp;head=head&amp;control=torch&amp;offset=2&amp;limit=2\""
        ),
        "{body}"
    );
}

#[tokio::test]
async fn compare_page_shows_the_three_regressions() {
    let dir = tempfile::tempdir().unwrap();
    let root = ab(&dir);
    let (status, body) = get(&root, "/compare?base=base&head=head&control=torch").await;
    assert_eq!(status, StatusCode::OK);
    assert!(body.contains("Regression:"), "{body}");
    let rows = body.matches("<tr class=\"regression\">").count();
    // 3 shapes, in latency and throughput.
    assert_eq!(rows, 6, "{body}");
    assert!(body.contains("passed"));
    let (_, api) = get(&root, "/api/compare?base=base&head=head&control=torch").await;
    let v: serde_json::Value = serde_json::from_str(&api).unwrap();
    assert_eq!(v["verdict"], "regression");
}

#[tokio::test]
async fn history_shows_the_step_at_commit_13() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("wh");
    for c in 1..=20 {
        let commit = format!("c{c:02}");
        ingest(
            &root,
            &format!("h200-gemm/history/{commit}"),
            "history",
            Some(&commit),
        );
    }
    let key = r#"{"M":"512","N":"4096","K":"4096","dtype":"torch.bfloat16"}"#;
    let uri = format!(
        "/api/history?table=gemm_a16w16&variant=triton&metric=latency&key={}",
        perfdb_web::url::url_encode(key)
    );
    let (status, body) = get(&root, &uri).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let h: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(h["points"].as_array().unwrap().len(), 20);
    let cps: Vec<usize> = h["change_points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as usize)
        .collect();
    assert_eq!(cps, [12], "{body}");
    assert_eq!(h["points"][12]["point"], "c13");
    let (_, page) = get(&root, &uri.replace("/api/history", "/history")).await;
    assert!(page.contains("step at <b>c13</b>"), "{page}");
    // An unchanged shape has no step.
    let key = r#"{"M":"1","N":"4096","K":"4096","dtype":"torch.bfloat16"}"#;
    let (_, body) = get(
        &root,
        &format!(
            "/api/history?table=gemm_a16w16&variant=torch&metric=latency&key={}",
            perfdb_web::url::url_encode(key)
        ),
    )
    .await;
    let h: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(h["change_points"], serde_json::json!([]), "{body}");
}

/// A profiled run (an ncu capture of the GEMM benchmark ingested by hand at c02, its
/// `[perf]` line timed under ncu's replay) is no point of the history: the H100's five
/// timed runs a commit are.
#[tokio::test]
async fn a_profiled_run_is_no_point_of_the_history() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("wh");
    let files = dir.path().join("runs");
    std::fs::create_dir_all(&files).unwrap();
    let ingest_file = |path: &Path, commit: &str| {
        crate::common::ingest_files(&root, &[path.to_path_buf()], "main", Some(commit))
    };
    for (commit, file) in [
        ("c01", "timing-gemm-tile128.txt"),
        ("c02", "timing-gemm-tile64.txt"),
    ] {
        let text = std::fs::read_to_string(sample(&format!("h100-counters/full/{file}"))).unwrap();
        for (t, line) in text.lines().enumerate() {
            let path = files.join(format!("{commit}-{t}.log"));
            std::fs::write(&path, format!("{line}\n")).unwrap();
            ingest_file(&path, commit);
        }
    }
    ingest_file(
        &sample("h100-counters/full/ncu-everylaunch-gemm.csv"),
        "c02",
    );
    let key = r#"{"K":"2048","M":"2048","N":"2048","dtype":"torch.bfloat16"}"#;
    let uri = format!(
        "/api/history?table={}&variant=triton&metric=latency&key={}",
        perfdb_web::url::url_encode("perf[matmul]"),
        perfdb_web::url::url_encode(key)
    );
    let (status, body) = get(&root, &uri).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let h: serde_json::Value = serde_json::from_str(&body).unwrap();
    let trials: usize = h["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["values"].as_array().unwrap().len())
        .sum();
    assert_eq!(trials, 10, "{body}");
}

#[tokio::test]
async fn alerts_list_saved_regressions() {
    let dir = tempfile::tempdir().unwrap();
    let root = ab(&dir);
    let (_, body) = get(&root, "/alerts").await;
    assert!(body.contains("--save"));
    let db = perfdb_reports::db::Db::open(&root, &perfdb_ingest::devices::builtin()).unwrap();
    let opt = perfdb_reports::compare::Options {
        control: vec!["torch".into()],
        ..Default::default()
    };
    let report = perfdb_reports::compare::compare(&db, "base", "head", &opt).unwrap();
    perfdb_reports::saved::save(&root, &report).unwrap();
    let (_, api) = get(&root, "/api/alerts").await;
    let v = items(&api);
    assert_eq!(v.len(), 1);
    assert_eq!(v[0]["verdict"], "regression");
    assert_eq!(v[0]["regressions"].as_array().unwrap().len(), 6);
    let (_, page) = get(&root, "/alerts").await;
    assert!(page.contains("base → head"), "{page}");
    // Keys keep their source order.
    assert!(
        page.contains("triton M=512 N=4096 K=4096 dtype=torch.bfloat16 latency: +197"),
        "{page}"
    );
}

async fn get_with(state: AppState, uri: &str) -> (StatusCode, String) {
    let res = app(state)
        .oneshot(Request::builder().uri(uri).body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = res.status();
    let body = to_bytes(res.into_body(), 64 << 20).await.unwrap();
    (status, String::from_utf8_lossy(&body).into_owned())
}

#[tokio::test]
async fn the_page_decides_as_ci_does() {
    // perfdb.toml raises triton's threshold past the regressions: CI would pass.
    let dir = tempfile::tempdir().unwrap();
    let root = ab(&dir);
    let config = perfdb_reports::config::Config::parse(
        "[compare]\nalpha = 0.01\n[[compare.override]]\nvariant = \"triton\"\nthreshold = 5.0\n",
    )
    .unwrap();
    let state = || AppState::new(&root).with_config(config.clone());
    let (status, body) = get_with(state(), "/api/compare?base=base&head=head&control=torch").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let web: serde_json::Value = serde_json::from_str(&body).unwrap();
    let cli_options = config
        .resolve(
            &perfdb_reports::compare::JudgeArgs {
                control: vec!["torch".into()],
                ..Default::default()
            },
            None,
        )
        .unwrap();
    let db = perfdb_reports::db::Db::open(&root, &perfdb_ingest::devices::builtin()).unwrap();
    let cli = perfdb_reports::compare::compare(&db, "base", "head", &cli_options).unwrap();
    assert_eq!(web["verdict"], serde_json::to_value(cli.verdict).unwrap());
    assert_eq!(web["reason"], cli.reason);
    assert_eq!(web["options"]["alpha"], 0.01);
    assert_ne!(
        web["verdict"], "regression",
        "the override is applied: {}",
        web["reason"]
    );
    // Every option of the CLI is accepted; a bad one is a 400 naming it.
    let (status, body) = get_with(
        state(),
        "/api/compare?base=base&head=head&control=torch&control_tol=0.2&reduce=best&test=mann-whitney&where=table%3Dadd&allow_missing=true",
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["options"]["control_tol"], 0.2);
    assert_eq!(v["options"]["test"], "mann-whitney");
    assert_eq!(
        v["options"]["filters"],
        serde_json::json!([["table", "add"]])
    );
    let (status, body) = get_with(state(), "/api/compare?base=base&head=head&alpha=2").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        body.contains("alpha must be a significance level in (0, 1)"),
        "{body}"
    );
}

#[tokio::test]
async fn a_saved_comparison_replays_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let root = ab(&dir);
    let db = perfdb_reports::db::Db::open(&root, &perfdb_ingest::devices::builtin()).unwrap();
    let config = perfdb_reports::config::Config::parse(
        "[[compare.override]]\nvariant = \"triton\"\nmetric = \"throughput\"\nthreshold = 0.99\n",
    )
    .unwrap();
    let opt = config
        .resolve(
            &perfdb_reports::compare::JudgeArgs {
                control: vec!["torch".into()],
                alpha: Some(0.01),
                control_tol: Some(0.2),
                ..Default::default()
            },
            None,
        )
        .unwrap();
    let saved = perfdb_reports::compare::compare(&db, "base", "head", &opt).unwrap();
    perfdb_reports::saved::save(&root, &saved).unwrap();
    let (_, api) = get(&root, "/api/alerts").await;
    let alerts = items(&api);
    let replay = alerts[0]["replay"].as_str().unwrap();
    // Served without that config: the link carries every option, overrides included.
    let (status, body) = get(&root, &format!("/api/compare?{replay}")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let again: serde_json::Value = serde_json::from_str(&body).unwrap();
    let before = serde_json::to_value(&saved).unwrap();
    for field in ["verdict", "reason", "options", "summary"] {
        assert_eq!(again[field], before[field], "{field}");
    }
    let (_, page) = get(&root, "/alerts").await;
    assert!(
        page.contains("control=torch"),
        "the link keeps --control: {page}"
    );
}

/// The 20-commit H200 history under `main`, with the alerts `detect` raises on it.
fn history_with_alerts(dir: &tempfile::TempDir) -> (PathBuf, perfdb_reports::detect::Raised) {
    let root = dir.path().join("wh");
    for c in 1..=20 {
        let commit = format!("c{c:02}");
        ingest(
            &root,
            &format!("h200-gemm/history/{commit}"),
            "main",
            Some(&commit),
        );
    }
    let db = perfdb_reports::db::Db::open(&root, &perfdb_ingest::devices::builtin()).unwrap();
    let d = perfdb_reports::detect::detect(&db, "main", None, &Default::default()).unwrap();
    let raised = perfdb_reports::detect::raise(&db, &Warehouse::new(&root), &d).unwrap();
    (root, raised)
}

#[test]
fn detect_in_many_groups_finds_what_one_group_finds_however_rows_are_coded() {
    use perfdb_reports::detect::{detect_in_passes, Coding};
    let dir = tempfile::tempdir().unwrap();
    let (root, _) = history_with_alerts(&dir);
    let db = perfdb_reports::db::Db::open(&root, &perfdb_ingest::devices::builtin()).unwrap();
    let cfg = Default::default();
    let one = detect_in_passes(&db, "main", None, &cfg, usize::MAX, Coding::Hashed).unwrap();
    assert!(!one.events.is_empty());
    let want = serde_json::to_value(&one.events).unwrap();
    // 500 rows a group spills to files; joined codes take the collision path.
    for (rows, coding) in [
        (500, Coding::Hashed),
        (500, Coding::Joined),
        (usize::MAX, Coding::Joined),
    ] {
        let other = detect_in_passes(&db, "main", None, &cfg, rows, coding).unwrap();
        assert_eq!(one.series, other.series, "{rows} rows, {coding:?}");
        assert_eq!(
            want,
            serde_json::to_value(&other.events).unwrap(),
            "{rows} rows, {coding:?}"
        );
    }
}

#[tokio::test]
async fn detected_alerts_are_listed_with_their_history() {
    let dir = tempfile::tempdir().unwrap();
    let (root, raised) = history_with_alerts(&dir);
    assert_eq!(raised.new_alerts.len(), 6);
    let (status, body) = get(&root, "/api/alerts/detected?status=active").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(items(&body).len(), 6);
    let (status, body) = get(&root, "/api/alerts/detected?status=resolved").await;
    assert_eq!((status, items(&body).len()), (StatusCode::OK, 0));
    // A page at a time, with the next page's query.
    let (_, body) = get(&root, "/api/alerts/detected?status=active&limit=4").await;
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!((v["total"].as_u64(), items(&body).len()), (Some(6), 4));
    let next = v["next"].as_str().unwrap();
    assert_eq!(next, "/api/alerts/detected?status=active&offset=4&limit=4");
    let (_, body) = get(&root, next).await;
    assert_eq!(items(&body).len(), 2);
    let (status, body) = get(&root, "/alerts?status=bogus").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body.contains("status 'bogus'"), "{body}");
    let (_, page) = get(&root, "/alerts").await;
    assert!(page.contains("id=\"detected\""), "{page}");
    // Each alert links to its series' history, where the change point is marked.
    let href = page
        .split("href=\"")
        .find(|h| h.starts_with("/history?table=gemm_a16w16&amp;variant=triton"))
        .and_then(|h| h.split('"').next())
        .unwrap()
        .replace("&amp;", "&");
    let (status, hist) = get(&root, &href.replace("/history?", "/api/history?")).await;
    assert_eq!(status, StatusCode::OK, "{hist}");
    let h: serde_json::Value = serde_json::from_str(&hist).unwrap();
    let cps = h["change_points"].as_array().unwrap();
    assert_eq!(cps.len(), 1);
    let at = cps[0].as_u64().unwrap() as usize;
    assert_eq!(h["points"][at]["point"], "c13");
}

async fn post_form(state: AppState, uri: &str, body: &str, site: &str) -> (StatusCode, String) {
    let res = app(state)
        .oneshot(
            Request::builder()
                .method("POST")
                .uri(uri)
                .header("content-type", "application/x-www-form-urlencoded")
                .header("sec-fetch-site", site)
                .body(Body::from(body.to_string()))
                .unwrap(),
        )
        .await
        .unwrap();
    let status = res.status();
    let body = to_bytes(res.into_body(), 1 << 20).await.unwrap();
    (status, String::from_utf8_lossy(&body).into_owned())
}

#[tokio::test]
async fn triage_from_the_page_only_when_allowed_and_same_site() {
    let dir = tempfile::tempdir().unwrap();
    let (root, raised) = history_with_alerts(&dir);
    let id = &raised.new_alerts[0];
    let uri = format!("/alerts/{id}/triage");
    // Read-only by default, and the page says how to triage.
    let (status, _) = post_form(AppState::new(&root), &uri, "action=ack", "same-origin").await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (_, page) = get(&root, "/alerts").await;
    assert!(page.contains("--allow-triage") && !page.contains("<form method=\"post\""));
    // Allowed: the page carries the forms and their token.
    let state = AppState::new(&root).with_triage();
    let (_, page) = get_with(state.clone(), "/alerts").await;
    let token = page
        .split("name=\"token\" value=\"")
        .nth(1)
        .and_then(|t| t.split('"').next())
        .unwrap()
        .to_string();
    // Another site, or a wrong token: refused, nothing changed.
    let (status, _) = post_form(
        state.clone(),
        &uri,
        &format!("action=ack&token={token}"),
        "cross-site",
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = post_form(state.clone(), &uri, "action=ack&token=guess", "same-origin").await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = post_form(
        state.clone(),
        &uri,
        &format!("action=ack&note=on+it&token={token}"),
        "same-origin",
    )
    .await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let (_, api) = get(&root, "/api/alerts/detected?status=acknowledged").await;
    let v = items(&api);
    assert_eq!(v.len(), 1);
    assert_eq!(v[0]["history"][1]["who"], "web");
    assert_eq!(v[0]["history"][1]["note"], "on it");
}

#[tokio::test]
async fn history_never_mixes_machine_classes() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("wh");
    // The same commits on two machines; the second one's runs tagged machine=mi300x.
    for c in 1..=4 {
        let commit = format!("c{c:02}");
        ingest(
            &root,
            &format!("h200-gemm/history/{commit}"),
            "main",
            Some(&commit),
        );
        let files = perfdb_ingest::expand_inputs(&[sample(&format!("h200-gemm/history/{commit}"))])
            .unwrap();
        let meta = RunMeta {
            label: "main".into(),
            commit: Some(commit.clone()),
            tags: vec![("machine".into(), "mi300x".into())],
            ..Default::default()
        };
        perfdb_ingest::ingest_files(
            &Warehouse::new(&root),
            &files,
            None,
            &meta,
            &perfdb_ingest::devices::builtin(),
            &|_| {},
        )
        .unwrap();
    }
    let key = r#"{"K":"4096","M":"512","N":"4096","dtype":"torch.bfloat16"}"#;
    let uri = |machine: &str| {
        format!(
            "/api/history?table=gemm_a16w16&variant=triton&metric=latency&label=main&key={}{machine}",
            perfdb_web::url::url_encode(key)
        )
    };
    let (_, body) = get(&root, &uri("")).await;
    let h: serde_json::Value = serde_json::from_str(&body).unwrap();
    let machines = h["machines"].as_array().unwrap();
    assert_eq!(machines.len(), 2, "{body}");
    // One class's trials only: 3 a commit, not 6.
    assert_eq!(
        h["points"][0]["values"].as_array().unwrap().len(),
        3,
        "{body}"
    );
    let (_, body) = get(&root, &uri("&machine=mi300x")).await;
    let h: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(h["machine"], "mi300x");
    assert_eq!(h["points"][0]["values"].as_array().unwrap().len(), 3);
    let (status, body) = get(&root, &uri("&machine=nope")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body.contains("unknown machine 'nope'"), "{body}");
    // The per-shape chart too: one class's runs, the classes offered.
    let (_, body) = get(
        &root,
        "/api/chart?table=gemm_a16w16&metric=latency&runs=main",
    )
    .await;
    let c: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(c["machines"].as_array().map(Vec::len), Some(2), "{body}");
    assert_eq!(c["n_runs"], 12, "4 commits x 3 trials of one class: {body}");
    let (_, body) = get(
        &root,
        "/api/chart?table=gemm_a16w16&metric=latency&runs=main&machine=mi300x",
    )
    .await;
    let c: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(c["machine"], "mi300x");
    assert_eq!(c["n_runs"], 12);
}

/// An alert's page: its status history and the `perfdb ab` command that confirms it.
#[tokio::test]
async fn an_alert_page_says_how_to_confirm_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("wh");
    for c in 1..=20 {
        let commit = format!("c{c:02}");
        ingest(
            &root,
            &format!("h200-gemm/history/{commit}"),
            "main",
            Some(&commit),
        );
    }
    let cfg = perfdb_reports::config::Config::default();
    let db = perfdb_reports::db::Db::open(&root, &perfdb_ingest::devices::builtin()).unwrap();
    let d = perfdb_reports::detect::detect(&db, "main", None, &cfg.detect).unwrap();
    perfdb_reports::detect::raise(&db, &Warehouse::new(&root), &d).unwrap();
    // A fresh reader sees what detect stored.
    let db = perfdb_reports::db::Db::open(&root, &perfdb_ingest::devices::builtin()).unwrap();
    let id = perfdb_reports::alerts::list(&db, None).unwrap()[0]
        .id
        .clone();
    drop(db);
    let (_, list) = get(&root, "/alerts").await;
    assert!(
        list.contains(&format!("<a href=\"/alerts/{id}\">")),
        "{list}"
    );
    let (status, page) = get(&root, &format!("/alerts/{}", &id[..6])).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert!(
        page.contains("<pre id=\"confirm\">git worktree add ../perfdb-base-c12 c12\n"),
        "{page}"
    );
    assert!(page.contains("perfdb ab --base-dir ../perfdb-base-c12 --head-dir ../perfdb-head-c13 --commit-base c12 --commit-head c13"), "{page}");
    let (status, _) = get(&root, "/alerts/ffffffff").await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // A bisect stored while the server runs shows on the page it had cached.
    let state = AppState::new(&root);
    let uri = format!("/alerts/{id}");
    let (_, before) = get_with(state.clone(), &uri).await;
    assert!(!before.contains("<h2>Bisected</h2>"), "{before}");
    // The bisect recorded on an H200, its watch in today's layout (the series list).
    let mut record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(sample("h200-bisect/bisect.json")).unwrap())
            .unwrap();
    record["watch"]["series"] = serde_json::json!([]);
    let record: perfdb_reports::bisect::Bisected = serde_json::from_value(record).unwrap();
    perfdb_reports::bisect::store::store(&root, &id, &record).unwrap();
    let (_, after) = get_with(state, &uri).await;
    assert!(after.contains("<h2>Bisected</h2>"), "{after}");
}

/// An alert stored before commit names were checked at ingest (a name no shell hint may
/// carry): its page is served, saying why no command is printed, not a server error.
#[tokio::test]
async fn an_alert_with_a_legacy_commit_name_still_has_its_page() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("wh");
    ingest(&root, "h200-gemm/history/c01", "main", Some("c01"));
    let record = perfdb_ingest::model::AlertRecord {
        alert_id: "0123456789abcdef".into(),
        fingerprint: "f0".into(),
        label: "main".into(),
        table: "gemm_a16w16".into(),
        variant: "triton".into(),
        key: "{}".into(),
        key_text: "M=512".into(),
        machine: "default".into(),
        last_good_commit: "c01".into(),
        first_bad_commit: "--upload-pack=touch /tmp/x".into(),
        metrics: r#"[{"metric":"latency","unit":"us","before_median":10,"after_median":13,"ratio":1.3,"p":0.001}]"#.into(),
        ratio: 1.3,
        p: 0.001,
        runs: "[]".into(),
        created_at_us: 1,
    };
    Warehouse::new(&root)
        .commit_alerts(|_| (vec![record], Vec::new()))
        .unwrap();
    let (status, page) = get(&root, "/alerts/0123456789").await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert!(
        page.contains(
            "<p id=\"confirm\">commit `--upload-pack=touch /tmp/x` of the alert: a commit name that starts with `-`"
        ),
        "{page}"
    );
    assert!(page.contains("no command is printed for it"), "{page}");
    assert!(!page.contains("perfdb ab --base-dir"), "{page}");
}

/// A page is cached per host name: the triage token in `localhost`'s page is never
/// served to `perf.internal`, whose own page carries its own token.
#[tokio::test]
async fn the_page_cache_keeps_each_host_name_its_own_token() {
    let dir = tempfile::tempdir().unwrap();
    let (root, _) = history_with_alerts(&dir);
    let state = AppState::new(&root)
        .with_triage()
        .with_hosts(["perf.internal".to_string()]);
    let token_on = |host: &'static str| {
        let state = state.clone();
        async move {
            let res = app(state)
                .oneshot(
                    Request::builder()
                        .uri("/alerts")
                        .header("host", host)
                        .body(Body::empty())
                        .unwrap(),
                )
                .await
                .unwrap();
            assert_eq!(res.status(), StatusCode::OK);
            let body = to_bytes(res.into_body(), 64 << 20).await.unwrap();
            String::from_utf8_lossy(&body)
                .split("name=\"token\" value=\"")
                .nth(1)
                .and_then(|t| t.split('"').next())
                .unwrap()
                .to_string()
        }
    };
    let local = token_on("localhost").await;
    let internal = token_on("perf.internal").await;
    assert_eq!(local, state.triage_token_for("localhost").unwrap());
    assert_eq!(internal, state.triage_token_for("perf.internal").unwrap());
    assert_ne!(local, internal);
    // Asked again, each name still gets its own (from the cache now).
    assert_eq!(token_on("localhost:8080").await, local);
    assert_eq!(token_on("perf.internal").await, internal);
}

/// The Host check parses the name, then compares: a loopback address followed by text
/// of an attacker's domain is no host the server answers to.
#[tokio::test]
async fn a_host_that_only_starts_like_an_allowed_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (root, _) = history_with_alerts(&dir);
    let state = AppState::new(&root).with_hosts(["perf.internal".to_string()]);
    for (host, status) in [
        ("[::1].attacker.example", StatusCode::MISDIRECTED_REQUEST),
        ("[::1]evil.example:80", StatusCode::MISDIRECTED_REQUEST),
        (
            "127.0.0.1:8080.attacker.example",
            StatusCode::MISDIRECTED_REQUEST,
        ),
        (
            "perf.internal.attacker.example",
            StatusCode::MISDIRECTED_REQUEST,
        ),
        ("[::1]:8080", StatusCode::OK),
        ("[0:0::1]", StatusCode::OK),
        ("PERF.internal.:80", StatusCode::OK),
    ] {
        let res = app(state.clone())
            .oneshot(
                Request::builder()
                    .uri("/alerts")
                    .header("host", host)
                    .body(Body::empty())
                    .unwrap(),
            )
            .await
            .unwrap();
        assert_eq!(res.status(), status, "{host}");
    }
}
