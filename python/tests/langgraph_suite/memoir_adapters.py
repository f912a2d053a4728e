"""The fixtures' side of LangGraph's store suites: the store classes those suites construct
(``InMemoryStore``, ``SqliteStore``, ``AsyncSqliteStore``), each made a ``MemoirStore`` over a
new memoir store in a temporary directory. The vendored test files import these names in
place of LangGraph's classes; nothing else in them changes."""

from __future__ import annotations

import os
import shutil
import tempfile
import weakref
from contextlib import asynccontextmanager, contextmanager
from typing import Any, AsyncIterator, Iterator

from memoir.langgraph import MemoirStore

#: The author of the stores' commits. The clock is the system's: the suites check that an
#: update's time follows the first write's.
AUTHOR = "langgraph-suite <suite@example.com>"


class InMemoryStore(MemoirStore):
    """``InMemoryStore(index=...)`` as a ``MemoirStore`` over a fresh store."""

    def __init__(self, **kwargs: Any) -> None:
        scratch = tempfile.mkdtemp(prefix="memoir-lg-")
        # Secrets allowed: the suites store made-up passwords as ordinary data.
        super().__init__(os.path.join(scratch, "store"), create=True,
                         allow_secrets=True, author=AUTHOR, **kwargs)
        weakref.finalize(self, _remove, self.memoir, scratch)


def _remove(memoir: Any, scratch: str) -> None:
    """Closes a store kept open, then removes its directory."""
    memoir.close()
    shutil.rmtree(scratch, ignore_errors=True)


def _store_dir(conn_string: str) -> tuple[str, str]:
    """The store directory for a SQLite connection string, and a directory to remove after."""
    if conn_string == ":memory:":
        scratch = tempfile.mkdtemp(prefix="memoir-lg-")
        return os.path.join(scratch, "store"), scratch
    scratch = conn_string + ".memoir"
    return scratch, scratch


class SqliteStore:
    """``SqliteStore.from_conn_string(conn, index=...)`` giving a ``MemoirStore``."""

    @staticmethod
    @contextmanager
    def from_conn_string(conn_string: str, *, index: Any = None) -> Iterator[MemoirStore]:
        path, scratch = _store_dir(conn_string)
        store = MemoirStore(path, create=True, allow_secrets=True, index=index, author=AUTHOR)
        try:
            yield store
        finally:
            _remove(store.memoir, scratch)


class AsyncSqliteStore:
    """``AsyncSqliteStore.from_conn_string(conn, index=...)`` giving a ``MemoirStore``."""

    @staticmethod
    @asynccontextmanager
    async def from_conn_string(conn_string: str, *, index: Any = None
                               ) -> AsyncIterator[MemoirStore]:
        with SqliteStore.from_conn_string(conn_string, index=index) as store:
            yield store
