//! Where a warehouse lives: a local directory or an object store URL (`s3://`, `gs://`,
//! `az://`, `file://`), how a location is checked, the store that reaches it, and where
//! a remote warehouse's files are cached on this machine.

use object_store::path::Path as StorePath;
use object_store::ObjectStore;
use std::path::Path;
use std::sync::Arc;

/// Is `location` a URL perfdb reaches through an object store (`s3://`, `gs://`,
/// `az://`...; any scheme but `file://`, so an unknown one is an error, not a local
/// directory named `http:`), rather than a local directory?
pub fn is_remote(location: &str) -> bool {
    match location.split_once("://") {
        Some((scheme, _)) => {
            scheme != "file"
                && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        }
        None => false,
    }
}

/// Whether `location` can name a warehouse: a plain path, `file:///abs/path`, or
/// `SCHEME://...` of a store. Something that looks like a URL and is not one (`s3:/x`,
/// `file://rel`, `s3//x`) is an error, not a local directory of that name.
pub fn check_location(location: &str) -> Result<(), String> {
    let scheme_like = |s: &str| {
        s.len() > 1
            && s.starts_with(|c: char| c.is_ascii_alphabetic())
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    };
    if let Some((scheme, rest)) = location.split_once("://") {
        if scheme == "file" {
            return match file_url_path(location) {
                Some(_) => Ok(()),
                None => Err(format!(
                    "{location}: a file URL needs an absolute path (file:///path/to/warehouse), \
                     or give the directory as a plain path"
                )),
            };
        }
        if scheme_like(scheme) {
            return if rest.is_empty() || rest.starts_with('/') {
                Err(format!(
                    "{location}: no bucket or container after {scheme}://"
                ))
            } else {
                Ok(())
            };
        }
    } else if let Some((scheme, _)) = location.split_once(':') {
        // `s3:/bucket`, `s3:bucket` (a Windows drive letter `C:` is one letter).
        if scheme_like(scheme) {
            return Err(format!(
                "{location}: looks like a URL but is not one (expected {scheme}://...); a local \
                 directory with a ':' in its name can be given as ./{location}"
            ));
        }
    }
    Ok(())
}

/// A local directory given as `file:///path`, as its path.
pub fn file_url_path(location: &str) -> Option<std::path::PathBuf> {
    let url = url::Url::parse(location).ok()?;
    (url.scheme() == "file").then(|| url.to_file_path().ok())?
}

/// The store of a remote warehouse, rooted at its prefix: credentials, region and
/// endpoint from the usual environment variables (`AWS_ACCESS_KEY_ID`,
/// `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`, `AWS_ENDPOINT_URL` or `AWS_ENDPOINT`;
/// `GOOGLE_SERVICE_ACCOUNT`...; `AZURE_STORAGE_ACCOUNT_NAME`...).
pub fn remote_store(location: &str) -> Result<Arc<dyn ObjectStore>, String> {
    use object_store::aws::AmazonS3Builder;
    use object_store::azure::MicrosoftAzureBuilder;
    use object_store::gcp::GoogleCloudStorageBuilder;
    let url = url::Url::parse(location).map_err(|e| format!("{location}: not a URL ({e})"))?;
    let bad = |e: object_store::Error| format!("{location}: {e}");
    let store: Arc<dyn ObjectStore> = match url.scheme() {
        "s3" | "s3a" => {
            let mut b = AmazonS3Builder::from_env().with_url(location);
            // `AWS_ENDPOINT_URL` is the AWS tools' name; object_store reads
            // `AWS_ENDPOINT`.
            let endpoint = std::env::var("AWS_ENDPOINT")
                .or_else(|_| std::env::var("AWS_ENDPOINT_URL"))
                .ok();
            if let Some(e) = &endpoint {
                b = b.with_endpoint(e).with_allow_http(e.starts_with("http://"));
            }
            if std::env::var("AWS_REGION").is_err() && std::env::var("AWS_DEFAULT_REGION").is_err()
            {
                b = b.with_region("us-east-1");
            }
            Arc::new(b.build().map_err(bad)?)
        }
        "gs" => Arc::new(
            GoogleCloudStorageBuilder::from_env()
                .with_url(location)
                .build()
                .map_err(bad)?,
        ),
        "az" | "abfs" | "abfss" | "azure" => Arc::new(
            MicrosoftAzureBuilder::from_env()
                .with_url(location)
                .build()
                .map_err(bad)?,
        ),
        other => {
            return Err(format!(
                "{location}: `{other}://` is no object store perfdb knows (s3, gs, az, file)"
            ))
        }
    };
    let prefix = url.path().trim_matches('/');
    Ok(if prefix.is_empty() {
        store
    } else {
        Arc::new(object_store::prefix::PrefixStore::new(
            store,
            StorePath::from(prefix),
        ))
    })
}

