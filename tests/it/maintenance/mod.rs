//! Merge, gc, fsck and purge on real stores.

mod caches;
mod fsck;
mod gc;
mod kills;
mod merge;
mod purge;
mod recovery;
mod soak;

use std::collections::{BTreeMap, BTreeSet};

use memoir::key::Key;
use memoir::object::{Blob, ObjectId};
use memoir::prolly::{Edit, KeyRange};
use memoir::repo::{Head, Repo, Signature};
use memoir::store::{ObjectStore, OpenOptions, Store};

fn sig(t: i64) -> Signature {
    Signature::new("Tester <t@example.org>", t)
}

fn sled_repo(dir: &tempfile::TempDir) -> Repo {
    let store = Store::create(&dir.path().join("store"), &OpenOptions::default()).unwrap();
    Repo::init(store, &sig(1_700_000_000), "Initialize store").unwrap()
}

fn key(path: &str) -> Vec<u8> {
    Key::new("default", path).unwrap().encode()
}

fn blob(repo: &Repo, content: &str) -> ObjectId {
    repo.objects()
        .write(&Blob(content.as_bytes().to_vec()))
        .unwrap()
}

fn put(repo: &Repo, path: &str, content: &str) -> Edit {
    Edit::Put(key(path), blob(repo, content))
}

fn del(path: &str) -> Edit {
    Edit::Delete(key(path))
}

fn entries(repo: &Repo, commit: &ObjectId) -> BTreeMap<Vec<u8>, ObjectId> {
    let root = repo.root_of(commit).unwrap();
    repo.tree()
        .collect(&root, &KeyRange::all())
        .unwrap()
        .into_iter()
        .collect()
}

fn contents(repo: &Repo, commit: &ObjectId) -> BTreeMap<Vec<u8>, String> {
    entries(repo, commit)
        .into_iter()
        .map(|(k, v)| {
            let b = repo.objects().read::<Blob>(&v).unwrap();
            (k, String::from_utf8(b.0).unwrap())
        })
        .collect()
}

fn text(pairs: &[(&str, &str)]) -> BTreeMap<Vec<u8>, String> {
    pairs.iter().map(|(k, v)| (key(k), v.to_string())).collect()
}

/// Every commit reachable from the given tips.
fn history(repo: &Repo, tips: &[ObjectId]) -> BTreeSet<ObjectId> {
    let mut seen = BTreeSet::new();
    let mut todo = tips.to_vec();
    while let Some(c) = todo.pop() {
        if seen.insert(c) {
            todo.extend(repo.read_commit(&c).unwrap().parents);
        }
    }
    seen
}

fn all_ids(store: &Store) -> BTreeSet<ObjectId> {
    let mut out = BTreeSet::new();
    store
        .for_each_id(&mut |raw| {
            out.insert(ObjectId::from_bytes(raw));
            true
        })
        .unwrap();
    out
}

/// Every object reachable from the tips, computed with the tree's own full verifier.
fn reachable(repo: &Repo, tips: &[ObjectId]) -> BTreeSet<ObjectId> {
    let mut out = BTreeSet::new();
    for c in history(repo, tips) {
        out.insert(c);
        let rep = repo.tree().verify(&repo.root_of(&c).unwrap());
        assert!(rep.violations.is_empty());
        out.extend(rep.node_ids);
        out.extend(rep.value_ids);
    }
    out
}

fn tips(repo: &Repo) -> Vec<ObjectId> {
    let mut t: Vec<ObjectId> = repo.branches().unwrap().into_iter().map(|b| b.1).collect();
    if let Head::Detached(id) = repo.head().unwrap() {
        t.push(id);
    }
    t
}

/// Commits `n` keys `bulk.itemNNNN` on main in one commit, so trees have several levels.
fn commit_bulk(repo: &Repo, n: usize) {
    let edits = (0..n)
        .map(|i| put(repo, &format!("bulk.item{i:04}"), &format!("bulk {i}")))
        .collect();
    repo.commit("main", edits, &sig(10), "bulk").unwrap();
}
