//! The Delta log's commit protocol on real object stores on loopback, which
//! `scripts/test` starts (plain `cargo test` lists these tests as ignored): SeaweedFS (`weed mini`, S3) and Azurite (Azure Blob). On each, conditional
//! creates decide races, eight concurrent writers lose nothing, and the commit latency
//! and throughput the README's "Team setup" quotes are printed. The stores are reached
//! the way `perfdb` reaches them ([`remote_store`]), configured by the usual variables:
//! `AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` plus
//! `PERFDB_S3_BUCKET`; `AZURE_STORAGE_USE_EMULATOR=true` (or an account) plus
//! `PERFDB_AZ_CONTAINER`. Run without its store, a test fails saying so.

use object_store::path::Path as StorePath;
use perfdb_ingest::delta::{Action, Add, DeltaTable, Format, Metadata};
use perfdb_ingest::testing::stores::TestStore as Store;
use perfdb_ingest::warehouse::location::remote_store;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

/// A client of the store's test bucket or container (a new one per call).
fn store(kind: Store) -> Arc<dyn object_store::ObjectStore> {
    remote_store(&kind.url()).expect("a client from the environment")
}

/// A table under a prefix of its own (tests and runs never share one).
fn table(store: &Arc<dyn object_store::ObjectStore>, name: &str) -> DeltaTable {
    DeltaTable::new(store.clone(), StorePath::from(Store::fresh_prefix(name)))
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

async fn a_conditional_create_decides_the_race(kind: Store) {
    let shared = store(kind);
    let t = table(&shared, "race");
    assert!(t.try_commit(0, &[add("a".into())]).await.unwrap());
    assert!(
        !t.try_commit(0, &[add("b".into())]).await.unwrap(),
        "the store accepted a second create of the same version: no conditional put"
    );
    let s = t.snapshot().await.unwrap();
    assert_eq!(s.files.keys().collect::<Vec<_>>(), ["a"]);
}

async fn eight_writers_commit_concurrently_and_lose_nothing(kind: Store) {
    let shared = store(kind);
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
        let t = DeltaTable::new(store(kind), t_root(&t));
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
        "{}: 1 writer {:.1} ms per commit ({:.0} commits/s); 8 writers 80 commits in {:.2} s ({:.0} commits/s) at log length {}",
        match kind {
            Store::S3 => "S3 (SeaweedFS)",
            Store::Azure => "Azure (Azurite)",
        },
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

/// The tests above for one store, as tests of their own.
macro_rules! on_store {
    ($module:ident, $store:expr, $ignored_because:literal) => {
        mod $module {
            #[tokio::test]
            #[ignore = $ignored_because]
            async fn a_conditional_create_decides_the_race() {
                super::a_conditional_create_decides_the_race($store).await
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 8)]
            #[ignore = $ignored_because]
            async fn eight_writers_commit_concurrently_and_lose_nothing() {
                super::eight_writers_commit_concurrently_and_lose_nothing($store).await
            }
        }
    };
}

on_store!(
    s3,
    super::Store::S3,
    "needs an S3 store on loopback: run scripts/test"
);
on_store!(
    azure,
    super::Store::Azure,
    "needs Azurite on loopback: run scripts/test"
);
