//! The prolly tree against a `BTreeMap` model: gets, scans, counts, histograms, diffs,
//! structural invariants and history independence.

use std::collections::BTreeMap;
use std::sync::Arc;

use memoir::key::{group_prefix, Key};
use memoir::object::{Kind, ObjectId};
use memoir::prolly::{prefix_range, Change, Edit, KeyRange, NodeStore};
use memoir::store::{MemoryBackend, ObjectStore, PutOutcome, RawId, StoreResult};
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

type Model = BTreeMap<Vec<u8>, ObjectId>;

fn store() -> NodeStore {
    NodeStore::new(
        Arc::new(MemoryBackend::new()) as Arc<dyn ObjectStore>,
        1 << 16,
    )
}

fn vid(n: u64) -> ObjectId {
    ObjectId::of(Kind::Blob, &n.to_le_bytes())
}

const NAMESPACES: [&str; 3] = ["default", "codebase:onboard", "zeta"];
const WORDS: [&str; 8] = ["a", "b", "pref", "coding", "testing", "x1", "user", "q"];

/// A random taxonomy key: 1-8 segments from a small vocabulary (so groups collide), now and
/// then a long segment (so items are large and trees get deep with fewer keys).
fn rand_key(rng: &mut StdRng) -> Vec<u8> {
    let ns = NAMESPACES[rng.gen_range(0..NAMESPACES.len())];
    let depth = rng.gen_range(1..=8usize);
    let mut segs: Vec<String> = (0..depth)
        .map(|_| {
            if rng.gen_ratio(1, 10) {
                format!("long{}", "s".repeat(rng.gen_range(20..60)))
            } else {
                let w = WORDS[rng.gen_range(0..WORDS.len())];
                if rng.gen_bool(0.5) {
                    w.to_string()
                } else {
                    format!("{w}{}", rng.gen_range(0..50))
                }
            }
        })
        .collect();
    while segs.join(".").len() > memoir::key::MAX_PATH_BYTES {
        segs.pop();
    }
    Key::new(ns, &segs.join(".")).expect("valid key").encode()
}

fn model_hist(model: &Model, range: &KeyRange, depth: usize) -> Vec<(Vec<u8>, u64)> {
    let mut out: Vec<(Vec<u8>, u64)> = Vec::new();
    for k in model.keys().filter(|k| range.contains(k)) {
        let g = group_prefix(k, depth).to_vec();
        match out.last_mut() {
            Some((l, n)) if *l == g => *n += 1,
            _ => out.push((g, 1)),
        }
    }
    out
}

fn model_diff(a: &Model, b: &Model) -> Vec<Change> {
    let mut keys: Vec<&Vec<u8>> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter_map(|k| {
            let (o, n) = (a.get(k).copied(), b.get(k).copied());
            (o != n).then(|| Change {
                key: k.clone().into(),
                old: o,
                new: n,
            })
        })
        .collect()
}

fn random_range(rng: &mut StdRng, model: &Model) -> KeyRange {
    let pick = |rng: &mut StdRng| -> Vec<u8> {
        if !model.is_empty() && rng.gen_bool(0.7) {
            let i = rng.gen_range(0..model.len());
            model.keys().nth(i).cloned().expect("index in range")
        } else {
            rand_key(rng)
        }
    };
    match rng.gen_range(0..4) {
        0 => KeyRange::all(),
        1 => prefix_range(group_prefix(&pick(rng), rng.gen_range(0..4))),
        _ => {
            let (a, b) = (pick(rng), pick(rng));
            KeyRange::new(a.clone().min(b.clone()), a.max(b))
        }
    }
}

