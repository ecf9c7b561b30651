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

/// `dir` and every folder between `root` and it made and checked as [`own_dir`] checks
/// them (`root` included), and every link anywhere on the path to `dir` refused unless
/// it leads to a folder only its owner (this user, or root) may write in: a link to a
/// shared folder (`/tmp`, mode 1777) would let another user plant files where perfdb
/// writes.
pub fn own_tree(root: &Path, dir: &Path) -> anyhow::Result<()> {
    let me = crate::process::effective_uid();
    let mut path = PathBuf::new();
    for part in dir.components() {
        path.push(part);
        let Ok(m) = std::fs::symlink_metadata(&path) else {
            break; // made below, by own_dir
        };
        if !m.file_type().is_symlink() {
            continue;
        }
        let shared = match std::fs::metadata(&path) {
            Ok(t) => !t.is_dir() || (t.uid() != me && t.uid() != 0) || t.mode() & 0o022 != 0,
            Err(_) => true,
        };
        if shared {
            anyhow::bail!(
                "{} is a link to a folder others may write in (or to no folder): refusing to write under it",
                path.display()
            );
        }
    }
    let mut folders: Vec<&Path> = dir
        .ancestors()
        .take_while(|p| p.starts_with(root))
        .collect();
    folders.reverse();
    for f in folders {
        own_dir(f)?;
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
    fn a_tree_with_a_shared_folder_or_a_link_to_one_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = fresh_dir("perfdb-private-test").unwrap();
        let root = dir.join("cache");
        own_tree(&root, &root.join("demo-sample/base")).unwrap();
        // The folder itself open to everyone: refused, though its child is private.
        let sample = root.join("demo-sample");
        std::fs::set_permissions(&sample, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = own_tree(&root, &sample.join("base")).unwrap_err();
        assert!(e.to_string().contains("others may write"), "{e}");
        std::fs::remove_dir_all(&sample).unwrap();
        // A link to a world-writable sticky folder, anywhere on the path: refused.
        let shared = dir.join("shared");
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
        std::os::unix::fs::symlink(&shared, &sample).unwrap();
        let e = own_tree(&root, &sample.join("base")).unwrap_err();
        assert!(
            e.to_string()
                .contains("is a link to a folder others may write in"),
            "{e}"
        );
        assert_eq!(std::fs::read_dir(&shared).unwrap().count(), 0);
        std::fs::remove_file(&sample).unwrap();
        let link_root = dir.join("link-cache");
        std::os::unix::fs::symlink(&shared, &link_root).unwrap();
        assert!(own_tree(&link_root.join("perfdb"), &link_root.join("perfdb/x")).is_err());
        // A link to a private folder of this user (a cache moved to another disk) is fine.
        let moved = dir.join("moved");
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&moved)
            .unwrap();
        let home_cache = dir.join("home-cache");
        std::os::unix::fs::symlink(&moved, &home_cache).unwrap();
        own_tree(
            &home_cache.join("perfdb"),
            &home_cache.join("perfdb/demo-sample"),
        )
        .unwrap();
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
