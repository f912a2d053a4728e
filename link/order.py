#!/usr/bin/env python3
"""Writes link/memoir.order: the functions memoir's everyday commands run, for the linker to
place side by side at the start of the binary's code (a release build's `build.rs` passes the
file to the linker as `--symbol-ordering-file` when the linker takes it, as LLD does).

Why: a command is a short process, and each page of code it runs for the first time costs a
page fault, which maps a window of the file (64 KB on a default Linux). Laid out as the
compiler emits them, the functions of one `diff` lie in about 75 such windows of a 13 MB
text; placed together they fit in about 18, which takes 0.1-0.5 ms off a command on a
2-core machine (paired runs; README, "Install").

How: it builds a scratch store with the binary given, runs each command once under
valgrind's callgrind, and lists every function any of them ran (by symbol name, as the
binary names it). Functions that more commands run come first; then each command's own, in
the order of the list below. Names the linker does not find (code changed since the file
was written) are skipped silently, so a stale file costs only some of the gain: run this
again after larger changes, on a `cargo build-static` binary.

    python3 link/order.py [--memoir target/x86_64-unknown-linux-gnu/release/memoir]

Needs valgrind. Python 3.11, standard library only.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KEYS = [f"topic{i % 10}.area{i % 7}.n{i}" for i in range(2000)]
WORDS = "pytest cargo rust python docker postgres cache latency review deploy".split()


def content(i: int) -> str:
    return f"memory {i}: " + " ".join(WORDS[(i * k) % len(WORDS)] for k in range(1, 9))


def commands() -> list[list[str]]:
    """The commands whose code is laid out first: the reads agents run, then a write."""
    get = KEYS[:5]
    return [
        ["--version"],
        ["status"],
        ["get", *get],
        ["summarize"],
        ["summarize", "--depth", "1"],
        ["summarize", "--depth", "3"],
        ["diff"],
        ["diff", "HEAD~4", "HEAD~3"],  # the second import: 1,000 keys
        ["log", "-n", "20"],
        ["blame", get[0]],
        ["branch"],
        ["proof", get[1]],
        ["search", "pytest"],
        ["export"],
        ["remember", "a new fact", "-p", "topic1.area1.fresh"],
    ]


def run(argv: list[str], env: dict, out=subprocess.DEVNULL) -> None:
    subprocess.run(argv, env=env, check=True, stdout=out, stderr=subprocess.DEVNULL)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--memoir", default=os.path.join(
        ROOT, "target", "x86_64-unknown-linux-gnu", "release", "memoir"))
    ap.add_argument("--out", default=os.path.join(ROOT, "link", "memoir.order"))
    args = ap.parse_args()
    memoir = os.path.abspath(args.memoir)
    with tempfile.TemporaryDirectory(prefix="memoir-order-") as tmp:
        store = os.path.join(tmp, "store")
        env = {"PATH": os.environ.get("PATH", ""), "HOME": tmp, "MEMOIR_AUTHOR": "order",
               "NO_COLOR": "1"}
        run([memoir, "new", store], env)
        # Two imports of 1,000 memories (a large diff between them), then a short history.
        for part in (range(1000), range(1000, 2000)):
            lines = os.path.join(tmp, "part.jsonl")
            with open(lines, "w") as f:
                for i in part:
                    f.write(json.dumps({"key": KEYS[i], "content": content(i)}) + "\n")
            run([memoir, "-s", store, "import", lines], env)
        for i in range(3):
            run([memoir, "-s", store, "remember", f"update {i}", "-p", KEYS[i]], env)
        runs = []
        for n, cmd in enumerate(commands()):
            argv = cmd if cmd == ["--version"] else ["--json", "-s", store, *cmd]
            profile = os.path.join(tmp, f"callgrind.{n}")
            run(["valgrind", "--tool=callgrind", "--demangle=no", "--compress-strings=no",
                 f"--callgrind-out-file={profile}", memoir, *argv], env)
            names: dict[str, None] = {}
            with open(profile) as f:
                for line in f:
                    if line.startswith("fn="):
                        name = line[3:].strip()
                        # Skip what has no symbol: "0x..." addresses, "(below main)".
                        if not name.startswith(("0x", "(")):
                            names.setdefault(name)
            runs.append(list(names))
    used = collections.Counter(name for names in runs for name in names)
    first: dict[str, tuple[int, int]] = {}
    for n, names in enumerate(runs):
        for i, name in enumerate(names):
            first.setdefault(name, (n, i))
    order = sorted(used, key=lambda name: (-used[name], first[name]))
    with open(args.out, "w") as f:
        f.write("\n".join(order) + "\n")
    print(f"{args.out}: {len(order)} functions from {len(runs)} commands", file=sys.stderr)


if __name__ == "__main__":
    main()
