//! History read side on a real sled store: revision resolution, diff, log and blame, with
//! golden cases and a model-based property test.

use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet};

use memoir::glob::KeyGlobs;
use memoir::key::Key;
use memoir::object::{Blob, Object, ObjectId};
use memoir::prolly::{Edit, NodeStore};
use memoir::repo::{
    commit_id, line_stat, unified_diff, Commit, Head, KeyFilter, LineStat, Op, Repo, RepoError,
    Signature,
};
use memoir::store::{OpenOptions, Store};
use proptest::prelude::*;

const T0: i64 = 1_700_000_000; // 2023-11-14T22:13:20Z

fn sig(t: i64) -> Signature {
    Signature::new("Tester <t@example.org>", t)
}

fn new_repo() -> (tempfile::TempDir, Repo) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::create(&dir.path().join("store"), &OpenOptions::default()).unwrap();
    let repo = Repo::init(store, &sig(T0), "Initialize store").unwrap();
    (dir, repo)
}

fn blob(repo: &Repo, content: &str) -> ObjectId {
    repo.objects()
        .write(&Blob(content.as_bytes().to_vec()))
        .unwrap()
}

fn key(ns: &str, path: &str) -> Key {
    Key::new(ns, path).unwrap()
}

fn put(repo: &Repo, k: &Key, content: &str) -> Edit {
    Edit::Put(k.encode(), blob(repo, content))
}

fn text(repo: &Repo, id: &ObjectId) -> String {
    String::from_utf8(repo.objects().read::<Blob>(id).unwrap().0).unwrap()
}

/// Commits a merge of `from` into `into` whose tree is `into`'s tree with `edits` applied.
fn merge(repo: &Repo, into: &str, from: &str, edits: Vec<Edit>, t: i64) -> ObjectId {
    let ours = repo.branch_tip(into).unwrap();
    let theirs = repo.branch_tip(from).unwrap();
    let root = repo
        .tree()
        .apply(&repo.root_of(&ours).unwrap(), edits)
        .unwrap();
    repo.commit_tree(
        into,
        &ours,
        root,
        vec![ours, theirs],
        &sig(t),
        &format!("Merge branch '{from}' into {into}"),
    )
    .unwrap()
}

fn not_found(r: Result<ObjectId, RepoError>) -> String {
    match r {
        Err(RepoError::RevisionNotFound(s)) => s,
        other => panic!("expected not found, got {other:?}"),
    }
}

