//! Merge, gc, fsck and purge on real stores.

use std::collections::{BTreeMap, BTreeSet};

use memoir::key::Key;
use memoir::object::{Blob, Object, ObjectId};
use memoir::prolly::{Edit, Item, KeyRange, Node};
use memoir::repo::{
    Commit, FindingKind, Head, MergeKind, Repo, RepoError, Resolution, Signature, Strategy,
    ValueUnion,
};
use memoir::store::{ObjectStore, OpenOptions, RefStore, Store};
use proptest::prelude::*;

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

// ---------------------------------------------------------------- merge

#[test]
fn fast_forward_and_up_to_date() {
    let dir = tempfile::tempdir().unwrap();
    let repo = sled_repo(&dir);
    let c0 = repo.head_commit().unwrap();
    repo.create_branch("feat", &c0).unwrap();
    let f1 = repo
        .commit("feat", vec![put(&repo, "a.b", "one")], &sig(10), "f1")
        .unwrap();
    let f2 = repo
        .commit("feat", vec![put(&repo, "a.c", "two")], &sig(11), "f2")
        .unwrap();

    let out = repo.fast_forward(&f1, "main").unwrap();
    assert_eq!(out.kind, MergeKind::FastForward);
    assert_eq!(out.commit, Some(f1));
    assert_eq!(repo.branch_tip("main").unwrap(), f1);

    let out = repo
        .merge(&f2, "main", &Strategy::Fail, &sig(12), "m")
        .unwrap();
    assert_eq!(out.kind, MergeKind::FastForward);
    assert_eq!(repo.branch_tip("main").unwrap(), f2);
    // No commit was made: f2's parent is still f1.
    assert_eq!(repo.read_commit(&f2).unwrap().parents, vec![f1]);

    for src in [f2, f1, c0] {
        let out = repo
            .merge(&src, "main", &Strategy::Fail, &sig(13), "m")
            .unwrap();
        assert_eq!(out.kind, MergeKind::UpToDate);
        assert_eq!(out.commit, None);
        assert!(out.conflicts.is_empty());
        assert_eq!(repo.branch_tip("main").unwrap(), f2);
    }

    // Diverged histories are not a fast-forward; nothing moves.
    let m3 = repo
        .commit("main", vec![put(&repo, "z", "main")], &sig(14), "m3")
        .unwrap();
    let f3 = repo
        .commit("feat", vec![put(&repo, "y", "feat")], &sig(15), "f3")
        .unwrap();
    assert!(matches!(
        repo.fast_forward(&f3, "main"),
        Err(RepoError::NotFastForward(b)) if b == "main"
    ));
    assert_eq!(repo.branch_tip("main").unwrap(), m3);
    assert!(matches!(
        repo.merge(&f3, "nope", &Strategy::Fail, &sig(1), "m"),
        Err(RepoError::BranchNotFound(_))
    ));
    assert!(repo.fsck().is_clean());
}

#[test]
fn clean_three_way_merge() {
    let dir = tempfile::tempdir().unwrap();
    let repo = sled_repo(&dir);
    let base = repo
        .commit(
            "main",
            vec![
                put(&repo, "k.a", "a0"),
                put(&repo, "k.b", "b0"),
                put(&repo, "k.c", "c0"),
            ],
            &sig(10),
            "base",
        )
        .unwrap();
    repo.create_branch("feat", &base).unwrap();
    let ours = repo
        .commit(
            "main",
            vec![put(&repo, "k.x", "x-main"), del("k.a")],
            &sig(11),
            "ours",
        )
        .unwrap();
    let theirs = repo
        .commit(
            "feat",
            vec![put(&repo, "k.y", "y-feat"), put(&repo, "k.b", "b1")],
            &sig(12),
            "theirs",
        )
        .unwrap();
    assert_eq!(repo.merge_base(&ours, &theirs).unwrap(), Some(base));
    let out = repo
        .merge(
            &theirs,
            "main",
            &Strategy::Fail,
            &sig(13),
            "Merge branch 'feat' into main",
        )
        .unwrap();
    assert_eq!(out.kind, MergeKind::Merged);
    assert!(out.conflicts.is_empty());
    let m = out.commit.unwrap();
    assert_eq!(repo.branch_tip("main").unwrap(), m);
    assert_eq!(repo.branch_tip("feat").unwrap(), theirs);
    let c = repo.read_commit(&m).unwrap();
    assert_eq!(c.parents, vec![ours, theirs]);
    assert_eq!(c.message, "Merge branch 'feat' into main");
    assert_eq!(c.timestamp, 13);
    assert_eq!(
        contents(&repo, &m),
        text(&[
            ("k.b", "b1"),
            ("k.c", "c0"),
            ("k.x", "x-main"),
            ("k.y", "y-feat")
        ])
    );
    // Merging again is up to date; merging main back into feat fast-forwards.
    let again = repo
        .merge(&theirs, "main", &Strategy::Fail, &sig(14), "m")
        .unwrap();
    assert_eq!(again.kind, MergeKind::UpToDate);
    let back = repo
        .merge(&m, "feat", &Strategy::Fail, &sig(14), "m")
        .unwrap();
    assert_eq!(back.kind, MergeKind::FastForward);
    assert!(repo.fsck().is_clean());
}