/// Everything the tree answers must equal the model.
fn check_against(ns: &NodeStore, root: &ObjectId, model: &Model, rng: &mut StdRng) {
    let rep = ns.verify(root);
    assert!(
        rep.violations.is_empty(),
        "violations: {:?}",
        rep.violations
    );
    assert_eq!(rep.keys, model.len() as u64);
    assert_eq!(ns.count(root).unwrap(), model.len() as u64);
    let all: Vec<(Vec<u8>, ObjectId)> = model.iter().map(|(k, v)| (k.clone(), *v)).collect();
    assert_eq!(ns.collect(root, &KeyRange::all()).unwrap(), all);
    for (k, v) in model.iter().take(200) {
        assert_eq!(ns.get(root, k).unwrap(), Some(*v));
    }
    for _ in 0..50 {
        let k = rand_key(rng);
        assert_eq!(ns.get(root, &k).unwrap(), model.get(&k).copied());
    }
    for _ in 0..8 {
        let r = random_range(rng, model);
        let want: Vec<(Vec<u8>, ObjectId)> = model
            .iter()
            .filter(|(k, _)| r.contains(k))
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        assert_eq!(ns.collect(root, &r).unwrap(), want, "scan {r:?}");
        assert_eq!(ns.count_range(root, &r).unwrap(), want.len() as u64);
        for depth in 1..=4 {
            let got = ns.histogram(root, &r, &|k| group_prefix(k, depth)).unwrap();
            assert_eq!(got, model_hist(model, &r, depth), "histogram depth {depth}");
        }
    }
    // History independence: a from-scratch build of the same entries has the same root.
    let fresh = store();
    assert_eq!(
        fresh.build_sorted(all).unwrap(),
        *root,
        "history independence"
    );
}

fn random_batch(rng: &mut StdRng, model: &Model, n: usize, next_val: &mut u64) -> Vec<Edit> {
    (0..n)
        .map(|_| {
            let existing = !model.is_empty() && rng.gen_bool(0.5);
            let key = if existing {
                let i = rng.gen_range(0..model.len());
                model.keys().nth(i).cloned().expect("index in range")
            } else {
                rand_key(rng)
            };
            if rng.gen_ratio(1, 3) {
                Edit::Delete(key)
            } else {
                *next_val += 1;
                Edit::Put(key, vid(*next_val))
            }
        })
        .collect()
}

fn apply_model(model: &mut Model, edits: &[Edit]) {
    for e in edits {
        match e {
            Edit::Put(k, v) => {
                model.insert(k.clone(), *v);
            }
            Edit::Delete(k) => {
                model.remove(k);
            }
        }
    }
}

fn run_sequence(seed: u64, steps: usize, max_batch: usize) {
    let mut rng = StdRng::seed_from_u64(seed);
    let ns = store();
    let mut root = ns.empty().unwrap();
    let mut model = Model::new();
    let mut next = 0;
    for _ in 0..steps {
        let n = rng.gen_range(1..=max_batch);
        let batch = random_batch(&mut rng, &model, n, &mut next);
        let before = model.clone();
        apply_model(&mut model, &batch);
        let new_root = ns.apply(&root, batch).unwrap();
        assert_eq!(
            ns.diff_all(&root, &new_root).unwrap(),
            model_diff(&before, &model)
        );
        root = new_root;
        check_against(&ns, &root, &model, &mut rng);
    }
    // Delete everything: back to the empty tree.
    let all: Vec<Edit> = model.keys().map(|k| Edit::Delete(k.clone())).collect();
    let empty = ns.apply(&root, all).unwrap();
    assert_eq!(empty, NodeStore::empty_id());
    assert_eq!(ns.count(&empty).unwrap(), 0);
    assert_eq!(ns.diff_all(&root, &empty).unwrap().len(), model.len());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]

    /// Random batches of puts and deletes, small and large, checked after every batch.
    #[test]
    fn tree_equals_model(seed in any::<u64>(), max_batch in prop_oneof![Just(1usize), Just(8), Just(400), Just(3000)]) {
        run_sequence(seed, 6, max_batch);
    }
}

