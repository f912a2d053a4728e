//! The contract every backend satisfies.

use std::sync::Arc;

use memoir::store::{
    Backend, MemoryBackend, ObjectStore, PutOutcome, RawId, RefMove, RefStore, Store,
};
use proptest::prelude::*;

use super::{id, new_sled_store, opts};

fn contract(b: &dyn Backend) {
    objects_contract(b);
    refs_contract(b);
    many_refs_contract(b);
    concurrent_cas_contract(b);
    b.flush().unwrap();
    b.size_on_disk().unwrap();
}

fn objects_contract(b: &dyn Backend) {
    let a = id(b"a", 1);
    assert_eq!(b.get(&a).unwrap(), None);
    assert!(!b.contains(&a).unwrap());

    // put / get / contains, dedup, repair.
    assert_eq!(b.put(&a, b"one").unwrap(), PutOutcome::Written);
    assert!(b.contains(&a).unwrap());
    assert_eq!(b.get(&a).unwrap().as_deref(), Some(&b"one"[..]));
    assert_eq!(b.put(&a, b"one").unwrap(), PutOutcome::Existing);
    assert_eq!(b.put(&a, b"damaged").unwrap(), PutOutcome::Repaired);
    assert_eq!(b.get(&a).unwrap().as_deref(), Some(&b"damaged"[..]));
    assert_eq!(b.put(&a, b"one").unwrap(), PutOutcome::Repaired);
    assert_eq!(b.get(&a).unwrap().as_deref(), Some(&b"one"[..]));
    // Empty bytes are a value like any other.
    let e = id(b"e", 0);
    assert_eq!(b.put(&e, b"").unwrap(), PutOutcome::Written);
    assert_eq!(b.get(&e).unwrap().as_deref(), Some(&b""[..]));
    assert_eq!(b.put(&e, b"").unwrap(), PutOutcome::Existing);

    // put_many: new, existing, repaired, and a repeated id seeing its earlier entry.
    let ab2 = id(b"ab", 2);
    let ab3 = id(b"ab", 3);
    let out = b
        .put_many(&[
            (ab2, b"two".to_vec()),
            (a, b"one".to_vec()),
            (e, b"not empty".to_vec()),
            (ab3, b"three".to_vec()),
            (ab3, b"three".to_vec()),
            (ab2, b"TWO".to_vec()),
        ])
        .unwrap();
    assert_eq!(
        out,
        vec![
            PutOutcome::Written,
            PutOutcome::Existing,
            PutOutcome::Repaired,
            PutOutcome::Written,
            PutOutcome::Existing,
            PutOutcome::Repaired,
        ]
    );
    assert_eq!(b.get(&ab2).unwrap().as_deref(), Some(&b"TWO"[..]));
    assert_eq!(b.get(&ab3).unwrap().as_deref(), Some(&b"three"[..]));
    assert_eq!(b.get(&e).unwrap().as_deref(), Some(&b"not empty"[..]));
    assert_eq!(b.put_many(&[]).unwrap(), vec![]);

    // More ids around the prefixes, including the extremes.
    let extra = [
        id(b"", 0),
        id(b"b", 9),
        id(b"aa", 7),
        id(b"abc", 4),
        [0xff; 32],
    ];
    for x in &extra {
        assert_eq!(b.put(x, x).unwrap(), PutOutcome::Written);
    }
    let mut all: Vec<RawId> = vec![a, e, ab2, ab3];
    all.extend(extra);
    all.sort();

    // ids_with_prefix: sorted, exactly the matching ids.
    for prefix in [
        &b""[..],
        b"a",
        b"ab",
        b"abc",
        b"abd",
        b"b",
        b"z",
        &[0xff][..],
        &ab3[..],
        &[0u8; 32][..],
    ] {
        let want: Vec<RawId> = all
            .iter()
            .copied()
            .filter(|i| i.starts_with(prefix))
            .collect();
        assert_eq!(
            b.ids_with_prefix(prefix).unwrap(),
            want,
            "prefix {prefix:?}"
        );
    }
    assert!(b.ids_with_prefix(&[0u8; 33]).unwrap().is_empty());

    // for_each_id: everything in order, and an early stop.
    let mut seen = Vec::new();
    b.for_each_id(&mut |i| {
        seen.push(i);
        true
    })
    .unwrap();
    assert_eq!(seen, all);
    let mut seen = Vec::new();
    b.for_each_id(&mut |i| {
        seen.push(i);
        seen.len() < 2
    })
    .unwrap();
    assert_eq!(seen, all[..2].to_vec());

    // delete.
    assert!(b.delete(&ab2).unwrap());
    assert!(!b.delete(&ab2).unwrap());
    assert_eq!(b.get(&ab2).unwrap(), None);
    assert!(!b.contains(&ab2).unwrap());
    assert_eq!(b.ids_with_prefix(b"ab").unwrap(), vec![ab3, id(b"abc", 4)]);
    assert_eq!(b.put(&ab2, b"back").unwrap(), PutOutcome::Written);
}

