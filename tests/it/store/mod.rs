//! Integration tests of the store layer: the backend contract (run on every backend), the
//! store directory (create/open/refusals/reopen), the LOCK across threads and processes, the
//! resting head, and the pack files.

mod contract;
mod dir;
mod lock;
mod packs;
mod resting_head;

use std::time::Duration;

use memoir::store::{OpenOptions, RawId, Store};

/// An id made of `prefix`, zeros, and `last` as its final byte.
fn id(prefix: &[u8], last: u8) -> RawId {
    let mut id = [0u8; 32];
    id[..prefix.len()].copy_from_slice(prefix);
    id[31] = last;
    id
}

/// Default options with a lock timeout of `timeout_ms`.
fn opts(timeout_ms: u64) -> OpenOptions {
    OpenOptions {
        lock_timeout: Duration::from_millis(timeout_ms),
        ..OpenOptions::default()
    }
}

/// A new store directory `s` in a temporary directory, open.
fn new_sled_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::create(&dir.path().join("s"), &OpenOptions::default()).unwrap();
    (dir, store)
}