/// Unions two blobs' text as "ours+theirs"; fails for keys whose path contains "nounion".
struct ConcatUnion<'a>(&'a Repo);

impl ValueUnion for ConcatUnion<'_> {
    fn union(
        &self,
        key: &[u8],
        _base: Option<&ObjectId>,
        ours: Option<&ObjectId>,
        theirs: Option<&ObjectId>,
    ) -> Result<Option<ObjectId>, String> {
        if key.windows(7).any(|w| w == b"nounion") {
            return Err("cannot union this record".into());
        }
        let read = |id: Option<&ObjectId>| {
            id.map(|id| String::from_utf8(self.0.objects().read::<Blob>(id).unwrap().0).unwrap())
                .unwrap_or_default()
        };
        let joined = format!("{}+{}", read(ours), read(theirs));
        Ok(Some(blob(self.0, &joined)))
    }
}

/// main and feat diverge from a base with every kind of conflict, plus an identical change
/// on both sides and one-sided changes. Returns (ours tip, theirs tip).
fn conflicted_history(repo: &Repo, extra_key: Option<&str>) -> (ObjectId, ObjectId) {
    let mut base_edits = vec![
        put(repo, "c.modmod", "base"),
        put(repo, "c.delmod", "base"),
        put(repo, "c.moddel", "base"),
        put(repo, "c.same", "base"),
        put(repo, "c.keep", "base"),
    ];
    if let Some(k) = extra_key {
        base_edits.push(put(repo, k, "base"));
    }
    let base = repo.commit("main", base_edits, &sig(10), "base").unwrap();
    repo.create_branch("feat", &base).unwrap();
    let mut ours_edits = vec![
        put(repo, "c.modmod", "ours"),
        del("c.delmod"),
        put(repo, "c.moddel", "ours"),
        put(repo, "c.addadd", "ours"),
        put(repo, "c.same", "both"),
        put(repo, "c.onlyours", "ours"),
    ];
    let mut theirs_edits = vec![
        put(repo, "c.modmod", "theirs"),
        put(repo, "c.delmod", "theirs"),
        del("c.moddel"),
        put(repo, "c.addadd", "theirs"),
        put(repo, "c.same", "both"),
        put(repo, "c.onlytheirs", "theirs"),
    ];
    if let Some(k) = extra_key {
        ours_edits.push(put(repo, k, "ours"));
        theirs_edits.push(put(repo, k, "theirs"));
    }
    let ours = repo.commit("main", ours_edits, &sig(11), "ours").unwrap();
    let theirs = repo
        .commit("feat", theirs_edits, &sig(12), "theirs")
        .unwrap();
    (ours, theirs)
}

