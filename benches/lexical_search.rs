//! In-process lexical search timings: builds an index of N memories (the keys and contents of
//! the other benchmarks), writes it as a cache file and reads it back in place, then runs
//! each query R times and prints the median and the fastest, on the index as read back and
//! on the same with 25 records changed since (an overlay, as a store's index usually has). Queries are the arguments after
//! N and R, or three default ones whose words every memory holds (the costliest kind).
//!
//! `cargo bench --bench lexical_search -- [N] [R] [QUERY...]` (defaults 100000 25).

mod common;
use common::{args, content_of, path_of};

use memoir::key::Key;
use memoir::object::ObjectId;
use memoir::recall::lexical::{Doc, LexicalIndex, Query};
use std::time::Instant;

fn main() {
    let args = args();
    let n: usize = args.first().map(|a| a.parse().unwrap()).unwrap_or(100_000);
    let reps: usize = args.get(1).map(|a| a.parse().unwrap()).unwrap_or(25);
    let mut ix = LexicalIndex::new();
    let t = Instant::now();
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
    eprintln!("build {:?}", t.elapsed());
    let bytes = ix.to_bytes().unwrap();
    let frozen = LexicalIndex::from_bytes(&bytes).unwrap();
    // The state a store's index is usually in: the cache file plus a few changes since.
    let mut changed = LexicalIndex::from_bytes(&bytes).unwrap();
    for c in 0..25 {
        let i = (c * 7919) % n.max(1);
        let p = path_of(i);
        let doc = Doc {
            namespace: "default".into(),
            path: p.clone(),
            content: content_of(i, c + 1),
            timestamp: 1767225600.0 + c as f64,
            ..Default::default()
        };
        let k = Key::parse(&p, "default").unwrap().encode();
        changed.insert(&k, ObjectId::of(memoir::object::Kind::Blob, &k), &doc);
    }
    for q in args
        .get(2..)
        .map(|s| s.to_vec())
        .unwrap_or_default()
        .iter()
        .map(|s| s.as_str())
        .chain(if args.len() > 2 {
            vec![]
        } else {
            vec!["item004242", "memory 4242", "topic05 area07"]
        })
    {
        let mut line = format!("{q:<20}");
        for (label, ix) in [("frozen", &frozen), ("25 changes", &changed)] {
            let mut ts = vec![];
            let mut hits = 0;
            for _ in 0..reps {
                let t = Instant::now();
                let h = ix.search(&Query {
                    text: q,
                    limit: 50,
                    ..Default::default()
                });
                ts.push(t.elapsed().as_secs_f64() * 1e3);
                hits = h.len();
            }
            ts.sort_by(f64::total_cmp);
            line += &format!(
                "  {label}: median {:.2} ms min {:.2} ({hits} hits)",
                ts[ts.len() / 2],
                ts[0]
            );
        }
        println!("{line}");
    }
}
