//! Fault injection: an in-memory backend that fails the Nth read, write or flush on request,
//! and can lose everything written since the last successful flush (a simulated power cut).
//! Upper layers are tested against it through [`Store::with_backend`].

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use memoir::store::{
    Backend, Bytes, MemoryBackend, ObjectStore, PutOutcome, RawId, RefStore, Store, StoreError,
    StoreResult, TestBackend,
};

/// A kind of backend operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultOp {
    /// get, contains, ids_with_prefix, for_each_id, get_ref, list_refs.
    Read,
    /// put, put_many, delete, cas_ref.
    Write,
    /// flush.
    Flush,
}

impl FaultOp {
    fn index(self) -> usize {
        match self {
            FaultOp::Read => 0,
            FaultOp::Write => 1,
            FaultOp::Flush => 2,
        }
    }
}

/// The error of an injected fault: the `n`th operation of kind `op`. It is the source of
/// the [`StoreError::Backend`] the faulty backend returns, as an engine's own error would be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InjectedFault {
    /// The kind of operation that failed.
    pub op: FaultOp,
    /// Its number among the operations of that kind, counting from 1.
    pub n: u64,
}

impl fmt::Display for InjectedFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "injected fault: {:?} #{}", self.op, self.n)
    }
}

impl std::error::Error for InjectedFault {}

/// The fault plan and operation counters, shared with the test that drives it.
#[derive(Debug)]
pub struct Faults {
    counts: [AtomicU64; 3],
    fail_at: [AtomicU64; 3],
}

impl Default for Faults {
    fn default() -> Self {
        Faults {
            counts: Default::default(),
            fail_at: [u64::MAX, u64::MAX, u64::MAX].map(AtomicU64::new),
        }
    }
}

impl Faults {
    /// A plan that fails nothing.
    pub fn new() -> Arc<Faults> {
        Arc::new(Faults::default())
    }

    /// Makes the `n`th operation of kind `op` (counting from 1, from now on, across the
    /// counts so far) fail with an engine error; every later one succeeds again.
    pub fn fail_nth(&self, op: FaultOp, n: u64) {
        let base = self.counts[op.index()].load(Ordering::SeqCst);
        self.fail_at[op.index()].store(base + n, Ordering::SeqCst);
    }

    /// Operations of kind `op` so far.
    pub fn count(&self, op: FaultOp) -> u64 {
        self.counts[op.index()].load(Ordering::SeqCst)
    }

    fn tick(&self, op: FaultOp) -> StoreResult<()> {
        let n = self.counts[op.index()].fetch_add(1, Ordering::SeqCst) + 1;
        if n == self.fail_at[op.index()].load(Ordering::SeqCst) {
            return Err(StoreError::Backend(Box::new(InjectedFault { op, n })));
        }
        Ok(())
    }
}

type Snapshot = (BTreeMap<RawId, Bytes>, BTreeMap<String, Vec<u8>>);

/// An in-memory backend with injected faults and a durable snapshot taken at each flush.
pub struct FaultyBackend {
    live: RwLock<Arc<MemoryBackend>>,
    durable: Mutex<Snapshot>,
    faults: Arc<Faults>,
}

impl FaultyBackend {
    /// An empty backend following `faults`.
    pub fn new(faults: Arc<Faults>) -> Self {
        FaultyBackend {
            live: RwLock::new(Arc::new(MemoryBackend::new())),
            durable: Mutex::new(Snapshot::default()),
            faults,
        }
    }

