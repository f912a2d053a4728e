//! What a push sends and a fetch receives, through the library over an in-memory remote:
//! only the difference, and everything that difference needs.

use std::collections::BTreeSet;

use memoir::object::ObjectId;
use memoir::prolly::Edit;
use memoir::repo::remote::{MemoryTransport, PushPlan, RemoteError, Transport, MAX_PACK_BYTES};
use memoir::repo::Repo;
use memoir::store::{ObjectStore, OpenOptions, Store};

use crate::common::{put, sig};

fn repo_at(dir: &std::path::Path, name: &str) -> Repo {
    let store = Store::create(&dir.join(name), &OpenOptions::default()).unwrap();
    Repo::init(store, &sig(1_700_000_000), "Initialize store").unwrap()
}

fn push(
    repo: &Repo,
    t: &dyn Transport,
    force: bool,
) -> Result<memoir::repo::remote::PushReport, RemoteError> {
    let plan = PushPlan {
        branch: "main".into(),
        commit: repo.branch_tip("main").unwrap(),
        force,
        time: 1_700_000_100,
    };
    repo.push_to(t, &plan, &mut |_| {})
}

/// Every object reachable from `commit` (commits, nodes, values).
fn closure(repo: &Repo, commit: ObjectId) -> BTreeSet<ObjectId> {
    let d = repo.delta(&[commit], &[]).unwrap();
    d.ids().copied().collect()
}

#[test]
fn an_incremental_push_sends_the_changed_path_only() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo_at(dir.path(), "a");
    let edits: Vec<Edit> = (0..20_000)
        .map(|i| {
            put(
                &repo,
                &format!("topic{:02}.item{i:05}", i % 50),
                &format!("memory {i}"),
            )
        })
        .collect();
    repo.commit("main", edits, &sig(1_700_000_001), "bulk")
        .unwrap();
    let remote = MemoryTransport::new();
    let first = push(&repo, &remote, false).unwrap();
    let all = closure(&repo, repo.branch_tip("main").unwrap());
    // The first push sends each object once: every object of both commits' trees.
    assert_eq!(first.objects as usize, all.len());

    for k in 0..10 {
        let e = put(
            &repo,
            &format!("topic07.item{:05}", 7 + 50 * k),
            &format!("changed {k}"),
        );
        repo.commit("main", vec![e], &sig(1_700_000_010 + k), "one key")
            .unwrap();
    }
    let before = repo.branch_tip("main").unwrap();
    let depth = {
        let root = repo.root_of(&before).unwrap();
        repo.tree().load(&root).unwrap().level as u64 + 1
    };
    let second = push(&repo, &remote, false).unwrap();
    // Ten commits, each with its new path of nodes and one value.
    assert!(
        second.objects <= 10 * (1 + depth + 1),
        "sent {} objects for 10 single-key commits (tree depth {depth})",
        second.objects
    );
    assert!(second.objects >= 10 * 3, "{}", second.objects);

    // A fresh store fetches it all, and every object it receives checks out.
    let b = repo_at(dir.path(), "b");
    let got = b
        .fetch_from(&remote, &BTreeSet::new(), &mut |_| {})
        .unwrap();
    let tip = got.heads.branches["main"].commit_id().unwrap();
    assert_eq!(tip, before);
    for id in closure(&repo, before) {
        assert!(b.store().contains(id.as_bytes()).unwrap(), "{id:?} missing");
    }
    // Fetching again receives nothing.
    let again = b.fetch_from(&remote, &got.packs_held, &mut |_| {}).unwrap();
    assert_eq!(again.objects, 0);
    let reread = b
        .fetch_from(&remote, &BTreeSet::new(), &mut |_| {})
        .unwrap();
    assert_eq!(
        reread.objects, 0,
        "objects already here are not received again"
    );
}

#[test]
fn a_remote_missing_an_object_is_refused_before_any_ref() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo_at(dir.path(), "a");
    let e = put(&repo, "a.b", "a value");
    repo.commit("main", vec![e], &sig(1_700_000_001), "one")
        .unwrap();
    let remote = MemoryTransport::new();
    push(&repo, &remote, false).unwrap();
    // Drop the index of the only pack: the branch names objects no complete pack holds.
    let idx = remote
        .list("packs/")
        .unwrap()
        .into_iter()
        .find(|e| e.name.ends_with(".idx"))
        .unwrap();
    remote.delete(&idx.name).unwrap();
    let b = repo_at(dir.path(), "b");
    let err = b
        .fetch_from(&remote, &BTreeSet::new(), &mut |_| {})
        .unwrap_err();
    assert!(matches!(err, RemoteError::Corrupt(_)), "{err}");
}

#[test]
fn a_stale_pusher_is_refused_and_a_forced_push_replaces() {
    let dir = tempfile::tempdir().unwrap();
    let a = repo_at(dir.path(), "a");
    let remote = MemoryTransport::new();
    push(&a, &remote, false).unwrap();
    let store = Store::create(&dir.path().join("b"), &OpenOptions::default()).unwrap();
    let b = Repo::init(store, &sig(1_700_000_555), "Initialize store").unwrap();
    // b's history is unrelated to the remote's: refused, unless forced.
    let e = put(&b, "x.y", "from b");
    b.commit("main", vec![e], &sig(1_700_000_002), "b").unwrap();
    assert!(matches!(
        push(&b, &remote, false),
        Err(RemoteError::NotFastForward(_))
    ));
    let forced = push(&b, &remote, true).unwrap();
    assert!(forced.forced);
    assert_eq!(forced.seq, Some(2));
}

#[test]
fn packs_stay_within_the_pack_size_and_fetch_whole() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo_at(dir.path(), "a");
    // Three values of 12 MiB: 36 MiB of objects, more than one pack holds.
    let edits: Vec<Edit> = (0..3)
        .map(|i| {
            put(
                &repo,
                &format!("big.item{i}"),
                &i.to_string().repeat(12 << 20),
            )
        })
        .collect();
    repo.commit("main", edits, &sig(1_700_000_001), "big")
        .unwrap();
    let remote = MemoryTransport::new();
    let report = push(&repo, &remote, false).unwrap();
    assert!(report.packs.len() >= 2, "{report:?}");
    for e in remote.list("packs/").unwrap() {
        assert!(e.size <= MAX_PACK_BYTES, "{} is {} bytes", e.name, e.size);
    }
    let b = repo_at(dir.path(), "b");
    let got = b
        .fetch_from(&remote, &BTreeSet::new(), &mut |_| {})
        .unwrap();
    assert_eq!(
        got.objects,
        report.objects - 2,
        "all but b's own root and commit"
    );
}
