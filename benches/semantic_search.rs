//! In-process search by meaning at scale: an index of N memories (the keys and contents of
//! the other benchmarks) and a vector for each, then queries embedded with the model and
//! ranked by meaning and hybrid, R times each; prints the median and the 95th percentile of
//! the query's embedding alone, of semantic and of hybrid search (embedding included), and
//! the vector cache's bytes per memory. The memories' vectors are random unit vectors (the
//! search reads every vector whatever its numbers; embedding 100,000 memories would take
//! minutes: benches/locomo_recall.rs --model times that).
//!
//! `cargo bench --bench semantic_search -- MODEL_DIR [N] [R]` (defaults 100000 20).

mod common;
use common::{args, content_of, path_of, stats};

use std::time::Instant;

use memoir::embed::{Embedder, LocalModel};
use memoir::key::Key;
use memoir::object::ObjectId;
use memoir::prolly::KeyRange;
use memoir::recall::hybrid::{self, Fusion};
use memoir::recall::lexical::{Doc, LexicalIndex, Query};
use memoir::recall::VectorIndex;

const QUERIES: &[&str] = &[
    "what did the agent learn about the deploy",
    "memory 4242",
    "which database do we use in production",
    "topic05 area07",
    "holiday plans with the family",
];

fn main() {
    let args = args();
    let Some(model_dir) = args.first() else {
        println!("semantic_search: no model directory given; benchmark skipped");
        return;
    };
    let n: usize = args.get(1).map(|a| a.parse().unwrap()).unwrap_or(100_000);
    let reps: usize = args.get(2).map(|a| a.parse().unwrap()).unwrap_or(20);
    let mut ix = LexicalIndex::new();
    for i in 0..n {
        let p = path_of(i);
        let k = Key::parse(&p, "default").unwrap();
        let doc = Doc {
            namespace: "default".into(),
            path: p.clone(),
            content: content_of(i, 0),
            timestamp: 1767225600.0,
            ..Default::default()
        };
        ix.insert(
            &k.encode(),
            ObjectId::of(memoir::object::Kind::Blob, p.as_bytes()),
            &doc,
        );
    }
    let index = LexicalIndex::from_bytes(&ix.to_bytes().unwrap()).unwrap();
    let model = LocalModel::load(std::path::Path::new(model_dir)).expect("load the model");
    let dims = model.dims();
    let docs = index.docs_in(&KeyRange::all());
    let pairs: Vec<_> = docs.iter().map(|d| (d.value, d.content)).collect();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut random = move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 33) as f32 / (1u64 << 31) as f32) - 0.5
    };
    let root = ObjectId::of(memoir::object::Kind::Blob, b"root");
    let (vectors, _) = VectorIndex::default()
        .synced(&model.model_id(), &root, &pairs, &mut |t: &[&str]| {
            Ok::<_, ()>(
                t.iter()
                    .map(|_| {
                        let mut v: Vec<f32> = (0..dims).map(|_| random()).collect();
                        memoir::embed::normalize(&mut v);
                        v
                    })
                    .collect(),
            )
        })
        .unwrap();
    println!(
        "{n} memories: vector cache {} bytes ({:.0} per memory)",
        vectors.bytes().len(),
        vectors.bytes().len() as f64 / n as f64
    );
    let fusion = Fusion::default();
    let (mut embed_t, mut semantic_t, mut hybrid_t) = (vec![], vec![], vec![]);
    for _ in 0..reps {
        for q in QUERIES {
            let query = Query {
                text: q,
                limit: 10,
                ..Default::default()
            };
            let t = Instant::now();
            let v = model.embed(&[q]).unwrap().pop().unwrap();
            embed_t.push(t.elapsed().as_secs_f64() * 1e3);
            let hits = hybrid::semantic(&index, &vectors, &v, &query);
            semantic_t.push(t.elapsed().as_secs_f64() * 1e3);
            assert_eq!(hits.len(), 10);
            let t = Instant::now();
            let v = model.embed(&[q]).unwrap().pop().unwrap();
            let hits = hybrid::hybrid(&index, &vectors, &v, &query, &fusion);
            hybrid_t.push(t.elapsed().as_secs_f64() * 1e3);
            assert_eq!(hits.len(), 10);
        }
    }
    for (label, t) in [
        ("query embedding", embed_t),
        ("semantic search (with embedding)", semantic_t),
        ("hybrid search (with embedding)", hybrid_t),
    ] {
        let (med, p95) = stats(t);
        println!("{label:<34} median {med:.2} ms  p95 {p95:.2} ms");
    }
}