    fn live(&self) -> Arc<MemoryBackend> {
        self.live.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn snapshot(live: &MemoryBackend) -> StoreResult<Snapshot> {
        let mut objects = BTreeMap::new();
        let mut ids = Vec::new();
        live.for_each_id(&mut |id| {
            ids.push(id);
            true
        })?;
        for id in ids {
            if let Some(b) = live.get(&id)? {
                objects.insert(id, b);
            }
        }
        let refs = live.list_refs("")?.into_iter().collect();
        Ok((objects, refs))
    }
}

impl ObjectStore for FaultyBackend {
    fn get(&self, id: &RawId) -> StoreResult<Option<Bytes>> {
        self.faults.tick(FaultOp::Read)?;
        self.live().get(id)
    }
    fn put(&self, id: &RawId, bytes: &[u8]) -> StoreResult<PutOutcome> {
        self.faults.tick(FaultOp::Write)?;
        self.live().put(id, bytes)
    }
    fn put_many(&self, objects: &[(RawId, Vec<u8>)]) -> StoreResult<Vec<PutOutcome>> {
        self.faults.tick(FaultOp::Write)?;
        self.live().put_many(objects)
    }
    fn contains(&self, id: &RawId) -> StoreResult<bool> {
        self.faults.tick(FaultOp::Read)?;
        self.live().contains(id)
    }
    fn ids_with_prefix(&self, prefix: &[u8]) -> StoreResult<Vec<RawId>> {
        self.faults.tick(FaultOp::Read)?;
        self.live().ids_with_prefix(prefix)
    }
    fn delete(&self, id: &RawId) -> StoreResult<bool> {
        self.faults.tick(FaultOp::Write)?;
        self.live().delete(id)
    }
    /// Makes everything written so far survive [`FaultyBackend::power_cut`].
    fn flush(&self) -> StoreResult<()> {
        self.faults.tick(FaultOp::Flush)?;
        let snap = Self::snapshot(&self.live())?;
        *self.durable.lock().unwrap_or_else(|e| e.into_inner()) = snap;
        Ok(())
    }
}

impl RefStore for FaultyBackend {
    fn get_ref(&self, name: &str) -> StoreResult<Option<Vec<u8>>> {
        self.faults.tick(FaultOp::Read)?;
        self.live().get_ref(name)
    }
    fn cas_ref(
        &self,
        name: &str,
        expected: Option<&[u8]>,
        new: Option<&[u8]>,
    ) -> StoreResult<Result<(), Option<Vec<u8>>>> {
        self.faults.tick(FaultOp::Write)?;
        self.live().cas_ref(name, expected, new)
    }
    fn list_refs(&self, prefix: &str) -> StoreResult<Vec<(String, Vec<u8>)>> {
        self.faults.tick(FaultOp::Read)?;
        self.live().list_refs(prefix)
    }
}

impl Backend for FaultyBackend {
    fn size_on_disk(&self) -> StoreResult<u64> {
        Ok(0)
    }
}

impl TestBackend for FaultyBackend {
    /// Loses everything written since the last successful flush, as a power cut would.
    fn power_cut(&self) {
        let (objects, refs) = self
            .durable
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let fresh = MemoryBackend::new();
        for (id, bytes) in &objects {
            fresh.overwrite_raw(id, bytes);
        }
        for (name, value) in &refs {
            let _ = fresh.cas_ref(name, None, Some(value));
        }
        *self.live.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(fresh);
    }

    /// Replaces the live bytes of `id` (corruption tests).
    fn overwrite_raw(&self, id: &RawId, bytes: &[u8]) {
        self.live().overwrite_raw(id, bytes);
    }
}

/// A store over a [`FaultyBackend`] following `faults`.
pub fn faulty_store(faults: Arc<Faults>) -> Store {
    Store::with_backend(Box::new(FaultyBackend::new(faults)))
}

#[test]
fn an_injected_fault_is_the_source_of_an_engine_error() {
    let faults = Faults::new();
    let b = FaultyBackend::new(faults.clone());
    faults.fail_nth(FaultOp::Read, 2);
    assert!(b.get(&[0; 32]).is_ok());
    let e = b.get(&[0; 32]).unwrap_err();
    let source = std::error::Error::source(&e).and_then(|s| s.downcast_ref::<InjectedFault>());
    assert_eq!(
        source,
        Some(&InjectedFault {
            op: FaultOp::Read,
            n: 2
        })
    );
    assert_eq!(
        e.to_string(),
        "storage engine error: injected fault: Read #2"
    );
    assert!(b.get(&[0; 32]).is_ok(), "only the nth fails");
}
