//! Merges: fast-forward, three-way, conflicts under each strategy, criss-cross bases, and a
//! model of the three-way merge.

use std::collections::BTreeMap;

use memoir::object::{Blob, Object, ObjectId};
use memoir::prolly::Edit;
use memoir::repo::{MergeKind, Repo, RepoError, Resolution, Strategy, ValueUnion};
use memoir::store::Store;
use proptest::prelude::*;

use super::{all_ids, blob, contents, del, entries, key, put, sig, sled_repo, text};

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
