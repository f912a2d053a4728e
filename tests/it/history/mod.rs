//! History read side on a real sled store: revision resolution, diff, log and blame, with
//! golden cases and a model-based property test.

mod model;

use std::collections::{BTreeMap, HashMap};

use memoir::glob::KeyGlobs;
use memoir::key::Key;
use memoir::object::{Blob, Object, ObjectId};
use memoir::prolly::{Edit, NodeStore};
use memoir::repo::{
    commit_id, line_stat, unified_diff, Commit, Head, KeyFilter, LineStat, Op, Repo, RepoError,
    Signature,
};
use memoir::store::{OpenOptions, RefStore, Store};

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
        Err(RepoError::RevisionNotFound { asked, .. }) => asked,
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
        Err(RepoError::RevisionNotFound { .. })
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

    // A new branch may not read as a commit id; one an older store holds still wins over
    // the hex prefix it spells.
    let hexname = c2.short(6);
    assert!(matches!(
        repo.create_branch(&hexname, &c0),
        Err(RepoError::BadName(_))
    ));
    repo.store()
        .cas_ref(&format!("refs/heads/{hexname}"), None, Some(c0.as_bytes()))
        .unwrap()
        .unwrap();
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
        Err(RepoError::RevisionNotFound { asked, .. }) if asked == "main..nope"
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

/// Long first-parent walks (`~N`, `@{DATE}` far back) go on in the commit graph; they
/// name the same commits as reading the commits one by one, across a merge, with the
/// graph cache missing, in memory, or on disk only.
#[test]
fn long_walks_back_agree_with_the_commits() {
    let (dir, repo) = new_repo();
    let now = T0 + 86_400 * 30;
    let k = key("default", "a.b");
    let mut chain = vec![repo.head_commit().unwrap()];
    for i in 1..=60i64 {
        if i == 30 {
            repo.create_branch("side", chain.last().unwrap()).unwrap();
            for j in 0..40 {
                repo.commit(
                    "side",
                    vec![put(&repo, &key("default", "s.t"), &j.to_string())],
                    &sig(T0 + 10 * i + j),
                    "side",
                )
                .unwrap();
            }
            chain.push(merge(&repo, "main", "side", vec![], T0 + 10 * i + 5));
            continue;
        }
        let c = repo
            .commit(
                "main",
                vec![put(&repo, &k, &i.to_string())],
                &sig(T0 + 10 * i),
                "step",
            )
            .unwrap();
        chain.push(c);
    }
    let check = |repo: &Repo| {
        let r = |s: &str| repo.resolve(s, now).unwrap();
        let top = chain.len() - 1;
        for n in 0..=top {
            assert_eq!(r(&format!("main~{n}")), chain[top - n], "main~{n}");
        }
        assert_eq!(r(&format!("main~{}~{}", top - 40, 40)), chain[0]);
        assert_eq!(
            not_found(repo.resolve(&format!("main~{}", top + 1), now)),
            format!("main~{}", top + 1)
        );
        // The side branch's 40 commits, then its fork point and what came before.
        let m = top - 30;
        assert_eq!(r(&format!("main~{m}^2~39")), r("side~39"));
        assert_eq!(r(&format!("main~{m}^2~40")), chain[29]);
        assert_eq!(r(&format!("main~{m}^2~45")), chain[24]);
        for (i, c) in chain.iter().enumerate().skip(1) {
            let i = i as i64;
            // The commit of step i is the last at or before its own time, and at or before
            // just before the next step's.
            assert_eq!(r(&format!("main@{{@{}}}", T0 + 10 * i + 9)), *c, "step {i}");
        }
        assert_eq!(r(&format!("main@{{@{}}}", T0 + 1)), chain[0]);
        assert_eq!(
            not_found(repo.resolve(&format!("main@{{@{}}}", T0 - 1), now)),
            format!("main@{{@{}}}", T0 - 1)
        );
    };
    check(&repo);
    check(&repo);
    let path = dir.path().join("store");
    drop(repo);
    let repo = Repo::open(Store::open(&path, &OpenOptions::default()).unwrap()).unwrap();
    check(&repo);
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
