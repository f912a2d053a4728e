//! The empty git repository in a store's directory (`<store>/.git`). The reference plugin
//! takes a directory with `.git` for a store that exists, and keeps its own state files
//! there; memoir makes one when it creates a store and, for a store made before, on its next
//! write. memoir never reads it otherwise, and `fsck` ignores it.

use std::fs;
use std::io;
use std::path::Path;

/// Makes `store/.git` an empty, valid git repository (HEAD on `main`, no objects) unless it
/// exists. Returns whether it made one.
pub fn ensure_store_git(store: &Path) -> io::Result<bool> {
    let git = store.join(".git");
    if fs::symlink_metadata(&git).is_ok() {
        return Ok(false);
    }
    // Built beside and renamed into place, so a reader never sees half of one.
    let tmp = store.join(format!(".git.tmp.{}", std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    for dir in ["objects/info", "objects/pack", "refs/heads", "refs/tags"] {
        fs::create_dir_all(tmp.join(dir))?;
    }
    fs::write(tmp.join("HEAD"), "ref: refs/heads/main\n")?;
    fs::write(
        tmp.join("config"),
        "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n",
    )?;
    fs::write(
        tmp.join("description"),
        "Not a code repository: the memoir store's directory, kept for host plugins.\n",
    )?;
    match fs::rename(&tmp, &git) {
        Ok(()) => Ok(true),
        Err(e) => {
            let _ = fs::remove_dir_all(&tmp);
            // Another process made it meanwhile.
            if git.is_dir() {
                Ok(false)
            } else {
                Err(e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn makes_an_empty_repository_once() {
        let d = tempfile::tempdir().unwrap();
        assert!(ensure_store_git(d.path()).unwrap());
        assert!(!ensure_store_git(d.path()).unwrap());
        let head = fs::read_to_string(d.path().join(".git/HEAD")).unwrap();
        assert_eq!(head, "ref: refs/heads/main\n");
        assert!(d.path().join(".git/objects").is_dir() && d.path().join(".git/refs").is_dir());
    }
}
