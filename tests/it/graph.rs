//! The commit graph cache on a real sled store: incremental extension equals a fresh
//! rebuild, blame with and without change filters agrees, damaged and foreign cache files
//! are never trusted wrongly.

use std::collections::HashSet;
use std::path::PathBuf;

use memoir::key::Key;
use memoir::object::{Blob, ObjectId};
use memoir::prolly::Edit;
use memoir::repo::graph_cache::{cache_path, CommitGraph};
use memoir::repo::{Repo, Signature};
use memoir::store::{OpenOptions, Store};
use proptest::prelude::*;

const T0: i64 = 1_700_000_000;

fn sig(t: i64) -> Signature {
    Signature::new("Tester <t@example.org>", t)
}

fn new_repo(t: i64) -> (tempfile::TempDir, Repo) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::create(&dir.path().join("store"), &OpenOptions::default()).unwrap();
    let repo = Repo::init(store, &sig(t), "Initialize store").unwrap();
    (dir, repo)
}

fn graph_file(repo: &Repo) -> PathBuf {
    cache_path(repo.store().path().unwrap())
}

fn key(i: usize) -> Key {
    Key::new("default", &format!("k{}.x{i}", i % 3)).unwrap()
}

const KEYS: usize = 6;

#[derive(Debug, Clone)]
enum Act {
    /// Commit on branch 0 or 1: puts (key, content) and deletes.
    Commit(usize, Vec<(usize, Option<u8>)>),
    /// Merge branch `from` into the other one, with extra edits.
    Merge(usize, Vec<(usize, Option<u8>)>),
    /// Blame every key (extends and saves the cache along the way).
    Blame,
}

fn edits() -> impl Strategy<Value = Vec<(usize, Option<u8>)>> {
    prop::collection::vec((0..KEYS, prop::option::of(0u8..3)), 0..4)
}

fn act() -> impl Strategy<Value = Act> {
    prop_oneof![
        5 => (0..2usize, edits()).prop_map(|(b, e)| Act::Commit(b, e)),
        2 => (0..2usize, edits()).prop_map(|(b, e)| Act::Merge(b, e)),
        1 => Just(Act::Blame),
    ]
}

fn to_edits(repo: &Repo, e: &[(usize, Option<u8>)]) -> Vec<Edit> {
    let mut out: Vec<Edit> = Vec::new();
    let mut seen = HashSet::new();
    for (k, v) in e {
        if !seen.insert(*k) {
            continue;
        }
        let enc = key(*k).encode();
        out.push(match v {
            Some(c) => Edit::Put(enc, repo.objects().write(&Blob(vec![*c])).unwrap()),
            None => Edit::Delete(enc),
        });
    }
    out
}

fn branch(b: usize) -> &'static str {
    ["main", "side"][b]
}

fn tips(repo: &Repo) -> Vec<ObjectId> {
    repo.branches()
        .unwrap()
        .into_iter()
        .map(|(_, t)| t)
        .collect()
}

/// Every key's blame at every tip, with and without filters, must agree.
fn blame_all(repo: &Repo) {
    for t in tips(repo) {
        for k in 0..KEYS {
            let with = repo.blame_with(&t, &key(k), None, true).unwrap();
            let without = repo.blame_with(&t, &key(k), None, false).unwrap();
            assert_eq!(with, without, "blame of {} at {t}", key(k));
            let lim = repo.blame_with(&t, &key(k), Some(2), true).unwrap();
            assert_eq!(lim[..], without[..without.len().min(2)]);
            // Entries and lines from one walk are what the two walks give.
            let mut text = |id: &ObjectId| -> memoir::repo::RepoResult<String> {
                Ok(format!("{}\nsame line", id.to_hex()))
            };
            let lines = repo.blame_lines(&t, &key(k), &mut text).unwrap();
            let both = repo.blame_and_lines(&t, &key(k), &mut text).unwrap();
            let reference = repo
                .blame_and_lines_with(&t, &key(k), &mut text, false)
                .unwrap();
            assert_eq!(both, reference, "blame and lines of {} at {t}", key(k));
            assert_eq!(
                both,
                (without, lines),
                "blame and lines of {} at {t}",
                key(k)
            );
        }
    }
}

/// The graph entries of every commit reachable from `tips`, by id, comparable across graphs
/// whose positions differ.
fn entries(g: &CommitGraph, tips: &[ObjectId]) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo: Vec<u32> = tips.iter().map(|t| g.position(t).unwrap()).collect();
    let mut seen = HashSet::new();
    while let Some(p) = todo.pop() {
        if !seen.insert(p) {
            continue;
        }
        let parents: Vec<ObjectId> = g.parents(p).map(|q| g.id(q)).collect();
        let filters: Vec<String> = (0..parents.len().max(1))
            .map(|i| format!("{:?}", g.filter(p, i)))
            .collect();
        out.push(format!(
            "{} root {} t {} gen {} parents {:?} filters {:?}",
            g.id(p),
            g.root(p),
            g.timestamp(p),
            g.generation(p),
            parents,
            filters
        ));
        todo.extend(g.parents(p));
    }
    out.sort();
    out
}

