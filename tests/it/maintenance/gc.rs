//! gc removes exactly the unreachable objects.

use std::collections::{BTreeMap, BTreeSet};

use memoir::object::ObjectId;
use memoir::repo::{Head, Repo};
use memoir::store::{OpenOptions, RefStore, Store};

use super::{all_ids, blob, commit_bulk, contents, history, put, reachable, sig, sled_repo, tips};

#[test]
fn gc_removes_exactly_the_unreachable_objects() {
    let dir = tempfile::tempdir().unwrap();
    let repo = sled_repo(&dir);
    commit_bulk(&repo, 600);
    for i in 0..5 {
        repo.commit(
            "main",
            vec![put(&repo, &format!("main.k{i}"), &format!("main {i}"))],
            &sig(11 + i),
            "main",
        )
        .unwrap();
    }
    let fork = repo.head_commit().unwrap();
    for b in ["doomed", "kept", "detached"] {
        repo.create_branch(b, &fork).unwrap();
        for i in 0..4 {
            repo.commit(
                b,
                vec![
                    put(&repo, &format!("{b}.k{i}"), &format!("{b} only {i}")),
                    put(
                        &repo,
                        &format!("bulk.item{:04}", 100 * i),
                        &format!("{b} {i}"),
                    ),
                ],
                &sig(20 + i),
                b,
            )
            .unwrap();
        }
    }
    // HEAD detached at the tip of a branch whose ref is then deleted keeps that history.
    let detached_tip = repo.branch_tip("detached").unwrap();
    repo.set_head(&Head::Detached(detached_tip)).unwrap();
    for b in ["doomed", "detached"] {
        let tip = repo.branch_tip(b).unwrap();
        let r = format!("refs/heads/{b}");
        repo.store()
            .cas_ref(&r, Some(tip.as_bytes()), None)
            .unwrap()
            .unwrap();
    }
    // A stray object nothing refers to.
    let stray = blob(&repo, "stray");

    let live_tips = tips(&repo);
    let expect_kept = reachable(&repo, &live_tips);
    let before = all_ids(repo.store());
    let expect_removed: BTreeSet<ObjectId> = before.difference(&expect_kept).copied().collect();
    assert!(expect_removed.contains(&stray));
    assert!(expect_removed.len() > 8);
    let fsck = repo.fsck();
    assert!(fsck.is_clean());
    assert_eq!(fsck.unreachable_objects, expect_removed.len() as u64);

    let snapshot: Vec<(ObjectId, BTreeMap<Vec<u8>, String>)> = history(&repo, &live_tips)
        .into_iter()
        .map(|c| (c, contents(&repo, &c)))
        .collect();
    let rep = repo.gc().unwrap();
    assert_eq!(rep.objects_removed, expect_removed.len() as u64);
    assert_eq!(rep.objects_kept, expect_kept.len() as u64);
    assert!(rep.bytes_removed > 0);
    assert_eq!(all_ids(repo.store()), expect_kept);
    for (c, want) in &snapshot {
        assert_eq!(&contents(&repo, c), want);
    }
    let fsck = repo.fsck();
    assert!(fsck.is_clean(), "{:?}", fsck.findings);
    assert_eq!(fsck.unreachable_objects, 0);
    assert_eq!(fsck.objects_checked, expect_kept.len() as u64);
    // A second run finds nothing to do.
    let again = repo.gc().unwrap();
    assert_eq!(again.objects_removed, 0);
    // Everything survives a reopen.
    drop(repo);
    let store = Store::open(&dir.path().join("store"), &OpenOptions::default()).unwrap();
    let repo = Repo::open(store).unwrap();
    for (c, want) in &snapshot {
        assert_eq!(&contents(&repo, c), want);
    }
}
