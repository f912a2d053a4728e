//! Ranking behaviour of the lexical index: the date field, windows and feedback.

use super::dates::DateTerm;
use super::*;
use crate::recall::tokenize::Tokenizer;

/// 1 June 2023, 12:00 UTC.
pub(super) const JUNE_2023: f64 = 1_685_620_800.0;
/// 15 March 2024, 12:00 UTC.
/// The key filter the property tests search with.
pub(super) fn test_globs() -> crate::glob::KeyGlobs {
    crate::glob::KeyGlobs::new(&["t1.*", "t2.s3*"]).unwrap()
}

/// The query the property tests run: `text` in the default namespace (or every one), with
/// filter `filter` (1: `globs`, 2: since March 2024, 3: until June 2023, else none), `limit`
/// hits, by recency or by relevance.
pub(super) fn test_query<'a>(
    text: &'a str,
    only_default: bool,
    filter: u8,
    globs: &'a crate::glob::KeyGlobs,
    limit: usize,
    recency: bool,
) -> Query<'a> {
    Query {
        text,
        with_internal: false,
        namespace: only_default.then_some("default"),
        globs: (filter == 1).then_some(globs),
        since: (filter == 2).then_some(MARCH_2024 - 1.0),
        until: (filter == 3).then_some(JUNE_2023 + 1.0),
        limit,
        sort: if recency {
            Sort::Recency
        } else {
            Sort::Relevance
        },
        ..Default::default()
    }
}

pub(super) const MARCH_2024: f64 = 1_710_504_000.0;

fn index(docs: &[(&str, &str, f64)]) -> LexicalIndex {
    let mut idx = LexicalIndex::new();
    for (path, content, ts) in docs {
        let key = crate::key::Key::new("default", path).unwrap().encode();
        let doc = Doc {
            namespace: "default".into(),
            path: path.to_string(),
            content: content.to_string(),
            timestamp: *ts,
            ..Default::default()
        };
        idx.insert(&key, ObjectId::from_bytes([0; 32]), &doc);
    }
    idx
}

fn paths(idx: &LexicalIndex, text: &str) -> Vec<String> {
    idx.search(&Query {
        text,
        with_internal: false,
        limit: 10,
        ..Default::default()
    })
    .into_iter()
    .map(|h| h.path)
    .collect()
}

#[test]
fn query_words_naming_months_and_years() {
    let idx = LexicalIndex::new();
    assert_eq!(idx.date_term("june"), Some(DateTerm::Month(6)));
    let t = Tokenizer::default();
    assert_eq!(
        idx.date_term(&t.stem("september")),
        Some(DateTerm::Month(9))
    );
    assert_eq!(idx.date_term("2023"), Some(DateTerm::Year(2023)));
    assert_eq!(idx.date_term("0999"), None);
    assert_eq!(idx.date_term("12345"), None);
    assert_eq!(idx.date_term("hike"), None);
}

#[test]
fn a_month_or_year_in_the_query_favours_records_dated_then() {
    let docs = [
        ("trips.a", "Went hiking in the hills.", MARCH_2024),
        ("trips.b", "Went hiking by the lake.", JUNE_2023),
        ("trips.c", "Went hiking with friends.", MARCH_2024),
    ];
    let idx = index(&docs);
    assert_eq!(paths(&idx, "hiking in June")[0], "trips.b");
    assert_eq!(paths(&idx, "hiking 2023")[0], "trips.b");
    assert_eq!(paths(&idx, "hiking in March 2024").len(), 3);
    assert_ne!(paths(&idx, "hiking in March 2024")[0], "trips.b");
    // Without the date field the month word matches nothing.
    let mut off = index(&docs);
    off.params.date_weight = 0.0;
    assert_eq!(paths(&off, "june"), Vec::<String>::new());
    // A date word alone finds the records dated then, and only them.
    assert_eq!(paths(&idx, "june"), ["trips.b"]);
    assert_eq!(paths(&idx, "2025"), Vec::<String>::new());
}

#[test]
fn query_words_in_adjacent_siblings_favour_their_window() {
    // Both parents hold both words, once each, in records of equal length: the parent
    // scores tie. Under `near` the words sit in adjacent records, under `far` four
    // records apart.
    let docs = [
        ("far.t1", "Planted the garden.", 0.0),
        ("far.t2", "Weather was nice.", 0.0),
        ("far.t3", "Called my sister.", 0.0),
        ("far.t4", "Fixed the bike.", 0.0),
        ("far.t5", "Picked ripe tomatoes.", 0.0),
        ("near.t1", "Planted the garden.", 0.0),
        ("near.t2", "Picked ripe tomatoes.", 0.0),
        ("near.t3", "Weather was nice.", 0.0),
        ("near.t4", "Called my sister.", 0.0),
        ("near.t5", "Fixed the bike.", 0.0),
    ];
    let mut idx = index(&docs);
    idx.params.neighbour_weight = 0.0;
    idx.params.group_weight = 0.0;
    idx.params.feedback_docs = 0;
    assert_eq!(paths(&idx, "garden tomatoes")[..2], ["near.t1", "near.t2"]);
    // Without windows the records of the two parents tie, and ties go by key.
    idx.params.window_weight = 0.0;
    assert_eq!(paths(&idx, "garden tomatoes")[0], "far.t1");
}

