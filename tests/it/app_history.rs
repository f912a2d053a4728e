//! The application layer's history, branch, merge, proof and maintenance operations, called
//! directly on a [`Memoir`] handle (no command line): outcomes, their JSON and exit codes.

use memoir::app::{
    exit, Clock, DiffQuery, KeyScope, LogQuery, MergeRequest, MergeResultKind, MergeStrategy,
    Options, Outcome, ReadPoint, WriteAs,
};
use memoir::key::Key;
use memoir::memory::{Entry, Record};
use memoir::prolly::Edit;
use memoir::repo::{Repo, Signature};
use memoir::store::{OpenOptions, Store};
use memoir::Memoir;

const T0: f64 = 1_767_225_600.0;

fn options() -> Options {
    Options {
        clock: Clock::fixed(T0),
        ..Options::default()
    }
}

/// A store with `main`: `a.b` = v1, `x.y` = other, `a.b` = v2 (one commit each, an hour
/// apart).
fn fixture() -> (tempfile::TempDir, Memoir) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store");
    let (m, _) = Memoir::create(&path, options(), &WriteAs::author("Tester")).unwrap();
    write(&m, "main", &[("a.b", "v1")], 1);
    write(&m, "main", &[("x.y", "other")], 2);
    write(&m, "main", &[("a.b", "v2")], 3);
    (dir, m)
}

/// One commit on `branch` (created at HEAD if missing) putting each `(path, content)`.
fn write(m: &Memoir, branch: &str, puts: &[(&str, &str)], hour: i64) {
    let repo = Repo::open(Store::open(m.path(), &OpenOptions::default()).unwrap()).unwrap();
    if repo.branch_tip(branch).is_err() {
        repo.create_branch(branch, &repo.head_commit().unwrap())
            .unwrap();
    }
    let t = T0 as i64 + hour * 3600;
    let edits = puts
        .iter()
        .map(|(path, content)| {
            let key = Key::new("default", path).unwrap();
            let rec = Record::new(&key, Entry::new(content, 0.9, t as f64), vec![]);
            let id = repo.objects().write(&rec.to_blob().unwrap()).unwrap();
            Edit::Put(key.encode(), id)
        })
        .collect();
    repo.commit(
        branch,
        edits,
        &Signature::new("Tester", t),
        &format!("write {hour}"),
    )
    .unwrap();
}