#[test]
fn resolution_of_names_ancestors_parents_and_dates() {
    let (_dir, repo) = new_repo();
    let now = T0 + 86_400 * 30;
    let k = key("default", "a.b");
    let c0 = repo.head_commit().unwrap();
    let c1 = repo
        .commit("main", vec![put(&repo, &k, "1")], &sig(T0 + 100), "one")
        .unwrap();
    let c2 = repo
        .commit("main", vec![put(&repo, &k, "2")], &sig(T0 + 200), "two")
        .unwrap();
    repo.create_branch("side", &c1).unwrap();
    let s1 = repo
        .commit(
            "side",
            vec![put(&repo, &key("default", "x.y"), "s")],
            &sig(T0 + 300),
            "side",
        )
        .unwrap();
    let m = merge(
        &repo,
        "main",
        "side",
        vec![put(&repo, &key("default", "x.y"), "s")],
        T0 + 400,
    );

    let r = |s: &str| repo.resolve(s, now).unwrap();
    assert_eq!(r("main"), m);
    assert_eq!(r("HEAD"), m);
    assert_eq!(r("@"), m);
    assert_eq!(r("side"), s1);
    assert_eq!(r("main~"), c2);
    assert_eq!(r("main~1"), c2);
    assert_eq!(r("main~2"), c1);
    assert_eq!(r("HEAD~3"), c0);
    assert_eq!(r("main^"), c2);
    assert_eq!(r("main^1"), c2);
    assert_eq!(r("main^2"), s1);
    assert_eq!(r("main^0"), m);
    assert_eq!(r("main^2~1"), c1);
    assert_eq!(r("main^2^"), c1);
    assert_eq!(r(&c2.to_hex()), c2);
    assert_eq!(r(&c2.short(8)), c2);
    assert_eq!(r(&c2.short(7).to_uppercase()), c2);
    assert_eq!(r(&format!("{}~1", c2.short(10))), c1);
    // Dates: the last commit at or before that time on the first-parent chain.
    assert_eq!(r(&format!("main@{{@{}}}", T0 + 400)), m);
    assert_eq!(r(&format!("main@{{@{}}}", T0 + 399)), c2);
    assert_eq!(r(&format!("main@{{@{}}}", T0 + 250)), c2);
    assert_eq!(r(&format!("main@{{@{}}}", T0 + 50)), c0);
    assert_eq!(r(&format!("main@{{@{T0}}}")), c0);
    assert_eq!(r("main@{2023-11-14}"), m);
    assert_eq!(r(&format!("side@{{@{}}}", T0 + 350)), s1);
    assert_eq!(r(&format!("main^2@{{@{}}}", T0 + 150)), c1);
    assert_eq!(r("main@{now}"), m);

    // Not found, naming what was asked.
    assert_eq!(not_found(repo.resolve("nope", now)), "nope");
    assert_eq!(not_found(repo.resolve("main~4", now)), "main~4");
    assert_eq!(not_found(repo.resolve("main^3", now)), "main^3");
    assert_eq!(not_found(repo.resolve("HEAD~1^2", now)), "HEAD~1^2");
    assert_eq!(
        not_found(repo.resolve(&format!("main@{{@{}}}", T0 - 1), now)),
        format!("main@{{@{}}}", T0 - 1)
    );
    assert!(matches!(
        repo.resolve("main@{2023-11-13}", now),
        Err(RepoError::RevisionNotFound(_))
    ));
    // Fewer than 4 digits is not a prefix; a well-formed id nobody has is not found.
    assert_eq!(not_found(repo.resolve(&c2.short(3), now)), c2.short(3));
    let absent = "0".repeat(64);
    assert_eq!(not_found(repo.resolve(&absent, now)), absent);
    // Malformed revisions are parse errors.
    assert!(matches!(
        repo.resolve("main~x", now),
        Err(RepoError::BadRevision(_))
    ));
    assert!(matches!(
        repo.resolve("", now),
        Err(RepoError::BadRevision(_))
    ));
    assert!(matches!(
        repo.resolve("main@{not a date}", now),
        Err(RepoError::BadRevision(_))
    ));

    // A branch name wins over a hex prefix.
    let hexname = c2.short(6);
    repo.create_branch(&hexname, &c0).unwrap();
    assert_eq!(r(&hexname), c0);
    assert_eq!(r(&c2.short(7)), c2);

    // Ranges.
    assert_eq!(repo.resolve_range("main", now).unwrap(), (None, m));
    assert_eq!(
        repo.resolve_range(&format!("{}..main", c1.short(12)), now)
            .unwrap(),
        (Some(c1), m)
    );
    assert_eq!(repo.resolve_range("side..", now).unwrap(), (Some(s1), m));
    assert!(matches!(
        repo.resolve_range("main...side", now),
        Err(RepoError::BadRevision(_))
    ));
    assert!(matches!(
        repo.resolve_range("main..nope", now),
        Err(RepoError::RevisionNotFound(s)) if s == "main..nope"
    ));
    assert_eq!(
        repo.root_at("main~1", now).unwrap(),
        repo.root_of(&c2).unwrap()
    );

    // Detached HEAD.
    repo.set_head(&Head::Detached(c1)).unwrap();
    assert_eq!(r("HEAD"), c1);
    assert_eq!(r("HEAD~1"), c0);
    assert_eq!(r("main"), m);
}

