//! Ranking in sweeps (see `stream`) gives the hits of summing every window for every
//! record, to the bit, on indexes that are their file part whole.

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

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]
    /// Sweeps give the plain plan's hits (every window summed for every record, rows kept
    /// for every record), to the bit: common words, rare words, prefixes and near misses,
    /// dates, namespaces, key and date filters, every limit, both orders.
    #[test]
    fn sweeps_give_the_plain_hits(
        docs in proptest::collection::vec(
            (0u8..3, 0u8..4, 0u8..40, proptest::collection::vec(0usize..WORDS.len(), 1..8), 0u8..6),
            1..700,
        ),
        common in proptest::collection::vec(0usize..3, 0..3),
        query in proptest::collection::vec(0usize..QUERY_WORDS.len(), 1..7),
        limit in proptest::sample::select(vec![1usize, 3, 10, 50, 200]),
        recency in proptest::bool::ANY,
        only_default in proptest::bool::ANY,
        filter in 0u8..4,
        params in 0u8..8,
    ) {
        let dates = [JUNE_2023, MARCH_2024, 0.0, JUNE_2023 + 86_400.0];
        let mut idx = LexicalIndex::new();
        for (a, b, c, words, n) in &docs {
            // Some records sit one level up, between the others of their parent.
            let path = match c % 7 {
                0 => format!("t{a}.s{b}"),
                _ => format!("t{a}.s{b}.r{c:02}"),
            };
            let ns = if *n == 5 { "other" } else { "default" };
            // The words of `common` are in every record, as in a store of notes alike.
            let text: Vec<&str> = common.iter().chain(words).map(|w| WORDS[*w]).collect();
            let key = crate::key::Key::new(ns, &path).unwrap().encode();
            let d = Doc {
                namespace: ns.into(),
                path,
                content: text.join(" "),
                timestamp: dates[*n as usize % dates.len()],
                ..Default::default()
            };
            idx.insert(&key, ObjectId::from_bytes([0; 32]), &d);
        }
        let mut idx = LexicalIndex::from_bytes(&idx.to_bytes().unwrap()).unwrap();
        idx.params = varied(params);
        let text: Vec<&str> = query.iter().map(|w| QUERY_WORDS[*w]).collect();
        let text = text.join(" ");
        let globs = test_globs();
        let q = test_query(&text, only_default, filter, &globs, limit, recency);
        let run = |stream: bool| -> Vec<(String, u64)> {
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
        proptest::prop_assert_eq!(run(true), run(false));
    }
}