#[test]
fn log_blame_diff_and_time_travel() {
    let (_dir, m) = fixture();
    let log = m.log(&LogQuery::default()).unwrap();
    assert_eq!(log.count, 4);
    assert_eq!(log.commits[0].subject(), "write 3");
    let json = log.to_json();
    assert_eq!(json["commits"][0]["hash"], log.commits[0].id.to_hex());
    assert_eq!(json["commits"][0]["parents"][0], log.commits[1].id.to_hex());
    assert_eq!(json["commits"][0]["date"], "2026-01-01T03:00:00+00:00");
    let filtered = m
        .log(&LogQuery {
            scope: KeyScope {
                namespace: None,
                keys: vec!["a.*".into()],
            },
            ..LogQuery::default()
        })
        .unwrap();
    assert_eq!(filtered.count, 2);
    let range = format!("{}..HEAD", log.commits[2].id.to_hex());
    assert_eq!(
        m.log(&LogQuery {
            rev: Some(range),
            ..LogQuery::default()
        })
        .unwrap()
        .count,
        2
    );
    let err = m
        .log(&LogQuery {
            rev: Some("nope~3".into()),
            ..LogQuery::default()
        })
        .unwrap_err();
    assert_eq!(err.code(), exit::NOT_FOUND);

    let b = m
        .blame("a.b", None, &ReadPoint::head(), None, true)
        .unwrap();
    assert_eq!(b.full_key, "default:a.b");
    assert_eq!(b.entries.len(), 2);
    assert_eq!(b.entries[1].operation, "added");
    let lines = b.lines.as_ref().unwrap();
    assert_eq!(
        (lines[0].line.as_str(), lines[0].commit),
        ("v2", b.entries[0].commit)
    );
    let json = b.to_json();
    assert_eq!(json["lines"][0]["commit"], b.entries[0].commit.to_hex());
    assert_eq!(json["entries"][0]["source"], serde_json::Value::Null);
    // Without lines, the JSON has no `lines` at all; a key never written has no entries.
    let never = m
        .blame("never.written", None, &ReadPoint::head(), None, false)
        .unwrap();
    assert!(never.entries.is_empty());
    assert!(never.to_json().get("lines").is_none());

    let d = m.diff(&DiffQuery::default()).unwrap();
    assert_eq!((d.from_rev.as_str(), d.to_rev.as_str()), ("HEAD~1", "HEAD"));
    assert_eq!(d.count, 1);
    let json = d.to_json();
    assert_eq!(json["changes"][0]["old"]["content"], "v1");
    assert!(json.get("stats").is_none());
    assert!(json["changes"][0].get("patch").is_none());
    let d = m
        .diff(&DiffQuery {
            from: Some("HEAD~3..".into()),
            stat: true,
            patch: true,
            ..DiffQuery::default()
        })
        .unwrap();
    assert_eq!(d.to_rev, "HEAD");
    assert_eq!(d.count, 2);
    let stats = d.stats.unwrap();
    assert_eq!((stats.added, stats.modified), (2, 0));
    assert!(d.changes[0].patch.as_ref().unwrap().contains("+v2"));
    // Names only: the same changes, in the same order, with no record read; a stat or a
    // patch still reads them.
    let names = |stat: bool| {
        m.diff(&DiffQuery {
            from: Some("HEAD~3..".into()),
            stat,
            names_only: true,
            ..DiffQuery::default()
        })
        .unwrap()
    };
    let listed = names(false);
    assert_eq!(listed.count, d.count);
    for (a, b) in listed.changes.iter().zip(&d.changes) {
        assert_eq!((a.full_key(), a.op), (b.full_key(), b.op));
        assert!(a.old.is_none() && a.new.is_none());
    }
    let counted = names(true);
    assert_eq!(counted.stats.unwrap().lines_added, stats.lines_added);
    assert!(counted.changes[0].new.is_some());
    let bad = m
        .diff(&DiffQuery {
            scope: KeyScope {
                namespace: Some("Bad NS".into()),
                keys: vec![],
            },
            ..DiffQuery::default()
        })
        .unwrap_err();
    assert_eq!(bad.code(), exit::ERROR);

    let t = m.time_travel("HEAD~2", None).unwrap();
    assert_eq!(t.branch, format!("time-travel-{}", t.commit.short(8)));
    assert_eq!(
        m.status().unwrap().branch.as_deref(),
        Some(t.branch.as_str())
    );
    assert_eq!(m.time_travel("HEAD~9", None).unwrap_err().code(), 2);
}

#[test]
fn branches_checkout_and_delete() {
    let (_dir, m) = fixture();
    let list = m.branches().unwrap();
    assert_eq!(
        list.to_json(),
        serde_json::json!({"branches": ["main"], "current": "main"})
    );
    let side = m.create_branch("side", Some("HEAD~1")).unwrap();
    assert_eq!(side.to_json()["commit"], side.commit.to_hex());
    assert_eq!(m.create_branch("side", None).unwrap_err().code(), 1);
    assert_eq!(m.create_branch("x", Some("nosuch")).unwrap_err().code(), 2);
    // HEAD contains side's tip: -d deletes it.
    assert_eq!(m.delete_branch("side", false).unwrap().deleted, "side");
    assert_eq!(m.delete_branch("side", false).unwrap_err().code(), 2);
    assert_eq!(m.delete_branch("main", true).unwrap_err().code(), 1);

    write(&m, "ahead", &[("n.m", "new")], 4);
    let err = m.delete_branch("ahead", false).unwrap_err();
    assert!(err.to_string().contains("not merged"), "{err}");
    let c = m.checkout("ahead", false).unwrap();
    assert_eq!((c.branch.as_deref(), c.created), (Some("ahead"), false));
    let c = m.checkout("fresh", true).unwrap();
    assert!(c.created);
    assert_eq!(m.checkout("fresh", true).unwrap_err().code(), 1);
    let c = m.checkout(&c.commit.short(12), false).unwrap();
    assert!(c.detached);
    assert_eq!(c.to_json()["branch"], serde_json::Value::Null);
    let list = m.branches().unwrap();
    assert_eq!(list.current, None);
    assert_eq!(list.head, c.commit);
    assert_eq!(m.checkout("nosuch", false).unwrap_err().code(), 2);
    // Detached at fresh's tip: fresh is merged into HEAD.
    assert_eq!(m.delete_branch("fresh", false).unwrap().deleted, "fresh");
}