/// [`remote_store`], one client per location for the life of the process: a client
/// keeps its HTTP connections, so a server's requests (or a command's many reads) do not
/// each open new ones. The environment it was built from is read once.
pub fn shared_store(location: &str) -> Result<Arc<dyn ObjectStore>, String> {
    type Clients = std::collections::HashMap<String, Result<Arc<dyn ObjectStore>, String>>;
    static CLIENTS: std::sync::LazyLock<std::sync::Mutex<Clients>> =
        std::sync::LazyLock::new(Default::default);
    let mut clients = CLIENTS.lock().unwrap_or_else(|p| p.into_inner());
    clients
        .entry(location.to_string())
        .or_insert_with(|| remote_store(location))
        .clone()
}

/// Where a remote warehouse's files are kept on this machine once read (they never
/// change: every commit writes new names): `$PERFDB_CACHE_DIR`, else the user's cache
/// directory, then one directory per location. With no home at all, a folder of this
/// process's own under the temporary one ([`private_temp_cache`]), never a shared name:
/// files planted there by another user would be read as the warehouse's.
pub fn cache_dir(location: &str) -> std::path::PathBuf {
    let base = std::env::var_os("PERFDB_CACHE_DIR")
        .map(std::path::PathBuf::from)
        .or_else(user_cache_home)
        .unwrap_or_else(private_temp_cache);
    let id = &crate::hash::sha256_hex(location.as_bytes())[..16];
    base.join("warehouses").join(id)
}

/// The user's own cache folder for perfdb: `$XDG_CACHE_HOME/perfdb`, else
/// `~/.cache/perfdb`, each only when absolute; `None` with no home.
pub fn user_cache_home() -> Option<std::path::PathBuf> {
    // A relative path is ignored, as the XDG rules say (it would be the working folder's).
    let set = |v: &str| std::env::var_os(v).filter(|d| Path::new(d).is_absolute());
    set("XDG_CACHE_HOME")
        .map(|d| Path::new(&d).join("perfdb"))
        .or_else(|| set("HOME").map(|d| Path::new(&d).join(".cache/perfdb")))
}

/// A new folder only this user can enter, under the system's temporary folder:
/// `<tmp>/<prefix>-<pid>-<n>`, made with `mkdir` (which fails when the name exists, a
/// link included), so a name planted in advance is skipped, never used.
pub fn fresh_private_dir(prefix: &str) -> std::io::Result<std::path::PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let tmp = std::env::temp_dir();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    for n in 0..100u32 {
        let dir = tmp.join(format!("{prefix}-{}-{nanos:x}{n}", std::process::id()));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::AlreadyExists,
        format!("100 names taken under {}", tmp.display()),
    ))
}

/// The cache with no home: a [`fresh_private_dir`] of this process's own, the same one
/// for the rest of the process.
fn private_temp_cache() -> std::path::PathBuf {
    static DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        fresh_private_dir("perfdb-cache").unwrap_or_else(|_| {
            // Nowhere private: a name of this process's own, made by the first write.
            std::env::temp_dir().join(format!("perfdb-cache-{}-unmade", std::process::id()))
        })
    })
    .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_is_remote_a_directory_is_not() {
        assert!(is_remote("s3://b/p") && is_remote("http://x") && !is_remote("file:///x"));
        assert!(!is_remote("./wh") && !is_remote("dir with :// inside"));
    }

    #[test]
    fn url_lookalikes_are_errors_and_paths_pass() {
        for ok in [
            "perfdb-warehouse",
            "/abs/wh",
            "./a:b",
            "s3://bucket/p",
            "file:///tmp/wh",
            "C:\\wh",
            "az://c/p",
        ] {
            assert!(check_location(ok).is_ok(), "{ok}");
        }
        for bad in ["s3:/bucket", "s3:bucket", "file://rel", "s3://", "gs:///x"] {
            assert!(check_location(bad).is_err(), "{bad}");
        }
    }
}
