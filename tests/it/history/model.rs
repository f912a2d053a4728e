//! The model-based property test: random commits and merges (sometimes with clock skew) on a
//! real store and on a model of the commit graph; every read, diff, log and blame must agree.

use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet};

use memoir::glob::KeyGlobs;
use memoir::key::Key;
use memoir::object::ObjectId;
use memoir::prolly::Edit;
use memoir::repo::{Commit, KeyFilter, Op, Repo};
use proptest::prelude::*;

use super::{blob, key, new_repo, sig, T0};

const NAMESPACES: [&str; 2] = ["default", "work"];
const PATHS: [&str; 4] = ["a.x", "a.y", "b", "c.d.e"];
const BRANCHES: [&str; 3] = ["main", "b1", "b2"];
const GLOBS: [&str; 6] = ["a.*", "b", "*.e", "?.?", "c.d.*", "a.x"];

fn model_key(i: usize) -> Key {
    key(NAMESPACES[i / PATHS.len()], PATHS[i % PATHS.len()])
}

#[derive(Debug, Clone)]
enum Act {
    Commit {
        branch: usize,
        edits: Vec<(usize, Option<usize>)>,
        dt: i64,
    },
    Merge {
        into: usize,
        from: usize,
        dt: i64,
    },
}

fn act() -> impl Strategy<Value = Act> {
    let nkeys = NAMESPACES.len() * PATHS.len();
    prop_oneof![
        3 => (
            0..BRANCHES.len(),
            prop::collection::vec((0..nkeys, prop::option::of(0..4usize)), 0..4),
            0..20i64
        )
            .prop_map(|(branch, edits, dt)| Act::Commit { branch, edits, dt }),
        1 => (0..BRANCHES.len(), 0..BRANCHES.len(), 0..20i64)
            .prop_map(|(into, from, dt)| Act::Merge { into, from, dt }),
    ]
}

type Snapshot = BTreeMap<Vec<u8>, ObjectId>;

struct MCommit {
    id: ObjectId,
    parents: Vec<usize>,
    ts: i64,
    snap: Snapshot,
}

struct Model {
    commits: Vec<MCommit>,
    index: HashMap<ObjectId, usize>,
    branches: BTreeMap<&'static str, usize>,
}

#[derive(Debug, Clone)]
struct MFilter {
    ns: Option<usize>,
    globs: Vec<usize>,
}

impl MFilter {
    fn build(&self) -> KeyFilter {
        let globs: Vec<&str> = self.globs.iter().map(|&g| GLOBS[g]).collect();
        KeyFilter::new(
            self.ns.map(|n| NAMESPACES[n]),
            KeyGlobs::new(&globs).unwrap(),
        )
    }
}

fn mfilter() -> impl Strategy<Value = MFilter> {
    (
        prop::option::of(0..NAMESPACES.len()),
        prop::collection::vec(0..GLOBS.len(), 0..3),
    )
        .prop_map(|(ns, globs)| MFilter { ns, globs })
}

/// Naive: does `k` pass the filter (checked by decoding, independently of the repo code)?
fn model_matches(f: &KeyFilter, k: &[u8]) -> bool {
    let key = Key::decode(k).unwrap();
    f.namespace
        .as_deref()
        .is_none_or(|ns| ns == key.namespace())
        && (f.globs.is_all() || f.globs.matches(key.path()))
}

fn model_diff(
    a: &Snapshot,
    b: &Snapshot,
    f: Option<&KeyFilter>,
) -> Vec<(Vec<u8>, Option<ObjectId>, Option<ObjectId>)> {
    let keys: std::collections::BTreeSet<&Vec<u8>> = a.keys().chain(b.keys()).collect();
    keys.into_iter()
        .filter(|k| f.is_none_or(|f| model_matches(f, k)))
        .filter_map(|k| {
            let (x, y) = (a.get(k).copied(), b.get(k).copied());
            (x != y).then(|| (k.clone(), x, y))
        })
        .collect()
}