#[test]
fn single_entry_and_empty_trees() {
    let ns = store();
    let empty = ns.empty().unwrap();
    assert_eq!(empty, NodeStore::empty_id());
    assert_eq!(ns.count(&empty).unwrap(), 0);
    assert_eq!(ns.get(&empty, b"k\0x").unwrap(), None);
    assert!(ns.collect(&empty, &KeyRange::all()).unwrap().is_empty());
    assert!(ns
        .histogram(&empty, &KeyRange::all(), &|k| group_prefix(k, 1))
        .unwrap()
        .is_empty());
    let one = ns
        .apply(&empty, vec![Edit::Put(b"ns\0a".to_vec(), vid(1))])
        .unwrap();
    assert_eq!(ns.get(&one, b"ns\0a").unwrap(), Some(vid(1)));
    assert_eq!(ns.count(&one).unwrap(), 1);
    assert_eq!(
        ns.build_sorted(vec![(b"ns\0a".to_vec(), vid(1))]).unwrap(),
        one
    );
    // Deleting a missing key changes nothing; re-putting the same value changes nothing.
    assert_eq!(
        ns.apply(&one, vec![Edit::Delete(b"ns\0b".to_vec())])
            .unwrap(),
        one
    );
    assert_eq!(
        ns.apply(&one, vec![Edit::Put(b"ns\0a".to_vec(), vid(1))])
            .unwrap(),
        one
    );
    assert_eq!(
        ns.apply(&one, vec![Edit::Delete(b"ns\0a".to_vec())])
            .unwrap(),
        empty
    );
    // Later edits of one key win within a batch.
    let r = ns
        .apply(
            &empty,
            vec![
                Edit::Put(b"k".to_vec(), vid(1)),
                Edit::Delete(b"k".to_vec()),
                Edit::Put(b"k".to_vec(), vid(2)),
            ],
        )
        .unwrap();
    assert_eq!(ns.get(&r, b"k").unwrap(), Some(vid(2)));
    assert!(ns
        .apply(&empty, vec![Edit::Put(Vec::new(), vid(1))])
        .is_err());
    assert!(ns
        .apply(&empty, vec![Edit::Put(vec![b'x'; 513], vid(1))])
        .is_err());
    assert!(ns
        .build_sorted(vec![(b"b".to_vec(), vid(1)), (b"a".to_vec(), vid(2))])
        .is_err());
}

/// A deep tree (4+ levels) built in different orders and by different insert/delete paths
/// has one root; edits rewrite only touched paths.
#[test]
fn history_independence_on_a_deep_tree() {
    let mut rng = StdRng::seed_from_u64(7);
    let mut model = Model::new();
    let mut n = 0u64;
    while model.len() < 60_000 {
        n += 1;
        model.insert(rand_key(&mut rng), vid(n));
    }
    let entries: Vec<(Vec<u8>, ObjectId)> = model.iter().map(|(k, v)| (k.clone(), *v)).collect();
    let ns = store();
    let built = ns.build_sorted(entries.clone()).unwrap();
    let rep = ns.verify(&built);
    assert!(rep.violations.is_empty(), "{:?}", rep.violations);
    assert!(
        rep.nodes_per_level.len() >= 3,
        "levels: {:?}",
        rep.nodes_per_level
    );

    // Shuffled single batches, and the same content reached via extra keys later deleted.
    let mut shuffled: Vec<Edit> = entries
        .iter()
        .map(|(k, v)| Edit::Put(k.clone(), *v))
        .collect();
    shuffled.shuffle(&mut rng);
    let ns2 = store();
    let mut root = ns2.empty().unwrap();
    for chunk in shuffled.chunks(7_919) {
        let mut batch = chunk.to_vec();
        for _ in 0..50 {
            batch.push(Edit::Put(rand_key(&mut rng), vid(u64::MAX - n)));
            n += 1;
        }
        root = ns2.apply(&root, batch).unwrap();
    }
    let extra: Vec<Edit> = ns2
        .collect(&root, &KeyRange::all())
        .unwrap()
        .into_iter()
        .filter(|(k, v)| model.get(k) != Some(v))
        .map(|(k, _)| match model.get(&k) {
            Some(v) => Edit::Put(k, *v),
            None => Edit::Delete(k),
        })
        .collect();
    assert!(!extra.is_empty());
    root = ns2.apply(&root, extra).unwrap();
    assert_eq!(root, built);

    // One edit touches one node per level: O(height) nodes made.
    let (k, _) = &entries[entries.len() / 2];
    let (r2, stats) = ns
        .apply_with_stats(&built, vec![Edit::Put(k.clone(), vid(0))])
        .unwrap();
    let height = rep.nodes_per_level.len();
    assert!(
        stats.nodes_made <= 2 * height + 2,
        "made {} nodes for height {height}",
        stats.nodes_made
    );
    assert_eq!(ns.diff_all(&built, &r2).unwrap().len(), 1);
    let rep2 = ns.verify(&r2);
    assert!(rep2.violations.is_empty());
}

