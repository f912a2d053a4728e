//! Commits, branches and HEAD on a real sled store.

use memoir::key::Key;
use memoir::object::{Blob, Object, ObjectId};
use memoir::repo::{Commit, Head, RefUpdate, Repo, RepoError};
use memoir::store::{OpenOptions, RefStore, Store};

use crate::common::{put, sig};

fn value_at(repo: &Repo, commit: &ObjectId, path: &str) -> Option<String> {
    let root = repo.root_of(commit).unwrap();
    let k = Key::new("default", path).unwrap().encode();
    repo.tree()
        .get(&root, &k)
        .unwrap()
        .map(|id| String::from_utf8(repo.objects().read::<Blob>(&id).unwrap().0).unwrap())
}

#[test]
fn commits_branches_and_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store");
    let store = Store::create(&path, &OpenOptions::default()).unwrap();
    let repo = Repo::init(store, &sig(1_700_000_000), "Initialize store").unwrap();
    assert!(matches!(
        Repo::init(repo.store().clone(), &sig(1), "again"),
        Err(RepoError::AlreadyInitialized)
    ));
    assert_eq!(repo.head().unwrap(), Head::Branch("main".into()));
    let c0 = repo.head_commit().unwrap();
    let first = repo.read_commit(&c0).unwrap();
    assert!(first.parents.is_empty());
    assert_eq!(repo.tree().count(&first.root).unwrap(), 0);

    let e = put(&repo, "preferences.coding.testing", "pytest");
    let c1 = repo
        .commit("main", vec![e], &sig(1_700_000_100), "Store one")
        .unwrap();
    let e = put(&repo, "preferences.coding.testing", "pytest with fixtures");
    let c2 = repo
        .commit("main", vec![e], &sig(1_700_000_200), "Update")
        .unwrap();
    assert_eq!(repo.read_commit(&c2).unwrap().parents, vec![c1]);
    assert_eq!(
        value_at(&repo, &c1, "preferences.coding.testing").as_deref(),
        Some("pytest")
    );
    assert_eq!(
        value_at(&repo, &c2, "preferences.coding.testing").as_deref(),
        Some("pytest with fixtures")
    );
    assert_eq!(value_at(&repo, &c0, "preferences.coding.testing"), None);

    // A branch moves independently of main.
    repo.create_branch("agent/alice", &c1).unwrap();
    assert!(matches!(
        repo.create_branch("agent/alice", &c1),
        Err(RepoError::BranchExists(_))
    ));
    let e = put(&repo, "experience.debugging", "read the logs first");
    let a1 = repo
        .commit("agent/alice", vec![e], &sig(1_700_000_300), "Alice learns")
        .unwrap();
    assert_eq!(repo.branch_tip("main").unwrap(), c2);
    assert_eq!(repo.branch_tip("agent/alice").unwrap(), a1);
    assert_eq!(
        repo.branches()
            .unwrap()
            .into_iter()
            .map(|(n, _)| n)
            .collect::<Vec<_>>(),
        vec!["agent/alice".to_string(), "main".to_string()]
    );
    assert!(matches!(repo.branch_tip("nope"), Err(RepoError::BranchNotFound(b)) if b == "nope"));
    assert!(matches!(
        repo.commit("nope", vec![], &sig(1), "x"),
        Err(RepoError::BranchNotFound(_))
    ));

    // A writer that lost the race changes nothing.
    let e = put(&repo, "a.b", "lost");
    let root = repo
        .tree()
        .apply(&repo.root_of(&c1).unwrap(), vec![e])
        .unwrap();
    assert!(matches!(
        repo.commit_tree("main", &c1, root, vec![c1], &sig(5), "stale"),
        Err(RepoError::RefMoved(_))
    ));
    assert_eq!(repo.branch_tip("main").unwrap(), c2);

    // Detached HEAD and back.
    repo.set_head(&Head::Detached(c1)).unwrap();
    assert_eq!(repo.head_commit().unwrap(), c1);
    repo.set_head(&Head::Branch("agent/alice".into())).unwrap();
    assert_eq!(repo.head_commit().unwrap(), a1);
    assert!(repo.set_head(&Head::Branch("missing".into())).is_err());

    // Everything survives a reopen.
    drop(repo);
    let store = Store::open(&path, &OpenOptions::default()).unwrap();
    let repo = Repo::open(store).unwrap();
    assert_eq!(repo.head().unwrap(), Head::Branch("agent/alice".into()));
    assert_eq!(repo.branch_tip("main").unwrap(), c2);
    assert_eq!(
        value_at(&repo, &a1, "experience.debugging").as_deref(),
        Some("read the logs first")
    );
    // Refs name only flushed, complete commits.
    for (_, tip) in repo.branches().unwrap() {
        let c = repo.read_commit(&tip).unwrap();
        assert!(repo.tree().verify(&c.root).violations.is_empty());
    }
    assert!(repo.store().get_ref("refs/heads/main").unwrap().is_some());
}