#[test]
fn merge_kinds_strategies_and_codes() {
    let (_dir, m) = fixture();
    let who = WriteAs::author("Merger");
    let req = |source: &str, strategy, ff_only| MergeRequest {
        source: source.into(),
        into: None,
        strategy,
        ff_only,
    };
    write(&m, "side", &[("s.t", "side only")], 4);
    let up = m.merge(&req("HEAD~1", None, false), &who).unwrap();
    assert_eq!(up.kind, MergeResultKind::UpToDate);
    let ff = m.merge(&req("side", None, true), &who).unwrap();
    assert_eq!(ff.kind, MergeResultKind::FastForward);
    assert_eq!(ff.to_json()["kind"], "fast_forward");

    write(&m, "main", &[("k", "ours")], 5);
    write(&m, "side", &[("k", "theirs")], 6);
    let conflicted = m.merge(&req("side", None, false), &who).unwrap();
    assert_eq!(conflicted.kind, MergeResultKind::Conflicted);
    assert_eq!(conflicted.exit_code(), exit::CONFLICT);
    assert_eq!(conflicted.conflicts, ["default:k"]);
    let json = conflicted.to_json();
    assert_eq!(
        (json["success"].clone(), json["strategy"].clone()),
        (false.into(), "none".into())
    );
    assert_eq!(json["commit_hash"], serde_json::Value::Null);
    let err = m.merge(&req("side", None, true), &who).unwrap_err();
    assert_eq!(err.code(), exit::NON_FAST_FORWARD);
    let merged = m
        .merge(&req("side", Some(MergeStrategy::Union), false), &who)
        .unwrap();
    assert_eq!(merged.kind, MergeResultKind::Merge);
    assert_eq!(merged.exit_code(), exit::OK);
    assert_eq!(merged.strategy, "union");
    assert_eq!(merged.message, "Merge branch 'side' into main");
    let got = m.get(&["k".into()], None, &ReadPoint::head()).unwrap();
    let content = got.items[0].record.as_ref().unwrap().content();
    assert!(
        content.contains("ours") && content.contains("theirs"),
        "{content}"
    );
    let log = m.log(&LogQuery::default()).unwrap();
    assert_eq!(log.commits[0].parents.len(), 2);
    assert_eq!(log.commits[0].author, "Merger");

    let missing = MergeRequest {
        into: Some("nosuch".into()),
        ..req("side", None, false)
    };
    assert_eq!(m.merge(&missing, &who).unwrap_err().code(), 2);
}