#[test]
fn larger_sequences_with_deep_trees() {
    for seed in 0..3 {
        run_sequence(1000 + seed, 4, 20_000);
    }
}

/// Diffs of trees deep enough to be split over two threads equal the model's, over the
/// whole key space and inside random ranges; and a batch applied with the merged-in side's
/// nodes declared known gives the same tree, writing only the nodes not already stored.
#[test]
fn split_diffs_and_known_nodes_on_deep_trees() {
    let mut rng = StdRng::seed_from_u64(11);
    let mut model = Model::new();
    let mut n = 0u64;
    while model.len() < 30_000 {
        n += 1;
        model.insert(rand_key(&mut rng), vid(n));
    }
    let ns = store();
    let entries: Vec<(Vec<u8>, ObjectId)> = model.iter().map(|(k, v)| (k.clone(), *v)).collect();
    let base = ns.build_sorted(entries).unwrap();
    let rep = ns.verify(&base);
    assert!(
        rep.nodes_per_level.len() > memoir::prolly::PARALLEL_DIFF_LEVEL as usize,
        "levels: {:?}",
        rep.nodes_per_level
    );
    for size in [1usize, 40, 2_000] {
        let batch = random_batch(&mut rng, &model, size, &mut n);
        let mut after = model.clone();
        apply_model(&mut after, &batch);
        let root = ns.apply(&base, batch).unwrap();
        let want = model_diff(&model, &after);
        assert_eq!(ns.diff_all(&base, &root).unwrap(), want);
        assert_eq!(ns.diff_all(&root, &base).unwrap().len(), want.len());
        for _ in 0..12 {
            let r = random_range(&mut rng, &model);
            let got = ns.diff_map(&base, &root, &r, &Some).unwrap();
            let want_r: Vec<Change> = want
                .iter()
                .filter(|c| r.contains(&c.key))
                .cloned()
                .collect();
            assert_eq!(got, want_r, "range {r:?}");
            // The mapping runs on every change in range, and may drop some.
            let odd = ns
                .diff_map(&base, &root, &r, &|c: Change| {
                    (c.key.len() % 2 == 1).then_some(c.key.to_vec())
                })
                .unwrap();
            let want_odd: Vec<Vec<u8>> = want_r
                .iter()
                .filter(|c| c.key.len() % 2 == 1)
                .map(|c| c.key.to_vec())
                .collect();
            assert_eq!(odd, want_odd);
        }
    }

    // Two sides edit disjoint keys; applying theirs onto ours with their nodes known makes
    // the same tree as a plain apply, and writes only what is not stored yet.
    let keys: Vec<Vec<u8>> = model.keys().cloned().collect();
    let ours_edits: Vec<Edit> = keys
        .iter()
        .step_by(97)
        .map(|k| Edit::Put(k.clone(), vid(1 << 40)))
        .collect();
    let theirs_edits: Vec<Edit> = keys
        .iter()
        .skip(13)
        .step_by(89)
        .map(|k| Edit::Delete(k.clone()))
        .collect();
    let ours = ns.apply(&base, ours_edits).unwrap();
    let theirs = ns.apply(&base, theirs_edits.clone()).unwrap();
    let plain = store();
    let plain_base = plain
        .build_sorted(
            model
                .iter()
                .map(|(k, v)| (k.clone(), *v))
                .collect::<Vec<_>>(),
        )
        .unwrap();
    assert_eq!(plain_base, base);
    let plain_ours = plain
        .apply(
            &plain_base,
            keys.iter()
                .step_by(97)
                .map(|k| Edit::Put(k.clone(), vid(1 << 40)))
                .collect(),
        )
        .unwrap();
    let (want_root, plain_stats) = plain
        .apply_with_stats(&plain_ours, theirs_edits.clone())
        .unwrap();
    let mut known = memoir::prolly::IdSet::default();
    ns.mark_reachable(&theirs, &mut known).unwrap();
    let (root, stats) = ns.apply_known(&ours, theirs_edits, &known).unwrap();
    assert_eq!(root, want_root);
    assert_eq!(stats.nodes_made, plain_stats.nodes_made);
    assert!(
        stats.nodes_written < plain_stats.nodes_written,
        "{stats:?} vs {plain_stats:?}"
    );
    let rep = ns.verify(&root);
    assert!(rep.violations.is_empty(), "{:?}", rep.violations);
    assert_eq!(ns.count(&root).unwrap(), plain.count(&want_root).unwrap());
}