fn refs_contract(b: &dyn Backend) {
    let main = "refs/heads/main";
    assert_eq!(b.get_ref(main).unwrap(), None);
    // Expecting a value on an absent ref fails, reporting absence.
    assert_eq!(b.cas_ref(main, Some(b"x"), Some(b"y")).unwrap(), Err(None));
    assert_eq!(b.get_ref(main).unwrap(), None);
    // Create with expected None.
    assert_eq!(b.cas_ref(main, None, Some(b"c1")).unwrap(), Ok(()));
    assert_eq!(b.get_ref(main).unwrap().as_deref(), Some(&b"c1"[..]));
    // Creating again, or a wrong expectation, fails with the current value, changing nothing.
    assert_eq!(
        b.cas_ref(main, None, Some(b"c2")).unwrap(),
        Err(Some(b"c1".to_vec()))
    );
    assert_eq!(
        b.cas_ref(main, Some(b"c0"), Some(b"c2")).unwrap(),
        Err(Some(b"c1".to_vec()))
    );
    assert_eq!(
        b.cas_ref(main, Some(b"c0"), None).unwrap(),
        Err(Some(b"c1".to_vec()))
    );
    assert_eq!(b.get_ref(main).unwrap().as_deref(), Some(&b"c1"[..]));
    // Update, then delete with new = None.
    assert_eq!(b.cas_ref(main, Some(b"c1"), Some(b"c2")).unwrap(), Ok(()));
    assert_eq!(b.get_ref(main).unwrap().as_deref(), Some(&b"c2"[..]));
    assert_eq!(b.cas_ref(main, Some(b"c2"), None).unwrap(), Ok(()));
    assert_eq!(b.get_ref(main).unwrap(), None);
    // Deleting an absent ref with expected None is a successful no-op.
    assert_eq!(b.cas_ref(main, None, None).unwrap(), Ok(()));

    // list_refs: prefix filter and sorting by name.
    let names = [
        "refs/heads/main",
        "HEAD",
        "refs/heads/dev",
        "refs/heads/a/b",
        "refs/heads/é",
        "refs/heads/Z",
        "refs/tags/v1",
        "refs/heads",
        "refs/headsx",
    ];
    for (i, n) in names.iter().enumerate() {
        assert_eq!(b.cas_ref(n, None, Some(&[i as u8])).unwrap(), Ok(()));
    }
    let expect = |prefix: &str| -> Vec<(String, Vec<u8>)> {
        let mut v: Vec<(String, Vec<u8>)> = names
            .iter()
            .enumerate()
            .filter(|(_, n)| n.starts_with(prefix))
            .map(|(i, n)| (n.to_string(), vec![i as u8]))
            .collect();
        v.sort();
        v
    };
    for prefix in [
        "",
        "refs/",
        "refs/heads/",
        "refs/heads",
        "refs/tags/",
        "H",
        "nope",
    ] {
        assert_eq!(b.list_refs(prefix).unwrap(), expect(prefix), "{prefix:?}");
    }
    assert_eq!(b.list_refs("refs/heads/").unwrap().len(), 5);
    // Clean up so the concurrency part starts from a known state.
    for (i, n) in names.iter().enumerate() {
        assert_eq!(b.cas_ref(n, Some(&[i as u8]), None).unwrap(), Ok(()));
    }
    assert!(b.list_refs("").unwrap().is_empty());
}

