//! The application-layer operations the web interface's views read: `tree` (one level of
//! the taxonomy with exact counts), `merge_preview` (a merge computed without writing) and
//! `stats`, called on a [`Memoir`] handle.

use memoir::app::{
    exit, Clock, MergeRequest, MergeResultKind, MergeStrategy, Options, Outcome, ReadPoint,
    RememberRequest, TreeRequest, WriteAs,
};
use memoir::Memoir;

fn options() -> Options {
    Options {
        clock: Clock::fixed(1_767_225_600.0),
        ..Options::default()
    }
}

fn store() -> (tempfile::TempDir, Memoir) {
    let dir = tempfile::tempdir().unwrap();
    let (m, _) = Memoir::create(
        dir.path().join("store"),
        options(),
        &WriteAs::author("Tester"),
    )
    .unwrap();
    (dir, m)
}

fn remember(m: &Memoir, content: &str, paths: &[&str], branch: Option<&str>) -> String {
    let mut req = RememberRequest::new(content, paths);
    req.merge_policy = Some(memoir::app::MergePolicy::Replace);
    let who = WriteAs {
        branch: branch.map(str::to_string),
        ..WriteAs::author("Tester")
    };
    m.remember(&req, &who).unwrap().commit_hash.unwrap()
}

fn tree(m: &Memoir, prefix: &str, keys: &[&str], at: &ReadPoint) -> memoir::app::TreeOutcome {
    let req = TreeRequest {
        prefix: Some(prefix.to_string()),
        keys: keys.iter().map(|k| k.to_string()).collect(),
        ..TreeRequest::default()
    };
    m.tree(&req, at).unwrap()
}

fn children(t: &memoir::app::TreeOutcome) -> Vec<(String, u64, bool, bool)> {
    t.children
        .iter()
        .map(|c| (c.path.clone(), c.count, c.has_record, c.has_children))
        .collect()
}

#[test]
fn tree_lists_one_level_with_exact_counts() {
    let (_d, m) = store();
    remember(&m, "p", &["a", "a.b", "a.b.c", "a.d", "b.x"], None);
    let first = remember(&m, "q", &["ab.y"], None);
    remember(&m, "r", &["c.z.w"], None);
    let head = ReadPoint::head();
    let top = tree(&m, "", &[], &head);
    assert_eq!(top.namespace, "default");
    assert_eq!(top.total, 7);
    assert_eq!(top.depth, 1);
    let c = |p: &str, n: u64, rec: bool, kids: bool| (p.to_string(), n, rec, kids);
    assert_eq!(
        children(&top),
        vec![
            c("a", 4, true, true),
            c("ab", 1, false, true),
            c("b", 1, false, true),
            c("c", 1, false, true),
        ]
    );
    let a = tree(&m, "a", &[], &head);
    assert!(a.has_record);
    assert_eq!(a.total, 4);
    assert_eq!(
        children(&a),
        vec![c("a.b", 2, true, true), c("a.d", 1, true, false)]
    );
    assert_eq!(
        children(&tree(&m, "a.b", &[], &head)),
        vec![c("a.b.c", 1, true, false)]
    );
    // Globs count only matching keys, grouped the same way.
    let filtered = tree(&m, "", &["a.b*"], &head);
    assert_eq!(filtered.total, 2);
    assert_eq!(children(&filtered), vec![c("a", 2, false, true)]);
    let deeper = tree(&m, "a", &["a.b*"], &head);
    assert_eq!(children(&deeper), vec![c("a.b", 2, true, true)]);
    // Several globs, overlapping or not, with or without a literal beginning.
    let union = tree(&m, "", &["ab*", "a.d", "c.*"], &head);
    assert_eq!(
        children(&union),
        vec![
            c("a", 1, false, true),
            c("ab", 1, false, true),
            c("c", 1, false, true)
        ]
    );
    let loose = tree(&m, "", &["*.w", "b.*"], &head);
    assert_eq!(
        children(&loose),
        vec![c("b", 1, false, true), c("c", 1, false, true)]
    );
    let overlapping = tree(&m, "", &["a*", "a.b*"], &head);
    assert_eq!(overlapping.total, 5);
    assert_eq!(
        children(&overlapping),
        vec![c("a", 4, true, true), c("ab", 1, false, true)]
    );
    assert_eq!(tree(&m, "b", &["a.*"], &head).total, 0);
    // Time travel: at the second commit `c` did not exist yet.
    let past = tree(&m, "", &[], &ReadPoint::at(&first));
    assert_eq!(past.total, 6);
    assert!(past.children.iter().all(|x| x.path != "c"));
    // The JSON carries the namespaces with their counts.
    let json = top.to_json();
    assert_eq!(json["namespaces"]["default"], 7);
    assert_eq!(json["children"][0]["name"], "a");
}

