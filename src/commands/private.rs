//! Files perfdb writes outside the warehouse, written so that no other user of a shared
//! machine can redirect them: a folder is made new with mode 0700 (never taken over when
//! it exists), and a file is written beside its name and renamed over it, so a link
//! planted at the name is replaced, never followed.

use anyhow::Context;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

/// A new folder only this user can enter, under the system's temporary folder
/// (`warehouse::location::fresh_private_dir`: a name planted in advance is skipped).
pub fn fresh_dir(prefix: &str) -> anyhow::Result<PathBuf> {
    perfdb_ingest::warehouse::location::fresh_private_dir(prefix).with_context(|| {
        format!(
            "cannot create a private folder under {}",
            std::env::temp_dir().display()
        )
    })
}

/// `dir` and its missing parents, made with mode 0700; `dir` is refused when it is a
/// link or a folder another user owns, or that others may write in.
pub fn own_dir(dir: &Path) -> anyhow::Result<()> {
    std::fs::DirBuilder::new()
        .mode(0o700)
        .recursive(true)
        .create(dir)
        .with_context(|| format!("cannot create {}", dir.display()))?;
    let m =
        std::fs::symlink_metadata(dir).with_context(|| format!("cannot read {}", dir.display()))?;
    let me = crate::process::effective_uid();
    if m.file_type().is_symlink() || !m.is_dir() {
        anyhow::bail!(
            "{} is a link or not a folder: refusing to write into it",
            dir.display()
        );
    }
    if m.uid() != me || m.mode() & 0o022 != 0 {
        anyhow::bail!(
            "{} belongs to another user or others may write in it (mode {:o}): refusing to write into it",
            dir.display(),
            m.mode() & 0o777
        );
    }
    Ok(())
}

/// Write `bytes` to `path` (in a folder [`own_dir`] or [`fresh_dir`] made): to a new
/// file beside it, then renamed over the name.
pub fn write_replacing(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .context("a file name")?;
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    f.write_all(bytes)
        .with_context(|| format!("cannot write {}", tmp.display()))?;
    drop(f);
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_planted_link_is_replaced_never_followed() {
        let dir = fresh_dir("perfdb-private-test").unwrap();
        let victim = dir.join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let name = dir.join("trial1.log");
        std::os::unix::fs::symlink(&victim, &name).unwrap();
        write_replacing(&name, b"sample").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert_eq!(std::fs::read_to_string(&name).unwrap(), "sample");
        assert!(!std::fs::symlink_metadata(&name)
            .unwrap()
            .file_type()
            .is_symlink());
        let link_dir = dir.join("elsewhere");
        std::os::unix::fs::symlink(&dir, &link_dir).unwrap();
        assert!(own_dir(&link_dir).is_err(), "a linked folder is refused");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn fresh_folders_are_private_and_new() {
        let a = fresh_dir("perfdb-private-test").unwrap();
        let b = fresh_dir("perfdb-private-test").unwrap();
        assert_ne!(a, b);
        let mode = std::fs::metadata(&a).unwrap().mode() & 0o777;
        assert_eq!(mode & 0o077, 0, "mode {mode:o}");
        std::fs::remove_dir(&a).unwrap();
        std::fs::remove_dir(&b).unwrap();
    }
}