#[test]
fn feedback_raises_parents_that_share_the_best_hits_topic() {
    // "piano" matches alike under `other` and `related`; the best hits, under
    // `lessons`, also talk about Anna and lessons, which only `related` mentions.
    let docs = [
        ("lessons.t1", "Piano lessons with Anna today.", 0.0),
        ("lessons.t2", "Anna says piano lessons need scales.", 0.0),
        ("other.t1", "Piano tuning notes.", 0.0),
        ("other.t2", "Bob repairs bikes.", 0.0),
        ("related.t1", "Piano tuning notes.", 0.0),
        ("related.t2", "Anna lessons weekly.", 0.0),
    ];
    let mut idx = index(&docs);
    let hits = paths(&idx, "piano");
    let pos = |p: &str| hits.iter().position(|h| h == p).unwrap();
    assert!(pos("related.t1") < pos("other.t1"), "{hits:?}");
    // Feedback adds no hits: records without the query's words stay out.
    assert!(!hits
        .iter()
        .any(|h| h.ends_with(".t2") && !h.starts_with("lessons")));
    // Without feedback the two tie, and ties go by key.
    idx.params.feedback_docs = 0;
    let hits = paths(&idx, "piano");
    let pos = |p: &str| hits.iter().position(|h| h == p).unwrap();
    assert!(pos("other.t1") < pos("related.t1"), "{hits:?}");
}

#[test]
fn unknown_timestamps_have_no_date() {
    let idx = index(&[("a", "Notes.", 0.0), ("b", "Notes.", f64::NAN)]);
    assert!(paths(&idx, "january 1970").is_empty());
}

#[test]
fn date_field_follows_removal() {
    let mut idx = index(&[("a", "Notes.", JUNE_2023), ("b", "Notes.", MARCH_2024)]);
    assert_eq!(paths(&idx, "june"), ["a"]);
    idx.remove(&crate::key::Key::new("default", "a").unwrap().encode());
    assert!(paths(&idx, "june").is_empty());
    let back = LexicalIndex::from_bytes(&idx.to_bytes().unwrap()).unwrap();
    assert_eq!(paths(&back, "march"), ["b"]);
}

#[test]
fn cache_errors_say_what_is_wrong() {
    let message = |r: crate::recall::RecallResult<()>| r.unwrap_err().to_string();
    assert_eq!(
        message(LexicalIndex::from_bytes(b"not a cache file").map(drop)),
        "lexical index cache is damaged"
    );
    let one =
        LexicalIndex::from_bytes(&index(&[("a", "Notes.", 0.0)]).to_bytes().unwrap()).unwrap();
    let mut two =
        LexicalIndex::from_bytes(&index(&[("b", "Notes.", 0.0)]).to_bytes().unwrap()).unwrap();
    let mut changed = LexicalIndex::from_bytes(&one.to_bytes().unwrap()).unwrap();
    changed.remove(&crate::key::Key::new("default", "a").unwrap().encode());
    let delta = changed.delta_bytes().unwrap();
    assert_eq!(
        message(two.apply_delta(&delta)),
        "lexical index delta does not belong to the cached index"
    );
}

proptest::proptest! {
    /// Keeping the first `n` in one pass gives what sorting everything and truncating gives,
    /// whatever the input order (ties of the first field broken by the second).
    #[test]
    fn best_n_is_sort_and_truncate(
        items in proptest::collection::vec((0u8..8, 0u32..2000), 0..1500),
        n in 0usize..400,
    ) {
        let mut items = items;
        items.sort_by_key(|i| i.1);
        items.dedup_by_key(|i| i.1);
        let order = |a: &(u8, u32), b: &(u8, u32)| b.0.cmp(&a.0).then(a.1.cmp(&b.1));
        let mut want = items.clone();
        want.sort_by(order);
        want.truncate(n);
        proptest::prop_assert_eq!(super::score::best_n(items.into_iter().rev(), n, order), want);
    }
}

/// Words of the plan test's records: a few every record is likely to hold, some rarer.
pub(super) const WORDS: [&str; 12] = [
    "memory", "agent", "learned", "painting", "camping", "june", "2023", "oscar", "lake", "deploy",
    "kernel", "support",
];

