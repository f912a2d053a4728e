//! The search near rare words answers as the full search, to the bit, or not at all; the sums and
//! tables it reads answer as the postings they summarise.

use super::near_rare::NearRareFrom;
use super::score::{NearRarePlan, Plan};
use super::*;

/// 1 June 2023, 12:00 UTC.
const JUNE_2023: f64 = 1_685_620_800.0;

/// Words of the records: every record holds the first; the others are rarer.
const WORDS: [&str; 11] = [
    "memory", "painting", "camping", "oscar", "lake", "deploy", "kernel", "support", "garden",
    "violin", "memos",
];

/// Query words: record words, prefixes (`memo` reaches `memos` and `memory`, which every
/// record holds), near misses, a month and a year.
const QUERY_WORDS: [&str; 11] = [
    "painting", "camping", "oscar", "paint", "kernl", "suport", "june", "2023", "violin", "r05",
    "memo",
];

type Spec = (u8, u8, u8, Vec<usize>, u8);

fn doc((a, b, c, words, n): &Spec, tag: &str) -> (Vec<u8>, Doc) {
    let path = match c % 9 {
        0 => format!("t{a}.s{b}"),
        _ => format!("t{a}.s{b}.r{c:02}"),
    };
    let ns = if *n == 5 { "other" } else { "default" };
    let text: Vec<&str> = words.iter().map(|w| WORDS[*w]).collect();
    let key = crate::key::Key::new(ns, &path).unwrap().encode();
    let d = Doc {
        namespace: ns.into(),
        path,
        content: format!("memory {} {tag}", text.join(" ")),
        timestamp: [JUNE_2023, 0.0, JUNE_2023 + 3e7][*n as usize % 3],
        // Every record has an actor; some a second one (an older entry's).
        actors: match b {
            0 => vec![format!("agent-{}", a % 2), "agent-9".to_string()],
            _ => vec![format!("agent-{}", a % 2)],
        },
    };
    (key, d)
}

fn build(docs: &[Spec], read_back: bool, changes: &[(usize, bool)]) -> LexicalIndex {
    let mut idx = LexicalIndex::new();
    for spec in docs {
        let (key, d) = doc(spec, "");
        idx.insert(&key, ObjectId::from_bytes([0; 32]), &d);
    }
    if read_back {
        idx = LexicalIndex::from_bytes(&idx.to_bytes().unwrap()).unwrap();
    }
    for (i, replace) in changes {
        let (key, d) = doc(&docs[i % docs.len()], "lake deploy memory");
        match replace {
            true => idx.insert(&key, ObjectId::from_bytes([1; 32]), &d),
            false => idx.remove(&key),
        }
    }
    idx
}

fn ranked(idx: &LexicalIndex, q: &Query<'_>, near_rare: NearRarePlan) -> Vec<(String, u64)> {
    let plan = Plan {
        near_rare,
        ..Plan::default()
    };
    idx.search_planned(q, plan)
        .into_iter()
        .map(|h| (h.path, h.score.to_bits()))
        .collect()
}