#[test]
fn conflicts_with_each_strategy() {
    let dir = tempfile::tempdir().unwrap();
    let repo = sled_repo(&dir);
    let (ours, theirs) = conflicted_history(&repo, None);
    let union = ConcatUnion(&repo);
    let conflict_keys: Vec<Vec<u8>> = ["c.addadd", "c.delmod", "c.moddel", "c.modmod"]
        .iter()
        .map(|k| key(k))
        .collect();
    let b = |s: &str| Some(blob(&repo, s));
    let strategies = [
        ("fail", Strategy::Fail),
        ("ours", Strategy::Ours),
        ("skip", Strategy::SKIP),
        ("theirs", Strategy::Theirs),
        ("union", Strategy::Union(&union)),
    ];
    for (i, (name, strategy)) in strategies.iter().enumerate() {
        let branch = format!("into-{name}");
        repo.create_branch(&branch, &ours).unwrap();
        let out = repo
            .merge(&theirs, &branch, strategy, &sig(20 + i as i64), "merge")
            .unwrap();
        let keys: Vec<Vec<u8>> = out.conflicts.iter().map(|c| c.key.clone()).collect();
        assert_eq!(keys, conflict_keys, "{name}");
        // Sides of each conflict, in key order: addadd, delmod, moddel, modmod.
        let sides: Vec<_> = out
            .conflicts
            .iter()
            .map(|c| (c.base, c.ours, c.theirs))
            .collect();
        assert_eq!(
            sides,
            vec![
                (None, b("ours"), b("theirs")),
                (b("base"), None, b("theirs")),
                (b("base"), b("ours"), None),
                (b("base"), b("ours"), b("theirs")),
            ]
        );
        if *name == "fail" {
            assert_eq!(out.kind, MergeKind::Conflicted);
            assert_eq!(out.commit, None);
            assert!(out
                .conflicts
                .iter()
                .all(|c| c.resolution == Resolution::Unresolved(None)));
            assert_eq!(repo.branch_tip(&branch).unwrap(), ours);
            assert_eq!(repo.branch_tip("feat").unwrap(), theirs);
            continue;
        }
        assert_eq!(out.kind, MergeKind::Merged, "{name}");
        assert!(out.conflicts.iter().all(|c| c.is_resolved()));
        let m = out.commit.unwrap();
        assert_eq!(repo.branch_tip(&branch).unwrap(), m);
        assert_eq!(repo.read_commit(&m).unwrap().parents, vec![ours, theirs]);
        let common = [
            ("c.keep", "base"),
            ("c.same", "both"),
            ("c.onlyours", "ours"),
            ("c.onlytheirs", "theirs"),
        ];
        let specific: &[(&str, &str)] = match *name {
            "ours" | "skip" => &[
                ("c.modmod", "ours"),
                ("c.moddel", "ours"),
                ("c.addadd", "ours"),
            ],
            "theirs" => &[
                ("c.modmod", "theirs"),
                ("c.delmod", "theirs"),
                ("c.addadd", "theirs"),
            ],
            _ => &[
                ("c.modmod", "ours+theirs"),
                ("c.delmod", "+theirs"),
                ("c.moddel", "ours+"),
                ("c.addadd", "ours+theirs"),
            ],
        };
        let want: Vec<(&str, &str)> = common.iter().chain(specific).copied().collect();
        assert_eq!(contents(&repo, &m), text(&want), "{name}");
    }
    assert!(repo.fsck().is_clean());
}

#[test]
fn failed_union_leaves_a_conflict_and_commits_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let repo = sled_repo(&dir);
    let (ours, theirs) = conflicted_history(&repo, Some("c.nounion"));
    let union = ConcatUnion(&repo);
    let before = all_ids(repo.store());
    let out = repo
        .merge(&theirs, "main", &Strategy::Union(&union), &sig(30), "m")
        .unwrap();
    assert_eq!(out.kind, MergeKind::Conflicted);
    assert_eq!(out.commit, None);
    assert_eq!(repo.branch_tip("main").unwrap(), ours);
    let unresolved: Vec<_> = out.conflicts.iter().filter(|c| !c.is_resolved()).collect();
    assert_eq!(unresolved.len(), 1);
    assert_eq!(unresolved[0].key, key("c.nounion"));
    assert_eq!(
        unresolved[0].resolution,
        Resolution::Unresolved(Some("cannot union this record".into()))
    );
    // No commit was written (the union's value objects may have been).
    let after = all_ids(repo.store());
    for id in after.difference(&before) {
        assert!(repo.read_commit(id).is_err());
    }
}

