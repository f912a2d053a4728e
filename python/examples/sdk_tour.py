"""A tour of memoir's Python API: write, read, summarize, search, history, branches, time
travel and errors, on a new store.

    python examples/sdk_tour.py [STORE_DIR]     # default: a temporary directory
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from memoir import Memoir, NotFoundError


def main() -> None:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()) / "mem"
    m = Memoir.create(root, author="tour", now=1_700_000_000)
    print(f"created {m.path}")

    # Write: one commit per call, several keys at once if you like.
    m.remember("Use pytest; run it with -q", ["preferences.coding.testing"])
    m.remember("The database is PostgreSQL 16", ["project.infra.database"])
    m.remember("Deploys go through CI, never by hand", ["workflow.deploy", "project.rules.deploy"])

    # Read: batched get, summaries by prefix, lexical search and recall.
    got = m.get(["preferences.coding.testing", "project.infra.database"])
    for item in got["items"]:
        print(f"get {item['full_key']}: {item['value']['content']}")
    print("summarize depth 1:", m.summarize(depth=1)["prefix_counts"]["default"])
    print("search 'database':", [h["key"] for h in m.search("database")["hits"]])
    print("recall 'how do we deploy':",
          [r["path"] for r in m.recall("how do we deploy", limit=2)["memories"]])

    # History: every write is a commit; blame, diff and reads at any revision.
    first = m.log(limit=1)["commits"][0]["hash"]
    m.remember("Use pytest with -x in CI", ["preferences.coding.testing"], replace=True)
    print("log:", [c["message"] for c in m.log(limit=2)["commits"]])
    print("blame:", [e["message"] for e in m.blame("preferences.coding.testing")["entries"]])
    change = m.diff()["changes"][0]
    print(f"diff: {change['key']} {change['operation']}: "
          f"{change['old']['content']!r} -> {change['new']['content']!r}")
    then = m.get("preferences.coding.testing", at=first)["items"][0]["value"]["content"]
    print(f"at {first[:8]}: {then}")

    # Branches: work in isolation, then merge back.
    m.branch("experiment")
    m.remember("Try SQLite for local runs", ["project.infra.local_db"], branch="experiment")
    print("branches:", m.branch()["branches"])
    merged = m.merge("experiment")
    print(f"merge: {merged['message']}")

    # Errors carry the command line's exit codes.
    try:
        m.get("no.such.memory")
    except NotFoundError as e:
        print(f"error: {type(e).__name__} code {e.code}: {e}")
    print(f"{m.status()['memory_count']} memories, {m.status()['commit_count']} commits")


if __name__ == "__main__":
    main()
