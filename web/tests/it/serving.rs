//! How the app serves: responses cached per warehouse version with ETags, bounded work
//! with 503 + Retry-After, saved comparisons from their stored result, trial dots.

use axum::body::{to_bytes, Body};
use axum::http::{header, Request, StatusCode};
use perfdb_web::{app, AppState, Limits};
use std::path::PathBuf;
use std::time::Duration;
use tower::ServiceExt;

use crate::common::ingest;

fn ab(dir: &tempfile::TempDir) -> PathBuf {
    let root = dir.path().join("wh");
    ingest(&root, "h200-gemm/ab/aiter/base", "base", Some("b4se"));
    ingest(&root, "h200-gemm/ab/aiter/head", "head", Some("he4d"));
    root
}

struct Got {
    status: StatusCode,
    etag: Option<String>,
    retry_after: Option<String>,
    body: String,
}

async fn send(state: &AppState, uri: &str, if_none_match: Option<&str>) -> Got {
    let mut req = Request::builder().uri(uri);
    if let Some(tag) = if_none_match {
        req = req.header(header::IF_NONE_MATCH, tag);
    }
    let res = app(state.clone())
        .oneshot(req.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let (parts, body) = res.into_parts();
    let h = |name| {
        parts
            .headers
            .get(name)
            .map(|v: &header::HeaderValue| v.to_str().unwrap().to_string())
    };
    let (etag, retry_after) = (h(header::ETAG), h(header::RETRY_AFTER));
    let status = parts.status;
    let body = to_bytes(body, 64 << 20).await.unwrap();
    Got {
        status,
        etag,
        retry_after,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

const CHART: &str = "/api/chart?table=gemm_a16w16&metric=throughput&runs=base";

#[tokio::test]
async fn answers_are_cached_per_warehouse_version() {
    let dir = tempfile::tempdir().unwrap();
    let root = ab(&dir);
    let state = AppState::new(&root);
    let first = send(&state, CHART, None).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    let etag = first.etag.clone().expect("an ETag");
    assert_eq!(state.cache.len(), 1);
    // The same query in another order is the same entry; the client's tag gives 304.
    let again = send(
        &state,
        "/api/chart?runs=base&metric=throughput&table=gemm_a16w16",
        Some(&etag),
    )
    .await;
    assert_eq!(
        (again.status, again.body.as_str()),
        (StatusCode::NOT_MODIFIED, "")
    );
    assert_eq!(state.cache.len(), 1);
    let d: serde_json::Value = serde_json::from_str(&first.body).unwrap();
    assert_eq!(d["points"][0]["n"], 5);

    // An ingest is a new version: the old tag no longer matches, the answer is new.
    ingest(&root, "h200-gemm/ab/aiter/head", "base", None);
    let after = send(&state, CHART, Some(&etag)).await;
    assert_eq!(after.status, StatusCode::OK);
    assert_ne!(after.etag.as_deref(), Some(etag.as_str()));
    let d: serde_json::Value = serde_json::from_str(&after.body).unwrap();
    assert_eq!(d["points"][0]["n"], 10);

    // Errors are not kept.
    let bad = send(&state, "/api/chart?table=nope", None).await;
    assert_eq!((bad.status, bad.etag), (StatusCode::BAD_REQUEST, None));
    assert_eq!(state.cache.len(), 1);
}

#[tokio::test]
async fn saturated_or_slow_work_answers_503_with_retry_after() {
    let dir = tempfile::tempdir().unwrap();
    let root = ab(&dir);
    // Work longer than its timeout is stopped.
    let slow = AppState::new(&root).with_limits(Limits {
        workers: 1,
        queue_wait: Duration::from_secs(5),
        timeout: Duration::from_millis(1),
    });
    let got = send(&slow, "/api/compare?base=base&head=head", None).await;
    assert_eq!(got.status, StatusCode::SERVICE_UNAVAILABLE, "{}", got.body);
    assert_eq!(got.retry_after.as_deref(), Some("5"));
    assert!(got.body.contains("took longer than"), "{}", got.body);

    // One worker, no patience: of several different requests at once, the ones that
    // find it busy are told to come back, none hangs.
    let busy = AppState::new(&root).with_limits(Limits {
        workers: 1,
        queue_wait: Duration::from_millis(1),
        timeout: Duration::from_secs(30),
    });
    let uris: Vec<String> = (0..6)
        .map(|i| format!("/api/compare?base=base&head=head&threshold=0.0{}", i + 1))
        .collect();
    let all = futures_join(busy, uris).await;
    let refused: Vec<&Got> = all
        .iter()
        .filter(|g| g.status == StatusCode::SERVICE_UNAVAILABLE)
        .collect();
    assert!(all.iter().any(|g| g.status == StatusCode::OK));
    assert!(!refused.is_empty());
    for g in refused {
        assert_eq!(g.retry_after.as_deref(), Some("1"));
        assert!(g.body.contains("busy"), "{}", g.body);
    }
}

async fn futures_join(state: AppState, uris: Vec<String>) -> Vec<Got> {
    let tasks: Vec<_> = uris
        .into_iter()
        .map(|u| {
            let s = state.clone();
            tokio::spawn(async move { send(&s, &u, None).await })
        })
        .collect();
    let mut out = Vec::new();
    for t in tasks {
        out.push(t.await.unwrap());
    }
    out
}

#[tokio::test]
async fn a_saved_comparison_shows_its_stored_result() {
    let dir = tempfile::tempdir().unwrap();
    let root = ab(&dir);
    let db = perfdb_reports::db::Db::open(&root, &perfdb_ingest::devices::builtin()).unwrap();
    let opt = perfdb_reports::compare::Options {
        control: vec!["torch".into()],
        ..Default::default()
    };
    let report = perfdb_reports::compare::compare(&db, "base", "head", &opt).unwrap();
    let file = perfdb_reports::saved::save(&root, &report).unwrap();
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    // New head runs after the save: a live compare would now decide on other trials.
    ingest(&root, "h200-gemm/ab/aiter/base", "head", None);
    let state = AppState::new(&root);
    let stored = send(&state, &format!("/api/compare?saved={name}"), None).await;
    assert_eq!(stored.status, StatusCode::OK, "{}", stored.body);
    let v: serde_json::Value = serde_json::from_str(&stored.body).unwrap();
    // Exactly as saved, to the last digit of every float.
    assert_eq!(v, serde_json::to_value(&report).unwrap());
    let page = send(&state, &format!("/compare?saved={name}"), None).await;
    assert!(page.body.contains("id=\"saved\""), "{}", page.body);
    assert!(page.body.contains("Regression:"), "{}", page.body);
    // Each row's trials side by side: five base and five head dots.
    let strip = &page.body[page.body.find("<svg class=\"trials\"").unwrap()..];
    let strip = &strip[..strip.find("</svg>").unwrap()];
    assert_eq!(strip.matches("<circle").count(), 10, "{strip}");
    assert!(strip.contains("<title>base: 5 trial(s); median"), "{strip}");
    assert!(strip.contains("<title>head: 5 trial(s); median"), "{strip}");
    let alerts = send(&state, "/alerts", None).await;
    assert!(alerts.body.contains(&format!("/compare?saved={name}")));
    for bad in ["../_manifest.json", "nope.json"] {
        let got = send(&state, &format!("/compare?saved={bad}"), None).await;
        assert_eq!(got.status, StatusCode::BAD_REQUEST, "{bad}");
        assert!(got.body.contains("no saved comparison"), "{}", got.body);
    }
}

#[tokio::test]
async fn charts_show_every_trial_and_name_its_run() {
    let dir = tempfile::tempdir().unwrap();
    let root = ab(&dir);
    let state = AppState::new(&root);
    let d = send(&state, CHART, None).await;
    let d: serde_json::Value = serde_json::from_str(&d.body).unwrap();
    let trials = d["points"][0]["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 5);
    assert!(trials
        .iter()
        .all(|t| t["label"] == "base" && t["commit"] == "b4se"));
    let mut numbers: Vec<i64> = trials
        .iter()
        .map(|t| t["trial"].as_i64().unwrap())
        .collect();
    numbers.sort();
    assert_eq!(numbers, [1, 2, 3, 4, 5]);
    let page = send(
        &state,
        "/chart?table=gemm_a16w16&metric=throughput&runs=base",
        None,
    )
    .await;
    // 2 variants x 10 shapes x 5 trials, each dot titled with its run.
    assert_eq!(page.body.matches(" of base, commit b4se, on ").count(), 100);
    // History: one point per commit, its trials as dots.
    let h = send(
        &state,
        "/api/history?table=gemm_a16w16&metric=throughput&variant=triton",
        None,
    )
    .await;
    let h: serde_json::Value = serde_json::from_str(&h.body).unwrap();
    assert_eq!(h["points"].as_array().unwrap().len(), 2);
    assert_eq!(h["points"][1]["trials"].as_array().unwrap().len(), 5);
    assert_eq!(h["points"][1]["trials"][0]["commit"], "he4d");
}