// ---- Merkle proofs ----

use memoir::prolly::{Proof, ProofError};

/// Proves and verifies (through the byte encoding) every key of `present` and `absent`.
fn check_proofs(ns: &NodeStore, root: &ObjectId, model: &Model, absent: &[Vec<u8>]) {
    let present = model.iter().map(|(k, v)| (k.clone(), Some(*v)));
    let missing = absent.iter().map(|k| (k.clone(), None));
    for (key, want) in present.chain(missing) {
        assert_eq!(model.get(&key).copied(), want);
        let proof = ns.prove(root, &key).unwrap();
        assert_eq!(proof.verify(root, &key).unwrap(), want);
        let bytes = proof.to_bytes();
        let back = Proof::from_bytes(&bytes).unwrap();
        assert_eq!(back, proof);
        assert_eq!(back.to_bytes(), bytes);
        assert_eq!(back.verify(root, &key).unwrap(), want);
    }
}

/// A tree of `n` random keys with its model, and keys that are not in it (including ones
/// before the first and after the last key).
fn proof_tree(n: usize, seed: u64) -> (NodeStore, ObjectId, Model, Vec<Vec<u8>>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut model = Model::new();
    while model.len() < n {
        let k = rand_key(&mut rng);
        model.insert(k, vid(rng.gen()));
    }
    let ns = store();
    let root = ns
        .build_sorted(model.iter().map(|(k, v)| (k.clone(), *v)))
        .unwrap();
    let mut absent = vec![b"\x01".to_vec(), vec![0xff; 40]];
    while absent.len() < 40 {
        let k = rand_key(&mut rng);
        if !model.contains_key(&k) {
            absent.push(k);
        }
    }
    (ns, root, model, absent)
}

/// A sample of `model` of at most `n` entries, spread over the key order.
fn sample(model: &Model, n: usize) -> Model {
    let step = (model.len() / n).max(1);
    model
        .iter()
        .step_by(step)
        .map(|(k, v)| (k.clone(), *v))
        .collect()
}

#[test]
fn proofs_of_present_and_absent_keys_verify() {
    // The empty tree proves every key absent.
    let ns = store();
    let empty = ns.empty().unwrap();
    let p = ns.prove(&empty, b"ns\0a").unwrap();
    assert_eq!(p.nodes.len(), 1);
    assert_eq!(p.verify(&empty, b"ns\0a").unwrap(), None);

    for (n, samples) in [(1usize, 1usize), (1000, 1000), (100_000, 300)] {
        let (ns, root, model, absent) = proof_tree(n, n as u64);
        check_proofs(&ns, &root, &sample(&model, samples), &absent);
        if n == 100_000 {
            let depth = ns.prove(&root, &absent[0]).unwrap().nodes.len();
            assert!(
                depth >= 3,
                "a 100k-key tree has internal levels, got {depth}"
            );
        }
    }
}

