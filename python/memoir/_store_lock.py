"""One lock per store directory within this process, and who holds a store's lock.

memoir lets one process at a time hold a store (its ``LOCK`` file). Threads and tasks of
one process that share a store take this process-wide lock first, so they wait for each
other here instead of meeting memoir's lock and failing with ``StoreBusyError`` after
``lock_timeout``. When the lock is held by another process, ``holder`` names it (from the
system's table of file locks, on Linux), and the error raised says who.
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from typing import Dict, Iterator, Optional

from memoir.errors import StoreBusyError

_LOCKS: Dict[str, "StoreLock"] = {}
_GUARD = threading.Lock()


class StoreLock:
    """A re-entrant lock on one store directory, remembering the thread that holds it."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self.owner: Optional[str] = None

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
