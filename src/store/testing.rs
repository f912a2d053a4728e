//! Test hooks on [`Store`] (feature `testing`): damaging stored objects, and stores over a
//! backend the test supplies (one that injects faults and loses unflushed writes, say).
//! Absent from normal builds, so no user of the library can bypass the store's checks with
//! them.

use super::handle::Engine;
use super::{Backend, RawId, Store, StoreError, StoreResult};

/// A backend a test supplies: any [`Backend`] that can also damage its stored bytes and
/// lose what no flush made durable.
pub trait TestBackend: Backend {
    /// Replaces the stored bytes of `id` without verification, to simulate a damaged copy.
    fn overwrite_raw(&self, id: &RawId, bytes: &[u8]);

    /// Loses every write since the last successful flush, as a power cut would.
    fn power_cut(&self);
}

impl Store {
    /// Replaces the stored bytes of `id` without verification (inserting them if `id` is
    /// absent), to simulate a damaged copy.
    pub fn overwrite_raw(&self, id: &RawId, bytes: &[u8]) -> StoreResult<()> {
        match self.engine() {
            Engine::Disk(b) => b.overwrite_raw(id, bytes),
            Engine::Memory(b) => {
                b.overwrite_raw(id, bytes);
                Ok(())
            }
            Engine::Test(b) => {
                b.overwrite_raw(id, bytes);
                Ok(())
            }
            Engine::Closed(_) => Err(StoreError::ReadOnly),
        }
    }

    /// A store over `backend`, with no directory.
    pub fn with_backend(backend: Box<dyn TestBackend>) -> Store {
        Store::from_parts(Engine::Test(backend), None, None)
    }

    /// On a store made by [`Store::with_backend`], its backend's power cut. Other stores:
    /// no effect.
    pub fn power_cut(&self) {
        if let Engine::Test(b) = self.engine() {
            b.power_cut();
        }
    }
}