impl Model {
    /// Kahn's algorithm over the commits reachable from `tips` along `edges`, choosing the
    /// newest ready commit, ties by the smaller id.
    fn order(&self, tips: &[usize], edges: &dyn Fn(usize) -> Vec<usize>) -> Vec<usize> {
        let mut seen: HashSet<usize> = HashSet::new();
        let mut stack: Vec<usize> = tips.to_vec();
        while let Some(c) = stack.pop() {
            if seen.insert(c) {
                stack.extend(edges(c));
            }
        }
        let mut indeg: HashMap<usize, usize> = seen.iter().map(|&c| (c, 0)).collect();
        for &c in &seen {
            for p in edges(c) {
                *indeg.get_mut(&p).unwrap() += 1;
            }
        }
        let rank = |c: usize| (self.commits[c].ts, std::cmp::Reverse(self.commits[c].id), c);
        let mut heap: BinaryHeap<_> = seen
            .iter()
            .filter(|c| indeg[c] == 0)
            .map(|&c| rank(c))
            .collect();
        let mut out = Vec::new();
        while let Some((_, _, c)) = heap.pop() {
            out.push(c);
            for p in edges(c) {
                let d = indeg.get_mut(&p).unwrap();
                *d -= 1;
                if *d == 0 {
                    heap.push(rank(p));
                }
            }
        }
        assert_eq!(out.len(), seen.len());
        out
    }

    fn parents(&self, c: usize) -> Vec<usize> {
        let mut v: Vec<usize> = Vec::new();
        for &p in &self.commits[c].parents {
            if !v.contains(&p) {
                v.push(p);
            }
        }
        v
    }

    fn ancestors(&self, tips: &[usize]) -> HashSet<usize> {
        let mut seen = HashSet::new();
        let mut stack = tips.to_vec();
        while let Some(c) = stack.pop() {
            if seen.insert(c) {
                stack.extend(self.parents(c));
            }
        }
        seen
    }

    fn log(&self, include: &[usize], exclude: &[usize], f: Option<&KeyFilter>) -> Vec<usize> {
        let ex = self.ancestors(exclude);
        let tips: Vec<usize> = include
            .iter()
            .copied()
            .filter(|t| !ex.contains(t))
            .collect();
        let edges = |c: usize| -> Vec<usize> {
            self.parents(c)
                .into_iter()
                .filter(|p| !ex.contains(p))
                .collect()
        };
        self.order(&tips, &edges)
            .into_iter()
            .filter(|&c| {
                let Some(f) = f else { return true };
                let mc = &self.commits[c];
                if mc.parents.is_empty() {
                    mc.snap.keys().any(|k| model_matches(f, k))
                } else {
                    mc.parents
                        .iter()
                        .all(|&p| !model_diff(&self.commits[p].snap, &mc.snap, Some(f)).is_empty())
                }
            })
            .collect()
    }

    /// (commit, op, old, new) by the rule of `Repo::blame`.
    fn blame(&self, at: usize, k: &[u8]) -> Vec<(usize, Op, Option<ObjectId>, Option<ObjectId>)> {
        let val = |c: usize| self.commits[c].snap.get(k).copied();
        let edges = |c: usize| -> Vec<usize> {
            let ps = self.parents(c);
            let same: Vec<usize> = ps.iter().copied().filter(|&p| val(p) == val(c)).collect();
            if same.is_empty() {
                ps
            } else {
                same
            }
        };
        self.order(&[at], &edges)
            .into_iter()
            .filter(|&c| {
                let ps = &self.commits[c].parents;
                if ps.is_empty() {
                    val(c).is_some()
                } else {
                    ps.iter().all(|&p| val(p) != val(c))
                }
            })
            .map(|c| {
                let old = self.commits[c].parents.first().and_then(|&p| val(p));
                let op = match (old, val(c)) {
                    (None, Some(_)) => Op::Added,
                    (Some(_), None) => Op::Removed,
                    _ => Op::Modified,
                };
                (c, op, old, val(c))
            })
            .collect()
    }
}

