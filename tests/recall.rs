//! Lexical recall over real trees: matching rules, ranking, incremental sync and the cache.

use std::collections::BTreeMap;
use std::sync::Arc;

use memoir::key::Key;
use memoir::object::{Blob, ObjectId, Objects};
use memoir::prolly::{Edit, NodeStore};
use memoir::recall::{self, Doc, LexicalIndex, Query, RecallError, Sort};
use memoir::store::{ObjectStore, Store};
use proptest::prelude::*;

struct Fixture {
    objects: Objects,
    tree: NodeStore,
    root: ObjectId,
    /// Value id -> (content, timestamp).
    contents: BTreeMap<ObjectId, (String, f64)>,
}

impl Fixture {
    fn new() -> Self {
        let store: Arc<dyn ObjectStore> = Arc::new(Store::memory());
        let tree = NodeStore::new(store.clone(), 1024);
        let root = tree.empty().unwrap();
        Fixture {
            objects: Objects::new(store),
            tree,
            root,
            contents: BTreeMap::new(),
        }
    }

    fn put(&mut self, ns: &str, path: &str, content: &str, ts: f64) {
        let payload = format!("{ts}\u{0}{content}");
        let v = self.objects.write(&Blob(payload.into_bytes())).unwrap();
        self.contents.insert(v, (content.to_string(), ts));
        let k = Key::new(ns, path).unwrap().encode();
        self.root = self.tree.apply(&self.root, vec![Edit::Put(k, v)]).unwrap();
    }

    fn delete(&mut self, ns: &str, path: &str) {
        let k = Key::new(ns, path).unwrap().encode();
        self.root = self.tree.apply(&self.root, vec![Edit::Delete(k)]).unwrap();
    }

    fn sync(&self, idx: &mut LexicalIndex) -> recall::SyncStats {
        let contents = &self.contents;
        idx.sync(&self.tree, &self.root, &mut |k, v| {
            let (namespace, path) = recall::lexical::split_key(k);
            let (content, timestamp) = contents.get(v).cloned().ok_or(RecallError::Load {
                key: path.clone(),
                reason: "unknown value".into(),
            })?;
            Ok(Doc {
                namespace,
                path,
                content,
                timestamp,
            })
        })
        .unwrap()
    }

    fn index(&self) -> LexicalIndex {
        let mut idx = LexicalIndex::new();
        self.sync(&mut idx);
        idx
    }
}

fn paths(idx: &LexicalIndex, text: &str) -> Vec<String> {
    idx.search(&Query {
        text,
        limit: 10,
        ..Default::default()
    })
    .into_iter()
    .map(|h| format!("{}:{}", h.namespace, h.path))
    .collect()
}

fn sample() -> Fixture {
    let mut f = Fixture::new();
    f.put(
        "default",
        "code.handlers.ReadMessageItem",
        "Parses one queued item.",
        10.0,
    );
    f.put(
        "default",
        "games.rating",
        "We rank players with Glicko-2 since March.",
        20.0,
    );
    f.put(
        "default",
        "infra.database",
        "The service stores orders in PostgreSQL 16.",
        30.0,
    );
    f.put(
        "default",
        "infra.deploy",
        "Deployed as a container on the staging cluster.",
        40.0,
    );
    f.put(
        "default",
        "pets.car",
        "The family car is a blue estate.",
        50.0,
    );
    f.put(
        "work",
        "preferences.coding.testing",
        "Prefers property tests over examples.",
        60.0,
    );
    f.put(
        "work",
        "notes.misc",
        "Mentioned testing twice in the standup.",
        70.0,
    );
    f
}

#[test]
fn identifiers_split_and_match_words() {
    let idx = sample().index();
    assert_eq!(
        paths(&idx, "read message")[0],
        "default:code.handlers.ReadMessageItem"
    );
    assert_eq!(paths(&idx, "Glicko")[0], "default:games.rating");
    assert_eq!(paths(&idx, "glicko 2 ratings")[0], "default:games.rating");
}

#[test]
fn prefixes_and_near_misses_match_with_a_length_floor() {
    let idx = sample().index();
    assert_eq!(paths(&idx, "postgres")[0], "default:infra.database");
    assert_eq!(paths(&idx, "containr")[0], "default:infra.deploy");
    // Short words match only themselves: "cat" is one edit from "car" but too short.
    assert!(paths(&idx, "cat").is_empty());
    assert_eq!(paths(&idx, "car"), ["default:pets.car"]);
}

#[test]
fn key_segments_outrank_content_and_filters_apply() {
    let idx = sample().index();
    let hits = paths(&idx, "testing");
    assert_eq!(hits, ["work:preferences.coding.testing", "work:notes.misc"]);
    let only_default = idx.search(&Query {
        text: "testing",
        namespace: Some("default"),
        limit: 10,
        ..Default::default()
    });
    assert!(only_default.is_empty());
    let globs = memoir::glob::KeyGlobs::new(&["notes.*"]).unwrap();
    let g = idx.search(&Query {
        text: "testing",
        globs: Some(&globs),
        limit: 10,
        ..Default::default()
    });
    assert_eq!(g.len(), 1);
    assert_eq!(g[0].path, "notes.misc");
    let recent = idx.search(&Query {
        text: "testing",
        sort: Sort::Recency,
        limit: 10,
        ..Default::default()
    });
    assert_eq!(recent[0].path, "notes.misc");
    let since = idx.search(&Query {
        text: "testing",
        since: Some(65.0),
        limit: 10,
        ..Default::default()
    });
    assert_eq!(since.len(), 1);
    let until = idx.search(&Query {
        text: "testing",
        until: Some(65.0),
        limit: 1,
        ..Default::default()
    });
    assert_eq!(until[0].path, "preferences.coding.testing");
    assert!(hits_sorted(&idx, "the staging cluster container"));
}

