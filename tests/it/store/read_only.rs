//! A store this process cannot write (another owner's, as on a read-only mount): every read
//! command, `fsck` and `search` answer through the real binary, writes are refused with a
//! clear error, and not one file of the store is made, changed or removed. The store's
//! cached head is voided first, so the reads open the database rather than read the store closed.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::SystemTime;

use crate::common::{memoir, new_store, AUTHOR};

/// Every file under `dir` with its length and modification time.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (u64, SystemTime)> {
    let mut out = BTreeMap::new();
    for entry in fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let meta = entry.metadata().unwrap();
        if meta.is_dir() {
            out.extend(snapshot(&entry.path()));
        }
        out.insert(entry.path(), (meta.len(), meta.modified().unwrap()));
    }
    out
}

/// `memoir -s STORE ARGS` as a user without write access: as root, the `nobody` user (root
/// writes anywhere); otherwise this user, with the store's write permissions taken away.
fn as_reader(store: &Path, home: &Path, args: &[&str]) -> (i32, String, String) {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    let mut c = if root {
        let mut c = Command::new("setpriv");
        c.args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            env!("CARGO_BIN_EXE_memoir"),
        ]);
        c
    } else {
        Command::new(env!("CARGO_BIN_EXE_memoir"))
    };
    let o = c
        .env_clear()
        .env("MEMOIR_AUTHOR", AUTHOR)
        .env("HOME", home)
        .env("TMPDIR", home)
        .arg("-s")
        .arg(store)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Sets the permission bits of everything under `dir` (and `dir`): `dirs` for directories,
/// `files` for files.
fn chmod_tree(dir: &Path, dirs: u32, files: u32) {
    fs::set_permissions(dir, fs::Permissions::from_mode(dirs)).unwrap();
    for entry in fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            chmod_tree(&entry.path(), dirs, files);
        } else {
            fs::set_permissions(entry.path(), fs::Permissions::from_mode(files)).unwrap();
        }
    }
}

#[test]
fn a_store_without_write_access_is_read_and_never_written() {
    let dir = tempfile::tempdir().unwrap();
    let s = new_store(dir.path());
    for (path, text) in [("a.b.c", "alpha beta"), ("a.b.d", "gamma delta")] {
        let o = memoir()
            .arg("-s")
            .arg(&s)
            .args(["remember", text, "-p", path])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    // Void the cached head, and remove the LOCK file: nothing may make it again.
    let _ = fs::remove_file(s.join("cache").join("head"));
    fs::remove_file(s.join("LOCK")).unwrap();
    let home = dir.path().join("home");
    fs::create_dir(&home).unwrap();
    fs::set_permissions(&home, fs::Permissions::from_mode(0o777)).unwrap();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    chmod_tree(&s, 0o555, 0o444);
    let before = snapshot(&s);

    let reads: [(&[&str], &str); 11] = [
        (&["status"], "Memories: 2"),
        (&["get", "a.b.c"], "alpha beta"),
        (&["summarize"], "2 memories"),
        (&["log"], "Store a.b.d"),
        (&["search", "gamma"], "a.b.d"),
        (&["fsck"], "sound"),
        (&["taxonomy", "list"], "Taxonomy"),
        (&["watch", "list"], "no files are watched"),
        (&["export"], "gamma delta"),
        (&["diff", "HEAD~1", "HEAD"], "a.b.d"),
        (&["blame", "a.b.c"], "added"),
    ];
    for (args, expect) in reads {
        let (code, out, err) = as_reader(&s, &home, args);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert!(out.contains(expect), "{args:?}: {out}");
    }
    let (code, _, err) = as_reader(&s, &home, &["remember", "x", "-p", "q.r"]);
    assert_ne!(code, 0);
    assert!(err.contains("reading only"), "{err}");

    assert_eq!(snapshot(&s), before, "the store was not written");
    assert!(!s.join("LOCK").exists());
    let left: Vec<_> = fs::read_dir(&home).unwrap().collect();
    assert!(left.is_empty(), "scratch copies are removed: {left:?}");
    chmod_tree(&s, 0o755, 0o644);
}