#[test]
fn tree_limits_and_refuses_bad_input() {
    let (_d, m) = store();
    remember(&m, "p", &["a.x", "b.x", "c.x"], None);
    let req = TreeRequest {
        limit: Some(2),
        ..TreeRequest::default()
    };
    let t = m.tree(&req, &ReadPoint::head()).unwrap();
    assert_eq!(t.children.len(), 2);
    assert_eq!(t.omitted, 1);
    assert_eq!(t.total, 3);
    let bad = |req: TreeRequest| m.tree(&req, &ReadPoint::head()).unwrap_err().code();
    let prefix = |p: &str| TreeRequest {
        prefix: Some(p.to_string()),
        ..TreeRequest::default()
    };
    assert_eq!(bad(prefix("a..b")), exit::ERROR);
    assert_eq!(
        bad(TreeRequest {
            keys: vec!["[".into()],
            ..TreeRequest::default()
        }),
        exit::ERROR
    );
    assert_eq!(
        bad(TreeRequest {
            limit: Some(0),
            ..TreeRequest::default()
        }),
        exit::ERROR
    );
    let missing = m.tree(&TreeRequest::default(), &ReadPoint::at("nosuchrev"));
    assert_eq!(missing.unwrap_err().code(), exit::NOT_FOUND);
    // A namespace that holds nothing lists nothing.
    let other = TreeRequest {
        namespace: Some("other".into()),
        ..TreeRequest::default()
    };
    let t = m.tree(&other, &ReadPoint::head()).unwrap();
    assert_eq!((t.total, t.children.len()), (0, 0));
}

#[test]
fn merge_preview_reports_changes_and_conflicts_without_writing() {
    let (_d, m) = store();
    remember(&m, "base", &["k.shared", "k.same"], None);
    remember(&m, "theirs", &["k.shared"], Some("side"));
    remember(&m, "new", &["k.added"], Some("side"));
    remember(&m, "ours", &["k.shared"], None);
    let before = m.log(&Default::default()).unwrap().count;
    let p = m.merge_preview("side", None).unwrap();
    assert_eq!(p.kind, MergeResultKind::Conflicted);
    assert_eq!(p.target_branch, "main");
    assert_eq!(p.conflicts.len(), 1);
    let c = &p.conflicts[0];
    assert_eq!(c.full_key, "default:k.shared");
    assert_eq!(c.base.as_ref().unwrap().content(), "base");
    assert_eq!(c.ours.as_ref().unwrap().content(), "ours");
    assert_eq!(c.theirs.as_ref().unwrap().content(), "theirs");
    let changed: Vec<(&str, &str)> = p
        .changes
        .iter()
        .map(|c| (c.key.as_str(), c.operation))
        .collect();
    assert_eq!(changed, vec![("k.added", "added")]);
    let json = p.to_json();
    assert_eq!(json["kind"], "conflicted");
    assert_eq!(json["conflicts"][0]["theirs"]["content"], "theirs");
    assert_eq!(p.exit_code(), exit::OK);
    // Nothing was written.
    assert_eq!(m.log(&Default::default()).unwrap().count, before);
    // The real merge agrees: the same conflict, settled by a strategy.
    let req = MergeRequest {
        source: "side".into(),
        strategy: Some(MergeStrategy::Theirs),
        ..MergeRequest::default()
    };
    let merged = m.merge(&req, &WriteAs::author("Tester")).unwrap();
    assert_eq!(merged.conflicts, vec!["default:k.shared".to_string()]);
    // Now up to date; a branch behind main would fast-forward.
    assert_eq!(
        m.merge_preview("side", None).unwrap().kind,
        MergeResultKind::UpToDate
    );
    m.create_branch("behind", Some("HEAD~1")).unwrap();
    let ff = m.merge_preview("main", Some("behind")).unwrap();
    assert_eq!(ff.kind, MergeResultKind::FastForward);
    assert!(!ff.changes.is_empty());
    assert_eq!(
        m.merge_preview("nosuch", None).unwrap_err().code(),
        exit::NOT_FOUND
    );
}