/// The hits of `q` searched to be explained: what `want` holds, each with parts that sum to
/// its score.
fn check_explained(
    idx: &LexicalIndex,
    q: &Query<'_>,
    want: &[(String, u64)],
) -> Result<(), String> {
    let hits = idx.search_planned(
        &Query {
            explain: true,
            ..*q
        },
        Plan::default(),
    );
    let got: Vec<(String, u64)> = hits
        .iter()
        .map(|h| (h.path.clone(), h.score.to_bits()))
        .collect();
    if got != want {
        return Err(format!("explained {got:?} != {want:?}"));
    }
    for h in &hits {
        let parts = h.terms.parts.ok_or("no parts")?;
        if (parts.sum() - h.score).abs() > 1e-9 * h.score.max(1.0) {
            return Err(format!("{parts:?} sum to {} not {}", parts.sum(), h.score));
        }
    }
    Ok(())
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]
    /// NearRare at any threshold, a search gives the full search's hits, to the bit: on
    /// indexes in memory, and read back from their bytes then changed; with filters, either order, any limit.
    #[test]
    fn a_search_near_rare_words_gives_the_full_search_hits(
        docs in proptest::collection::vec(
            (0u8..3, 0u8..4, 0u8..40, proptest::collection::vec(1usize..WORDS.len(), 0..4), 0u8..6),
            1..220,
        ),
        read_back in proptest::bool::ANY,
        changes in proptest::collection::vec((0usize..220, proptest::bool::ANY), 0..12),
        query in proptest::collection::vec(0usize..QUERY_WORDS.len(), 0..3),
        limit in proptest::sample::select(vec![1usize, 3, 10]),
        recency in proptest::bool::ANY,
        only_default in proptest::bool::ANY,
        weights in 0usize..6,
        by_agent in 0usize..3,
    ) {
        let mut idx = build(&docs, read_back, &changes);
        idx.params = varied(weights);
        let mut words = vec!["memory"];
        words.extend(query.iter().map(|w| QUERY_WORDS[*w]));
        let text = words.join(" ");
        let q = Query {
            text: &text,
            with_internal: false,
            namespace: only_default.then_some("default"),
            limit,
            sort: if recency { Sort::Recency } else { Sort::Relevance },
            actor: [None, Some("agent-1"), Some("agent-9")][by_agent],
            ..Default::default()
        };
        let want = ranked(&idx, &q, NearRarePlan::Off);
        if let Some(a) = q.actor {
            for h in idx.search_planned(&q, Plan::default()) {
                let d = idx.number_of(&h.key).unwrap();
                proptest::prop_assert!(idx.actors_of(d).contains(&a), "{} by {}", h.path, a);
            }
        }
        check_explained(&idx, &q, &want).map_err(proptest::test_runner::TestCaseError::fail)?;
        for dense_from in [2, 10, 60] {
            let from = NearRareFrom { dense_from, sparse_most: usize::MAX };
            proptest::prop_assert_eq!(&ranked(&idx, &q, NearRarePlan::With(from)), &want, "dense from {}", dense_from);
        }
    }

    /// The frequencies under each parent that the file part stores, corrected for removed
    /// and overlay documents, are the sums of the live postings, and each term's count of
    /// live documents is theirs: as changed and as read back with its delta. The records
    /// dated in a month or a year are those a scan of every record finds.
    #[test]
    fn stored_sums_and_date_order_answer_as_a_scan(
        docs in proptest::collection::vec(
            (0u8..3, 0u8..4, 0u8..40, proptest::collection::vec(1usize..WORDS.len(), 0..4), 0u8..6),
            64..260,
        ),
        changes in proptest::collection::vec((0usize..260, proptest::bool::ANY), 0..40),
    ) {
        let idx = build(&docs, true, &changes);
        let mut back = LexicalIndex::from_bytes(&build(&docs, false, &[]).to_bytes().unwrap()).unwrap();
        back.apply_delta(&idx.delta_bytes().unwrap()).unwrap();
        for ix in [&idx, &back] {
            let stats = ix.stats();
            for (name, t) in ix.terms_after(None) {
                let mut want = ix.summed_parent_frequencies(t, stats);
                want.sort_by_key(|e| e.0);
                let mut got = ix.parent_frequencies(t, stats).to_vec();
                got.sort_by_key(|e| e.0);
                proptest::prop_assert_eq!(got, want, "{}", name);
                let mut live = 0;
                ix.each_posting(t, |_| live += 1);
                proptest::prop_assert_eq!(ix.df(t), live, "{}", name);
                // The removed documents' postings, kept apart, are the file's.
                let mut removed: Vec<_> = ix.removed_postings(t).copied().collect();
                removed.sort_unstable_by_key(|p| p.doc);
                let held: Vec<_> = ix.base_postings(t).iter().filter(|p| ix.dead[p.doc as usize]).collect();
                proptest::prop_assert_eq!(removed, held, "{}", name);
                // Each where the term's postings hold it.
                for r in t.base.into_iter().flat_map(|i| ix.removed_postings.of(i)) {
                    proptest::prop_assert_eq!(ix.base_postings(t).get(r.at as usize), Some(r.posting));
                }
            }
        }
        let stats = idx.stats();
        let mut stored = 0;
        for (_, t) in idx.terms_after(None) {
            stored += usize::from(t.base.is_some_and(|i| idx.base.parent_sums(i as usize).is_some()));
        }
        // Every file-part term of enough postings has its sums stored.
        let want = (0..idx.base.n_terms())
            .filter(|&i| idx.base.term_postings(i).len() >= codec::PARENT_SUMS_FROM)
            .count();
        proptest::prop_assert_eq!(stored, want);
        for t in [dates::DateTerm::Year(2023), dates::DateTerm::Year(2024), dates::DateTerm::Month(6), dates::DateTerm::Month(1)] {
            let scan: Vec<u32> = (0..(idx.base.n_docs() + idx.docs.len()) as u32)
                .filter(|&d| idx.live_len(d).is_some() && idx.date(stats, d).is_some_and(|x| t.matches(x)))
                .collect();
            // Runs of ascending records that together are the records dated so, each once.
            let dated = idx.dated(t);
            for run in dated.runs() {
                let run: Vec<u32> = dates::numbers(run).collect();
                proptest::prop_assert!(run.windows(2).all(|w| w[0] < w[1]), "{:?}", t);
            }
            let mut all = Vec::new();
            dated.for_each(|d| all.push(d));
            all.sort_unstable();
            proptest::prop_assert_eq!(dated.len(), scan.len());
            proptest::prop_assert_eq!(all, scan, "{:?}", t);
        }
    }
}