/// Query words: record words, prefixes and near misses of them.
pub(super) const QUERY_WORDS: [&str; 14] = [
    "memory", "agent", "painting", "camping", "june", "2023", "oscar", "deploy", "paint", "camp",
    "kernl", "suport", "t1", "r05",
];

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(96))]
    /// Every plan of a search gives the same hits, to the bit: deferring windows and
    /// keeping dense rows change how scores are computed, never what they are. Indexes are
    /// built in memory, or written to cache bytes and read back and then changed (removals and an
    /// overlay), so both ways of reading documents are ranked.
    #[test]
    fn every_plan_gives_the_same_hits(
        docs in proptest::collection::vec(
            (0u8..3, 0u8..5, 0u8..30, proptest::collection::vec(0usize..WORDS.len(), 1..10), 0u8..6),
            1..160,
        ),
        read_back in proptest::bool::ANY,
        changes in proptest::collection::vec((0usize..160, proptest::bool::ANY), 0..12),
        query in proptest::collection::vec(0usize..QUERY_WORDS.len(), 1..4),
        limit in proptest::sample::select(vec![1usize, 3, 10, 50]),
        recency in proptest::bool::ANY,
        only_default in proptest::bool::ANY,
        filter in 0u8..4,
    ) {
        let dates = [JUNE_2023, MARCH_2024, 0.0, JUNE_2023 + 86_400.0];
        let doc = |(a, b, c, words, n): &(u8, u8, u8, Vec<usize>, u8), tag: &str| {
            // Some records sit one level up, between the others of their parent.
            let path = match c % 7 {
                0 => format!("t{a}.s{b}"),
                _ => format!("t{a}.s{b}.r{c:02}"),
            };
            let ns = if *n == 5 { "other" } else { "default" };
            let text: Vec<&str> = words.iter().map(|w| WORDS[*w]).collect();
            let key = crate::key::Key::new(ns, &path).unwrap().encode();
            let d = Doc {
                namespace: ns.into(),
                path,
                content: format!("{} {tag}", text.join(" ")),
                timestamp: dates[*n as usize % dates.len()],
                ..Default::default()
            };
            (key, d)
        };
        let mut idx = LexicalIndex::new();
        for spec in &docs {
            let (key, d) = doc(spec, "");
            idx.insert(&key, ObjectId::from_bytes([0; 32]), &d);
        }
        if read_back {
            idx = LexicalIndex::from_bytes(&idx.to_bytes().unwrap()).unwrap();
        }
        for (i, replace) in &changes {
            let (key, d) = doc(&docs[i % docs.len()], "lake deploy");
            match replace {
                true => idx.insert(&key, ObjectId::from_bytes([1; 32]), &d),
                false => idx.remove(&key),
            }
        }
        let text: Vec<&str> = query.iter().map(|w| QUERY_WORDS[*w]).collect();
        let text = text.join(" ");
        // Filters on keys and dates, which the records ranked and the windows' rows follow.
        let globs = test_globs();
        let q = test_query(&text, only_default, filter, &globs, limit, recency);
        let run = |defer_windows, dense_rows, lazy_rows, stream| -> Vec<(String, u64)> {
            let plan = super::score::Plan {
                defer_windows,
                dense_rows,
                near_rare: super::score::NearRarePlan::Off,
                lazy_rows,
                stream,
            };
            idx.search_planned(&q, plan)
                .into_iter()
                .map(|h| (h.path, h.score.to_bits()))
                .collect()
        };
        use super::doc_rows::Fill;
        let want = run(false, Some(false), None, false);
        for (defer, dense, lazy) in [
            (false, Some(true), None),
            (true, Some(false), None),
            (true, Some(true), None),
            (true, None, None),
            (true, None, Some(Fill::Auto)),
            (true, Some(true), Some(Fill::Lookup)),
            (true, Some(false), Some(Fill::Lookup)),
            (true, Some(true), Some(Fill::Scan)),
            (true, Some(false), Some(Fill::Scan)),
            (true, Some(true), Some(Fill::All)),
            (true, Some(false), Some(Fill::All)),
        ] {
            proptest::prop_assert_eq!(&run(defer, dense, lazy, false), &want, "defer {} dense {:?} lazy {:?}", defer, dense, lazy);
        }
        // In sweeps, where the index is its file part whole (else the default plan).
        proptest::prop_assert_eq!(&run(true, None, Some(Fill::Auto), true), &want, "in sweeps");
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
    /// After removals and an overlay on a file part, the shortcuts a view and document
    /// counts take (a step in number where the neighbour is plainly the next
    /// document; removed documents looked up in the postings) answer as the general way.
    #[test]
    fn shortcuts_answer_as_the_general_way(
        docs in proptest::collection::vec((0u8..8, 0u8..100, 0usize..WORDS.len()), 1..600),
        changes in proptest::collection::vec((0u8..8, 0u8..100, 0usize..WORDS.len(), 0u8..3), 0..30),
    ) {
        let key = |a: u8, c: u8| {
            let path = if c.is_multiple_of(9) { format!("t{a}") } else { format!("t{a}.r{c:02}") };
            (crate::key::Key::new("default", &path).unwrap().encode(), path)
        };
        let doc = |path: String, w: usize| Doc {
            namespace: "default".into(),
            path,
            content: format!("{} memory", WORDS[w]),
            timestamp: JUNE_2023,
            ..Default::default()
        };
        let mut idx = LexicalIndex::new();
        for &(a, c, w) in &docs {
            let (k, path) = key(a, c);
            idx.insert(&k, ObjectId::from_bytes([0; 32]), &doc(path, w));
        }
        let mut idx = LexicalIndex::from_bytes(&idx.to_bytes().unwrap()).unwrap();
        for &(a, c, w, op) in &changes {
            let (k, path) = key(a, c);
            match op {
                0 => idx.remove(&k),
                _ => idx.insert(&k, ObjectId::from_bytes([1; 32]), &doc(path, w)),
            }
        }
        let stats = idx.stats();
        let v = super::view::View::new(&idx, stats, 1.0);
        for d in idx.live_in_key_order() {
            for after in [false, true] {
                proptest::prop_assert_eq!(v.neighbour(d, after), idx.neighbour_across(d, after));
            }
        }
        for (name, t) in idx.terms_after(None) {
            let mut live = 0;
            idx.each_posting(t, |_| live += 1);
            proptest::prop_assert_eq!(idx.df(t), live, "{}", name);
        }
    }
}

