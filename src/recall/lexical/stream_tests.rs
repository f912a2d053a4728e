//! Ranking in sweeps (see `stream`) gives the hits of summing every window for every
//! record, to the bit, on indexes that are their file part whole and on indexes changed
//! since (documents removed, added and replaced: see `key_order`).

use super::score::{NearRarePlan, Plan};
use super::tests::{test_globs, test_query, JUNE_2023, MARCH_2024, QUERY_WORDS, WORDS};
use super::*;

/// Ranking parameters the sweeps are checked with: the defaults, and parts of a score
/// turned off or changed.
fn varied(which: u8) -> Params {
    let d = Params::default();
    match which {
        1 => Params {
            neighbour_weight: 0.0,
            group_weight: 0.0,
            ..d
        },
        2 => Params { window: 0, ..d },
        3 => Params { window: 3, ..d },
        4 => Params {
            window_weight: 0.0,
            feedback_docs: 0,
            ..d
        },
        5 => Params {
            parent_weight: 0.0,
            ..d
        },
        6 => Params {
            feedback_docs: 3,
            feedback_weight: 2.0,
            date_weight: 0.0,
            ..d
        },
        _ => d,
    }
}

/// A hit as the plans are compared: its path and its score's bits.
type Ranked = (String, u64);

/// A change made to an index read back from its bytes: a key's document inserted (or
/// replaced), or the key removed.
type Change = (Vec<u8>, Option<Doc>);

/// The hits of the query of `QUERY_WORDS` numbered `query` on `idx` read back from its
/// bytes (so that it is its file part whole) then changed by `changes`, with parameters
/// `params`, ranked in sweeps and by the plain plan (every window summed for every record),
/// and the records the sweeps passed over unread.
#[allow(clippy::too_many_arguments)]
fn swept_and_plain(
    idx: &LexicalIndex,
    changes: &[Change],
    params: Params,
    query: &[usize],
    only_default: bool,
    filter: u8,
    limit: usize,
    recency: bool,
) -> (Vec<Ranked>, Vec<Ranked>, u64) {
    let file = idx.to_bytes().unwrap();
    let mut idx = LexicalIndex::from_bytes(&file).unwrap();
    for (key, doc) in changes {
        match doc {
            Some(d) => idx.insert(key, ObjectId::from_bytes([1; 32]), d),
            None => idx.remove(key),
        }
    }
    // The same changes read back from their delta file, swept alike below.
    let mut back = LexicalIndex::from_bytes(&file).unwrap();
    back.apply_delta(&idx.delta_bytes().unwrap()).unwrap();
    back.params = params;
    idx.params = params;
    let text: Vec<&str> = query.iter().map(|w| QUERY_WORDS[*w]).collect();
    let text = text.join(" ");
    let globs = test_globs();
    let q = test_query(&text, only_default, filter, &globs, limit, recency);
    let run = |stream: bool| -> Vec<Ranked> {
        let plan = Plan {
            defer_windows: !stream,
            dense_rows: Some(false),
            near_rare: NearRarePlan::Off,
            lazy_rows: None,
            stream,
        };
        idx.search_planned(&q, plan)
            .into_iter()
            .map(|h| (h.path, h.score.to_bits()))
            .collect()
    };
    let swept = run(true);
    let plan = Plan {
        stream: true,
        dense_rows: Some(false),
        near_rare: NearRarePlan::Off,
        lazy_rows: None,
        defer_windows: false,
    };
    let from_delta: Vec<Ranked> = back
        .search_planned(&q, plan)
        .into_iter()
        .map(|h| (h.path, h.score.to_bits()))
        .collect();
    assert_eq!(from_delta, swept, "read back from the delta file");
    let passed = idx
        .stats()
        .passed
        .load(std::sync::atomic::Ordering::Relaxed);
    (swept, run(false), passed)
}

