//! What every request shares: the warehouse, its configuration, the triage token, the
//! host names answered, the open database, the response cache and the workers.

use crate::cache::store::Cache;
use crate::error::AppError;
use crate::work::{self, Limits, Signature, Workers};
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Clone)]
pub struct AppState {
    pub root: Arc<PathBuf>,
    /// `perfdb.toml` as `perfdb serve` found it: comparisons resolve their options
    /// through it exactly as `perfdb compare` does.
    pub config: Arc<perfdb_reports::config::Config>,
    /// The device table of `config` (`Config::device_table`), made once with it: the
    /// pages and every database opened read runs against it.
    pub devices: Arc<perfdb_ingest::devices::Table>,
    /// With `perfdb serve --allow-triage`: the token every triage form carries (random
    /// per server start), so another site cannot post one. `None`: read-only.
    pub triage_token: Option<Arc<String>>,
    /// With `perfdb serve`: the host names a request's `Host` may carry (the bound
    /// address, `localhost`, loopback and `--host` names); others answer 421, so a page
    /// elsewhere cannot reach the server through a name it rebinds to this address.
    /// `None`: any (the app inside a test or another server).
    pub allowed_hosts: Option<Arc<Vec<String>>>,
    /// One DuckDB database over the committed state; reopened when a table's log gains a version.
    open: Arc<std::sync::Mutex<Option<(Signature, perfdb_reports::db::Db)>>>,
    /// Responses of this warehouse version (see `cache`).
    pub cache: Arc<Cache>,
    /// The limits on concurrent work, and the permits they give.
    workers: Workers,
}

impl AsRef<Workers> for AppState {
    fn as_ref(&self) -> &Workers {
        &self.workers
    }
}

impl AppState {
    pub fn new(root: &Path) -> Self {
        AppState {
            root: Arc::new(root.to_path_buf()),
            config: Default::default(),
            devices: perfdb_ingest::devices::builtin(),
            triage_token: None,
            allowed_hosts: None,
            open: Default::default(),
            cache: Default::default(),
            workers: Workers::new(Limits::default()),
        }
    }

    /// The same state with other limits on concurrent work.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.workers = Workers::new(limits);
        self
    }

    /// The committed state's version: the tables' log versions mixed with the times of
    /// the saved-comparisons folder and (a local warehouse's) bisects folder, so any
    /// commit, save or bisect, by any perfdb, changes it.
    pub fn version(&self) -> u64 {
        self.version_of(self.signature())
    }

    /// The committed state's signature, read now.
    pub fn signature(&self) -> Signature {
        perfdb_reports::db::state_signature(&self.root)
    }

    /// [`AppState::version`] of a signature just read.
    pub fn version_of(&self, sig: Signature) -> u64 {
        // Saved comparisons live beside the tables (`alerts/`): their folder's times
        // count too.
        let time = |dir: &std::path::Path| std::fs::metadata(dir).and_then(|m| m.modified()).ok();
        let saved = time(&perfdb_reports::saved::dir_of(&self.root));
        let bisects = perfdb_reports::bisect::store::local_dir(&self.root).and_then(|d| time(&d));
        perfdb_ingest::hash::fnv64(&format!("{:?}", sig.map(|s| (s, saved, bisects))))
    }

    /// The same state, accepting triage actions (acknowledge, dismiss, reopen) from the
    /// alerts page.
    pub fn with_triage(mut self) -> Self {
        let mut seed = [0u8; 16];
        if let Ok(mut f) = std::fs::File::open("/dev/urandom") {
            let _ = std::io::Read::read_exact(&mut f, &mut seed);
        }
        let stamp = format!(
            "{:?}{:?}{}",
            seed,
            std::time::SystemTime::now(),
            std::process::id()
        );
        self.triage_token = Some(Arc::new(perfdb_ingest::hash::sha256_hex(stamp.as_bytes())));
        self
    }

    /// The same state, answering only requests whose `Host` names one of `names` (as
    /// well as `localhost` and the loopback addresses), whatever the port.
    pub fn with_hosts(mut self, names: impl IntoIterator<Item = String>) -> Self {
        // Each name as the Host check reads one (`[0::1]` is `[::1]`).
        let mut all: Vec<String> = ["localhost", "127.0.0.1", "[::1]"]
            .into_iter()
            .map(String::from)
            .chain(
                names
                    .into_iter()
                    .map(|n| crate::guard::host_name(&n).unwrap_or_else(|| n.to_ascii_lowercase())),
            )
            .collect();
        all.sort();
        all.dedup();
        self.allowed_hosts = Some(Arc::new(all));
        self
    }

    /// The triage token of forms served for `host`: a request for another name (a
    /// rebound one) can never present the token of this one.
    pub fn triage_token_for(&self, host: &str) -> Option<String> {
        self.triage_token.as_ref().map(|secret| {
            perfdb_ingest::hash::sha256_hex(
                format!("{secret}\u{1f}{}", host.to_ascii_lowercase()).as_bytes(),
            )
        })
    }

    /// The same state, comparing with `config`'s defaults and overrides.
    pub fn with_config(mut self, config: perfdb_reports::config::Config) -> Self {
        self.devices = config.device_table();
        self.config = Arc::new(config);
        self
    }

    /// A connection for one request, read-only over the warehouse as last committed.
    pub fn db(&self) -> Result<perfdb_reports::db::Db, AppError> {
        let internal = |e: perfdb_reports::db::DbError| AppError::internal(e.to_string());
        let sig = work::work_signature().unwrap_or_else(|| self.signature());
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let conn = match open.as_ref() {
            Some((s, db)) if *s == sig => db.try_clone().map_err(internal)?,
            _ => {
                let db =
                    perfdb_reports::db::Db::open(&self.root, &self.devices).map_err(internal)?;
                let conn = db.try_clone().map_err(internal)?;
                *open = Some((sig, db));
                conn
            }
        };
        work::on_timeout_interrupt(conn.conn.interrupt_handle());
        Ok(conn)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_triage_token_is_bound_to_its_host_name() {
        let s = super::AppState::new(std::path::Path::new("/nonexistent")).with_triage();
        let a = s.triage_token_for("localhost").unwrap();
        assert_eq!(a, s.triage_token_for("LocalHost").unwrap());
        assert_ne!(a, s.triage_token_for("evil.example").unwrap());
        assert!(super::AppState::new(std::path::Path::new("/x"))
            .triage_token_for("localhost")
            .is_none());
    }
}
