//! Fault injection: a realistic sequence of repository operations over a store that fails its
//! Nth read, write or flush, for every N; and a power cut (losing unflushed writes) after each
//! failure. Every operation fails cleanly or succeeds; afterwards refs name complete commits,
//! fsck is clean, and every acknowledged branch tip survives.

use std::collections::BTreeMap;
use std::sync::Arc;

use memoir::key::Key;
use memoir::object::{Blob, ObjectId};
use memoir::prolly::Edit;
use memoir::repo::{Repo, RepoError, Signature, Strategy};
use memoir::store::Store;

mod backend;

use backend::{faulty_store, FaultOp, Faults};

fn sig(t: i64) -> Signature {
    Signature::new("Tester <t@example.org>", 1_767_225_600 + t)
}

fn k(path: &str) -> Vec<u8> {
    Key::new("default", path).unwrap().encode()
}

fn put(repo: &Repo, path: &str, text: &str) -> Result<Edit, RepoError> {
    let v = repo.objects().write(&Blob(text.as_bytes().to_vec()))?;
    Ok(Edit::Put(k(path), v))
}

type Tips = BTreeMap<String, ObjectId>;

/// One operation of the sequence.
type Step = Box<dyn Fn(&Store) -> Result<(), RepoError>>;

/// The sequence; returns the step that failed (if any) and the tips acknowledged before it.
fn sequence(store: &Store) -> (Option<usize>, Tips) {
    let mut acked = Tips::new();
    let steps: Vec<Step> = vec![
        Box::new(|s| Repo::init(s.clone(), &sig(0), "Initialize").map(drop)),
        Box::new(|s| {
            let r = Repo::open(s.clone())?;
            let e = vec![put(&r, "a", "one")?, put(&r, "b", "two")?];
            r.commit("main", e, &sig(1), "Store a, b").map(drop)
        }),
        Box::new(|s| {
            let r = Repo::open(s.clone())?;
            let tip = r.branch_tip("main")?;
            r.create_branch("side", &tip)
        }),
        Box::new(|s| {
            let r = Repo::open(s.clone())?;
            let e = vec![put(&r, "a", "side one")?, put(&r, "c", "three")?];
            r.commit("side", e, &sig(2), "Side work").map(drop)
        }),
        Box::new(|s| {
            let r = Repo::open(s.clone())?;
            let e = vec![put(&r, "d", "four")?];
            r.commit("main", e, &sig(3), "Store d").map(drop)
        }),
        Box::new(|s| {
            let r = Repo::open(s.clone())?;
            let side = r.branch_tip("side")?;
            r.merge(&side, "main", &Strategy::Theirs, &sig(4), "Merge side")
                .map(drop)
        }),
        Box::new(|s| {
            let r = Repo::open(s.clone())?;
            r.commit("main", vec![Edit::Delete(k("b"))], &sig(5), "Delete b")
                .map(drop)
        }),
        Box::new(|s| Repo::open(s.clone())?.gc().map(drop)),
        Box::new(|s| Repo::open(s.clone())?.purge(&k("d")).map(drop)),
    ];
    for (i, step) in steps.iter().enumerate() {
        if step(store).is_err() {
            return (Some(i), acked);
        }
        // The test's own reads may meet the (single) injected fault: retry once.
        let read = || -> Result<Tips, RepoError> {
            Ok(Repo::open(store.clone())?.branches()?.into_iter().collect())
        };
        acked = read()
            .or_else(|_| read())
            .expect("reads after a successful step");
    }
    (None, acked)
}

/// After a failure (and again after a power cut): the store is sound and acknowledged tips
/// survive, unless the failing step was allowed to move them (then they must still be
/// reachable, or the step was the history rewrite of purge).
fn check(store: &Store, failed: Option<usize>, acked: &Tips, what: &str) {
    let repo = match Repo::open(store.clone()) {
        Ok(r) => r,
        Err(RepoError::NotInitialized) => {
            assert!(acked.is_empty(), "{what}: acknowledged history vanished");
            return;
        }
        Err(e) => panic!("{what}: store does not open: {e}"),
    };
    let report = repo.fsck();
    assert!(
        report.is_clean(),
        "{what}: fsck findings {:?}",
        report.findings
    );
    let now: Tips = repo.branches().unwrap().into_iter().collect();
    let purge_step = 8;
    for (name, tip) in acked {
        let cur = now
            .get(name)
            .unwrap_or_else(|| panic!("{what}: branch {name} lost"));
        if cur == tip || failed == Some(purge_step) {
            continue;
        }
        assert!(
            repo.is_ancestor(tip, cur).unwrap(),
            "{what}: acknowledged tip of {name} is no longer in its history"
        );
    }
    // Every branch tip's tree reads completely.
    for tip in now.values() {
        let root = repo.root_of(tip).unwrap();
        repo.tree()
            .collect(&root, &memoir::prolly::KeyRange::all())
            .unwrap();
    }
}

#[test]
fn every_injected_fault_fails_cleanly_and_loses_nothing_acknowledged() {
    // A dry run counts the operations of each kind.
    let dry = Faults::new();
    let (failed, _) = sequence(&faulty_store(dry.clone()));
    assert_eq!(failed, None, "the sequence succeeds without faults");
    let mut injected = 0;
    for op in [FaultOp::Read, FaultOp::Write, FaultOp::Flush] {
        let total = dry.count(op);
        assert!(total > 0);
        for n in 1..=total {
            let faults: Arc<Faults> = Faults::new();
            faults.fail_nth(op, n);
            let store = faulty_store(faults.clone());
            let (failed, acked) = sequence(&store);
            let what = format!("{op:?} #{n} (step {failed:?})");
            check(&store, failed, &acked, &what);
            store.power_cut();
            check(&store, failed, &acked, &format!("{what} after a power cut"));
            injected += 1;
        }
    }
    eprintln!("{injected} faults injected");
    assert!(injected > 50, "only {injected} faults injected");
}

#[test]
fn power_cut_without_flush_loses_only_unflushed_writes() {
    let store = faulty_store(Faults::new());
    let repo = Repo::init(store.clone(), &sig(0), "Initialize").unwrap();
    let e = vec![put(&repo, "a", "one").unwrap()];
    let c1 = repo.commit("main", e, &sig(1), "Store a").unwrap();
    // Objects written but never flushed or referenced vanish; the commit does not.
    let stray = repo.objects().write(&Blob(b"stray".to_vec())).unwrap();
    drop(repo);
    store.power_cut();
    let repo = Repo::open(store.clone()).unwrap();
    assert_eq!(repo.branch_tip("main").unwrap(), c1);
    assert!(!repo.objects().contains(&stray).unwrap());
    assert!(repo.fsck().is_clean());
}
