//! Test hooks on [`Store`] (feature `testing`): damaging stored objects, and stores that
//! inject faults and lose unflushed writes. Absent from normal builds, so no user of the
//! library can bypass the store's checks with them.

use std::sync::Arc;

use super::handle::Engine;
use super::{Faults, FaultyBackend, RawId, Store, StoreError, StoreResult};

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
            Engine::Faulty(b) => {
                b.overwrite_raw(id, bytes);
                Ok(())
            }
            Engine::Closed(_) => Err(StoreError::ReadOnly),
        }
    }

    /// A fresh in-memory store that injects the faults `faults` asks for and keeps a
    /// durable snapshot at each flush (see [`Store::power_cut`]).
    pub fn with_faults(faults: Arc<Faults>) -> Store {
        Store::from_parts(Engine::Faulty(FaultyBackend::new(faults)), None, None)
    }

    /// On a store made by [`Store::with_faults`], loses every write since the last
    /// successful flush, as a power cut would. Other stores: no effect.
    pub fn power_cut(&self) {
        if let Engine::Faulty(b) = self.engine() {
            b.power_cut();
        }
    }
}