fn run_model(acts: &[Act], skew: bool, filters: &[MFilter]) {
    let (_dir, repo) = new_repo();
    let values: Vec<ObjectId> = (0..4).map(|i| blob(&repo, &format!("value {i}"))).collect();
    let c0 = repo.head_commit().unwrap();
    let mut m = Model {
        commits: vec![MCommit {
            id: c0,
            parents: vec![],
            ts: T0,
            snap: Snapshot::new(),
        }],
        index: HashMap::from([(c0, 0)]),
        branches: BTreeMap::from([("main", 0)]),
    };
    let mut last_ts = T0;
    let filters: Vec<KeyFilter> = filters.iter().map(MFilter::build).collect();
    for (step, a) in acts.iter().enumerate() {
        let dt = match a {
            Act::Commit { dt, .. } | Act::Merge { dt, .. } => *dt,
        };
        // Monotone with many ties, or skewed (parents may be newer than children).
        let ts = if skew {
            T0 + dt * 37 % 23
        } else {
            last_ts + dt % 3
        };
        last_ts = ts;
        let msg = format!("step {step}");
        let made = match a {
            Act::Commit { branch, edits, .. } => {
                let name = BRANCHES[*branch];
                if !m.branches.contains_key(name) {
                    let main_tip = m.branches["main"];
                    repo.create_branch(name, &m.commits[main_tip].id).unwrap();
                    m.branches.insert(name, main_tip);
                }
                let tip = m.branches[name];
                let mut snap = m.commits[tip].snap.clone();
                let mut es = Vec::new();
                for &(k, v) in edits {
                    let enc = model_key(k).encode();
                    match v {
                        Some(v) => {
                            snap.insert(enc.clone(), values[v]);
                            es.push(Edit::Put(enc, values[v]));
                        }
                        None => {
                            snap.remove(&enc);
                            es.push(Edit::Delete(enc));
                        }
                    }
                }
                let id = repo.commit(name, es, &sig(ts), &msg).unwrap();
                Some((name, vec![tip], snap, id))
            }
            Act::Merge { into, from, .. } => {
                let (into, from) = (BRANCHES[*into], BRANCHES[*from]);
                match (m.branches.get(into), m.branches.get(from)) {
                    (Some(&ours), Some(&theirs)) if ours != theirs => {
                        let mut snap = m.commits[ours].snap.clone();
                        let mut es = Vec::new();
                        for (k, v) in &m.commits[theirs].snap {
                            if snap.get(k) != Some(v) {
                                snap.insert(k.clone(), *v);
                                es.push(Edit::Put(k.clone(), *v));
                            }
                        }
                        let (oid, tid) = (m.commits[ours].id, m.commits[theirs].id);
                        let root = repo.tree().apply(&repo.root_of(&oid).unwrap(), es).unwrap();
                        let id = repo
                            .commit_tree(into, &oid, root, vec![oid, tid], &sig(ts), &msg)
                            .unwrap();
                        Some((into, vec![ours, theirs], snap, id))
                    }
                    _ => None,
                }
            }
        };
        let Some((branch, parents, snap, id)) = made else {
            continue;
        };
        let new = m.commits.len();
        m.index.insert(id, new);
        m.commits.push(MCommit {
            id,
            parents,
            ts,
            snap,
        });
        m.branches.insert(branch, new);
        check(&repo, &m, new, skew, &filters);
    }
}

