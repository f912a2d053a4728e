//! fsck names every damaged object, wrong kind, bad ref and broken invariant.

use std::collections::BTreeMap;

use memoir::object::ObjectId;
use memoir::prolly::{Item, Node};
use memoir::repo::{Commit, FindingKind, Repo, Strategy};
use memoir::store::{ObjectStore, RefStore};

use super::{blob, key, put, sig, sled_repo};

/// A store with a two-level tree, a branch and a merge.
fn fsck_fixture(dir: &tempfile::TempDir) -> Repo {
    let repo = sled_repo(dir);
    let mut edits = Vec::new();
    for i in 0..800 {
        edits.push(put(
            &repo,
            &format!("topic.item{i:04}"),
            &format!("memory {i}"),
        ));
    }
    let base = repo.commit("main", edits, &sig(10), "bulk").unwrap();
    repo.create_branch("feat", &base).unwrap();
    repo.commit("main", vec![put(&repo, "a.main", "m")], &sig(11), "m1")
        .unwrap();
    repo.commit("feat", vec![put(&repo, "a.feat", "f")], &sig(12), "f1")
        .unwrap();
    let f = repo.branch_tip("feat").unwrap();
    repo.merge(&f, "main", &Strategy::Fail, &sig(13), "merge")
        .unwrap();
    repo
}

#[test]
fn fsck_names_every_damaged_object() {
    let dir = tempfile::tempdir().unwrap();
    let repo = fsck_fixture(&dir);
    let clean = repo.fsck();
    assert!(clean.is_clean(), "{:?}", clean.findings);
    assert!(clean.commits_checked >= 5);
    let store = repo.store().clone();

    let tip = repo.head_commit().unwrap();
    let tip_c = repo.read_commit(&tip).unwrap();
    let root = repo.tree().load(&tip_c.root).unwrap();
    assert_eq!(root.level, 1, "the fixture needs a two-level tree");
    let leaf = root.items[1].id;
    let leaf_node = repo.tree().load(&leaf).unwrap();
    let value = leaf_node.items[0].id;
    let parent_commit = tip_c.parents[1];
    let targets = [
        ("root node", tip_c.root),
        ("leaf node", leaf),
        ("value", value),
        ("tip commit", tip),
        ("parent commit", parent_commit),
    ];
    for (what, id) in targets {
        let orig = store.get(id.as_bytes()).unwrap().unwrap().to_vec();
        let mut flipped = orig.clone();
        let at = flipped.len() / 2;
        flipped[at] ^= 0x20;
        let truncated = orig[..orig.len() - 3].to_vec();
        for (damage, bytes, kind) in [
            ("flip", Some(flipped), FindingKind::Corrupt),
            ("truncate", Some(truncated), FindingKind::Corrupt),
            ("delete", None, FindingKind::Missing),
        ] {
            match &bytes {
                Some(b) => store.overwrite_raw(id.as_bytes(), b).unwrap(),
                None => assert!(store.delete(id.as_bytes()).unwrap()),
            }
            let rep = repo.fsck();
            let named: Vec<_> = rep
                .findings
                .iter()
                .filter(|f| f.subject == memoir::repo::Subject::Object(id))
                .collect();
            assert!(
                !named.is_empty(),
                "{damage} {what}: not named in {:?}",
                rep.findings
            );
            assert!(
                named.iter().all(|f| f.kind == kind),
                "{damage} {what}: {named:?}"
            );
            store.overwrite_raw(id.as_bytes(), &orig).unwrap();
        }
        assert!(repo.fsck().is_clean(), "restored {what}");
    }
    // Several problems at once are all reported.
    store.delete(value.as_bytes()).unwrap();
    store.overwrite_raw(leaf.as_bytes(), b"junk").unwrap();
    let rep = repo.fsck();
    // The damaged leaf hides the value below it; the leaf and nothing else is named.
    assert!(rep.names(&leaf));
    store.delete(parent_commit.as_bytes()).unwrap();
    let rep = repo.fsck();
    assert!(rep.names(&leaf) && rep.names(&parent_commit));
}

#[test]
fn fsck_reports_wrong_kinds_bad_refs_and_broken_invariants() {
    let dir = tempfile::tempdir().unwrap();
    let repo = sled_repo(&dir);
    let c1 = repo
        .commit("main", vec![put(&repo, "a.b", "x")], &sig(10), "c1")
        .unwrap();
    // A commit whose parent is a blob and whose root is a blob.
    let b = blob(&repo, "not a commit");
    let bad = repo
        .objects()
        .write(&Commit {
            root: b,
            parents: vec![c1, b],
            author: "a".into(),
            timestamp: 5,
            message: "bad".into(),
            metadata: BTreeMap::new(),
        })
        .unwrap();
    repo.store()
        .cas_ref("refs/heads/bad", None, Some(bad.as_bytes()))
        .unwrap()
        .unwrap();
    // A ref holding garbage.
    repo.store()
        .cas_ref("refs/heads/garbage", None, Some(b"12345"))
        .unwrap()
        .unwrap();
    // A tree whose internal node miscounts a child.
    let v = blob(&repo, "v");
    let leaf_a = repo
        .objects()
        .write(&Node {
            level: 0,
            items: vec![Item::leaf(&key("t.a"), v)],
        })
        .unwrap();
    let leaf_b = repo
        .objects()
        .write(&Node {
            level: 0,
            items: vec![Item::leaf(&key("t.b"), v)],
        })
        .unwrap();
    let item = |k: &str, id: ObjectId, count: u64| Item {
        key: key(k).into(),
        last: key(k).into(),
        id,
        count,
    };
    let top = repo
        .objects()
        .write(&Node {
            level: 1,
            items: vec![item("t.a", leaf_a, 1), item("t.b", leaf_b, 7)],
        })
        .unwrap();
    let tip = repo.branch_tip("main").unwrap();
    let broken = repo
        .commit_tree("main", &tip, top, vec![tip], &sig(11), "broken")
        .unwrap();
    let rep = repo.fsck();
    let has = |subject: memoir::repo::Subject, kind: FindingKind| {
        rep.findings
            .iter()
            .any(|f| f.subject == subject && f.kind == kind)
    };
    use memoir::repo::Subject;
    assert!(has(Subject::Object(b), FindingKind::WrongKind), "{rep:?}");
    assert!(has(
        Subject::Ref("refs/heads/garbage".into()),
        FindingKind::BadRef
    ));
    assert!(has(Subject::Object(top), FindingKind::Invariant));
    assert!(!repo.tree().verify(&top).violations.is_empty());
    assert!(!rep.names(&broken) && !rep.names(&c1));
    // HEAD naming a branch that does not exist.
    repo.store()
        .cas_ref(
            "HEAD",
            Some(b"ref: refs/heads/main"),
            Some(b"ref: refs/heads/gone"),
        )
        .unwrap()
        .unwrap();
    let rep = repo.fsck();
    assert!(rep
        .findings
        .iter()
        .any(|f| f.subject == Subject::Ref("HEAD".into()) && f.kind == FindingKind::BadRef));
    // gc refuses to run over an unreadable ref.
    assert!(repo.gc().is_err());
}
