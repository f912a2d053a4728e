//! Ranking by meaning: the cosine of the query's vector with each memory's ([`semantic`]),
//! and its fusion with the lexical ranking ([`hybrid`]): a weighted sum of the lexical score
//! over the query's best lexical score and the raw cosine, over the best candidates of
//! each. Both read the lexical index for the keys, filters and texts, and a
//! [`VectorIndex`] at the same tree root for the vectors.

use std::collections::HashMap;

use super::lexical::{Hit, LexicalIndex, Query, Sort};
use super::vectors::VectorIndex;

/// How search ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    /// By words alone (BM25F and the signals); needs no model.
    #[default]
    Lexical,
    /// By meaning alone: the cosine of the embeddings.
    Semantic,
    /// Both, fused.
    Hybrid,
}

impl SearchMode {
    /// `lexical`, `semantic` or `hybrid`.
    pub fn as_str(self) -> &'static str {
        match self {
            SearchMode::Lexical => "lexical",
            SearchMode::Semantic => "semantic",
            SearchMode::Hybrid => "hybrid",
        }
    }
}

/// How the two rankings are fused.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fusion {
    /// The weight of the normalised lexical score; the cosine's is one minus it.
    pub lexical_weight: f64,
    /// How many of the best of each ranking are fused (at least the hits asked for).
    pub candidates: usize,
}

impl Default for Fusion {
    /// 0.7 for words and 0.3 for meaning over the best 100 of each: chosen on LoCoMo's dev
    /// split for turn recall@10 among 0.3 to 0.7 (`benches/locomo_recall.rs --model DIR
    /// --tune`; the candidate count, 50 to 200, changed nothing there).
    fn default() -> Self {
        Fusion {
            lexical_weight: 0.7,
            candidates: 100,
        }
    }
}

/// Whether `vectors` lists the keys of `index` (the same root, as many keys).
pub fn aligned(index: &LexicalIndex, vectors: &VectorIndex) -> bool {
    index.root().is_some() && vectors.root() == index.root() && vectors.keys() == index.len()
}

/// The positions (in key order) of the `n` best cosines among the documents `q` admits.
fn best_by_cosine(
    index: &LexicalIndex,
    order: &[u32],
    cos: &[f32],
    q: &Query<'_>,
    n: usize,
) -> Vec<usize> {
    let len = order.len().min(cos.len());
    let by_cos = |a: &usize, b: &usize| cos[*b].total_cmp(&cos[*a]).then(a.cmp(b));
    // Most searches filter out few memories: the best by cosine are found first, and the
    // filters asked of them alone, best first. Only when too few of them pass is every
    // memory filtered (asking the filters of every memory took about half the scan's time).
    let probe = n.saturating_mul(4).max(64);
    if len > probe && n > 0 {
        let mut all: Vec<usize> = (0..len).collect();
        all.select_nth_unstable_by(probe, by_cos);
        all.truncate(probe);
        all.sort_by(by_cos);
        let best: Vec<usize> = all
            .into_iter()
            .filter(|&p| index.admits(order[p], q))
            .take(n)
            .collect();
        if best.len() == n {
            return best;
        }
    }
    let mut all: Vec<usize> = (0..len).filter(|&p| index.admits(order[p], q)).collect();
    if all.len() > n {
        all.select_nth_unstable_by(n, by_cos);
        all.truncate(n);
    }
    all.sort_by(by_cos);
    all
}

/// Puts `hits` in the order `q` asks for: by score (ties by key), or newest first.
fn order_hits(hits: &mut [Hit], sort: Sort) {
    hits.sort_by(|a, b| match sort {
        Sort::Relevance => b.score.total_cmp(&a.score).then(a.key.cmp(&b.key)),
        Sort::Recency => b
            .timestamp
            .total_cmp(&a.timestamp)
            .then(b.score.total_cmp(&a.score))
            .then(a.key.cmp(&b.key)),
    });
}