#[test]
fn prefixes_count_only_commits_and_ambiguity_lists_candidates() {
    let (_dir, repo) = new_repo();
    let c0 = repo.head_commit().unwrap();
    let now = T0;
    // Generate commits (computing ids without storing) until two share 4 hex digits.
    let mut seen: HashMap<String, Commit> = HashMap::new();
    let mut pair = None;
    for i in 0.. {
        let c = Commit {
            root: NodeStore::empty_id(),
            parents: vec![c0],
            author: "Tester".into(),
            timestamp: T0 + i,
            message: format!("attempt {i}"),
            metadata: BTreeMap::new(),
        };
        let id = commit_id(&c);
        let p = id.short(4);
        if p == c0.short(4) {
            continue;
        }
        if let Some(other) = seen.get(&p) {
            pair = Some((other.clone(), c));
            break;
        }
        seen.insert(p, c);
    }
    let (a, b) = pair.unwrap();
    let ia = repo.objects().write(&a).unwrap();
    let ib = repo.objects().write(&b).unwrap();
    let prefix = ia.short(4);
    assert_eq!(ib.short(4), prefix);
    let mut cands = vec![ia.to_hex(), ib.to_hex()];
    cands.sort();
    match repo.resolve(&prefix, now) {
        Err(RepoError::AmbiguousRevision {
            prefix: p,
            candidates,
        }) => {
            assert_eq!(p, prefix);
            assert_eq!(candidates, cands);
        }
        other => panic!("expected ambiguity, got {other:?}"),
    }
    let msg = repo.resolve(&prefix, now).unwrap_err().to_string();
    assert!(msg.contains(&cands[0]) && msg.contains(&cands[1]), "{msg}");
    // A longer prefix that tells them apart resolves.
    let n = (4..64).find(|&n| ia.short(n) != ib.short(n)).unwrap();
    assert_eq!(repo.resolve(&ia.short(n), now).unwrap(), ia);
    assert_eq!(repo.resolve(&ib.short(n), now).unwrap(), ib);
    assert_eq!(repo.resolve(&format!("{}^", ia.short(n)), now).unwrap(), c0);

    // A blob sharing the first commit's 4 hex digits does not make it ambiguous.
    let target = c0.short(4);
    let content = (0u64..)
        .map(|i| format!("blob {i}").into_bytes())
        .find(|c| Blob(c.clone()).to_bytes_and_id().0.short(4) == target)
        .unwrap();
    let bid = repo.objects().write(&Blob(content)).unwrap();
    assert_eq!(bid.short(4), target);
    assert!(repo.objects().resolve_prefix(&target).is_err());
    assert_eq!(repo.resolve(&target, now).unwrap(), c0);
    // A prefix naming only a non-commit object is not found.
    assert_eq!(not_found(repo.resolve(&bid.short(12), now)), bid.short(12));
    assert_eq!(not_found(repo.resolve(&bid.to_hex(), now)), bid.to_hex());
}

