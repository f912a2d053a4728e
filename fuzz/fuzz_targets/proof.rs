//! Proofs: any bytes parse to a proof or a typed error; a parsed proof re-encodes to its
//! bytes, and verifying it against a real tree never panics and, unless it is that tree's
//! own proof of its key, never verifies.
#![no_main]

use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use memoir::object::ObjectId;
use memoir::prolly::{NodeStore, Proof};
use memoir::store::{MemoryBackend, ObjectStore};

struct Tree {
    ns: NodeStore,
    root: ObjectId,
}

fn tree() -> &'static Tree {
    static T: OnceLock<Tree> = OnceLock::new();
    T.get_or_init(|| {
        let store: Arc<dyn ObjectStore> = Arc::new(MemoryBackend::new());
        let ns = NodeStore::new(store, 1024);
        let items = (0u32..2000).map(|i| {
            let key = format!("k{:05}", i * 7).into_bytes();
            (
                key,
                ObjectId::of(memoir::object::Kind::Blob, &i.to_be_bytes()),
            )
        });
        let root = ns.build_sorted(items).unwrap();
        Tree { ns, root }
    })
}

fuzz_target!(|bytes: &[u8]| {
    let Ok(p) = Proof::from_bytes(bytes) else {
        return;
    };
    assert_eq!(p.to_bytes(), bytes, "proof parsed from non-canonical bytes");
    let t = tree();
    let _ = p.verify(&NodeStore::empty_id(), &p.key);
    if let Ok(v) = p.verify(&t.root, &p.key) {
        // Only the tree's own nodes hash to its root: the answer is the tree's answer.
        let honest = t.ns.prove(&t.root, &p.key).unwrap();
        assert_eq!(honest.verify(&t.root, &p.key).unwrap(), v);
    }
});
