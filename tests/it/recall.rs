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
                ..Default::default()
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
    let bytes = idx.to_bytes().unwrap();
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
        // Loaded from the cache half-way and synced since: a frozen part with removed
        // documents plus an overlay, whose documents interleave in key order.
        let mut mixed: Option<LexicalIndex> = None;
        for (i, (slot, words)) in ops.iter().enumerate() {
            if i == ops.len() / 2 {
                f.sync(&mut inc);
                mixed = Some(LexicalIndex::from_bytes(&inc.to_bytes().unwrap()).unwrap());
            }
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
        let mut mixed = mixed.unwrap_or_default();
        f.sync(&mut mixed);
        let fresh = f.index();
        let cached = LexicalIndex::from_bytes(&inc.to_bytes().unwrap()).unwrap();
        prop_assert_eq!(inc.len(), fresh.len());
        for q in WORDS.iter().chain(["topic1", "item4", "postgres", "containr", "test"].iter()) {
            let a = inc.search(&Query { text: q, limit: 20, ..Default::default() });
            let b = fresh.search(&Query { text: q, limit: 20, ..Default::default() });
            let c = cached.search(&Query { text: q, limit: 20, ..Default::default() });
            let m = mixed.search(&Query { text: q, limit: 20, ..Default::default() });
            let strip = |hs: Vec<recall::Hit>| hs.into_iter().map(|h| (h.path, (h.score * 1e9).round() as i64)).collect::<Vec<_>>();
            let a = strip(a);
            prop_assert_eq!(&a, &strip(b));
            prop_assert_eq!(&a, &strip(c));
            prop_assert_eq!(&a, &strip(m));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// A store without speakers, dates or times ranks as by its words alone, whatever the
    /// query asks: the signals of search change nothing there.
    #[test]
    fn stores_without_speakers_or_dates_rank_by_words(
        docs in prop::collection::vec(prop::collection::vec(0usize..WORDS.len(), 1..6), 1..30),
        w in 0usize..WORDS.len(),
    ) {
        let mut f = Fixture::new();
        for (i, ws) in docs.iter().enumerate() {
            let text: Vec<&str> = ws.iter().map(|&w| WORDS[w]).filter(|w| *w != "2024").collect();
            f.put("default", &format!("topic{}.item{i}", i % 3), &text.join(" "), i as f64);
        }
        let idx = f.index();
        for text in [
            WORDS[w].to_string(),
            format!("When did we {}?", WORDS[w]),
            format!("What did Caroline say about {} in May 2023?", WORDS[w]),
        ] {
            let q = Query { text: &text, limit: 10, ..Default::default() };
            let strip = |hs: Vec<recall::Hit>| hs.into_iter().map(|h| (h.path, h.score.to_bits())).collect::<Vec<_>>();
            prop_assert_eq!(strip(idx.search(&q)), strip(idx.search_by_words(&q)));
        }
    }
}

/// Searches compared by path and score (to 1e-9).
fn answers(idx: &LexicalIndex) -> Vec<Vec<(String, i64)>> {
    WORDS
        .iter()
        .chain(["topic1", "item4", "postgres", "containr", "test"].iter())
        .map(|q| {
            idx.search(&Query {
                text: q,
                limit: 20,
                ..Default::default()
            })
            .into_iter()
            .map(|h| (h.path, (h.score * 1e9).round() as i64))
            .collect()
        })
        .collect()
}

fn edit(f: &mut Fixture, i: usize) {
    let slot = (i * 7) % 97;
    let path = format!("topic{}.item{slot}", slot % 5);
    if i % 5 == 4 {
        f.delete("default", &path);
    } else {
        let text: Vec<&str> = (0..3).map(|j| WORDS[(i + j * 4) % WORDS.len()]).collect();
        f.put("default", &path, &text.join(" "), i as f64);
    }
}

#[test]
fn delta_files_and_compaction_answer_like_a_rebuild() {
    let dir = tempfile::tempdir().unwrap();
    let path = recall::cache_path(dir.path());
    let delta = recall::delta_path(&path);
    let mut f = Fixture::new();
    for i in 0..60 {
        edit(&mut f, i);
    }
    recall::save_changes(&path, &f.index()).unwrap();
    assert!(path.exists() && !delta.exists());
    let (mut saw_delta, mut saw_compaction) = (false, false);
    for i in 60..260 {
        edit(&mut f, i);
        let mut idx = recall::load_cache(&path);
        let stats = f.sync(&mut idx);
        assert!(!stats.rebuilt);
        recall::save_changes(&path, &idx).unwrap();
        if delta.exists() {
            saw_delta = true;
        } else {
            saw_compaction = true;
        }
        let reloaded = recall::load_cache(&path);
        assert_eq!(reloaded.root(), Some(&f.root));
        let fresh = f.index();
        assert_eq!(reloaded.len(), fresh.len());
        assert_eq!(answers(&reloaded), answers(&fresh), "after edit {i}");
        assert_eq!(answers(&idx), answers(&fresh), "after edit {i}");
    }
    assert!(saw_delta && saw_compaction);
}

#[test]
fn damaged_or_foreign_delta_is_ignored_and_synced_over() {
    let dir = tempfile::tempdir().unwrap();
    let path = recall::cache_path(dir.path());
    let delta = recall::delta_path(&path);
    let mut f = sample();
    recall::save_cache(&path, &f.index()).unwrap();
    let base_root = f.root;
    f.put("default", "infra.queue", "RabbitMQ carries events.", 80.0);
    f.delete("default", "pets.car");
    let mut idx = recall::load_cache(&path);
    f.sync(&mut idx);
    recall::save_changes(&path, &idx).unwrap();
    let good = std::fs::read(&delta).unwrap();
    assert_eq!(recall::load_cache(&path).root(), Some(&f.root));
    let fresh = answers(&f.index());
    let mut damaged: Vec<Vec<u8>> = (0..good.len())
        .step_by(7)
        .map(|n| good[..n].to_vec())
        .collect();
    for i in (0..good.len()).step_by(5) {
        let mut b = good.clone();
        b[i] ^= 0x21;
        damaged.push(b);
    }
    for bad in damaged {
        std::fs::write(&delta, &bad).unwrap();
        let mut idx = recall::load_cache(&path);
        assert_eq!(idx.root(), Some(&base_root));
        f.sync(&mut idx);
        assert_eq!(answers(&idx), fresh);
    }
    // A delta of another cache file (here: the one before a compaction) is ignored too.
    std::fs::write(&delta, &good).unwrap();
    let mut g = sample();
    g.put("default", "extra.one", "unrelated", 1.0);
    recall::save_cache(&path, &g.index()).unwrap();
    assert!(!delta.exists());
    std::fs::write(&delta, &good).unwrap();
    assert_eq!(recall::load_cache(&path).root(), Some(&g.root));
}

#[test]
fn forged_cache_files_never_panic() {
    let mut f = sample();
    f.delete("default", "pets.car");
    let bytes = f.index().to_bytes().unwrap();
    let body = bytes.len() - 16;
    for i in 0..body {
        for flip in [0x01u8, 0x80, 0xff] {
            let mut b = bytes[..body].to_vec();
            b[i] ^= flip;
            let sum = xxhash_rust::xxh3::xxh3_128(&b);
            b.extend_from_slice(&sum.to_le_bytes());
            if let Ok(idx) = LexicalIndex::from_bytes(&b) {
                let _ = answers(&idx);
                let _ = idx.to_bytes().unwrap();
            }
        }
    }
    for n in 0..bytes.len() {
        assert!(LexicalIndex::from_bytes(&bytes[..n]).is_err());
    }
}

/// A limit cuts the full ranking: for every limit the hits are the first ones of the
/// unlimited answer, in the documented order (score descending then key, or newest first),
/// with many tied scores, filters and documents added after loading from the cache.
#[test]
fn a_limit_takes_the_head_of_the_full_ranking() {
    let mut f = Fixture::new();
    for i in 0..120 {
        let ns = if i % 3 == 0 { "work" } else { "default" };
        let content = if i % 4 == 0 {
            format!("item {i} about the build")
        } else {
            "an item about the build".to_string()
        };
        f.put(
            ns,
            &format!("topic{}.item{i:03}", i % 5),
            &content,
            (i % 7) as f64,
        );
    }
    let mut idx = LexicalIndex::from_bytes(&f.index().to_bytes().unwrap()).unwrap();
    for i in 0..15 {
        f.put(
            "default",
            &format!("late.item{i:02}"),
            "item about the build",
            3.0,
        );
    }
    f.sync(&mut idx);
    for sort in [Sort::Relevance, Sort::Recency] {
        for namespace in [None, Some("work")] {
            let q = |limit| Query {
                text: "item build",
                namespace,
                limit,
                sort,
                ..Default::default()
            };
            let all = idx.search(&q(usize::MAX));
            assert!(all.len() >= 40, "{}", all.len());
            assert!(all.windows(2).all(|w| match sort {
                Sort::Relevance => (-w[0].score, &w[0].key) < (-w[1].score, &w[1].key),
                Sort::Recency =>
                    (-w[0].timestamp, -w[0].score, &w[0].key)
                        < (-w[1].timestamp, -w[1].score, &w[1].key),
            }));
            for limit in [1, 2, 7, 40, all.len() - 1, all.len(), all.len() + 5] {
                let head = idx.search(&q(limit));
                assert_eq!(head, all[..limit.min(all.len())], "{sort:?} {limit}");
            }
        }
    }
}
