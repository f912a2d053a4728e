//! The LOCK file: whoever holds an exclusive OS lock on it has the store open.
//!
//! The lock is an advisory lock on an open file (`File::try_lock`), which the OS releases
//! when its holder's process ends for any reason, so a crashed or killed holder never blocks
//! anyone; the LOCK file itself is never deleted and carries no state. A second opener
//! retries every [`LOCK_POLL`] until its timeout, then fails with [`StoreError::Busy`].
//!
//! The lock belongs to the open file, and a child process shares its parent's open files from
//! fork to exec (the descriptor is close-on-exec): while another thread of a process is
//! starting a program, a lock that process just released can still be held for a moment. A
//! zero timeout can see that moment as busy; any wait rides it out.

use std::fs::{self, File};
use std::io;
use std::path::Path;
use std::time::{Duration, Instant};

use super::files::io_err;
use super::{StoreError, StoreResult};

/// Name of the lock file inside a store directory.
pub const LOCK_FILE: &str = "LOCK";
/// Interval between two attempts to take a held lock.
const LOCK_POLL: Duration = Duration::from_millis(5);

/// Runs `attempt` until it succeeds (`Ok(Some(_))`), fails, or has found what it needs held
/// by someone else (`Ok(None)`) for longer than `timeout`; then fails with
/// [`StoreError::Busy`] naming store directory `store`. Attempts are [`LOCK_POLL`] apart; a
/// zero timeout is one attempt.
pub(super) fn wait_while_held<T>(
    store: &Path,
    timeout: Duration,
    mut attempt: impl FnMut() -> StoreResult<Option<T>>,
) -> StoreResult<T> {
    let start = Instant::now();
    loop {
        if let Some(done) = attempt()? {
            return Ok(done);
        }
        let waited = start.elapsed();
        if waited >= timeout {
            return Err(StoreError::Busy {
                path: store.to_path_buf(),
                waited_ms: u64::try_from(waited.as_millis()).unwrap_or(u64::MAX),
            });
        }
        std::thread::sleep(LOCK_POLL.min(timeout - waited));
    }
}

/// Takes the exclusive lock on `file`, waiting up to `timeout` for another holder to release
/// it. `store` is the store directory, for errors.
pub(super) fn acquire(file: &File, store: &Path, timeout: Duration) -> StoreResult<()> {
    wait_while_held(store, timeout, || match file.try_lock() {
        Ok(()) => Ok(Some(())),
        Err(fs::TryLockError::WouldBlock) => Ok(None),
        Err(fs::TryLockError::Error(e)) => Err(io_err(&store.join(LOCK_FILE))(e)),
    })
}

/// Opens the LOCK file of the existing store `store` (making it if it went missing: it
/// carries no state) and takes its lock, waiting up to `timeout`.
pub(super) fn lock_existing(store: &Path, timeout: Duration) -> StoreResult<File> {
    let path = store.join(LOCK_FILE);
    let file = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(io_err(&path))?;
    acquire(&file, store, timeout)?;
    Ok(file)
}

/// Makes the LOCK file of a store being created in `store`, not yet locked ([`acquire`]).
/// `Ok(None)` when the file already exists: a concurrent creator got there first
/// (`create_new` makes creators race on this one atomic step, and the loser touches
/// nothing).
pub(super) fn create_lock_file(store: &Path) -> StoreResult<Option<File>> {
    let path = store.join(LOCK_FILE);
    let file = match fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(None),
        Err(e) => return Err(io_err(&path)(e)),
    };
    Ok(Some(file))
}