#[test]
fn diff_is_sorted_and_filtered_and_texts_diff() {
    let (_dir, repo) = new_repo();
    let base = repo.head_commit().unwrap();
    let edits = vec![
        put(&repo, &key("default", "a.x"), "1"),
        put(&repo, &key("default", "a.y"), "2"),
        put(&repo, &key("default", "b"), "3"),
        put(&repo, &key("work", "a.x"), "4"),
        put(&repo, &key("work:sub", "c"), "5"),
        put(&repo, &key("zeta", "a.x"), "6"),
    ];
    let c1 = repo.commit("main", edits, &sig(T0 + 1), "fill").unwrap();
    let edits = vec![
        put(&repo, &key("default", "a.x"), "1'"),
        Edit::Delete(key("default", "b").encode()),
        put(&repo, &key("default", "c"), "new"),
        Edit::Delete(key("work", "a.x").encode()),
        put(&repo, &key("work", "q"), "7"),
        put(&repo, &key("work:sub", "c"), "5'"),
        put(&repo, &key("zeta", "a.x"), "6'"),
    ];
    let c2 = repo.commit("main", edits, &sig(T0 + 2), "change").unwrap();
    let (r0, r1, r2) = (
        repo.root_of(&base).unwrap(),
        repo.root_of(&c1).unwrap(),
        repo.root_of(&c2).unwrap(),
    );
    let d = repo.diff(&r1, &r2, None).unwrap();
    let got: Vec<(String, Op)> = d.iter().map(|c| (c.key.to_string(), c.op())).collect();
    let want = [
        ("default:a.x", Op::Modified),
        ("default:b", Op::Removed),
        ("default:c", Op::Added),
        ("work:a.x", Op::Removed),
        ("work:q", Op::Added),
        ("work:sub:c", Op::Modified),
        ("zeta:a.x", Op::Modified),
    ];
    let want: Vec<(String, Op)> = want.iter().map(|(k, o)| (k.to_string(), *o)).collect();
    assert_eq!(got, want);
    assert_eq!(text(&repo, d[0].old.as_ref().unwrap()), "1");
    assert_eq!(text(&repo, d[0].new.as_ref().unwrap()), "1'");
    assert_eq!(d[1].new, None);
    assert_eq!(d[2].old, None);
    // Reverse direction swaps old and new.
    let back = repo.diff(&r2, &r1, None).unwrap();
    assert_eq!(back.len(), d.len());
    assert!(back
        .iter()
        .zip(&d)
        .all(|(b, f)| b.key == f.key && b.old == f.new && b.new == f.old));
    assert!(repo.diff(&r2, &r2, None).unwrap().is_empty());
    assert_eq!(repo.diff(&r0, &r1, None).unwrap().len(), 6);

    let names = |f: &KeyFilter| -> Vec<String> {
        repo.diff(&r1, &r2, Some(f))
            .unwrap()
            .iter()
            .map(|c| c.key.to_string())
            .collect()
    };
    // Namespace `work` does not include `work:sub`.
    let work = KeyFilter::new(Some("work"), KeyGlobs::all());
    assert_eq!(names(&work), ["work:a.x", "work:q"]);
    let sub = KeyFilter::new(Some("work:sub"), KeyGlobs::all());
    assert_eq!(names(&sub), ["work:sub:c"]);
    let ax = KeyFilter::new(None, KeyGlobs::new(&["a.*"]).unwrap());
    assert_eq!(names(&ax), ["default:a.x", "work:a.x", "zeta:a.x"]);
    let ax_default = KeyFilter::new(Some("default"), KeyGlobs::new(&["a.*", "c"]).unwrap());
    assert_eq!(names(&ax_default), ["default:a.x", "default:c"]);
    let none = KeyFilter::new(Some("nothing"), KeyGlobs::all());
    assert!(names(&none).is_empty());
    assert!(work.matches(&key("work", "q")) && !work.matches(&key("work:sub", "c")));
    assert!(work.matches_encoded(&key("work", "q").encode()));
    assert!(!work.matches_encoded(&key("work:sub", "q").encode()));

    assert_eq!(
        unified_diff("a\nb\nc\n", "a\nB\nc\nd\n", "old", "new"),
        "--- old\n+++ new\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n c\n+d\n"
    );
    assert_eq!(unified_diff("same\n", "same\n", "a", "b"), "");
    // Record contents have no final newline: lines compare whole, nothing is marked.
    assert_eq!(
        unified_diff("v1", "v1\nv2", "a", "b"),
        "--- a\n+++ b\n@@ -1 +1,2 @@\n v1\n+v2\n"
    );
    assert_eq!(
        line_stat("v1", "v1\nv2"),
        LineStat {
            added: 1,
            removed: 0
        }
    );
    assert_eq!(
        line_stat("a\nb\nc\n", "a\nB\nc\nd\n"),
        LineStat {
            added: 2,
            removed: 1
        }
    );
}

