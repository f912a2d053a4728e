//! A store kept open between operations by a long-running process (a server), so a burst of
//! requests pays for opening once and reads from a warm cache, while other processes waiting
//! on the LOCK still get their turn.

use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::store::{OpenOptions, Store, StoreError};

/// The held store. The holder calls [`KeptOpenStore::release_if_idle`] between operations: the
/// store is closed after [`KeptOpenStore::IDLE`] without use, and after [`KeptOpenStore::MAX_HOLD`]
/// of continuous use it is let go for [`KeptOpenStore::GAP`].
#[derive(Debug, Default)]
pub struct KeptOpenStore {
    slot: Mutex<Slot>,
}

#[derive(Debug, Default)]
struct Slot {
    store: Option<Store>,
    opened: Option<Instant>,
    last_used: Option<Instant>,
    released: Option<Instant>,
}

impl KeptOpenStore {
    /// How long the store stays open after the last operation ended.
    pub const IDLE: Duration = Duration::from_millis(25);
    /// Longest continuous hold while busy.
    pub const MAX_HOLD: Duration = Duration::from_millis(1000);
    /// After a release forced by [`KeptOpenStore::MAX_HOLD`], how long the holder stays away
    /// (longer than a waiter's lock poll).
    pub const GAP: Duration = Duration::from_millis(25);

    /// The held store, opened first if it is not open.
    pub(crate) fn open(&self, path: &Path, opts: &OpenOptions) -> Result<Store, StoreError> {
        let mut slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        slot.last_used = Some(now);
        if let Some(st) = &slot.store {
            return Ok(st.clone());
        }
        if let Some(r) = slot.released {
            let since = now.duration_since(r);
            if since < Self::GAP {
                std::thread::sleep(Self::GAP - since);
            }
        }
        let st = Store::open(path, opts)?;
        slot.store = Some(st.clone());
        slot.opened = Some(Instant::now());
        Ok(st)
    }

    /// Closes the store (its LOCK is released once the operations' handles are dropped) if it
    /// was idle for [`KeptOpenStore::IDLE`] since the last operation (began or, as
    /// [`KeptOpenStore::finished`] tells, ended) or held for [`KeptOpenStore::MAX_HOLD`]. Call it
    /// between operations, never during one. Returns whether it was released.
    pub fn release_if_idle(&self) -> bool {
        let mut slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        let idle = slot
            .last_used
            .is_some_and(|t| now.duration_since(t) >= Self::IDLE);
        let long = Self::held_long(&slot, now);
        if slot.store.is_some() && (idle || long) {
            Self::let_go(&mut slot, long, now);
            true
        } else {
            false
        }
    }

    /// An operation just ended: the store is let go if it was held for
    /// [`KeptOpenStore::MAX_HOLD`] (operations arriving back to back leave a background check
    /// little room), else kept for [`KeptOpenStore::IDLE`] from now. Returns whether it was
    /// released.
    pub fn finished(&self) -> bool {
        let mut slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        if slot.store.is_some() && Self::held_long(&slot, now) {
            Self::let_go(&mut slot, true, now);
            return true;
        }
        slot.last_used = Some(now);
        false
    }

    /// Whether the store has been held for [`KeptOpenStore::MAX_HOLD`].
    fn held_long(slot: &Slot, now: Instant) -> bool {
        slot.opened
            .is_some_and(|t| now.duration_since(t) >= Self::MAX_HOLD)
    }

    /// Closes the store; after a hold cut short (`forced`), the next open waits out
    /// [`KeptOpenStore::GAP`] first.
    fn let_go(slot: &mut Slot, forced: bool, now: Instant) {
        slot.store = None;
        slot.opened = None;
        slot.released = forced.then_some(now);
    }

    /// Closes the store now.
    pub fn release(&self) {
        let mut slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        slot.store = None;
        slot.opened = None;
    }
}
