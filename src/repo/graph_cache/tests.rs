//! Unit tests of the commit graph cache's file form and pruning.

use super::*;
use crate::object::Kind;

fn id(i: u32) -> ObjectId {
    ObjectId::of(Kind::Blob, &i.to_le_bytes())
}

#[test]
fn round_trip_and_damage() {
    let mut g = CommitGraph::new();
    g.push(id(0), id(100), 5, &[]);
    g.push(id(1), id(101), 6, &[0]);
    g.push(id(2), id(102), 7, &[0]);
    g.push(id(3), id(103), 8, &[1, 2]);
    let keys: Vec<Vec<u8>> = (0..50u32).map(|i| i.to_be_bytes().to_vec()).collect();
    g.set_filter(0, Some(&keys));
    g.set_filter(1, Some(&[]));
    g.set_filter(2, None);
    g.dirty = false;
    assert_eq!(g.generation(3), 3);
    for k in &keys {
        assert_eq!(g.changed(0, 0, FilterKey::new(k)), Changed::Maybe);
    }
    assert_eq!(g.changed(1, 0, FilterKey::new(b"x")), Changed::No);
    assert_eq!(g.changed(2, 0, FilterKey::new(b"x")), Changed::Maybe);
    assert_eq!(g.changed(3, 1, FilterKey::new(b"x")), Changed::Maybe);
    let bytes = g.to_bytes();
    assert_eq!(CommitGraph::from_bytes(&bytes), Some(g.clone()));
    for i in 0..bytes.len() {
        let mut b = bytes.clone();
        b[i] ^= 0x10;
        assert_eq!(CommitGraph::from_bytes(&b), None, "flip at {i}");
    }
    for len in 0..bytes.len() {
        assert_eq!(CommitGraph::from_bytes(&bytes[..len]), None);
    }
}

#[test]
fn retain_drops_commits_and_their_descendants_and_keeps_filters() {
    let mut g = CommitGraph::new();
    g.push(id(0), id(100), 5, &[]);
    g.push(id(1), id(101), 6, &[0]);
    g.push(id(2), id(102), 7, &[0]);
    g.push(id(3), id(103), 8, &[1, 2]);
    g.push(id(4), id(104), 9, &[2]);
    let keys: Vec<Vec<u8>> = (0..50u32).map(|i| i.to_be_bytes().to_vec()).collect();
    g.set_filter(0, Some(&keys[..10]));
    g.set_filter(2, Some(&keys));
    g.set_filter(5, None);
    let gone = g.retain(&|i| *i != id(1));
    assert_eq!(gone, 2, "1 and its child 3");
    assert_eq!(g.len(), 3);
    assert_eq!(g.position(&id(3)), None);
    let p4 = g.position(&id(4)).unwrap();
    assert_eq!(
        g.parents(p4).collect::<Vec<_>>(),
        [g.position(&id(2)).unwrap()]
    );
    assert_eq!(g.filter(p4, 0), Filter::Unknown);
    let p2 = g.position(&id(2)).unwrap();
    for k in &keys {
        assert_eq!(g.changed(p2, 0, FilterKey::new(k)), Changed::Maybe);
    }
    assert_eq!(CommitGraph::from_bytes(&g.to_bytes()).unwrap().len(), 3);
    assert_eq!(g.retain(&|_| true), 0);
}

#[test]
fn positions_by_scan_and_by_index_agree() {
    let mut g = CommitGraph::new();
    for i in 0..20u32 {
        let parents: &[u32] = if i == 0 { &[] } else { &[i - 1] };
        g.push(id(i), id(100 + i), i64::from(i), parents);
    }
    g.dirty = false;
    let loaded = CommitGraph::from_bytes(&g.to_bytes()).unwrap();
    assert!(loaded.index.get().is_none(), "loading builds no index");
    assert_eq!(loaded.position(&id(19)), Some(19));
    assert_eq!(loaded.position(&id(99)), None);
    assert!(loaded.index.get().is_none(), "a few lookups scan");
    for _ in 0..2 {
        for i in 0..20u32 {
            assert_eq!(loaded.position(&id(i)), Some(i));
        }
    }
    assert!(loaded.index.get().is_some(), "many lookups build the index");
    assert_eq!(loaded.position(&id(99)), None);
    assert_eq!(loaded, g);
}

/// A graph read in place from its file, then extended and given filters on commits of the
/// file, answers and encodes exactly as the same graph built in memory; the file is never
/// written through the map.
#[test]
fn a_mapped_graph_grows_as_one_built_in_memory() {
    let keys: Vec<Vec<u8>> = (0..30u32).map(|i| i.to_be_bytes().to_vec()).collect();
    let build = |g: &mut CommitGraph, from: u32, to: u32| {
        for i in from..to {
            let parents: Vec<u32> = match i {
                0 => vec![],
                i if i % 5 == 0 => vec![i - 1, i - 3],
                i => vec![i - 1],
            };
            g.push(id(i), id(100 + i), i64::from(i), &parents);
        }
    };
    let fill = |g: &mut CommitGraph| {
        // Slot 1 lies in the file's part, 9 in the part added after it.
        g.set_filter(1, Some(&keys[..7]));
        g.set_filter(3, None);
        g.set_filter(9, Some(&keys));
    };
    let mut whole = CommitGraph::new();
    build(&mut whole, 0, 12);
    whole.set_filter(0, Some(&keys[..3]));
    fill(&mut whole);

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("commit-graph");
    let mut first = CommitGraph::new();
    build(&mut first, 0, 8);
    first.set_filter(0, Some(&keys[..3]));
    first.save(&path).unwrap();
    let on_disk = std::fs::read(&path).unwrap();

    let mut g = CommitGraph::load(&path);
    assert_eq!(g.len(), 8);
    build(&mut g, 8, 12);
    fill(&mut g);
    assert_eq!(g.to_bytes(), whole.to_bytes());
    for pos in 0..12u32 {
        assert_eq!(g.id(pos), whole.id(pos));
        assert_eq!(g.position(&id(pos)), Some(pos));
        assert_eq!(
            g.parents(pos).collect::<Vec<_>>(),
            whole.parents(pos).collect::<Vec<_>>()
        );
        for slot in 0..whole.parents(pos).count().max(1) {
            assert_eq!(g.filter(pos, slot), whole.filter(pos, slot));
            for k in keys.iter().chain([&b"elsewhere".to_vec()]) {
                let k = FilterKey::new(k);
                assert_eq!(g.changed(pos, slot, k), whole.changed(pos, slot, k));
            }
        }
    }
    assert_eq!(
        std::fs::read(&path).unwrap(),
        on_disk,
        "the file is unchanged"
    );
    g.save(&path).unwrap();
    assert_eq!(CommitGraph::load(&path).to_bytes(), whole.to_bytes());
}
