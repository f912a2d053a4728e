//! `new` and `status`, and the exit codes of a store that is missing (3), busy (7) or holds a
//! damaged value (5).

use memoir::key::Key;
use memoir::repo::Repo;
use memoir::store::{OpenOptions, Store};

use super::{assert_error, cmd, keys_of, set, Fixture};
use crate::common::AUTHOR;

#[test]
fn new_and_status() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let o = cmd(&[], &["--json", "new", path.to_str().unwrap()], None);
    assert_eq!(o.code, 0);
    let v = o.json();
    assert_eq!(keys_of(&v), set(&["success", "message", "path"]));
    let abs = path.canonicalize().unwrap().display().to_string();
    assert_eq!(v["path"], abs.as_str());
    assert_eq!(v["message"], format!("Created store at {abs}").as_str());

    // Again: already a store. A non-empty directory that is not a store: untouched.
    assert_error(
        &cmd(&[], &["--json", "new", path.to_str().unwrap()], None),
        1,
    );
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("notes.txt"), "hi").unwrap();
    assert_error(
        &cmd(&[], &["--json", "new", other.to_str().unwrap()], None),
        1,
    );
    let names: Vec<_> = std::fs::read_dir(&other)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["notes.txt"]);

    let o = cmd(
        &[],
        &["-s", path.to_str().unwrap(), "--json", "status"],
        None,
    );
    let v = o.json();
    for f in [
        "path",
        "exists",
        "initialized",
        "branch",
        "commit_count",
        "memory_count",
        "namespaces",
    ] {
        assert!(v.get(f).is_some(), "status lacks {f}");
    }
    assert_eq!(v["branch"], "main");
    assert_eq!(v["commit_count"], 1);
    assert_eq!(v["memory_count"], 0);
    assert_eq!(v["namespaces"], serde_json::json!([]));
    let repo = Repo::open(Store::open(&path, &OpenOptions::default()).unwrap()).unwrap();
    let first = repo.read_commit(&repo.head_commit().unwrap()).unwrap();
    assert_eq!(first.author, AUTHOR);
    assert_eq!(first.timestamp, 1767225600);
}

#[test]
fn not_a_store_is_exit_3_and_nothing_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("nothing");
    for args in [
        &["status"][..],
        &["get", "a.b"],
        &["remember", "x", "-p", "a"],
        &["summarize"],
    ] {
        let mut all = vec!["-s", p.to_str().unwrap(), "--json"];
        all.extend_from_slice(args);
        assert_error(&cmd(&[], &all, None), 3);
    }
    assert!(!p.exists());
    // MEMOIR_STORE is honoured, and the current directory is the default.
    let o = cmd(
        &[
            ("MEMOIR_STORE", dir.path().to_str().unwrap()),
            ("MEMOIR_JSON", "1"),
        ],
        &["status"],
        None,
    );
    assert_error(&o, 3);
    let o = cmd(&[], &["status"], None);
    assert_eq!(o.code, 3);
    assert!(
        o.stdout.is_empty() && o.stderr.starts_with("✗ "),
        "{:?}",
        o.stderr
    );
}

#[test]
fn busy_store_is_exit_7() {
    let f = Fixture::new();
    let held = Store::open(&f.store, &OpenOptions::default()).unwrap();
    let o = cmd(
        &[],
        &["-s", f.s(), "--json", "--lock-timeout", "0", "get", "a"],
        None,
    );
    assert_error(&o, 7);
    let o = cmd(
        &[("MEMOIR_LOCK_TIMEOUT", "0")],
        &["-s", f.s(), "remember", "x", "-p", "a"],
        None,
    );
    assert_eq!(o.code, 7);
    drop(held);
    assert_eq!(f.run(true, &["remember", "x", "-p", "a"]).code, 0);
}

#[test]
fn corrupt_value_is_exit_5() {
    let f = Fixture::new();
    f.ok(&["remember", "x", "-p", "a"]);
    {
        let repo = f.repo();
        let root = repo.root_of(&repo.head_commit().unwrap()).unwrap();
        let id = repo
            .tree()
            .get(&root, &Key::new("default", "a").unwrap().encode())
            .unwrap()
            .unwrap();
        repo.store()
            .overwrite_raw(id.as_bytes(), b"\x82\x02\x41\x00")
            .unwrap();
    }
    assert_error(&f.run(true, &["get", "a"]), 5);
}
