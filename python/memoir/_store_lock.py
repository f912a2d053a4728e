"""One lock per store directory within this process, and who holds a store's lock.

memoir lets one process at a time hold a store (its ``LOCK`` file). Threads and tasks of
one process that share a store take this process-wide lock first, so they wait for each
other here instead of meeting memoir's lock and failing with ``StoreBusyError`` after
``lock_timeout``. When the lock is held by another process, ``holder`` names it (from the
system's table of file locks, on Linux), and the error raised says who. ``IdleCloser`` keeps
a store open across a burst of operations and closes it when the burst ends.
"""

from __future__ import annotations

import os
import threading
import time
from contextlib import contextmanager
from typing import Any, Dict, Iterator, Optional

from memoir.errors import StoreBusyError

_LOCKS: Dict[str, "StoreLock"] = {}
_GUARD = threading.Lock()


class StoreLock:
    """A re-entrant lock on one store directory, remembering the thread that holds it."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self.owner: Optional[str] = None
        #: The handles of this store kept open between operations, by ``id``.
        self.kept: Dict[int, "IdleCloser"] = {}

    def close_others(self, mine: Optional["IdleCloser"]) -> None:
        """Closes the store's handles kept open other than ``mine``, so that the operation
        about to run (holding this lock) does not wait on this process's own LOCK."""
        for closer in list(self.kept.values()):
            if closer is not mine:
                closer.close_now()

    @contextmanager
    def held(self, path: str, timeout: float) -> Iterator[None]:
        """Holds the lock, waiting at most ``timeout`` seconds for another thread; past
        that, ``StoreBusyError`` naming the thread that holds it."""
        if not self._lock.acquire(timeout=timeout):
            raise StoreBusyError(
                f"store {path} is busy: thread {self.owner!r} of this process ({os.getpid()}) "
                f"holds it (waited {timeout:g} s)",
                7,
            )
        previous = self.owner
        self.owner = threading.current_thread().name
        try:
            yield
        finally:
            self.owner = previous
            self._lock.release()


def lock_for(path: "os.PathLike[str] | str") -> StoreLock:
    """The process-wide lock of the store at ``path``."""
    key = os.path.realpath(os.fspath(path))
    with _GUARD:
        lock = _LOCKS.get(key)
        if lock is None:
            lock = _LOCKS[key] = StoreLock()
        return lock


def holder(path: "os.PathLike[str] | str") -> Optional[str]:
    """Who holds the ``LOCK`` of the store at ``path``, as words (``process 4242
    (python agent.py)``), or None when that cannot be told (no lock table, not held)."""
    try:
        inode = os.stat(os.path.join(os.fspath(path), "LOCK")).st_ino
        with open("/proc/locks", encoding="ascii", errors="replace") as f:
            table = f.read().splitlines()
    except OSError:
        return None
    for line in table:
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 4242 08:01:1234 0 EOF" (a blocked waiter has "->").
        if "->" in fields or len(fields) < 6:
            continue
        try:
            pid, ino = int(fields[4]), int(fields[5].rsplit(":", 1)[1])
        except (ValueError, IndexError):
            continue
        if ino != inode:
            continue
        if pid == os.getpid():
            return f"this process ({pid})"
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                command = f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
        except OSError:
            command = ""
        return f"process {pid}" + (f" ({command[:200]})" if command else "")
    return None


def busy(error: StoreBusyError, path: "os.PathLike[str] | str") -> StoreBusyError:
    """``error`` with the holder of the store's lock named in its message, when known."""
    who = holder(path)
    if who is None:
        return error
    message = f"{error.message}; the lock is held by {who}"
    return StoreBusyError(message, error.code, error.result)


class IdleCloser:
    """Closes a handle opened with ``keep_open=True`` once it has been idle for ``idle``
    seconds, or after ``max_hold`` seconds of continuous use, so that a burst of operations
    opens the store once while other processes still get their turn soon after."""

    def __init__(self, memoir: Any, lock: StoreLock, idle: float = 0.05,
                 max_hold: float = 1.0) -> None:
        self._memoir = memoir
        self._lock = lock
        self._idle = idle
        self._max_hold = max_hold
        self._cv = threading.Condition()
        self._last = 0.0
        self._since: Optional[float] = None
        self._watching = False

    def used(self) -> None:
        """An operation just ended (the store is open)."""
        self._lock.kept[id(self)] = self
        with self._cv:
            now = time.monotonic()
            self._last = now
            if self._since is None:
                self._since = now
            if not self._watching:
                self._watching = True
                threading.Thread(target=self._watch, name="memoir-idle-close",
                                 daemon=True).start()

    def _watch(self) -> None:
        with self._cv:
            while True:
                assert self._since is not None
                due = min(self._last + self._idle, self._since + self._max_hold)
                now = time.monotonic()
                if now >= due:
                    break
                self._cv.wait(due - now)
            self._since = None
            self._watching = False
        # Between operations of this process: the close never cuts one short.
        with self._lock.held(str(self._memoir.path), 3600.0):
            self.close_now()

    def close_now(self) -> None:
        """Closes the handle now (the caller holds the store's process-wide lock)."""
        self._lock.kept.pop(id(self), None)
        self._memoir.close()