#[test]
fn criss_cross_merge_base() {
    let dir = tempfile::tempdir().unwrap();
    let repo = sled_repo(&dir);
    let c0 = repo
        .commit("main", vec![put(&repo, "k.base", "0")], &sig(10), "c0")
        .unwrap();
    repo.create_branch("b", &c0).unwrap();
    let a1 = repo
        .commit("main", vec![put(&repo, "k.a", "a1")], &sig(11), "a1")
        .unwrap();
    let b1 = repo
        .commit("b", vec![put(&repo, "k.b", "b1")], &sig(12), "b1")
        .unwrap();
    // Cross merges: b1 into main, a1 into b (both real merges).
    let ma = repo
        .merge(&b1, "main", &Strategy::Fail, &sig(13), "ma")
        .unwrap()
        .commit
        .unwrap();
    let mb = repo
        .merge(&a1, "b", &Strategy::Fail, &sig(14), "mb")
        .unwrap()
        .commit
        .unwrap();
    let ma2 = repo
        .commit("main", vec![put(&repo, "k.a", "a2")], &sig(15), "a2")
        .unwrap();
    let mb2 = repo
        .commit("b", vec![put(&repo, "k.b", "b2")], &sig(16), "b2")
        .unwrap();
    let bases = repo.merge_bases(&ma2, &mb2).unwrap();
    // Both a1 and b1 are best common ancestors; the newer one (b1) is chosen.
    assert_eq!(bases, vec![b1, a1]);
    let base = repo.merge_base(&ma2, &mb2).unwrap().unwrap();
    assert_eq!(base, b1);
    assert!(repo.is_ancestor(&base, &ma2).unwrap());
    assert!(repo.is_ancestor(&base, &mb2).unwrap());
    assert_eq!(repo.merge_base(&ma, &mb).unwrap(), Some(b1));
    // Against the single base b1, k.a was added on both sides (a2 and a1): a conflict.
    let out = repo
        .merge(&mb2, "main", &Strategy::Fail, &sig(17), "final")
        .unwrap();
    assert_eq!(out.kind, MergeKind::Conflicted);
    let keys: Vec<_> = out.conflicts.iter().map(|c| c.key.clone()).collect();
    assert_eq!(keys, vec![key("k.a")]);
    let out = repo
        .merge(&mb2, "main", &Strategy::Ours, &sig(17), "final")
        .unwrap();
    assert_eq!(out.kind, MergeKind::Merged);
    assert_eq!(
        contents(&repo, &out.commit.unwrap()),
        text(&[("k.a", "a2"), ("k.b", "b2"), ("k.base", "0")])
    );
    // Unrelated histories have no merge base.
    let other = Repo::init(Store::memory(), &sig(1), "x").unwrap();
    let lone = other.head_commit().unwrap();
    assert_eq!(other.merge_base(&lone, &lone).unwrap(), Some(lone));
    assert!(repo.fsck().is_clean());
}

// A model of the three-way merge over a small key and value universe.

const KEYS: usize = 10;
const VALUES: usize = 4;

/// Unions by taking ours, else theirs; fails on keys whose index is a multiple of 3.
struct ModelUnion;

impl ValueUnion for ModelUnion {
    fn union(
        &self,
        key: &[u8],
        _base: Option<&ObjectId>,
        ours: Option<&ObjectId>,
        theirs: Option<&ObjectId>,
    ) -> Result<Option<ObjectId>, String> {
        let last = *key.last().unwrap() - b'0';
        if last.is_multiple_of(3) {
            Err("no".into())
        } else {
            Ok(ours.or(theirs).copied())
        }
    }
}

type State = [Option<u8>; KEYS];

fn model_key(i: usize) -> Vec<u8> {
    key(&format!("m.k{i}"))
}

fn model_value(v: u8) -> ObjectId {
    Blob(format!("value {v}").into_bytes()).to_bytes_and_id().0
}

fn state_strategy() -> impl proptest::strategy::Strategy<Value = State> {
    proptest::array::uniform10(proptest::option::of(0..VALUES as u8))
}