fn run(acts: &[Act]) {
    let (_dir, repo) = new_repo(T0);
    let main = repo.branch_tip("main").unwrap();
    repo.create_branch("side", &main).unwrap();
    let mut t = T0;
    for a in acts {
        t += 1;
        match a {
            Act::Commit(b, e) => {
                let edits = to_edits(&repo, e);
                repo.commit(branch(*b), edits, &sig(t), "edit").unwrap();
            }
            Act::Merge(from, e) => {
                let (into, from) = (branch(1 - from), branch(*from));
                let ours = repo.branch_tip(into).unwrap();
                let theirs = repo.branch_tip(from).unwrap();
                if ours == theirs {
                    continue;
                }
                let root = repo
                    .tree()
                    .apply(&repo.root_of(&ours).unwrap(), to_edits(&repo, e))
                    .unwrap();
                repo.commit_tree(into, &ours, root, vec![ours, theirs], &sig(t), "merge")
                    .unwrap();
            }
            Act::Blame => blame_all(&repo),
        }
    }
    blame_all(&repo);
    let tips = tips(&repo);
    let incremental = repo.commit_graph(&tips, true).unwrap();
    // The saved file holds what is in memory.
    let loaded = CommitGraph::load(&graph_file(&repo));
    assert_eq!(entries(&loaded, &tips), entries(&incremental, &tips));
    // A fresh rebuild without the file gives the same entries.
    std::fs::remove_file(graph_file(&repo)).unwrap();
    repo.forget_commit_graph();
    let fresh = repo.commit_graph(&tips, true).unwrap();
    assert_eq!(entries(&fresh, &tips), entries(&incremental, &tips));
    // Ancestry answers agree with a walk of the commit objects.
    let ancestors = |a: &ObjectId| {
        let mut anc = HashSet::new();
        let mut todo = vec![*a];
        while let Some(c) = todo.pop() {
            if anc.insert(c) {
                todo.extend(repo.read_commit(&c).unwrap().parents);
            }
        }
        anc
    };
    for a in &tips {
        let anc = ancestors(a);
        assert_eq!(repo.reachable(&[*a]).unwrap(), anc);
        for b in &tips {
            assert_eq!(repo.is_ancestor(b, a).unwrap(), anc.contains(b));
            // Merge bases: the common ancestors that are no other common ancestor's
            // ancestor, newest first, ties by id.
            let common: HashSet<ObjectId> = anc.intersection(&ancestors(b)).copied().collect();
            let mut best: Vec<(i64, ObjectId)> = common
                .iter()
                .filter(|c| !common.iter().any(|d| d != *c && ancestors(d).contains(*c)))
                .map(|c| (-repo.read_commit(c).unwrap().timestamp, *c))
                .collect();
            best.sort();
            let want: Vec<ObjectId> = best.into_iter().map(|(_, c)| c).collect();
            assert_eq!(repo.merge_bases(a, b).unwrap(), want);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn graph_equals_fresh_rebuild_and_blame_agrees(acts in prop::collection::vec(act(), 1..25)) {
        run(&acts);
    }
}

/// A small history with a merge; returns the tips.
fn history(repo: &Repo, t0: i64) -> Vec<ObjectId> {
    let main = repo.branch_tip("main").unwrap();
    repo.create_branch("side", &main).unwrap();
    let mut t = t0;
    for i in 0..12usize {
        t += 1;
        let b = branch(i % 2);
        let e = to_edits(
            repo,
            &[(i % KEYS, Some((i % 3) as u8)), ((i * 5) % KEYS, None)],
        );
        repo.commit(b, e, &sig(t), "edit").unwrap();
    }
    let ours = repo.branch_tip("main").unwrap();
    let theirs = repo.branch_tip("side").unwrap();
    let root = repo.root_of(&theirs).unwrap();
    repo.commit_tree(
        "main",
        &ours,
        root,
        vec![ours, theirs],
        &sig(t + 1),
        "merge",
    )
    .unwrap();
    tips(repo)
}

#[test]
fn damaged_cache_is_detected_and_rebuilt() {
    let (_dir, repo) = new_repo(T0);
    let tips = history(&repo, T0);
    blame_all(&repo);
    let path = graph_file(&repo);
    let good = std::fs::read(&path).unwrap();
    let full = CommitGraph::load(&path);
    assert!(full.len() >= 14);
    let mut damaged: Vec<Vec<u8>> = Vec::new();
    for i in [0, 9, 30, good.len() / 2, good.len() - 20, good.len() - 1] {
        let mut b = good.clone();
        b[i] ^= 0x01;
        damaged.push(b);
    }
    damaged.push(good[..good.len() - 1].to_vec());
    damaged.push(good[..good.len() / 3].to_vec());
    damaged.push(Vec::new());
    damaged.push(b"garbage that is not a commit graph at all".repeat(40));
    let mut longer = good.clone();
    longer.extend_from_slice(&[0; 8]);
    damaged.push(longer);
    for bytes in damaged {
        std::fs::write(&path, &bytes).unwrap();
        assert!(CommitGraph::load(&path).is_empty(), "damage not detected");
        repo.forget_commit_graph();
        blame_all(&repo);
        let g = repo.commit_graph(&tips, true).unwrap();
        assert_eq!(entries(&g, &tips), entries(&full, &tips));
        // Rewritten whole.
        assert_eq!(
            entries(&CommitGraph::load(&path), &tips),
            entries(&full, &tips)
        );
    }
}

#[test]
fn foreign_cache_is_harmless() {
    let (_da, a) = new_repo(T0);
    let tips_a = history(&a, T0);
    a.commit_graph(&tips_a, true).unwrap();
    // Another store with another history (different first commit).
    let (_db, b) = new_repo(T0 + 7);
    let tips_b = history(&b, T0 + 100);
    std::fs::create_dir_all(graph_file(&b).parent().unwrap()).unwrap();
    std::fs::copy(graph_file(&a), graph_file(&b)).unwrap();
    b.forget_commit_graph();
    blame_all(&b);
    let g = b.commit_graph(&tips_b, true).unwrap();
    // A's entries stay (keyed by commit id, never asked for by B) and B's were added.
    for t in &tips_a {
        assert!(g.position(t).is_some());
    }
    for t in &tips_b {
        assert!(!b.is_ancestor(&tips_a[0], t).unwrap());
        assert!(b.merge_bases(t, &tips_b[0]).unwrap().len() == 1);
    }
    std::fs::remove_file(graph_file(&b)).unwrap();
    b.forget_commit_graph();
    let fresh = b.commit_graph(&tips_b, true).unwrap();
    assert_eq!(entries(&fresh, &tips_b), entries(&g, &tips_b));
}

#[test]
fn in_memory_store_keeps_the_graph_in_memory() {
    let repo = Repo::init(Store::memory(), &sig(T0), "Initialize store").unwrap();
    let tips = history(&repo, T0);
    blame_all(&repo);
    let g = repo.commit_graph(&tips, true).unwrap();
    assert!(g.len() >= 14);
}

/// Handles that share their caches, one after the other on one store: each sees the
/// commits made since through another handle, with or without the graph file, and answers
/// as a handle of its own would.
#[test]
fn handles_sharing_caches_see_later_commits() {
    use memoir::repo::SharedCaches;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store");
    let caches = SharedCaches::default();
    let open = |caches: &SharedCaches| {
        Repo::open(Store::open(&path, &OpenOptions::default()).unwrap())
            .unwrap()
            .sharing_caches(caches)
    };
    drop(
        Repo::init(
            Store::create(&path, &OpenOptions::default()).unwrap(),
            &sig(T0),
            "Initialize store",
        )
        .unwrap(),
    );
    for round in 0..3usize {
        let repo = open(&caches);
        let tips = if round == 0 {
            history(&repo, T0)
        } else {
            for i in 0..5usize {
                let e = to_edits(&repo, &[((i + round) % KEYS, Some((i % 3) as u8))]);
                let t = T0 + 1000 * round as i64 + i as i64;
                repo.commit("main", e, &sig(t), "edit").unwrap();
            }
            tips(&repo)
        };
        blame_all(&repo);
        let shared = entries(&repo.commit_graph(&tips, true).unwrap(), &tips);
        drop(repo);
        if round == 1 {
            std::fs::remove_file(cache_path(&path)).unwrap();
        }
        let own = Repo::open(Store::open(&path, &OpenOptions::default()).unwrap()).unwrap();
        assert_eq!(
            entries(&own.commit_graph(&tips, true).unwrap(), &tips),
            shared
        );
        let root = own.root_of(&own.head_commit().unwrap()).unwrap();
        let count = own.tree().count(&root).unwrap();
        drop(own);
        let again = open(&caches);
        assert_eq!(
            entries(&again.commit_graph(&tips, true).unwrap(), &tips),
            shared
        );
        assert_eq!(again.root_of(&again.head_commit().unwrap()).unwrap(), root);
        assert_eq!(again.tree().count(&root).unwrap(), count);
    }
}
