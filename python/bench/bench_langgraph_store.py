"""memoir.langgraph.MemoirStore against LangGraph's SqliteStore, same operations:

- ``put``: one item per call into a store of 1,000 items, the median per call;
- filtered ``search`` at 5,000 items (``filter={"kind": ...}, limit=10``), the median per
  call after a first, warming call;
- the workload of LangGraph's ``test_large_batches_async`` (6,000 concurrent ``aput``,
  ``aget``, ``asearch``, ``alist_namespaces`` and ``adelete`` calls gathered at once), the
  median wall time of BENCH_ROUNDS runs.

Run it with the release wheel and ``langgraph-checkpoint-sqlite`` installed in one
environment (the store files go to a temporary directory):

    python bench_langgraph_store.py            # both stores
    BENCH_REPEAT=500 python bench_langgraph_store.py

Each line prints the store, the operation and the median in milliseconds.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from typing import Any, Callable, List

from langgraph.store.base import BaseStore, PutOp

REPEAT = int(os.environ.get("BENCH_REPEAT", "200"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
KINDS = 50  # 5,000 items: 100 of each kind, so a filter selects 2%


def median_ms(call: Callable[[], Any], n: int) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        call()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def fill(store: BaseStore, n: int) -> None:
    """``n`` items under ("bench", "items"), written in batches of 1,000."""
    for start in range(0, n, 1000):
        store.batch([
            PutOp(("bench", "items"), f"item{i:05d}",
                  {"kind": f"k{i % KINDS}", "n": i, "text": f"memory number {i} of the benchmark"})
            for i in range(start, min(n, start + 1000))
        ])


def large_batches(open_async: Callable[[], Any]) -> float:
    """Seconds for LangGraph's ``test_large_batches_async`` workload on the store
    ``open_async()`` opens (an async context manager)."""

    async def run() -> None:
        async with open_async() as store:
            await workload(store)

    t = time.perf_counter()
    asyncio.run(run())
    return time.perf_counter() - t


async def workload(store: BaseStore) -> None:
    """The workload: 100 keys in 10 rounds, six calls per key, all gathered at once."""
    coros: List[Any] = []
    for m in range(10):
        ns = ("test", "foo", "bar", "baz", str(m % 2))
        for i in range(100):
            coros.append(store.aput(ns, f"key{i}", value={"foo": "bar" + str(i)}))
            coros.append(asyncio.create_task(store.aget(ns, f"key{i}")))
            coros.append(asyncio.create_task(
                store.alist_namespaces(prefix=None, max_depth=m + 1)))
            coros.append(asyncio.create_task(store.asearch(("test",))))
            coros.append(store.aput(ns, f"key{i}", value={"foo": "bar" + str(i)}))
            coros.append(store.adelete(ns, f"key{i}"))
    results = await asyncio.gather(*coros)
    assert len(results) == 6000


def measure(name: str, make: Callable[[str], Any], make_async: Callable[[str], Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        with make(os.path.join(tmp, "puts")) as store:
            fill(store, 1000)
            counter = iter(range(10**9))
            put = median_ms(lambda: store.put(("bench", "puts"), f"p{next(counter)}",
                                              {"kind": "new", "text": "a new memory"}), REPEAT)
        print(f"{name}\tput (1,000 items)\t{put:.3f} ms", flush=True)
        with make(os.path.join(tmp, "search")) as store:
            fill(store, 5000)
            store.search(("bench",), filter={"kind": "k7"}, limit=10)
            kinds = iter(range(10**9))
            found = median_ms(lambda: store.search(
                ("bench",), filter={"kind": f"k{next(kinds) % KINDS}"}, limit=10), REPEAT)
        print(f"{name}\tfiltered search (5,000 items)\t{found:.3f} ms", flush=True)
        rounds = []
        for r in range(ROUNDS):
            path = os.path.join(tmp, f"batch{r}")
            rounds.append(large_batches(lambda: make_async(path)) * 1000)
        print(f"{name}\ttest_large_batches_async workload\t{statistics.median(rounds):.1f} ms",
              flush=True)


def memoir_store(path: str):
    from contextlib import contextmanager

    from memoir.langgraph import MemoirStore

    @contextmanager
    def opened():
        yield MemoirStore(path, create=True, author="bench")

    return opened()


def memoir_async(path: str):
    from contextlib import asynccontextmanager

    from memoir.langgraph import MemoirStore

    @asynccontextmanager
    async def opened():
        yield MemoirStore(path, create=True, author="bench")

    return opened()


def sqlite_async(path: str):
    from contextlib import asynccontextmanager

    from langgraph.store.sqlite.aio import AsyncSqliteStore

    @asynccontextmanager
    async def opened():
        async with AsyncSqliteStore.from_conn_string(path + ".db") as store:
            await store.setup()
            yield store

    return opened()


def sqlite_store(path: str):
    from langgraph.store.sqlite import SqliteStore

    class Setup:
        def __enter__(self):
            self.cm = SqliteStore.from_conn_string(path + ".db")
            store = self.cm.__enter__()
            store.setup()
            return store

        def __exit__(self, *exc):
            return self.cm.__exit__(*exc)

    return Setup()


if __name__ == "__main__":
    which = sys.argv[1:] or ["memoir", "sqlite"]
    if "memoir" in which:
        measure("MemoirStore", memoir_store, memoir_async)
    if "sqlite" in which:
        measure("SqliteStore", sqlite_store, sqlite_async)