fn edits_for(repo: &Repo, from: &State, to: &State) -> Vec<Edit> {
    let mut out = Vec::new();
    for i in 0..KEYS {
        if from[i] != to[i] {
            out.push(match to[i] {
                Some(v) => {
                    let id = repo
                        .objects()
                        .write(&Blob(format!("value {v}").into_bytes()))
                        .unwrap();
                    Edit::Put(model_key(i), id)
                }
                None => Edit::Delete(model_key(i)),
            });
        }
    }
    out
}

fn check_model(base: State, ours: State, theirs: State) -> Result<(), TestCaseError> {
    let repo = Repo::init(Store::memory(), &sig(1), "init").unwrap();
    let b = repo
        .commit("main", edits_for(&repo, &[None; KEYS], &base), &sig(2), "b")
        .unwrap();
    repo.create_branch("theirs", &b).unwrap();
    let o = repo
        .commit("main", edits_for(&repo, &base, &ours), &sig(3), "o")
        .unwrap();
    let t = repo
        .commit("theirs", edits_for(&repo, &base, &theirs), &sig(4), "t")
        .unwrap();
    let union = ModelUnion;
    let strategies = [
        Strategy::Fail,
        Strategy::Ours,
        Strategy::Theirs,
        Strategy::Union(&union),
    ];
    let conflicting: Vec<usize> = (0..KEYS)
        .filter(|&i| ours[i] != theirs[i] && ours[i] != base[i] && theirs[i] != base[i])
        .collect();
    for (n, strategy) in strategies.iter().enumerate() {
        let branch = format!("into{n}");
        repo.create_branch(&branch, &o).unwrap();
        let out = repo.merge(&t, &branch, strategy, &sig(5), "m").unwrap();
        let keys: Vec<Vec<u8>> = out.conflicts.iter().map(|c| c.key.clone()).collect();
        let want: Vec<Vec<u8>> = conflicting.iter().map(|&i| model_key(i)).collect();
        prop_assert_eq!(keys, want);
        for c in &out.conflicts {
            let i = (c.key.last().unwrap() - b'0') as usize;
            prop_assert_eq!(c.base, base[i].map(model_value));
            prop_assert_eq!(c.ours, ours[i].map(model_value));
            prop_assert_eq!(c.theirs, theirs[i].map(model_value));
        }
        let unresolved = match strategy {
            Strategy::Fail => !conflicting.is_empty(),
            Strategy::Union(_) => conflicting.iter().any(|i| i.is_multiple_of(3)),
            _ => false,
        };
        if unresolved {
            prop_assert_eq!(out.kind, MergeKind::Conflicted);
            prop_assert_eq!(repo.branch_tip(&branch).unwrap(), o);
            continue;
        }
        prop_assert_eq!(out.kind, MergeKind::Merged);
        let mut want = BTreeMap::new();
        for i in 0..KEYS {
            let v = if ours[i] == theirs[i] || theirs[i] == base[i] {
                ours[i]
            } else if ours[i] == base[i] {
                theirs[i]
            } else {
                match strategy {
                    Strategy::Theirs => theirs[i],
                    Strategy::Union(_) => ours[i].or(theirs[i]),
                    _ => ours[i],
                }
            };
            if let Some(v) = v {
                want.insert(model_key(i), model_value(v));
            }
        }
        let m = out.commit.unwrap();
        prop_assert_eq!(entries(&repo, &m), want);
        prop_assert_eq!(repo.read_commit(&m).unwrap().parents, vec![o, t]);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn merge_matches_the_model(base in state_strategy(), ours in state_strategy(),
                               theirs in state_strategy()) {
        check_model(base, ours, theirs)?;
    }
}

// ---------------------------------------------------------------- gc

/// Commits `n` keys `bulk.itemNNNN` on main in one commit, so trees have several levels.
fn commit_bulk(repo: &Repo, n: usize) {
    let edits = (0..n)
        .map(|i| put(repo, &format!("bulk.item{i:04}"), &format!("bulk {i}")))
        .collect();
    repo.commit("main", edits, &sig(10), "bulk").unwrap();
}

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

// ---------------------------------------------------------------- fsck

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
        let orig = store.get(id.as_bytes()).unwrap().unwrap();
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

// ---------------------------------------------------------------- purge

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