#[test]
fn blame_follows_merges_and_attributes_lines() {
    let (_dir, repo) = new_repo();
    let k = key("default", "notes.todo");
    let other = key("default", "other");
    let c1 = repo
        .commit(
            "main",
            vec![put(&repo, &k, "line1\nline2\n")],
            &sig(T0 + 1),
            "c1",
        )
        .unwrap();
    repo.create_branch("side", &c1).unwrap();
    let c2 = repo
        .commit(
            "main",
            vec![put(&repo, &k, "line1\nline2\nline3\n")],
            &sig(T0 + 2),
            "c2",
        )
        .unwrap();
    let s1 = repo
        .commit(
            "side",
            vec![put(&repo, &k, "line0\nline1\nline2\n")],
            &sig(T0 + 3),
            "s1",
        )
        .unwrap();
    // An unrelated commit in between changes nothing for the key.
    let c3 = repo
        .commit("main", vec![put(&repo, &other, "x")], &sig(T0 + 4), "c3")
        .unwrap();
    let m = merge(
        &repo,
        "main",
        "side",
        vec![put(&repo, &k, "line0\nline1\nline2\nline3\n")],
        T0 + 5,
    );
    let entries = repo.blame(&m, &k, None).unwrap();
    let ids: Vec<ObjectId> = entries.iter().map(|e| e.commit).collect();
    assert_eq!(ids, vec![m, s1, c2, c1]);
    let ops: Vec<Op> = entries.iter().map(|e| e.change).collect();
    assert_eq!(
        ops,
        vec![Op::Modified, Op::Modified, Op::Modified, Op::Added]
    );
    assert_eq!(entries[3].old, None);
    assert_eq!(entries[0].info.message, "Merge branch 'side' into main");
    assert_eq!(entries[0].old, entries[2].new);
    assert_ne!(c3, m);
    assert_eq!(repo.blame(&m, &k, Some(2)).unwrap().len(), 2);
    assert_eq!(repo.blame(&m, &k, Some(0)).unwrap().len(), 0);
    assert_eq!(repo.blame(&m, &k, Some(10)).unwrap().len(), 4);
    assert!(repo
        .blame(&m, &key("default", "never.written"), None)
        .unwrap()
        .is_empty());
    let mut calls = 0;
    let lines = repo
        .blame_lines(&m, &k, &mut |v| {
            calls += 1;
            Ok(text(&repo, v))
        })
        .unwrap();
    let got: Vec<(&str, ObjectId)> = lines.iter().map(|l| (&l.line[..], l.commit)).collect();
    assert_eq!(
        got,
        vec![("line0", s1), ("line1", c1), ("line2", c1), ("line3", c2)]
    );
    assert_eq!(calls, 4);

    // A merge that takes the side's value is explained by the side's history only.
    let s2 = repo
        .commit(
            "side",
            vec![put(&repo, &k, "line1\nside\n")],
            &sig(T0 + 6),
            "s2",
        )
        .unwrap();
    let m2 = merge(
        &repo,
        "main",
        "side",
        vec![put(&repo, &k, "line1\nside\n")],
        T0 + 7,
    );
    let ids: Vec<ObjectId> = repo
        .blame(&m2, &k, None)
        .unwrap()
        .iter()
        .map(|e| e.commit)
        .collect();
    assert_eq!(ids, vec![s2, s1, c1]);
    let lines = repo
        .blame_lines(&m2, &k, &mut |v| Ok(text(&repo, v)))
        .unwrap();
    let got: Vec<(&str, ObjectId)> = lines.iter().map(|l| (&l.line[..], l.commit)).collect();
    assert_eq!(got, vec![("line1", c1), ("side", s2)]);

    // Removal, then re-adding the same value.
    let c5 = repo
        .commit("main", vec![Edit::Delete(k.encode())], &sig(T0 + 8), "rm")
        .unwrap();
    let c6 = repo
        .commit(
            "main",
            vec![put(&repo, &k, "line1\nside\n")],
            &sig(T0 + 9),
            "back",
        )
        .unwrap();
    let e = repo.blame(&c6, &k, None).unwrap();
    let ids: Vec<ObjectId> = e.iter().map(|e| e.commit).collect();
    assert_eq!(ids, vec![c6, c5, s2, s1, c1]);
    assert_eq!((e[0].change, e[1].change), (Op::Added, Op::Removed));
    assert!(repo
        .blame_lines(&c5, &k, &mut |v| Ok(text(&repo, v)))
        .unwrap()
        .is_empty());
    let lines = repo
        .blame_lines(&c6, &k, &mut |v| Ok(text(&repo, v)))
        .unwrap();
    assert!(lines.iter().all(|l| l.commit == c6));
}