#[test]
fn stats_count_by_namespace_and_prefix_and_sample_growth() {
    let (_d, m) = store();
    remember(&m, "1", &["a.x"], None);
    remember(&m, "2", &["a.y", "b.z"], None);
    let mut req = RememberRequest::new("3", &["n.q"]);
    req.namespace = Some("other".into());
    m.remember(&req, &WriteAs::author("Tester")).unwrap();
    let s = m.stats(&ReadPoint::head(), None).unwrap();
    assert_eq!(s.memory_count, 4);
    assert_eq!(s.commit_count, 4);
    assert_eq!(s.namespaces["default"], 3);
    assert_eq!(s.namespaces["other"], 1);
    assert_eq!(s.prefixes["default"]["a"], 2);
    assert_eq!(s.prefixes["default"]["b"], 1);
    assert!(s.store_bytes > 0);
    let counts: Vec<u64> = s.growth.iter().map(|g| g.memories).collect();
    assert_eq!(counts, vec![0, 1, 3, 4]);
    let two = m.stats(&ReadPoint::head(), Some(2)).unwrap();
    let counts: Vec<u64> = two.growth.iter().map(|g| g.memories).collect();
    assert_eq!(counts, vec![0, 4]);
    let past = m.stats(&ReadPoint::at("HEAD~1"), None).unwrap();
    assert_eq!((past.memory_count, past.commit_count), (3, 3));
    assert_eq!(
        m.stats(&ReadPoint::head(), Some(0)).unwrap_err().code(),
        exit::ERROR
    );
}

#[test]
fn a_held_store_searches_from_its_warm_index_at_every_revision() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store");
    drop(Memoir::create(&path, options(), &WriteAs::author("Tester")).unwrap());
    let held = Memoir::open(
        &path,
        Options {
            keep_open: true,
            ..options()
        },
    );
    let hits = |m: &Memoir, q: &str, at: &ReadPoint| -> Vec<String> {
        let req = memoir::app::SearchRequest {
            query: q.to_string(),
            limit: 10,
            ..Default::default()
        };
        m.search(&req, at)
            .unwrap()
            .hits
            .into_iter()
            .map(|h| h.key)
            .collect()
    };
    let first = remember(&held, "alpha fact", &["notes.one"], None);
    assert_eq!(hits(&held, "alpha", &ReadPoint::head()), vec!["notes.one"]);
    // Another handle (as a CLI process would) writes; the held one sees it.
    held.release();
    let other = Memoir::open(&path, options());
    remember(&other, "beta fact", &["notes.two"], None);
    remember(&other, "gamma fact", &["notes.one"], None);
    assert_eq!(hits(&held, "beta", &ReadPoint::head()), vec!["notes.two"]);
    assert!(hits(&held, "alpha", &ReadPoint::head()).is_empty());
    // Back in time and forth again.
    assert_eq!(
        hits(&held, "alpha", &ReadPoint::at(&first)),
        vec!["notes.one"]
    );
    assert!(hits(&held, "beta", &ReadPoint::at(&first)).is_empty());
    assert_eq!(hits(&held, "gamma", &ReadPoint::head()), vec!["notes.one"]);
    held.release();
}