/// A record of the first property test: its key and document. Some records sit one level
/// up, between the others of their parent; the words of `common` are in every record, as in
/// a store of notes alike.
fn varied_doc(a: u8, b: u8, c: u8, common: &[usize], words: &[usize], n: u8) -> (Vec<u8>, Doc) {
    // June in two years and 2023 in two months: a month's or a year's records in more than
    // one run of the date-ordered table.
    let (june_2024, march_2023) = (JUNE_2023 + 366.0 * 86_400.0, MARCH_2024 - 366.0 * 86_400.0);
    let dates = [
        JUNE_2023,
        MARCH_2024,
        0.0,
        JUNE_2023 + 86_400.0,
        june_2024,
        march_2023,
    ];
    let path = match c % 7 {
        0 => format!("t{a}.s{b}"),
        _ => format!("t{a}.s{b}.r{c:02}"),
    };
    let ns = if n == 5 { "other" } else { "default" };
    let text: Vec<&str> = common.iter().chain(words).map(|w| WORDS[*w]).collect();
    let key = crate::key::Key::new(ns, &path).unwrap().encode();
    let d = Doc {
        namespace: ns.into(),
        path,
        content: text.join(" "),
        timestamp: dates[n as usize % dates.len()],
        ..Default::default()
    };
    (key, d)
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(192))]
    /// Sweeps give the plain plan's hits (every window summed for every record, rows kept
    /// for every record), to the bit: common words, rare words, prefixes and near misses,
    /// dates, namespaces, key and date filters, every limit, both orders; on the index as
    /// read back from its bytes and, with `changed`, after records are removed, added (under
    /// parents of the file part and new ones, before, between and after its records) and
    /// replaced, some of them more than once.
    #[test]
    fn sweeps_give_the_plain_hits(
        docs in proptest::collection::vec(
            (0u8..3, 0u8..4, 0u8..40, proptest::collection::vec(0usize..WORDS.len(), 1..8), 0u8..6),
            1..700,
        ),
        changed in proptest::bool::ANY,
        changes in proptest::collection::vec(
            (0u8..3, 0u8..5, 0u8..40, proptest::collection::vec(0usize..WORDS.len(), 0..8), 0u8..6),
            1..60,
        ),
        common in proptest::collection::vec(0usize..3, 0..3),
        query in proptest::collection::vec(0usize..QUERY_WORDS.len(), 1..7),
        limit in proptest::sample::select(vec![1usize, 3, 10, 50, 200]),
        recency in proptest::bool::ANY,
        only_default in proptest::bool::ANY,
        filter in 0u8..4,
        params in 0u8..8,
    ) {
        let mut idx = LexicalIndex::new();
        for (a, b, c, words, n) in &docs {
            let (key, d) = varied_doc(*a, *b, *c, &common, words, *n);
            idx.insert(&key, ObjectId::from_bytes([0; 32]), &d);
        }
        // A change with no words removes its key (held or not); `s4` is a parent the file
        // part does not hold.
        let changes: Vec<Change> = changes
            .iter()
            .filter(|_| changed)
            .map(|(a, b, c, words, n)| {
                let (key, d) = varied_doc(*a, *b, *c, &common, words, *n);
                (key, (!words.is_empty()).then_some(d))
            })
            .collect();
        let (swept, plain, _) = swept_and_plain(&idx, &changes, varied(params), &query, only_default, filter, limit, recency);
        proptest::prop_assert_eq!(swept, plain);
    }

    /// Among many records alike, whose scores tie or nearly tie (what a store of notes
    /// copied many times holds), sweeps still give the plain plan's hits and their order,
    /// to the bit: a record or a parent whose bound only ties the last kept is not summed
    /// or read, and ranks after it.
    #[test]
    fn sweeps_give_the_plain_hits_among_ties(
        docs in proptest::collection::vec(
            (0u8..2, 0u8..3, 0u16..400, 0usize..4, 0usize..3, 0u8..6),
            300..3000,
        ),
        query in proptest::collection::vec(0usize..QUERY_WORDS.len(), 1..7),
        limit in proptest::sample::select(vec![1usize, 3, 10, 50]),
        only_default in proptest::bool::ANY,
        filter in 0u8..4,
        params in 0u8..8,
    ) {
        // Four texts of the query's words, some records a little longer than others (a
        // word no query holds), so that most records match alike or nearly.
        let texts: Vec<String> = (0..4)
            .map(|t| {
                let words = QUERY_WORDS.iter().skip(t).step_by(t + 1);
                words.copied().collect::<Vec<_>>().join(" ")
            })
            .collect();
        let mut idx = LexicalIndex::new();
        for (a, b, c, t, longer, n) in &docs {
            // (Parents of at most 40 records, so that sweeps bound them: see `HOLD_MOST`.)
            let path = format!("t{a}.s{b}.g{}.r{c:03}", c / 40);
            let ns = if *n == 5 { "other" } else { "default" };
            let key = crate::key::Key::new(ns, &path).unwrap().encode();
            let d = Doc {
                namespace: ns.into(),
                path,
                content: format!("{}{}", texts[*t], " lake".repeat(*longer)),
                timestamp: JUNE_2023,
                ..Default::default()
            };
            idx.insert(&key, ObjectId::from_bytes([0; 32]), &d);
        }
        let (swept, plain, _) = swept_and_plain(&idx, &[], varied(params), &query, only_default, filter, limit, false);
        proptest::prop_assert_eq!(swept, plain);
    }
}