#[test]
fn log_orders_topologically_even_with_clock_skew() {
    let (_dir, repo) = new_repo();
    let c0 = repo.head_commit().unwrap();
    let k = key("default", "k");
    // Parents newer than children: a clock that went backwards.
    let a = repo
        .commit("main", vec![put(&repo, &k, "a")], &sig(T0 + 100), "a")
        .unwrap();
    let b = repo
        .commit("main", vec![put(&repo, &k, "b")], &sig(T0 + 10), "b")
        .unwrap();
    repo.create_branch("side", &a).unwrap();
    let s = repo
        .commit(
            "side",
            vec![put(&repo, &key("default", "s"), "s")],
            &sig(T0 + 50),
            "s",
        )
        .unwrap();
    let c = repo
        .commit("main", vec![put(&repo, &k, "c")], &sig(T0 + 5), "c")
        .unwrap();
    let tip = repo.branch_tip("main").unwrap();
    assert_eq!(tip, c);
    let ids = |v: Vec<(ObjectId, Commit)>| v.into_iter().map(|(i, _)| i).collect::<Vec<_>>();
    assert_eq!(ids(repo.log(&[c], &[], None, None).unwrap()), [c, b, a, c0]);
    for n in 1..=4 {
        assert_eq!(
            ids(repo.log(&[c], &[], None, Some(n)).unwrap()),
            [c, b, a, c0][..n]
        );
    }
    // Two tips: newest first when both are ready.
    assert_eq!(
        ids(repo.log(&[c, s], &[], None, None).unwrap()),
        [s, c, b, a, c0]
    );
    assert_eq!(ids(repo.log(&[c, s], &[], None, Some(2)).unwrap()), [s, c]);
    // Exclusion.
    assert_eq!(ids(repo.log(&[c], &[a], None, None).unwrap()), [c, b]);
    assert_eq!(ids(repo.log(&[s], &[c], None, Some(5)).unwrap()), [s]);
    assert!(repo.log(&[a], &[c], None, None).unwrap().is_empty());
    assert!(repo.log(&[c], &[], None, Some(0)).unwrap().is_empty());
    // Filtered: only the commits touching `s`.
    let f = KeyFilter::new(None, KeyGlobs::new(&["s"]).unwrap());
    assert_eq!(ids(repo.log(&[c, s], &[], Some(&f), None).unwrap()), [s]);

    // t1 is an ancestor of t2 through y, which is newer than both: the full order is
    // t2, y, t1, ...; limited walks see the skew and read everything first.
    repo.create_branch("x", &c).unwrap();
    let t1 = c;
    let y = repo
        .commit("x", vec![put(&repo, &k, "y")], &sig(T0 + 20), "y")
        .unwrap();
    let t2 = repo
        .commit("x", vec![put(&repo, &k, "t2")], &sig(T0 + 1), "t2")
        .unwrap();
    let full = ids(repo.log(&[t1, t2], &[], None, None).unwrap());
    assert_eq!(full, [t2, y, t1, b, a, c0]);
    for n in 1..=6 {
        assert_eq!(
            ids(repo.log(&[t1, t2], &[], None, Some(n)).unwrap()),
            full[..n]
        );
    }
}

// ---------------------------------------------------------------------------------------
// Model-based property test.

const NAMESPACES: [&str; 2] = ["default", "work"];
const PATHS: [&str; 4] = ["a.x", "a.y", "b", "c.d.e"];
const BRANCHES: [&str; 3] = ["main", "b1", "b2"];
const GLOBS: [&str; 4] = ["a.*", "b", "*.e", "?.?"];

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