/// Several refs move together or not at all: a mismatch on the last leaves the first
/// unmoved.
fn many_refs_contract(b: &dyn Backend) {
    let mv = |name, expected, new| RefMove {
        name,
        expected,
        new,
    };
    assert_eq!(b.cas_ref("refs/heads/x", None, Some(b"1")).unwrap(), Ok(()));
    let moves = [
        mv("refs/heads/x", Some(&b"1"[..]), Some(&b"2"[..])),
        mv("refs/heads/y", None, Some(&b"9"[..])),
        mv("refs/heads/z", Some(&b"7"[..]), None),
    ];
    assert_eq!(b.cas_refs(&moves).unwrap(), Err("refs/heads/z".to_string()));
    assert_eq!(
        b.get_ref("refs/heads/x").unwrap().as_deref(),
        Some(&b"1"[..])
    );
    assert_eq!(b.get_ref("refs/heads/y").unwrap(), None);
    assert_eq!(b.cas_refs(&moves[..2]).unwrap(), Ok(()));
    assert_eq!(
        b.get_ref("refs/heads/x").unwrap().as_deref(),
        Some(&b"2"[..])
    );
    assert_eq!(
        b.get_ref("refs/heads/y").unwrap().as_deref(),
        Some(&b"9"[..])
    );
    let gone = [
        mv("refs/heads/x", Some(&b"2"[..]), None),
        mv("refs/heads/y", Some(&b"9"[..]), None),
    ];
    assert_eq!(b.cas_refs(&gone).unwrap(), Ok(()));
    assert!(b.list_refs("").unwrap().is_empty());
}

/// Compare-and-swap is atomic: concurrent increments through CAS loops never lose one.
fn concurrent_cas_contract(b: &dyn Backend) {
    const THREADS: u64 = 8;
    const ROUNDS: u64 = 50;
    let name = "counter";
    std::thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(|| {
                for _ in 0..ROUNDS {
                    let mut current = b.get_ref(name).unwrap();
                    loop {
                        let n = current
                            .as_deref()
                            .map_or(0, |v| u64::from_be_bytes(v.try_into().unwrap()));
                        match b
                            .cas_ref(name, current.as_deref(), Some(&(n + 1).to_be_bytes()))
                            .unwrap()
                        {
                            Ok(()) => break,
                            Err(now) => current = now,
                        }
                    }
                }
            });
        }
    });
    let v = b.get_ref(name).unwrap().unwrap();
    assert_eq!(u64::from_be_bytes(v.try_into().unwrap()), THREADS * ROUNDS);
    assert_eq!(
        b.cas_ref(name, Some(&(THREADS * ROUNDS).to_be_bytes()), None)
            .unwrap(),
        Ok(())
    );
}

#[test]
fn contract_memory_backend() {
    contract(&MemoryBackend::new());
}

#[test]
fn contract_memory_store() {
    let s = Store::memory();
    assert_eq!(s.path(), None);
    contract(&s);
}

#[test]
fn contract_sled_store() {
    let (_dir, s) = new_sled_store();
    assert!(s.path().is_some());
    contract(&s);
    assert!(s.size_on_disk().unwrap() > 0);
}

#[test]
fn contract_sled_backend_via_accessor() {
    let (_dir, s) = new_sled_store();
    contract(s.backend());
}

#[test]
fn store_hands_out_as_trait_objects() {
    let (_dir, s) = new_sled_store();
    let objects: Arc<dyn ObjectStore> = Arc::new(s.clone());
    let refs: Arc<dyn RefStore> = Arc::new(s.clone());
    let shared = Arc::new(s);
    let backend: Arc<dyn Backend> = shared.clone();
    objects.put(&[1; 32], b"x").unwrap();
    refs.cas_ref("HEAD", None, Some(b"h")).unwrap().unwrap();
    assert_eq!(backend.get(&[1; 32]).unwrap().as_deref(), Some(&b"x"[..]));
    assert_eq!(shared.get_ref("HEAD").unwrap().as_deref(), Some(&b"h"[..]));
}