/// Sweeps of `idx` changed by `changes` give the plain plan's hits to the bit for each of
/// `queries`, with every set of parameters and limits 1 and 10, and pass over at least
/// `least` of its `records` records.
fn assert_passed_over(
    idx: &LexicalIndex,
    changes: &[Change],
    queries: &[&[usize]],
    least: u64,
    records: usize,
) {
    for query in queries {
        for params in 0..8 {
            for limit in [1, 10] {
                let (swept, plain, passed) =
                    swept_and_plain(idx, changes, varied(params), query, false, 0, limit, false);
                assert_eq!(swept, plain, "query {query:?}, parameters {params}");
                assert!(
                    passed >= least,
                    "query {query:?}, parameters {params}: {passed} of {records} passed over"
                );
            }
        }
    }
}

/// 1,200 records alike under 40 parents, a few holding a rarer word (`oscar`) more often the
/// later their parent comes (so they rank first), and each record's key with whether it
/// holds the rarer word.
fn records_alike() -> (LexicalIndex, Vec<(Vec<u8>, bool)>) {
    let mut idx = LexicalIndex::new();
    let mut keys = Vec::new();
    for g in 0..40 {
        for r in 0..30 {
            let path = format!("t1.s{g:02}.r{r:02}");
            let rarer = match (g * 30 + r) % 97 {
                5 => " oscar".repeat(1 + g / 8),
                _ => String::new(),
            };
            let key = crate::key::Key::new("default", &path).unwrap().encode();
            let d = Doc {
                namespace: "default".into(),
                path,
                content: format!("memory agent learned painting{rarer}"),
                timestamp: JUNE_2023,
                ..Default::default()
            };
            idx.insert(&key, ObjectId::from_bytes([0; 32]), &d);
            keys.push((key, (g * 30 + r) % 97 == 5));
        }
    }
    (idx, keys)
}

/// A sweep passes over the parents none of whose records can be a hit, reading none of
/// their postings, and gives the plain plan's hits to the bit: among records alike (whose
/// scores tie, the first in key order ranking first), with a few holding a rarer word more
/// often the later they come, and with every set of parameters.
#[test]
fn parents_that_cannot_hold_a_hit_are_passed_over() {
    let (idx, _) = records_alike();
    // memory agent; memory agent painting; agent oscar.
    assert_passed_over(&idx, &[], &[&[0, 1], &[0, 1, 2], &[1, 6]], 300, 1200);
}