fn check(repo: &Repo, m: &Model, new: usize, skew: bool, filters: &[KeyFilter]) {
    let nkeys = NAMESPACES.len() * PATHS.len();
    let roots: Vec<ObjectId> = m
        .commits
        .iter()
        .map(|c| repo.root_of(&c.id).unwrap())
        .collect();
    // Every key at every commit reads as the model's snapshot.
    for (i, c) in m.commits.iter().enumerate() {
        for k in 0..nkeys {
            let enc = model_key(k).encode();
            assert_eq!(
                repo.tree().get(&roots[i], &enc).unwrap(),
                c.snap.get(&enc).copied()
            );
        }
    }
    // Diffs between the new commit and every other one, unfiltered and filtered.
    for i in 0..m.commits.len() {
        let f = filters.get(i % (filters.len() + 1));
        for (a, b) in [(i, new), (new, i)] {
            let got: Vec<_> = repo
                .diff(&roots[a], &roots[b], f)
                .unwrap()
                .into_iter()
                .map(|ch| (ch.key.encode(), ch.old, ch.new))
                .collect();
            let want = model_diff(&m.commits[a].snap, &m.commits[b].snap, f);
            assert_eq!(got, want, "diff {a} -> {b} with {f:?}");
        }
    }
    let ids = |v: Vec<(ObjectId, Commit)>| -> Vec<usize> {
        v.into_iter().map(|(id, _)| m.index[&id]).collect()
    };
    let tips: Vec<usize> = m.branches.values().copied().collect();
    let id_of = |v: &[usize]| -> Vec<ObjectId> { v.iter().map(|&c| m.commits[c].id).collect() };
    // Log from each tip, from all tips, and ranges between tips.
    let mut cases: Vec<(Vec<usize>, Vec<usize>)> =
        tips.iter().map(|&t| (vec![t], vec![])).collect();
    cases.push((tips.clone(), vec![]));
    for &a in &tips {
        for &b in &tips {
            if a != b {
                cases.push((vec![b], vec![a]));
            }
        }
    }
    for (inc, exc) in &cases {
        let want = m.log(inc, exc, None);
        let got = ids(repo.log(&id_of(inc), &id_of(exc), None, None).unwrap());
        assert_eq!(got, want, "log {inc:?} ^{exc:?}");
        if !skew {
            for n in 1..=want.len() + 1 {
                let got = ids(repo.log(&id_of(inc), &id_of(exc), None, Some(n)).unwrap());
                assert_eq!(got, want[..n.min(want.len())], "log -n {n}");
            }
        }
        for f in filters {
            let want = m.log(inc, exc, Some(f));
            let got = ids(repo.log(&id_of(inc), &id_of(exc), Some(f), None).unwrap());
            assert_eq!(got, want, "log {inc:?} ^{exc:?} filtered by {f:?}");
            if !skew && want.len() > 1 {
                let got = ids(repo
                    .log(&id_of(inc), &id_of(exc), Some(f), Some(2))
                    .unwrap());
                assert_eq!(got, want[..2]);
            }
        }
    }
    // Blame of every key at the new commit and at each tip.
    let mut ats = tips.clone();
    ats.push(new);
    ats.dedup();
    for &at in &ats {
        for k in 0..nkeys {
            let key = model_key(k);
            let want = m.blame(at, &key.encode());
            let got: Vec<_> = repo
                .blame(&m.commits[at].id, &key, None)
                .unwrap()
                .into_iter()
                .map(|e| {
                    assert_eq!(e.info, repo.read_commit(&e.commit).unwrap());
                    (m.index[&e.commit], e.change, e.old, e.new)
                })
                .collect();
            assert_eq!(got, want, "blame {key} at {at}");
            if !skew {
                for n in 1..=want.len() {
                    let got = repo.blame(&m.commits[at].id, &key, Some(n)).unwrap();
                    assert_eq!(got.len(), n);
                    assert!(got
                        .iter()
                        .zip(&want)
                        .all(|(g, w)| m.index[&g.commit] == w.0));
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    #[test]
    fn history_matches_model(
        acts in prop::collection::vec(act(), 1..14),
        skew in prop::bool::weighted(0.25),
        filters in prop::collection::vec(mfilter(), 1..3),
    ) {
        run_model(&acts, skew, &filters);
    }
}