fn hits_sorted(idx: &LexicalIndex, text: &str) -> bool {
    let hits = idx.search(&Query {
        text,
        limit: 10,
        ..Default::default()
    });
    !hits.is_empty()
        && hits.iter().all(|h| h.score > 0.0)
        && hits.windows(2).all(|w| w[0].score >= w[1].score)
}

#[test]
fn things_never_stored_find_nothing() {
    let idx = sample().index();
    for q in [
        "quantum chromodynamics",
        "zebra",
        "xylophone lessons",
        "",
        "the of and",
    ] {
        assert!(paths(&idx, q).is_empty(), "query {q:?} found something");
    }
    assert!(Fixture::new()
        .index()
        .search(&Query {
            text: "car",
            limit: 5,
            ..Default::default()
        })
        .is_empty());
}

#[test]
fn cache_round_trips_and_rejects_damage() {
    let f = sample();
    let idx = f.index();
    let bytes = idx.to_bytes();
    let back = LexicalIndex::from_bytes(&bytes).unwrap();
    assert_eq!(back.root(), idx.root());
    for q in ["testing", "postgres", "read message", "containr"] {
        assert_eq!(paths(&back, q), paths(&idx, q));
    }
    for i in [0, bytes.len() / 2, bytes.len() - 1] {
        let mut bad = bytes.clone();
        bad[i] ^= 0x40;
        assert!(LexicalIndex::from_bytes(&bad).is_err());
    }
    assert!(LexicalIndex::from_bytes(&bytes[..bytes.len() - 5]).is_err());
    let dir = tempfile::tempdir().unwrap();
    let path = recall::cache_path(dir.path());
    assert!(recall::load_cache(&path).root().is_none());
    recall::save_cache(&path, &idx).unwrap();
    assert_eq!(recall::load_cache(&path).root(), idx.root());
    std::fs::write(&path, b"garbage").unwrap();
    assert!(recall::load_cache(&path).root().is_none());
}

#[test]
fn sync_from_diff_is_incremental() {
    let mut f = sample();
    let mut idx = f.index();
    f.put(
        "default",
        "infra.queue",
        "RabbitMQ carries the order events.",
        80.0,
    );
    f.delete("default", "pets.car");
    let stats = f.sync(&mut idx);
    assert!(!stats.rebuilt);
    assert_eq!((stats.inserted, stats.removed), (1, 1));
    assert_eq!(paths(&idx, "rabbitmq"), ["default:infra.queue"]);
    assert!(paths(&idx, "car").is_empty());
    assert_eq!(f.sync(&mut idx), recall::SyncStats::default());
}

const WORDS: &[&str] = &[
    "alpha",
    "beta",
    "gamma",
    "testing",
    "tests",
    "container",
    "PostgreSQL",
    "queue",
    "rating",
    "ReadMessage",
    "deploy",
    "kebab-case",
    "snake_case",
    "2024",
    "v2",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// After any sequence of edits, the incrementally synced index answers exactly like a
    /// index built from scratch, and like one reloaded from its cache bytes.
    #[test]
    fn incremental_equals_rebuilt(ops in prop::collection::vec(
        (0usize..12, prop::option::of(prop::collection::vec(0usize..WORDS.len(), 1..6))), 1..40)) {
        let mut f = Fixture::new();
        let mut inc = LexicalIndex::new();
        for (i, (slot, words)) in ops.iter().enumerate() {
            let path = format!("topic{}.item{}", slot % 3, slot);
            match words {
                Some(ws) => {
                    let text: Vec<&str> = ws.iter().map(|&w| WORDS[w]).collect();
                    f.put("default", &path, &text.join(" "), i as f64);
                }
                None => f.delete("default", &path),
            }
            if i % 3 == 0 {
                f.sync(&mut inc);
            }
        }
        f.sync(&mut inc);
        let fresh = f.index();
        let cached = LexicalIndex::from_bytes(&inc.to_bytes()).unwrap();
        prop_assert_eq!(inc.len(), fresh.len());
        for q in WORDS.iter().chain(["topic1", "item4", "postgres", "containr", "test"].iter()) {
            let a = inc.search(&Query { text: q, limit: 20, ..Default::default() });
            let b = fresh.search(&Query { text: q, limit: 20, ..Default::default() });
            let c = cached.search(&Query { text: q, limit: 20, ..Default::default() });
            let strip = |hs: Vec<recall::Hit>| hs.into_iter().map(|h| (h.path, (h.score * 1e9).round() as i64)).collect::<Vec<_>>();
            let a = strip(a);
            prop_assert_eq!(&a, &strip(b));
            prop_assert_eq!(&a, &strip(c));
        }
    }
}
