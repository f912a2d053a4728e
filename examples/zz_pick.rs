use memoir::key::Key;
use memoir::object::{Kind, ObjectId};
use memoir::recall::{Doc, LexicalIndex, Query, TreeInventory};
use std::time::Instant;
fn main() {
    let mut ix = LexicalIndex::new();
    for i in 0..5000u32 {
        let path = format!("topic{:02}.sub{:02}.item{i:04}", i % 50, i % 7);
        let k = Key::new("default", &path).unwrap().encode();
        let content =
            format!("memory {i}: the agent learned something worth keeping about item {i}");
        ix.insert(
            &k,
            ObjectId::of(Kind::Blob, content.as_bytes()),
            &Doc {
                namespace: "default".into(),
                path,
                content,
                timestamp: 1767225600.0,
            },
        );
    }
    let bytes = ix.to_bytes();
    println!("cache bytes {}", bytes.len());
    let q = "what about item 38";
    let mut t = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..200 {
        let a = Instant::now();
        let ix = LexicalIndex::from_bytes(&bytes).unwrap();
        let b = Instant::now();
        let hits = ix.search(&Query {
            text: q,
            limit: 400,
            ..Default::default()
        });
        let c = Instant::now();
        let inv = TreeInventory::for_single(&ix, None, q);
        let d = Instant::now();
        drop(inv);
        drop(hits);
        let e = Instant::now();
        for (i, (x, y)) in [(a, b), (b, c), (c, d), (d, e)].iter().enumerate() {
            t[i].push((*y - *x).as_secs_f64() * 1e3);
        }
    }
    for (n, v) in ["load", "search400", "for_single(incl search)", "drop"]
        .iter()
        .zip(t.iter_mut())
    {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        println!("{n}: median {:.3} ms", v[v.len() / 2]);
    }
}
