//! Documents, the JSON objects the LangGraph store keeps one per record: `write_documents`
//! stores and deletes many in one commit, and `find_documents` selects them by conditions on
//! member paths, ranks them by words and pages them, on a [`Memoir`] handle over a real store.

use memoir::app::{
    Clock, Condition, DocumentQuery, DocumentWrite, FilterOp, LogQuery, Operand, Options,
    ReadPoint, WriteAs,
};
use memoir::Memoir;
use serde_json::json;

fn store() -> (tempfile::TempDir, Memoir) {
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        clock: Clock::fixed(1_767_225_600.0),
        ..Options::default()
    };
    let (m, _) = Memoir::create(dir.path().join("store"), options, &WriteAs::author("T")).unwrap();
    (dir, m)
}

fn put(path: &str, doc: serde_json::Value) -> DocumentWrite {
    DocumentWrite {
        path: path.to_string(),
        content: Some(doc.to_string()),
    }
}

fn keys(m: &Memoir, q: &DocumentQuery) -> Vec<String> {
    let page = m.find_documents(q, &ReadPoint::head()).unwrap();
    page.items.into_iter().map(|h| h.key).collect()
}

fn commits(m: &Memoir) -> usize {
    m.log(&LogQuery::default()).unwrap().commits.len()
}

#[test]
fn many_writes_are_one_commit_and_the_last_of_a_path_wins() {
    let (_d, m) = store();
    let who = WriteAs::author("T");
    let before = commits(&m);
    let writes = vec![
        put("u.a", json!({"n": 1})),
        put("u.b", json!({"n": 2})),
        put("u.a", json!({"n": 3})),
        DocumentWrite {
            path: "u.gone".into(),
            content: None,
        },
    ];
    let out = m.write_documents("lg", &writes, false, &who).unwrap();
    assert_eq!((out.stored, out.deleted), (2, 0));
    assert_eq!(commits(&m), before + 1);
    let q = DocumentQuery {
        namespace: "lg".into(),
        ..DocumentQuery::default()
    };
    let page = m.find_documents(&q, &ReadPoint::head()).unwrap();
    let a = &page.items[0];
    assert_eq!(a.key, "u.a");
    assert_eq!(a.content.as_deref(), Some(r#"{"n":3}"#));
    assert_eq!(a.timestamp, Some(1_767_225_600.0));
    // Deleting, and a batch that changes nothing commits nothing.
    let del = [DocumentWrite {
        path: "u.b".into(),
        content: None,
    }];
    assert_eq!(
        m.write_documents("lg", &del, false, &who).unwrap().deleted,
        1
    );
    assert!(m
        .write_documents("lg", &del, false, &who)
        .unwrap()
        .commit
        .is_none());
    assert_eq!(keys(&m, &q), ["u.a"]);
}

#[test]
fn conditions_select_and_paging_cuts_inside_memoir() {
    let (_d, m) = store();
    let writes: Vec<_> = (0..10)
        .map(|i| {
            put(
                &format!("docs.d{i}"),
                json!({"user": {"n": i, "level": "x"}}),
            )
        })
        .chain([put("other.z", json!({"user": {"n": 100}}))])
        .collect();
    m.write_documents("lg", &writes, false, &WriteAs::author("T"))
        .unwrap();
    let q = DocumentQuery {
        namespace: "lg".into(),
        prefix: vec!["docs".into()],
        conditions: vec![Condition {
            path: vec!["user".into(), "n".into()],
            op: FilterOp::Gte,
            operand: Operand::Number(4.0),
        }],
        offset: 2,
        limit: Some(3),
        ..DocumentQuery::default()
    };
    let page = m.find_documents(&q, &ReadPoint::head()).unwrap();
    assert_eq!(page.total, 6);
    let got: Vec<_> = page.items.iter().map(|h| h.key.as_str()).collect();
    assert_eq!(got, ["docs.d6", "docs.d7", "docs.d8"]);
    // A prefix stops at a segment boundary: "doc" is not "docs".
    let q = DocumentQuery {
        prefix: vec!["doc".into()],
        ..q
    };
    assert!(keys(&m, &q).is_empty());
}

#[test]
fn words_rank_matches_first_and_keep_the_rest() {
    let (_d, m) = store();
    let writes = [
        put("m.a", json!({"text": "tests run with pytest"})),
        put("m.b", json!({"text": "the database is postgresql"})),
        put("m.c", json!({"text": "nightly database backups"})),
    ];
    m.write_documents("lg", &writes, false, &WriteAs::author("T"))
        .unwrap();
    let q = DocumentQuery {
        namespace: "lg".into(),
        words: Some("postgresql database".into()),
        ..DocumentQuery::default()
    };
    let page = m.find_documents(&q, &ReadPoint::head()).unwrap();
    let got: Vec<_> = page
        .items
        .iter()
        .map(|h| (h.key.as_str(), h.score.is_some()))
        .collect();
    assert_eq!(got, [("m.b", true), ("m.c", true), ("m.a", false)]);
    // Only common words: nothing to rank by, key order.
    let q = DocumentQuery {
        words: Some("the of".into()),
        ..q
    };
    assert_eq!(keys(&m, &q), ["m.a", "m.b", "m.c"]);
}

#[test]
fn secrets_and_bad_paths_are_refused_before_writing() {
    let (_d, m) = store();
    let who = WriteAs::author("T");
    let token = format!("ghp_{}", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
    let before = commits(&m);
    let secret = [put("ok", json!({"t": token}))];
    assert_eq!(
        m.write_documents("lg", &secret, false, &who)
            .unwrap_err()
            .code(),
        1
    );
    let bad = [put("a..b", json!({}))];
    assert_eq!(
        m.write_documents("lg", &bad, false, &who)
            .unwrap_err()
            .code(),
        1
    );
    assert_eq!(commits(&m), before);
    assert!(m.write_documents("lg", &secret, true, &who).is_ok());
}
