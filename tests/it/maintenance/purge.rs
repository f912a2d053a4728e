//! purge removes a key from all history.

use std::collections::BTreeMap;

use memoir::object::ObjectId;
use memoir::repo::{Commit, Head, Strategy};
use memoir::store::ObjectStore;

use super::{commit_bulk, contents, history, key, put, sig, sled_repo, tips};

#[test]
fn purge_removes_a_key_from_all_history() {
    let dir = tempfile::tempdir().unwrap();
    let repo = sled_repo(&dir);
    commit_bulk(&repo, 500);
    let mut s = sig(11);
    s.metadata.insert("actor".into(), "agent-1".into());
    let early = repo
        .commit("main", vec![put(&repo, "public.a", "pa")], &s, "early")
        .unwrap();
    repo.commit(
        "main",
        vec![put(&repo, "secret.token", "TOPSECRET-one")],
        &sig(12),
        "add secret",
    )
    .unwrap();
    let fork = repo.head_commit().unwrap();
    repo.create_branch("feat", &fork).unwrap();
    repo.commit(
        "feat",
        vec![
            put(&repo, "secret.token", "TOPSECRET-two"),
            put(&repo, "public.f", "pf"),
        ],
        &sig(13),
        "feat",
    )
    .unwrap();
    repo.commit("main", vec![put(&repo, "public.m", "pm")], &sig(14), "main")
        .unwrap();
    let f = repo.branch_tip("feat").unwrap();
    repo.merge(&f, "main", &Strategy::Theirs, &sig(15), "merge")
        .unwrap();
    repo.commit(
        "main",
        vec![put(&repo, "public.z", "pz")],
        &sig(16),
        "after",
    )
    .unwrap();
    // A detached HEAD at feat's tip.
    repo.set_head(&Head::Detached(f)).unwrap();

    let secret = key("secret.token");
    let old_tips = tips(&repo);
    let before: Vec<(ObjectId, Commit, BTreeMap<Vec<u8>, String>)> = history(&repo, &old_tips)
        .into_iter()
        .map(|c| (c, repo.read_commit(&c).unwrap(), contents(&repo, &c)))
        .collect();
    let with_key = before
        .iter()
        .filter(|(_, _, m)| m.contains_key(&secret))
        .count() as u64;
    assert_eq!(with_key, 5);

    let rep = repo.purge(&secret).unwrap();
    assert_eq!(rep.commits_with_key, with_key);
    // The five with the key, and none before them.
    assert_eq!(rep.commits_rewritten, 5);
    assert_eq!(rep.refs_moved, 3);
    assert!(!rep.rewritten.contains_key(&early));
    assert!(rep.gc.objects_removed > 0);

    for (old, c, want) in &before {
        let new = rep.rewritten.get(old).copied().unwrap_or(*old);
        let nc = repo.read_commit(&new).unwrap();
        assert_eq!(
            (&nc.author, nc.timestamp, &nc.message, &nc.metadata),
            (&c.author, c.timestamp, &c.message, &c.metadata)
        );
        assert_eq!(nc.parents.len(), c.parents.len());
        let mut want = want.clone();
        want.remove(&secret);
        assert_eq!(contents(&repo, &new), want);
    }
    assert_eq!(repo.head().unwrap(), Head::Detached(rep.rewritten[&f]));
    assert_eq!(repo.branch_tip("feat").unwrap(), rep.rewritten[&f]);
    // No stored object holds the secret any more.
    let store = repo.store();
    let mut ids = Vec::new();
    store
        .for_each_id(&mut |raw| {
            ids.push(raw);
            true
        })
        .unwrap();
    for raw in ids {
        let bytes = store.get(&raw).unwrap().unwrap();
        assert!(
            !bytes.windows(9).any(|w| w == b"TOPSECRET"),
            "object {} still holds the secret",
            ObjectId::from_bytes(raw)
        );
        assert!(!bytes.windows(secret.len()).any(|w| w == secret));
    }
    let fsck = repo.fsck();
    assert!(fsck.is_clean(), "{:?}", fsck.findings);
    assert_eq!(fsck.unreachable_objects, 0);
    // Purging again changes nothing.
    let again = repo.purge(&secret).unwrap();
    assert_eq!(again.commits_rewritten, 0);
    assert_eq!(again.gc.objects_removed, 0);
}

/// Through the binary: after a plain `forget` (the key is gone at HEAD but lives in
/// history), `forget --purge` erases it from all history, and no file of the store holds
/// its content; a purge of a key in no commit succeeds, changing nothing.
#[test]
fn purge_after_a_plain_forget_erases_the_key_from_history() {
    use crate::common::{cli, new_store};
    let dir = tempfile::tempdir().unwrap();
    let store = new_store(dir.path());
    let ok = |args: &[&str]| {
        let (code, v) = cli(&store, args);
        assert_eq!(code, 0, "{args:?}: {v}");
        v
    };
    ok(&["remember", "publicfact kept", "-p", "p.a"]);
    ok(&["remember", "zqvsecret one", "-p", "s.k"]);
    ok(&["remember", "zqvsecret two", "-p", "s.k", "--replace"]);
    ok(&["search", "zqvsecret"]);
    ok(&["forget", "s.k"]);
    let (code, v) = cli(&store, &["get", "s.k"]);
    assert_eq!(code, 2, "{v}");
    assert!(!ok(&["blame", "s.k"])["entries"]
        .as_array()
        .unwrap()
        .is_empty());

    let p = ok(&["forget", "--purge", "s.k"]);
    assert_eq!(p["purged"]["commits_with_key"], 2, "{p}");
    assert!(p["purged"]["objects_removed"].as_u64().unwrap() > 0);
    assert_eq!(ok(&["blame", "s.k"])["entries"], serde_json::json!([]));
    assert_eq!(
        super::caches::files_holding(&store, b"zqvsecret"),
        Vec::<std::path::PathBuf>::new()
    );
    let f = ok(&["fsck"]);
    assert_eq!(
        (&f["clean"], &f["caches"]),
        (&serde_json::json!(true), &serde_json::json!([]))
    );
    assert_eq!(ok(&["search", "publicfact"])["count"], 1);

    // Again, and for a key that never existed: success, nothing rewritten.
    for key in ["s.k", "never.was"] {
        let again = ok(&["forget", "--purge", key]);
        assert_eq!(again["purged"]["commits_with_key"], 0, "{again}");
        assert_eq!(again["purged"]["commits_rewritten"], 0);
        assert!(
            again["message"].as_str().unwrap().contains("in no commit"),
            "{again}"
        );
    }
    assert_eq!(ok(&["get", "p.a"])["items"][0]["found"], true);
}