/// The memories nearest in meaning to the query whose vector is `query`, scored by cosine
/// (`q.limit` of them; with `Sort::Recency`, the best by cosine, newest first).
pub fn semantic(
    index: &LexicalIndex,
    vectors: &VectorIndex,
    query: &[f32],
    q: &Query<'_>,
) -> Vec<Hit> {
    let order = index.key_order();
    let cos = vectors.cosines(query);
    let mut hits: Vec<Hit> = best_by_cosine(index, &order, &cos, q, q.limit)
        .into_iter()
        .filter_map(|p| index.hit_of(order[p], cos[p] as f64))
        .collect();
    order_hits(&mut hits, q.sort);
    hits
}

/// The lexical and the semantic rankings fused: each candidate (among the best of either)
/// scores `w · lexical / best lexical + (1 − w) · cosine`, a candidate the lexical ranking
/// did not reach counting 0 there.
pub fn hybrid(
    index: &LexicalIndex,
    vectors: &VectorIndex,
    query: &[f32],
    q: &Query<'_>,
    fusion: &Fusion,
) -> Vec<Hit> {
    let n = fusion.candidates.max(q.limit);
    let lexical = index.search(&Query {
        limit: n,
        sort: Sort::Relevance,
        ..*q
    });
    let order = index.key_order();
    let cos = vectors.cosines(query);
    let best = lexical.iter().map(|h| h.score).fold(0.0, f64::max);
    let w = fusion.lexical_weight;
    let mut fused: HashMap<usize, (f64, Option<Hit>)> = HashMap::new();
    for h in lexical {
        let Some(p) = index.position_of(&order, &h.key) else {
            continue;
        };
        let norm = if best > 0.0 { h.score / best } else { 0.0 };
        fused.insert(p, (w * norm + (1.0 - w) * cos[p] as f64, Some(h)));
    }
    for p in best_by_cosine(index, &order, &cos, q, n) {
        fused.entry(p).or_insert(((1.0 - w) * cos[p] as f64, None));
    }
    let mut ranked: Vec<(usize, f64, Option<Hit>)> =
        fused.into_iter().map(|(p, (s, h))| (p, s, h)).collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked.truncate(q.limit);
    let mut hits: Vec<Hit> = ranked
        .into_iter()
        .filter_map(|(p, score, hit)| match hit {
            Some(mut h) => {
                h.score = score;
                Some(h)
            }
            None => index.hit_of(order[p], score),
        })
        .collect();
    order_hits(&mut hits, q.sort);
    hits
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::Key;
    use crate::object::{Kind, ObjectId};
    use crate::prolly::KeyRange;
    use crate::recall::Doc;

    /// An index of `docs` (path, content) in namespace `n`, and vectors made by `axis`: a
    /// unit vector along the axis of the content's first letter.
    fn fixture(docs: &[(&str, &str)]) -> (LexicalIndex, VectorIndex) {
        let mut ix = LexicalIndex::new();
        for (path, content) in docs {
            let k = Key::new("n", path).unwrap().encode();
            let doc = Doc {
                namespace: "n".into(),
                path: path.to_string(),
                content: content.to_string(),
                timestamp: 0.0,
                ..Default::default()
            };
            ix.insert(&k, ObjectId::of(Kind::Blob, content.as_bytes()), &doc);
        }
        let indexed = ix.docs_in(&KeyRange::all());
        let pairs: Vec<_> = indexed.iter().map(|d| (d.value, d.content)).collect();
        let (vectors, _) = VectorIndex::default()
            .synced(
                "m",
                &ObjectId::of(Kind::Blob, b"root"),
                &pairs,
                &mut |t: &[&str]| Ok::<_, ()>(t.iter().map(|t| axis(t)).collect()),
            )
            .unwrap();
        (ix, vectors)
    }

    fn axis(text: &str) -> Vec<f32> {
        let mut v = vec![0.0; 4];
        v[(text.as_bytes()[0] - b'a') as usize % 4] = 1.0;
        v
    }

    fn query(text: &str, limit: usize) -> Query<'_> {
        Query {
            text,
            limit,
            ..Default::default()
        }
    }

    #[test]
    fn meaning_finds_what_words_miss_and_fusion_keeps_both() {
        let (ix, vectors) = fixture(&[
            ("a", "bicycle ride"),
            ("b", "biking neighbor"),
            ("c", "database migration"),
            ("d", "deploy database"),
        ]);
        // By meaning: the two `b...` records are along the query's axis.
        let hits = semantic(&ix, &vectors, &axis("bb"), &query("cycling", 2));
        let keys: Vec<&str> = hits.iter().map(|h| h.path.as_str()).collect();
        assert_eq!(keys, ["a", "b"]);
        assert!((hits[0].score - 1.0).abs() < 0.01);
        // Hybrid: `migration` matches c by words; d is near by meaning; words win ties.
        let hits = hybrid(
            &ix,
            &vectors,
            &axis("d"),
            &query("migration", 3),
            &Fusion::default(),
        );
        let keys: Vec<&str> = hits.iter().map(|h| h.path.as_str()).collect();
        assert_eq!(keys[..2], ["c", "d"]);
        assert!(
            hits[0].score > hits[1].score && hits[1].score > 0.25,
            "{hits:?}"
        );
        // Filters hold.
        let q = Query {
            namespace: Some("other"),
            ..query("migration", 3)
        };
        assert!(semantic(&ix, &vectors, &axis("d"), &q).is_empty());
        assert!(hybrid(&ix, &vectors, &axis("d"), &q, &Fusion::default()).is_empty());
    }

    #[test]
    fn the_best_by_meaning_are_the_best_the_filters_admit() {
        // 200 memories, every tenth in namespace `b`; the cosine with the query falls with
        // the number.
        let mut ix = LexicalIndex::new();
        let mut vectors = Vec::new();
        for i in 0..200 {
            let (ns, path) = (if i % 10 == 0 { "b" } else { "a" }, format!("k{i:03}"));
            let doc = Doc {
                namespace: ns.into(),
                path: path.clone(),
                content: format!("memory {i}"),
                timestamp: 0.0,
                ..Default::default()
            };
            let k = Key::new(ns, &path).unwrap().encode();
            ix.insert(&k, ObjectId::of(Kind::Blob, path.as_bytes()), &doc);
        }
        let indexed = ix.docs_in(&KeyRange::all());
        for d in &indexed {
            let i: f32 = d.path[1..].parse().unwrap();
            vectors.push(vec![(i * 0.005).cos(), (i * 0.005).sin()]);
        }
        let pairs: Vec<_> = indexed.iter().map(|d| (d.value, d.content)).collect();
        let mut next = vectors.into_iter();
        let (vectors, _) = VectorIndex::default()
            .synced("m", &ObjectId::of(Kind::Blob, b"root"), &pairs, &mut |t| {
                Ok::<_, ()>(t.iter().map(|_| next.next().unwrap()).collect())
            })
            .unwrap();
        let paths = |ns: &str, limit: usize| -> Vec<String> {
            let q = Query {
                namespace: Some(ns),
                ..query("", limit)
            };
            semantic(&ix, &vectors, &[1.0, 0.0], &q)
                .into_iter()
                .map(|h| h.path)
                .collect()
        };
        assert_eq!(paths("a", 3), ["k001", "k002", "k003"]);
        assert_eq!(paths("b", 3), ["k000", "k010", "k020"]);
        // Fewer than 10 of `b` among the best by cosine: every memory is filtered.
        let b: Vec<String> = (0..10).map(|i| format!("k{:03}", i * 10)).collect();
        assert_eq!(paths("b", 10), b);
    }
}