#[test]
fn tampered_or_misapplied_proofs_fail_with_typed_errors() {
    let (ns, root, model, absent) = proof_tree(1000, 5);
    let (key, value) = model.iter().nth(417).map(|(k, v)| (k.clone(), *v)).unwrap();
    let proof = ns.prove(&root, &key).unwrap();
    let depth = proof.nodes.len();
    assert!(depth >= 2);
    assert_eq!(proof.verify(&root, &key).unwrap(), Some(value));
    let bytes = proof.to_bytes();

    // Every single-byte change is caught, either when decoding or when verifying.
    for i in 0..bytes.len() {
        for flip in [0x01u8, 0x80, 0xff] {
            let mut b = bytes.clone();
            b[i] ^= flip;
            let r = Proof::from_bytes(&b).and_then(|p| p.verify(&root, &key));
            assert!(
                r.is_err(),
                "flipping byte {i} with {flip:#x} went unnoticed"
            );
        }
    }
    // Truncations and extensions.
    for cut in [0, 1, bytes.len() / 2, bytes.len() - 1] {
        assert!(Proof::from_bytes(&bytes[..cut]).is_err());
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(matches!(
        Proof::from_bytes(&longer),
        Err(ProofError::Decode(_))
    ));

    // Another root: the first node does not hash to it.
    let other = ns
        .apply(&root, vec![Edit::Put(key.clone(), vid(999_999))])
        .unwrap();
    assert!(matches!(
        proof.verify(&other, &key),
        Err(ProofError::RootMismatch { .. })
    ));
    // Another key, present or absent, is refused, as is an invalid key.
    let other_key = model.keys().nth(418).unwrap();
    assert_eq!(proof.verify(&root, other_key), Err(ProofError::KeyMismatch));
    assert_eq!(
        proof.verify(&root, &absent[5]),
        Err(ProofError::KeyMismatch)
    );
    assert_eq!(proof.verify(&root, b""), Err(ProofError::BadKey(0)));

    // Structural tampering that keeps every node's hash: dropping, repeating or reordering
    // nodes, swapping in a sibling leaf, claiming another key.
    let mut short = proof.clone();
    short.nodes.pop();
    assert_eq!(short.verify(&root, &key), Err(ProofError::Incomplete(1)));
    let mut long = proof.clone();
    long.nodes.push(proof.nodes[depth - 1].clone());
    assert_eq!(long.verify(&root, &key), Err(ProofError::Trailing(1)));
    let mut swapped = proof.clone();
    swapped.nodes.reverse();
    assert!(matches!(
        swapped.verify(&root, &key),
        Err(ProofError::RootMismatch { .. })
    ));
    let first_key = model.keys().next().unwrap();
    let sibling = ns.prove(&root, first_key).unwrap();
    assert_ne!(sibling.nodes[depth - 1], proof.nodes[depth - 1]);
    let mut wrong_leaf = proof.clone();
    wrong_leaf.nodes[depth - 1] = sibling.nodes[depth - 1].clone();
    assert_eq!(
        wrong_leaf.verify(&root, &key).unwrap_err(),
        ProofError::ChildMismatch {
            index: depth - 1,
            expected: ObjectId::of(Kind::Node, &proof.nodes[depth - 1]),
            found: ObjectId::of(Kind::Node, &sibling.nodes[depth - 1]),
        }
    );
    let mut relabeled = sibling.clone();
    relabeled.key = key.clone();
    assert!(matches!(
        relabeled.verify(&root, &key),
        Err(ProofError::ChildMismatch { .. })
    ));
    let empty = Proof {
        key: key.clone(),
        nodes: Vec::new(),
    };
    assert!(matches!(
        empty.verify(&root, &key),
        Err(ProofError::Bounds(_))
    ));
    assert!(matches!(
        Proof::from_bytes(&empty.to_bytes()),
        Err(ProofError::Bounds(_))
    ));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, .. ProptestConfig::default() })]

    /// Decoding arbitrary bytes never panics (it fails with a typed error, or gives a proof
    /// that re-encodes to the same bytes).
    #[test]
    fn proof_from_random_bytes_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        if let Ok(p) = Proof::from_bytes(&bytes) {
            prop_assert_eq!(p.to_bytes(), bytes);
            let _ = p.verify(&NodeStore::empty_id(), &p.key);
        }
    }

    /// Random edits of a valid proof's bytes never panic and never verify.
    #[test]
    fn mutated_proofs_never_panic(edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6), cut in any::<prop::sample::Index>(), truncate in any::<bool>()) {
        thread_local! {
            static FIXTURE: (ObjectId, Vec<u8>, Vec<u8>) = {
                let (ns, root, model, _) = proof_tree(300, 9);
                let key = model.keys().nth(123).unwrap().clone();
                let bytes = ns.prove(&root, &key).unwrap().to_bytes();
                (root, key, bytes)
            };
        }
        FIXTURE.with(|(root, key, bytes)| {
            let mut b = bytes.clone();
            for (at, v) in &edits {
                let i = at.index(b.len());
                b[i] = *v;
            }
            if truncate {
                b.truncate(cut.index(b.len()));
            }
            if b != *bytes {
                let r = Proof::from_bytes(&b).and_then(|p| p.verify(root, key));
                prop_assert!(r.is_err());
            }
            Ok(())
        })?;
    }
}