#[test]
fn proof_verify_fsck_and_gc() {
    let (_dir, m) = fixture();
    let p = m.proof("a.b", None, &ReadPoint::head()).unwrap();
    assert!(p.found);
    assert_eq!(p.proof_bytes * 2, p.proof.len());
    let v = m
        .verify(
            "a.b",
            None,
            &format!(" {}\n", p.proof),
            None,
            &ReadPoint::head(),
        )
        .unwrap();
    assert_eq!((v.found, v.value, v.root), (true, p.value, p.root));
    // Against an explicit root, with no store at all.
    let nowhere = Memoir::open("/nonexistent/memoir", options());
    let root = p.root.to_hex();
    let v = nowhere
        .verify("a.b", None, &p.proof, Some(&root), &ReadPoint::head())
        .unwrap();
    assert!(v.valid);
    let old = m.proof("a.b", None, &ReadPoint::at("HEAD~3")).unwrap();
    assert!(!old.found);
    let wrong_root = old.root.to_hex();
    let err = nowhere
        .verify("a.b", None, &p.proof, Some(&wrong_root), &ReadPoint::head())
        .unwrap_err();
    assert!(err.to_string().contains("does not check"), "{err}");
    assert_eq!(err.code(), exit::ERROR);
    for bad in ["zz", "00"] {
        assert_eq!(
            nowhere
                .verify("a.b", None, bad, Some(&root), &ReadPoint::head())
                .unwrap_err()
                .code(),
            exit::ERROR
        );
    }
    assert_eq!(
        nowhere
            .verify("a.b", None, &p.proof, Some("abc"), &ReadPoint::head())
            .unwrap_err()
            .code(),
        exit::ERROR
    );
    assert_eq!(
        nowhere
            .verify("a.b", None, &p.proof, None, &ReadPoint::head())
            .unwrap_err()
            .code(),
        exit::NOT_A_STORE
    );

    let f = m.fsck().unwrap();
    assert!(f.clean);
    assert_eq!(f.exit_code(), exit::OK);
    assert_eq!(f.to_json()["findings"], serde_json::json!([]));
    let g = m.gc().unwrap();
    assert_eq!(g.objects_removed, 0);
    assert!(g.objects_kept > 0);
}

/// A diff's JSON written straight from the outcome is, byte for byte, its value printed with
/// sorted members: for every operation, with stat and patch, names only, no change at all,
/// and records with a source, an actor, superseded entries and related keys.
#[test]
fn a_diff_written_straight_out_is_its_printed_value() {
    let (_dir, m) = fixture();
    let repo = Repo::open(Store::open(m.path(), &OpenOptions::default()).unwrap()).unwrap();
    let key = Key::new("work", "a.rich").unwrap();
    let mut first = Entry::new("line one\nline \"two\"\u{1b}", 0.25, T0 + 1.5);
    first.status = memoir::memory::Status::Superseded;
    let mut rec = Record::new(&key, first, vec!["x.y".into(), "a.b".into()]);
    let mut second = Entry::new("line one\nline three", 0.75, T0 + 2.0);
    second.source = Some("standup".into());
    second.actor = Some("agent-7".into());
    rec.entries.push(second);
    rec.confidence = 0.75;
    rec.timestamp = T0 + 2.0;
    let id = repo.objects().write(&rec.to_blob().unwrap()).unwrap();
    let edits = vec![
        Edit::Put(key.encode(), id),
        Edit::Delete(Key::new("default", "x.y").unwrap().encode()),
    ];
    repo.commit(
        "main",
        edits,
        &Signature::new("Tester", T0 as i64 + 4 * 3600),
        "rich",
    )
    .unwrap();
    drop(repo);
    write(&m, "main", &[("a.b", "v3\nmore")], 5);
    let cases = [
        ("HEAD~3", false, false, false),
        ("HEAD~3", true, false, false),
        ("HEAD~3", false, true, false),
        ("HEAD~3", true, true, false),
        ("HEAD~3", false, false, true),
        ("HEAD", false, false, false),
    ];
    for (from, stat, patch, names_only) in cases {
        let d = m
            .diff(&DiffQuery {
                from: Some(from.into()),
                stat,
                patch,
                names_only,
                ..DiffQuery::default()
            })
            .unwrap();
        let mut ops: Vec<&str> = d.changes.iter().map(|c| c.operation).collect();
        ops.sort_unstable();
        if from == "HEAD" {
            assert!(ops.is_empty());
        } else {
            assert_eq!(ops, ["added", "modified", "removed"]);
        }
        let mut direct = Vec::new();
        d.write_json(&mut direct).unwrap();
        let mut want = serde_json::to_vec_pretty(&memoir::app::sorted(d.to_json())).unwrap();
        want.push(b'\n');
        assert_eq!(
            String::from_utf8(direct).unwrap(),
            String::from_utf8(want).unwrap()
        );
    }
}