/// Ranking parameters the search near rare words is checked with: the defaults, and parts of a score turned
/// off (what duplicate detection and measurements use).
fn varied(which: usize) -> Params {
    let d = Params::default();
    match which {
        1 => Params {
            neighbour_weight: 0.0,
            group_weight: 0.0,
            ..d
        },
        2 => Params { window: 0, ..d },
        3 => Params {
            window_weight: 0.0,
            feedback_docs: 0,
            ..d
        },
        4 => Params {
            parent_weight: 0.0,
            ..d
        },
        5 => Params {
            neighbour_weight: 0.0,
            group_weight: 0.0,
            window_weight: 0.0,
            parent_weight: 0.0,
            ..d
        },
        _ => d,
    }
}

/// On a large enough index the search near rare words answers by itself (it does not fall back to
/// the full search), with every set of parameters, and gives the full search's hits.
#[test]
fn the_search_near_rare_words_answers_when_one_leads() {
    for read_back in [false, true] {
        let mut idx = LexicalIndex::new();
        for i in 0..3000u32 {
            let word = match i {
                _ if i % 997 == 0 => 9,
                // A third hold `memos`, which `memo` reaches beside `memory`.
                _ if i % 3 == 1 => 10,
                _ => 1 + (i % 7) as usize,
            };
            let path = format!("t{}.s{}.r{i:05}", i % 3, i / 3 % 4);
            let key = crate::key::Key::new("default", &path).unwrap().encode();
            let d = Doc {
                namespace: "default".into(),
                path,
                content: format!("memory {}", WORDS[word]),
                timestamp: JUNE_2023,
                ..Default::default()
            };
            idx.insert(&key, ObjectId::from_bytes([0; 32]), &d);
        }
        if read_back {
            idx = LexicalIndex::from_bytes(&idx.to_bytes().unwrap()).unwrap();
            let key = crate::key::Key::new("default", "t0.s0.r00003")
                .unwrap()
                .encode();
            idx.remove(&key);
        }
        // A common word reached one way (the search near rare words answers with every set of parameters),
        // and one reached two ways, one of which every record holds (it answers with some).
        for (text, words, always) in [
            ("memory violin", ["memori", "violin"], true),
            ("memo violin", ["memo", "violin"], false),
        ] {
            let mut answered = 0;
            let q = Query {
                text,
                with_internal: false,
                limit: 3,
                ..Default::default()
            };
            for which in 0..6 {
                idx.params = varied(which);
                let reach: Vec<score::Reach> = words
                    .iter()
                    .map(|t| {
                        let e = idx
                            .expand(t)
                            .into_iter()
                            .map(|(r, w)| (r, w, idx.df(r)))
                            .collect();
                        (e, None)
                    })
                    .collect();
                let stats = idx.stats();
                let avg = (idx.total_len / idx.len() as f64).max(1.0);
                let ask = |from| {
                    idx.search_near_rare(&q, &reach, stats, avg, from).map(|h| {
                        h.into_iter()
                            .map(|h| (h.path, h.score.to_bits()))
                            .collect::<Vec<_>>()
                    })
                };
                // 3,000 records are below the automatic threshold of 4,096 postings.
                assert!(ask(NearRareFrom::for_docs(idx.base.n_docs() + idx.docs.len())).is_none());
                let near = ask(NearRareFrom {
                    dense_from: 1000,
                    sparse_most: 100,
                });
                assert!(
                    near.is_some() || !always,
                    "the search near rare words answers {text} with parameters {which}"
                );
                let Some(near) = near else { continue };
                answered += 1;
                assert_eq!(near.len(), 3);
                assert_eq!(
                    near,
                    ranked(&idx, &q, NearRarePlan::Off),
                    "{text}, parameters {which}"
                );
            }
            assert!(
                answered > 0,
                "the search near rare words never answers {text}"
            );
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
    /// Building a tree's index in one pass writes the very bytes of the same documents
    /// inserted into an index in memory and written whole.
    #[test]
    fn a_built_index_is_the_index_written_whole(
        docs in proptest::collection::vec(
            (0u8..3, 0u8..4, 0u8..40, proptest::collection::vec(1usize..WORDS.len(), 0..4), 0u8..6),
            0..200,
        ),
        root in proptest::bool::ANY,
    ) {
        let mut sorted: std::collections::BTreeMap<Vec<u8>, Doc> = std::collections::BTreeMap::new();
        for spec in &docs {
            let (key, d) = doc(spec, "Stop the ReadMessageItem running");
            sorted.insert(key, d);
        }
        let mut idx = LexicalIndex::new();
        let mut built = super::Builder::new(Params::default());
        for (i, (key, d)) in sorted.iter().enumerate() {
            let value = ObjectId::from_bytes([i as u8; 32]);
            idx.insert(key, value, d);
            built.add(key, &value, &d.view()).unwrap();
        }
        let root = root.then(|| ObjectId::from_bytes([7; 32]));
        idx.root = root;
        let mut bytes = Vec::new();
        built.write(root.as_ref(), &mut bytes).unwrap();
        proptest::prop_assert_eq!(bytes, idx.to_bytes().unwrap());
    }
}