/// An object store that counts the reads of each id.
struct CountingStore {
    inner: MemoryBackend,
    reads: std::sync::Mutex<BTreeMap<[u8; 32], usize>>,
}

impl CountingStore {
    fn count(&self, id: &[u8; 32]) {
        *self.reads.lock().unwrap().entry(*id).or_default() += 1;
    }
    fn reads(&self) -> usize {
        self.reads.lock().unwrap().values().sum()
    }
}

impl ObjectStore for CountingStore {
    fn get(&self, id: &RawId) -> StoreResult<Option<memoir::store::Bytes>> {
        self.count(id);
        self.inner.get(id)
    }
    fn put(&self, id: &RawId, bytes: &[u8]) -> StoreResult<PutOutcome> {
        self.inner.put(id, bytes)
    }
    fn contains(&self, id: &RawId) -> StoreResult<bool> {
        self.inner.contains(id)
    }
    fn ids_with_prefix(&self, prefix: &[u8]) -> StoreResult<Vec<RawId>> {
        self.inner.ids_with_prefix(prefix)
    }
    fn for_each_id(&self, f: &mut dyn FnMut(RawId) -> bool) -> StoreResult<()> {
        self.inner.for_each_id(f)
    }
    fn delete(&self, id: &RawId) -> StoreResult<bool> {
        self.inner.delete(id)
    }
    fn flush(&self) -> StoreResult<()> {
        self.inner.flush()
    }
}

/// A one-off diff (`diff_all`, which the `diff` command's walk is) keeps no leaf it opened
/// in the node cache, so a second one reads every changed leaf again; a diff walked with
/// `diff` keeps them, so the same diff a second time reads nothing. Both give the same
/// changes each time.
#[test]
fn a_one_off_diff_keeps_no_leaf_and_a_walk_keeps_them() {
    let counting = Arc::new(CountingStore {
        inner: MemoryBackend::new(),
        reads: Default::default(),
    });
    let ns = NodeStore::new(counting.clone() as Arc<dyn ObjectStore>, 1 << 16);
    let puts = |from: u64, n: u64, salt: u64| -> Vec<Edit> {
        (from..from + n)
            .map(|i| {
                Edit::Put(
                    format!("default\u{1}k{i:05}").into_bytes(),
                    vid(i * 7 + salt),
                )
            })
            .collect()
    };
    let old = ns.apply(&ns.empty().unwrap(), puts(0, 3000, 0)).unwrap();
    // Every tenth key changes, so every leaf differs.
    let new = ns
        .apply(&old, (0..300).flat_map(|i| puts(i * 10, 1, 1)).collect())
        .unwrap();
    let fresh = || NodeStore::new(counting.clone() as Arc<dyn ObjectStore>, 1 << 16);

    let ns = fresh();
    let want = ns.diff_all(&old, &new).unwrap();
    assert_eq!(want.len(), 300);
    let before = counting.reads();
    let again = ns.diff_all(&old, &new).unwrap();
    let leaf_reads = counting.reads() - before;
    assert_eq!(again, want);
    assert!(
        leaf_reads >= 2 * 10,
        "{leaf_reads} reads: the leaves were kept"
    );

    let ns = fresh();
    let walk = |ns: &NodeStore| {
        let mut seen = Vec::new();
        ns.diff(&old, &new, &mut |c| {
            seen.push(c);
            true
        })
        .unwrap();
        seen
    };
    assert_eq!(walk(&ns), want);
    let before = counting.reads();
    assert_eq!(walk(&ns), want);
    assert_eq!(counting.reads(), before, "a kept walk read again");
}