/// After a write, a parent whose records changed since the file was written is read, never
/// bounded from what the file says of it, and the others are still passed over: a record
/// replaced to hold a word more often, and one added under a parent of the file holding a
/// word the file does not, are hits as the plain plan finds them.
#[test]
fn changed_parents_are_read() {
    let doc = |path: &str, content: &str| -> (Vec<u8>, Doc) {
        let key = crate::key::Key::new("default", path).unwrap().encode();
        let d = Doc {
            namespace: "default".into(),
            path: path.into(),
            content: content.into(),
            timestamp: JUNE_2023,
            ..Default::default()
        };
        (key, d)
    };
    let mut idx = LexicalIndex::new();
    for g in 0..40 {
        for r in 0..30 {
            let (key, d) = doc(
                &format!("t1.s{g:02}.r{r:02}"),
                "memory agent learned painting",
            );
            idx.insert(&key, ObjectId::from_bytes([0; 32]), &d);
        }
    }
    let changes: Vec<Change> = [
        doc("t1.s20.r05", "memory memory memory memory agent"),
        doc("t1.s35.r99", "memory agent painting oscar oscar"),
    ]
    .into_iter()
    .map(|(key, d)| (key, Some(d)))
    .collect();
    // memory agent; agent oscar.
    assert_passed_over(&idx, &changes, &[&[0, 1], &[1, 6]], 300, 1201);
}

/// After forgets, a parent whose documents were only removed keeps the bound the file gives
/// it (what the file says takes in more records than are left): it is passed over when it
/// cannot hold a hit, and the hits are still the plain plan's, to the bit, with the records
/// that held the rarer word most often among those removed.
#[test]
fn parents_with_documents_only_removed_are_still_bounded() {
    let (idx, keys) = records_alike();
    // Every third record of every parent, and every record holding `oscar` in the last
    // parents (those that held it most often, and ranked first).
    let changes: Vec<Change> = (keys.iter().enumerate())
        .filter(|(i, (_, oscar))| i % 3 == 0 || (*oscar && *i >= 30 * 32))
        .map(|(_, (key, _))| (key.clone(), None))
        .collect();
    // memory agent; memory agent painting; agent oscar.
    assert_passed_over(&idx, &changes, &[&[0, 1], &[0, 1, 2], &[1, 6]], 100, 800);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
    /// The records a word reached several ways matches are counted exactly: when one way
    /// misses few records (its gaps found by halving, the others asked about them alone) as
    /// when none does.
    #[test]
    fn a_word_reached_several_ways_counts_each_record_once(
        n in 1u32..3000,
        ways in proptest::collection::vec(
            (proptest::bool::ANY, proptest::collection::vec(0u32..3100, 0..40)),
            1..4,
        ),
    ) {
        use super::blocks::{From, Numbers, Source, Term};
        // A way is nearly every record (less the ones listed) or only the ones listed.
        let sets: Vec<Vec<u32>> = ways
            .iter()
            .map(|(most, listed)| {
                let mut v: Vec<u32> = match most {
                    true => (0..n).filter(|r| !listed.contains(r)).collect(),
                    false => listed.clone(),
                };
                v.sort_unstable();
                v.dedup();
                v
            })
            .collect();
        let bytes: Vec<Vec<u8>> = sets
            .iter()
            .map(|v| v.iter().flat_map(|d| d.to_le_bytes()).collect())
            .collect();
        let sources: Vec<Source<'_>> = bytes
            .iter()
            .map(|b| Source { from: From::Dated { docs: Numbers::whole(b), idf: 1.0 }, at: 0 })
            .collect();
        let terms = [Term { range: 0..sources.len(), direct: false }];
        let mut all: Vec<u32> = sets.concat().into_iter().filter(|&r| r < n).collect();
        all.sort_unstable();
        all.dedup();
        let got = stream::matching(&sources, &terms, n);
        proptest::prop_assert_eq!(got, vec![all.len() as f64]);
    }
}
