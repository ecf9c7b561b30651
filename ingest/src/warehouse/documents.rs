//! Documents the warehouse keeps beside its tables: a JSON record under a
//! warehouse-relative name (a bisect's result, `bisect/<alert id>.json`), in the
//! warehouse itself, so everyone who reads the warehouse reads them: a local
//! warehouse's directory, or a remote one's store (`s3://...`), never this machine's
//! cache of it. A document is written whole (a local file written aside and renamed; an
//! object put in one request) and replaced whole; no table lists it, so `compact` and
//! `vacuum` leave it alone.

use super::tables::block_on;
use super::{io, Result, Warehouse, WarehouseError};
use object_store::path::Path as StorePath;
use object_store::{ObjectStoreExt, PutPayload};

impl Warehouse {
    /// Keep `bytes` as the document `rel`, replacing an earlier one; where it now is (a
    /// path, or the store's URL of it).
    pub fn put_document(&self, rel: &str, bytes: &[u8]) -> Result<String> {
        check_name(rel)?;
        if let Some(store) = self.store()? {
            let at = StorePath::from(rel);
            let payload = PutPayload::from(bytes.to_vec());
            block_on(async { store.put(&at, payload).await }).map_err(|source| {
                crate::delta::DeltaError::Store {
                    path: format!("{}/{rel}", self.location()),
                    source,
                }
            })?;
            return Ok(format!("{}/{rel}", self.location()));
        }
        let path = self.root().join(rel);
        let dir = path.parent().expect("a document's name has a folder");
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let name = path.file_name().unwrap().to_string_lossy();
        let tmp = dir.join(format!(".{name}.{}", std::process::id()));
        std::fs::write(&tmp, bytes).map_err(io(&tmp))?;
        std::fs::rename(&tmp, &path).map_err(io(&path))?;
        Ok(path.display().to_string())
    }

    /// The document `rel` and where it was read (a path, or the store's URL of it);
    /// `None` when there is none.
    pub fn get_document(&self, rel: &str) -> Result<Option<(Vec<u8>, String)>> {
        check_name(rel)?;
        if let Some(store) = self.store()? {
            let at = StorePath::from(rel);
            let url = format!("{}/{rel}", self.location());
            let got = block_on(async {
                match store.get(&at).await {
                    Ok(r) => r.bytes().await.map(Some),
                    Err(object_store::Error::NotFound { .. }) => Ok(None),
                    Err(e) => Err(e),
                }
            });
            return match got {
                Ok(b) => Ok(b.map(|b| (b.to_vec(), url))),
                Err(source) => Err(crate::delta::DeltaError::Store { path: url, source }.into()),
            };
        }
        let path = self.root().join(rel);
        match std::fs::read(&path) {
            Ok(b) => Ok(Some((b, path.display().to_string()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io(&path)(e)),
        }
    }
}

/// A document's name: warehouse-relative folders and a file name of letters, digits,
/// `_`, `-` and `.`, never a table's folder, `..` or an absolute path.
fn check_name(rel: &str) -> Result<()> {
    let parts: Vec<&str> = rel.split('/').collect();
    let plain = |p: &&str| {
        !p.is_empty()
            && !p.starts_with('.')
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    };
    let table = super::tables::Table::ALL
        .iter()
        .any(|t| t.dir().split('/').next() == Some(parts[0]));
    if parts.len() < 2 || !parts.iter().all(plain) || table || parts[0] == "_tmp" {
        return Err(WarehouseError::Conflict(format!(
            "'{rel}' is not a document name (a folder and a file, not a table's)"
        )));
    }
    Ok(())
}
