"""In-process `get` of 5 keys and `summarize --depth 3` on a 100,000-memory store: memoir's
Python package against the reference `memoir-ai` (0.2.9) `MemoryService`, same memories.

Both packages import as `memoir`, so each side runs in its own environment:

    # memoir (this package, release build installed):
    python bench_get_summarize.py ours /tmp/bench/ours
    # the reference (pip install memoir-ai==0.2.9 in another venv):
    python bench_get_summarize.py reference /tmp/bench/ref

Each builds its store on first run (100,000 schema-2 records under 4-segment keys
`t{a}.s{b}.g{c}.m{i}`; ours in one commit, the reference in a commit per
BENCH_REF_CHUNK (1000) puts, see `reference`), then times each operation N times and
prints the median per call. The reference's `summarize` is what its `memoir summarize --depth 3 --json`
runs in process: `StoreService.read_store()` and its grouping by prefix.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time

N = 100_000
NOW = 1_700_000_000.0
KEYS = [f"t{i % 10}.s{(i // 10) % 10}.g{(i // 100) % 10}.m{i}" for i in range(N)]
PROBE = [KEYS[i] for i in (7, 12_345, 50_000, 77_777, 99_999)]
REPEAT = int(os.environ.get("BENCH_REPEAT", "200"))
# Reference store build: puts per commit (see `reference`).
REF_CHUNK = int(os.environ.get("BENCH_REF_CHUNK", "1000"))


def record(i: int, key: str) -> dict:
    content = f"memory {i}: a fact about topic {key.split('.')[0]} kept for the benchmark"
    return {
        "content": content, "key": key, "namespace": "default", "confidence": 1.0,
        "timestamp": NOW, "related_keys": [],
        "entries": [{"content": content, "confidence": 1.0, "timestamp": NOW,
                     "status": "active"}],
        "schema_version": 2,
    }


def median_ms(fn, repeat: int) -> float:
    fn()  # warm caches (both sides)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def ours(path: str) -> dict:
    from memoir import Memoir

    if not os.path.exists(path):
        m = Memoir.create(path, author="bench", now=NOW)
        lines = "\n".join(json.dumps(record(i, k)) for i, k in enumerate(KEYS))
        m.import_lines(lines)
    m = Memoir.open(path)
    assert m.summarize()["total_memories"] == N
    got = m.get(PROBE)
    assert got["found_count"] == 5
    s = m.summarize(depth=3)
    assert len(s["prefix_counts"]["default"]) == 1000
    held = Memoir.open(path, keep_open=True)
    return {
        # Each call opens the store and closes it again (the default handle).
        "get5_ms": median_ms(lambda: m.get(PROBE), REPEAT),
        "summarize_depth3_ms": median_ms(lambda: m.summarize(depth=3), max(REPEAT // 10, 5)),
        # The store kept open between calls (keep_open=True).
        "get5_kept_open_ms": median_ms(lambda: held.get(PROBE), REPEAT),
        "summarize_depth3_kept_open_ms": median_ms(lambda: held.summarize(depth=3),
                                                   max(REPEAT // 10, 5)),
    }


def reference(path: str) -> dict:
    from memoir.services.memory_service import MemoryService
    from memoir.services.store_service import StoreService

    if not os.path.exists(path):
        subprocess.run([os.path.join(os.path.dirname(sys.executable), "memoir"), "new", path],
                       check=True, capture_output=True)
        from memoir.store.prolly_adapter import ProllyTreeStore

        # memoir-ai has no bulk import, and prollytree 0.4.1's VersionedKvStore has no
        # batch insert: each `insert` rewrites the whole staging area to
        # .git/PROLLY_STAGING_data, so 100,000 puts before one commit cost O(N^2) bytes
        # (it ran over 21 minutes without finishing). Committing every REF_CHUNK puts
        # bounds the staging area. A prolly tree's shape depends only on its contents,
        # so the final tree (root hash in data/prolly_config_tree_config) is the same as
        # with one commit; the store just has N / REF_CHUNK import commits instead of one.
        store = ProllyTreeStore(path=path, enable_versioning=True, auto_commit=False)
        t = time.perf_counter()
        for start in range(0, N, REF_CHUNK):
            end = min(start + REF_CHUNK, N)
            for i in range(start, end):
                store.put(("default",), KEYS[i], record(i, KEYS[i]))
            store.commit(f"Import memories {start}..{end - 1}")
        print(f"reference store built in {time.perf_counter() - t:.1f} s "
              f"({N} puts, a commit every {REF_CHUNK})", file=sys.stderr)
    svc = MemoryService(path)
    got = svc.get(PROBE)
    assert all(item["found"] for item in got.items), got
    for item in got.items:
        i = KEYS.index(item["key"])
        assert item["value"] == record(i, item["key"]), item

    def summarize():
        data = StoreService(path).read_store()
        keys = data["namespaces"]["default"]
        counts: dict = {}
        for key in keys:
            seg = key.split(".")
            prefix = ".".join(seg[:3]) if len(seg) >= 3 else key
            counts[prefix] = counts.get(prefix, 0) + 1
        return dict(sorted(counts.items()))

    # prollytree 0.4.1's `VersionedKvStore.list_keys` returns at most 1024 keys (its
    # MAX_KEYS_LIMIT; it warns "only returning first 1024 keys" on stderr), and
    # `read_store` lists the keys with it, so on this store the reference's summarize
    # sees 1024 of the 100,000 memories whichever way the store was built.
    # BENCH_REF_ALLOW_TRUNCATED=1 times it anyway and reports what it saw.
    seen = len(StoreService(path).read_store()["namespaces"]["default"])
    prefixes = len(summarize())
    extra = {}
    if os.environ.get("BENCH_REF_ALLOW_TRUNCATED") == "1":
        extra = {"summarize_keys_seen": seen, "summarize_prefixes": prefixes}
    else:
        assert seen == N, f"read_store listed {seen} of {N} keys"
        assert prefixes == 1000, f"summarize gave {prefixes} prefixes, not 1000"
    return {
        "get5_ms": median_ms(lambda: svc.get(PROBE), REPEAT),
        "summarize_depth3_ms": median_ms(summarize, max(REPEAT // 10, 5)),
        **extra,
    }


if __name__ == "__main__":
    side, path = sys.argv[1], sys.argv[2]
    result = {"ours": ours, "reference": reference}[side](path)
    print(json.dumps({"side": side, "memories": N, **{k: round(v, 4) for k, v in result.items()}}))
