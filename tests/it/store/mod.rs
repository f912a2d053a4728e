//! Integration tests of the store layer: the backend contract (run on every backend), the
//! store directory (create/open/refusals/reopen), the LOCK across threads and processes, the
//! cached head, the pack files, and the upgrade of older stores.

mod contract;
mod dir;
mod head_cache;
mod lock;
mod packs;
mod read_only;
mod release_store;
mod upgrade;

use std::time::Duration;

use memoir::store::{OpenOptions, RawId, Store};

/// An id made of `prefix`, zeros, and `last` as its final byte.
fn id(prefix: &[u8], last: u8) -> RawId {
    let mut id = [0u8; 32];
    id[..prefix.len()].copy_from_slice(prefix);
    id[31] = last;
    id
}

/// The lock timeout of an open that must succeed (or find no store) right after this process
/// closed the store. A child that another test thread is spawning holds a copy of the LOCK
/// descriptor, and with it the lock, from its fork until its exec, so even a lock this process
/// released can be held elsewhere for a moment on a loaded machine.
const REOPEN_MS: u64 = 5_000;

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