#[test]
fn actors_survive_the_cache_file_and_its_delta() {
    let doc = |path: &str, actors: &[&str]| Doc {
        namespace: "default".into(),
        path: path.into(),
        content: "helix notes".into(),
        timestamp: JUNE_2023,
        actors: actors.iter().map(|a| a.to_string()).collect(),
    };
    let key = |p: &str| crate::key::Key::new("default", p).unwrap().encode();
    let (zero, one) = (ObjectId::from_bytes([0; 32]), ObjectId::from_bytes([1; 32]));
    let mut idx = LexicalIndex::new();
    idx.insert(&key("a.one"), zero, &doc("a.one", &["agent-1"]));
    idx.insert(&key("a.two"), zero, &doc("a.two", &["agent-2", "agent-1"]));
    idx.insert(&key("a.three"), zero, &doc("a.three", &[]));
    let bytes = idx.to_bytes().unwrap();
    let mut file = LexicalIndex::from_bytes(&bytes).unwrap();
    file.insert(&key("a.four"), one, &doc("a.four", &["agent-3"]));
    file.remove(&key("a.one"));
    let delta = file.delta_bytes().unwrap();
    let mut back = LexicalIndex::from_bytes(&bytes).unwrap();
    back.apply_delta(&delta).unwrap();
    let again = LexicalIndex::from_bytes(&back.to_bytes().unwrap()).unwrap();
    let by = |ix: &LexicalIndex, a: &str| -> Vec<String> {
        let q = Query {
            text: "helix",
            actor: Some(a),
            limit: 10,
            ..Default::default()
        };
        ix.search(&q).into_iter().map(|h| h.path).collect()
    };
    for ix in [&file, &back, &again] {
        assert_eq!(by(ix, "agent-1"), ["a.two"]);
        assert_eq!(by(ix, "agent-2"), ["a.two"]);
        assert_eq!(by(ix, "agent-3"), ["a.four"]);
        assert!(by(ix, "nobody").is_empty());
        // Each hit carries its record's actor: the first listed.
        let hits = ix.search(&Query {
            text: "helix",
            limit: 10,
            ..Default::default()
        });
        let actor_of = |p: &str| hits.iter().find(|h| h.path == p).unwrap().actor.clone();
        assert_eq!(actor_of("a.two").as_deref(), Some("agent-2"));
        assert_eq!(actor_of("a.four").as_deref(), Some("agent-3"));
        assert_eq!(actor_of("a.three"), None);
    }
    assert_eq!(again.actor_names(), ["agent-1", "agent-2", "agent-3"]);
    // An agent whose only record is removed from the overlay is gone with it.
    file.remove(&key("a.four"));
    assert!(by(&file, "agent-3").is_empty());
    assert_eq!(file.actor_names(), ["agent-1", "agent-2"]);
    // Files of the previous layouts are not read (the cache is then rebuilt).
    let mut old = bytes.clone();
    old[..8].copy_from_slice(b"MEMLEX06");
    assert!(LexicalIndex::from_bytes(&old).is_err());
    let mut old_delta = delta.clone();
    old_delta[..8].copy_from_slice(b"MEMLXD03");
    let mut fresh = LexicalIndex::from_bytes(&bytes).unwrap();
    assert!(fresh.apply_delta(&old_delta).is_err());
}