#[test]
fn delete_branch_guards_head_and_races() {
    let repo = Repo::init(Store::memory(), &sig(1_700_000_000), "Initialize store").unwrap();
    let c0 = repo.head_commit().unwrap();
    let e = put(&repo, "a.b", "one");
    let c1 = repo
        .commit("main", vec![e], &sig(1_700_000_100), "One")
        .unwrap();
    repo.create_branch("side", &c0).unwrap();
    // The branch HEAD is on stays.
    assert!(matches!(
        repo.delete_branch("main", &c1),
        Err(RepoError::CurrentBranch(b)) if b == "main"
    ));
    // A tip other than the expected one: another writer moved it; nothing is deleted.
    assert!(matches!(
        repo.delete_branch("side", &c1),
        Err(RepoError::RefMoved(_))
    ));
    assert_eq!(repo.branch_tip("side").unwrap(), c0);
    assert!(matches!(
        repo.delete_branch("nope", &c0),
        Err(RepoError::BranchNotFound(b)) if b == "nope"
    ));
    repo.delete_branch("side", &c0).unwrap();
    assert!(matches!(
        repo.branch_tip("side"),
        Err(RepoError::BranchNotFound(_))
    ));
    assert_eq!(repo.branches().unwrap().len(), 1);
    // A detached HEAD guards no branch; its commit stays readable.
    repo.create_branch("side", &c0).unwrap();
    repo.set_head(&Head::Detached(c0)).unwrap();
    repo.delete_branch("side", &c0).unwrap();
    repo.delete_branch("main", &c1).unwrap();
    assert!(repo.branches().unwrap().is_empty());
    assert_eq!(repo.head_commit().unwrap(), c0);
    assert!(repo.read_commit(&c1).is_ok());
}

/// Every ref of a store on disk, with its value.
fn all_refs(repo: &Repo) -> Vec<(String, Vec<u8>)> {
    repo.store().list_refs("").unwrap()
}

#[test]
fn a_ref_update_moves_every_ref_or_none() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store");
    let store = Store::create(&path, &OpenOptions::default()).unwrap();
    let repo = Repo::init(store, &sig(1_700_000_000), "Initialize store").unwrap();
    let c0 = repo.head_commit().unwrap();
    let e = put(&repo, "a.b", "one");
    let c1 = repo
        .commit("main", vec![e], &sig(1_700_000_100), "One")
        .unwrap();
    let logged = || memoir::store::reflog::read(&path).unwrap().len();
    let (refs, lines) = (all_refs(&repo), logged());
    let refused = |update: &RefUpdate| {
        let e = repo.update_refs(update).unwrap_err();
        assert_eq!(all_refs(&repo), refs, "nothing moved after {e}");
        assert_eq!(logged(), lines, "nothing logged after {e}");
        e
    };
    // The second move fails, so the first is not made either.
    let e = refused(
        RefUpdate::new()
            .create_branch("a", c0)
            .create_branch("main", c0),
    );
    assert!(matches!(e, RepoError::BranchExists(b) if b == "main"));
    let e = refused(
        RefUpdate::new()
            .create_branch("x", c1)
            .move_branch("main", c0, c1),
    );
    assert!(matches!(e, RepoError::RefMoved(r) if r == "refs/heads/main"));
    let e = refused(
        RefUpdate::new()
            .create_branch("x", c1)
            .delete_branch("gone", c0),
    );
    assert!(matches!(e, RepoError::BranchNotFound(b) if b == "gone"));
    let e = refused(
        RefUpdate::new()
            .create_branch("x", c1)
            .set_head(Head::Branch("y".into())),
    );
    assert!(matches!(e, RepoError::BranchNotFound(b) if b == "y"));
    let e = refused(RefUpdate::new().delete_branch("main", c1));
    assert!(matches!(e, RepoError::CurrentBranch(b) if b == "main"));
    let unknown = ObjectId::from_bytes([7; 32]);
    let e = refused(
        RefUpdate::new()
            .create_branch("x", c1)
            .create_branch("z", unknown),
    );
    assert!(matches!(e, RepoError::Object(_)), "{e}");
    let e = refused(RefUpdate::new().create_branch("0123abcd", c1));
    assert!(matches!(e, RepoError::BadName(_)), "{e}");

    // A branch and HEAD on it, in one move each logged with the update's message.
    repo.update_refs(
        RefUpdate::logged_as("checkout: side")
            .create_branch("side", c0)
            .set_head(Head::Branch("side".into())),
    )
    .unwrap();
    assert_eq!(repo.head().unwrap(), Head::Branch("side".into()));
    let log = memoir::store::reflog::read(&path).unwrap();
    let last: Vec<(&str, &str)> = log[lines..]
        .iter()
        .map(|e| (e.name.as_str(), e.message.as_str()))
        .collect();
    assert_eq!(
        last,
        [
            ("refs/heads/side", "checkout: side"),
            ("HEAD", "checkout: side")
        ]
    );
    // Moving HEAD off a branch in the same update lets it go.
    repo.update_refs(
        RefUpdate::new()
            .delete_branch("side", c0)
            .set_head(Head::Branch("main".into())),
    )
    .unwrap();
    assert_eq!(repo.branches().unwrap(), [("main".to_string(), c1)]);
    // A tracking ref already where it is asked to be is not moved, nor logged.
    let mut track = RefUpdate::logged_as("fetch: origin");
    track.set_tracking("origin", "main", Some(c1));
    repo.update_refs(&track).unwrap();
    let lines = logged();
    repo.update_refs(&track).unwrap();
    assert_eq!(logged(), lines);
    assert_eq!(
        repo.store().get_ref("refs/remotes/origin/main").unwrap(),
        Some(c1.as_bytes().to_vec())
    );
}