#[test]
fn overwrite_raw_injects_damage_that_put_repairs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let i = [3; 32];
    for s in [Store::memory(), Store::create(&path, &opts(0)).unwrap()] {
        assert_eq!(s.put(&i, b"good").unwrap(), PutOutcome::Written);
        s.overwrite_raw(&i, b"bad").unwrap();
        assert_eq!(s.get(&i).unwrap().as_deref(), Some(&b"bad"[..]));
        assert_eq!(s.put(&i, b"good").unwrap(), PutOutcome::Repaired);
        assert_eq!(s.get(&i).unwrap().as_deref(), Some(&b"good"[..]));
    }
}

// ---------------------------------------------------------------------------------------
// Model test: the sled store behaves exactly like the memory backend.
// ---------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum Op {
    Put(u8, Vec<u8>),
    PutMany(Vec<(u8, Vec<u8>)>),
    Delete(u8),
    Cas(u8, Option<u8>, Option<u8>),
    Prefix(Vec<u8>),
}

fn small_id(i: u8) -> RawId {
    // Few distinct ids sharing prefixes, so dedup, repair and prefix scans all happen.
    id(&[i % 4, i % 3], i)
}

fn op() -> impl Strategy<Value = Op> {
    let bytes = prop::collection::vec(0u8..3, 0..3);
    prop_oneof![
        (0u8..12, bytes.clone()).prop_map(|(i, b)| Op::Put(i, b)),
        prop::collection::vec((0u8..12, bytes), 0..5).prop_map(Op::PutMany),
        (0u8..12).prop_map(Op::Delete),
        (0u8..3, prop::option::of(0u8..3), prop::option::of(0u8..3))
            .prop_map(|(n, e, v)| Op::Cas(n, e, v)),
        prop::collection::vec(0u8..4, 0..3).prop_map(Op::Prefix),
    ]
}

fn apply(b: &dyn Backend, op: &Op) -> String {
    match op {
        Op::Put(i, v) => format!("{:?}", b.put(&small_id(*i), v).unwrap()),
        Op::PutMany(items) => {
            let items: Vec<(RawId, Vec<u8>)> = items
                .iter()
                .map(|(i, v)| (small_id(*i), v.clone()))
                .collect();
            format!("{:?}", b.put_many(&items).unwrap())
        }
        Op::Delete(i) => format!("{:?}", b.delete(&small_id(*i)).unwrap()),
        Op::Cas(n, e, v) => {
            let e = e.map(|x| vec![x]);
            let v = v.map(|x| vec![x]);
            format!(
                "{:?}",
                b.cas_ref(&format!("r{n}"), e.as_deref(), v.as_deref())
                    .unwrap()
            )
        }
        Op::Prefix(p) => format!("{:?}", b.ids_with_prefix(p).unwrap()),
    }
}

/// Every object (id, bytes) and every ref (name, value), in order.
pub(crate) type Dump = (Vec<(RawId, Option<Vec<u8>>)>, Vec<(String, Vec<u8>)>);

pub(crate) fn dump(b: &dyn Backend) -> Dump {
    let mut ids = Vec::new();
    b.for_each_id(&mut |i| {
        ids.push(i);
        true
    })
    .unwrap();
    let objects = ids
        .into_iter()
        .map(|i| (i, b.get(&i).unwrap().map(Vec::from)))
        .collect();
    (objects, b.list_refs("").unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn sled_matches_memory(ops in prop::collection::vec(op(), 0..40)) {
        let model = MemoryBackend::new();
        let (_dir, sled) = new_sled_store();
        for op in &ops {
            prop_assert_eq!(apply(&model, op), apply(&sled, op), "op {:?}", op);
        }
        prop_assert_eq!(dump(&model), dump(&sled));
    }
}