#[test]
fn open_without_history_is_an_error() {
    assert!(matches!(
        Repo::open(Store::memory()),
        Err(RepoError::NotInitialized)
    ));
}

#[test]
fn commit_ids_are_deterministic() {
    let c = Commit {
        root: memoir::prolly::NodeStore::empty_id(),
        parents: vec![],
        author: "A".into(),
        timestamp: 1_700_000_000,
        message: "Initialize store".into(),
        metadata: [
            ("source".to_string(), "cli".to_string()),
            ("actor".to_string(), "agent-1".to_string()),
        ]
        .into_iter()
        .collect(),
    };
    let bytes = c.encode();
    assert_eq!(Commit::decode(&bytes).unwrap(), c);
    let repo_a = Repo::init(Store::memory(), &sig(1_700_000_000), "Initialize store").unwrap();
    let repo_b = Repo::init(Store::memory(), &sig(1_700_000_000), "Initialize store").unwrap();
    assert_eq!(repo_a.head_commit().unwrap(), repo_b.head_commit().unwrap());
}

/// Every close of a repository publishes what HEAD resolves to; while a writer has moved a
/// ref and not yet closed, nothing is published.
#[test]
fn cached_head_follows_every_close() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store");
    let open = || Repo::open(Store::open(&path, &OpenOptions::default()).unwrap()).unwrap();
    let store = Store::create(&path, &OpenOptions::default()).unwrap();
    let repo = Repo::init(store, &sig(1_700_000_000), "Initialize store").unwrap();
    let c0 = repo.head_commit().unwrap();
    let root0 = repo.root_of(&c0).unwrap();
    drop(repo);
    let rest = Repo::cached_head(&path).unwrap();
    assert_eq!(
        (rest.head, rest.commit, rest.root),
        (Head::Branch("main".into()), c0, root0)
    );

    let repo = open();
    let e = put(&repo, "notes.a", "one");
    let c1 = repo
        .commit("main", vec![e], &sig(1_700_000_100), "One")
        .unwrap();
    assert_eq!(Repo::cached_head(&path), None, "a writer is at work");
    drop(repo);
    let rest = Repo::cached_head(&path).unwrap();
    assert_eq!(rest.commit, c1);
    assert_eq!(rest.root, open().root_of(&c1).unwrap());

    let repo = open();
    repo.create_branch("agent", &c0).unwrap();
    repo.set_head(&Head::Branch("agent".into())).unwrap();
    drop(repo);
    let rest = Repo::cached_head(&path).unwrap();
    assert_eq!((rest.head, rest.commit), (Head::Branch("agent".into()), c0));

    let repo = open();
    repo.set_head(&Head::Detached(c1)).unwrap();
    drop(repo);
    let rest = Repo::cached_head(&path).unwrap();
    assert_eq!((rest.head, rest.commit), (Head::Detached(c1), c1));
}
