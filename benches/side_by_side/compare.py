#!/usr/bin/env python3
"""Side by side: memoir against the Python `memoir-ai` 0.2.9, same memories, whole processes.

For each store size it builds one store per tool holding the same memories (deterministic
three-level keys and contents, imported in chunks of --chunk records with one commit per chunk,
then a short history written through each tool's own `remember -p`), checks that the two
answer the same where the command-line contract says they should, and then times every read
command both tools have, as paired runs: each iteration runs the memoir-ai command and the
memoir command back to back (which one goes first alternates), and the wall time of each
whole process is recorded. `remember` (a write) is timed the same way, for information.

Commands only memoir has (`log`, `export`, lexical `search` and `recall`) are timed too and
listed apart. memoir-ai's `recall` needs an LLM and its `search` an embedding model, so
neither is run: nothing here leaves the machine.

Python 3.11, standard library only. See README.md next to this file.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time

HISTORY_UPDATES = 6  # remember commands after the import, one commit each
NOW = 1_700_000_000.0
KNOWN_REF_LIST_CAP = 1024

CATEGORIES = [
    "preferences", "profile", "project", "knowledge", "settings",
    "entity", "debugging", "tools", "people", "places",
]
TOPICS = [
    "coding", "testing", "editor", "deploy", "review",
    "language", "schedule", "build", "docs", "style",
]
WORDS = (
    "pytest cargo rust python typescript docker kubernetes terraform postgres sqlite redis "
    "linting formatting tabs spaces vim emacs vscode terminal shell bash zsh makefile ninja "
    "bazel review approve merge rebase branch release tag changelog deadline meeting morning "
    "evening coffee tea lunch standup retro sprint roadmap design api schema migration index "
    "cache latency throughput benchmark profile flamegraph memory leak crash panic retry "
    "timeout backoff queue worker cron logging tracing metrics dashboard alert oncall "
    "incident postmortem runbook wiki readme tutorial example snippet refactor rename "
    "deprecate upgrade dependency lockfile vendor mirror proxy offline laptop desktop monitor"
).split()


# ----------------------------------------------------------------------------------------
# Deterministic memories


def key_of(i: int) -> str:
    return f"{CATEGORIES[i % 10]}.{TOPICS[(i // 10) % 10]}.n{i}"


def content_of(i: int, salt: str = "") -> str:
    rng = random.Random(f"memoir-side-by-side:{i}:{salt}")
    words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 16)))
    return f"memory {i}{salt}: {words}"


def record(i: int) -> dict:
    key, content, ts = key_of(i), content_of(i), NOW + i
    return {
        "content": content, "key": key, "namespace": "default", "confidence": 1.0,
        "timestamp": ts, "related_keys": [],
        "entries": [{"content": content, "confidence": 1.0, "timestamp": ts,
                     "status": "active"}],
        "schema_version": 2,
    }


def history_plan(n: int) -> list[tuple[str, str]]:
    """(key, content) of the remember commands run after the import, oldest first."""
    a, b, e = key_of(n // 3), key_of(n // 2), key_of(n - 1)
    return [
        (a, content_of(n // 3, " (revised)")),
        (b, content_of(n // 2, " (revised)")),
        ("knowledge.benchmark.added1", "added after the import: prefers pytest over unittest"),
        (a, content_of(n // 3, " (revised again)")),
        ("knowledge.benchmark.added2", "added after the import: deploys on friday never"),
        (e, content_of(n - 1, " (revised)")),
    ]


def key_of_index(key: str, n: int) -> bool:
    """Whether key is one of the n imported keys."""
    leaf = key.rsplit(".", 1)[-1]
    return leaf[:1] == "n" and leaf[1:].isdigit() and int(leaf[1:]) < n and key_of(int(leaf[1:])) == key


class Expected:
    """What both stores hold after the build, computed from the plan alone."""

    def __init__(self, n: int, chunk: int):
        self.n = n
        self.chunks = (n + chunk - 1) // chunk
        self.history = history_plan(n)
        self.contents = {key_of(i): content_of(i) for i in range(n)}
        self.versions = {k: 1 for k in self.contents}  # commits that wrote each key
        self.imported = {key_of(i): record(i) for i in range(n)}
        for key, content in self.history:
            self.contents[key] = content
            self.versions[key] = self.versions.get(key, 0) + 1
            self.imported.pop(key, None)
        self.total = len(self.contents)
        self.commit_count = 1 + self.chunks + len(self.history)
        # The keys `get` reads: untouched ones across the store plus one rewritten twice.
        self.get_keys = [key_of(7), key_of(n // 4), self.history[0][0], key_of(3 * n // 4),
                         key_of(n - 2)]
        self.blame_key = self.history[0][0]
        self.proof_key = key_of(n // 4)
        first = {}
        for key, _ in self.history:
            first.setdefault(key, key_of_index(key, n))
        self.diff_history = sorted(
            ("default", k, "modified" if existed else "added") for k, existed in first.items())
        last_chunk = range((self.chunks - 1) * chunk, n)
        self.diff_import = sorted(("default", key_of(i), "added") for i in last_chunk)
        self.last_chunk_contents = {key_of(i): content_of(i) for i in last_chunk}

    def prefix_counts(self, depth: int) -> dict:
        counts: dict[str, int] = {}
        for key in self.contents:
            prefix = ".".join(key.split(".")[:depth])
            counts[prefix] = counts.get(prefix, 0) + 1
        return dict(sorted(counts.items()))


# ----------------------------------------------------------------------------------------
# Running processes


class CommandFailed(RuntimeError):
    pass


class Runner:
    """Spawns whole processes with posix_spawn (no fd-closing sweep, no shell) and times
    them from just before the spawn to the end of wait4. stdout and stderr go to files,
    read after the clock has stopped (and emptied before it starts). `last_cpu` is the user+system CPU time of the last
    process run (with its children, e.g. the git processes memoir-ai starts)."""

    def __init__(self, workdir: str, env: dict):
        self.env = env
        self.out = os.path.join(workdir, "stdout")
        self.err = os.path.join(workdir, "stderr")
        fd_flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        self.actions = [
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, self.out, fd_flags, 0o600),
            (os.POSIX_SPAWN_OPEN, 2, self.err, fd_flags, 0o600),
        ]

    def run(self, argv: list[str]) -> tuple[int, str, str, float]:
        # Empty the output files before the clock starts: truncating the last command's
        # output (hundreds of kilobytes for a large diff) is the harness's work, and would
        # otherwise be charged to whichever tool runs next.
        for path in (self.out, self.err):
            if os.path.exists(path):
                os.truncate(path, 0)
        start = time.perf_counter()
        pid = os.posix_spawn(argv[0], argv, self.env, file_actions=self.actions)
        _, status, usage = os.wait4(pid, 0)
        elapsed = time.perf_counter() - start
        # CPU time of the process and its children, for the record next to wall time.
        self.last_cpu = usage.ru_utime + usage.ru_stime
        with open(self.out, encoding="utf-8", errors="replace") as f:
            out = f.read()
        with open(self.err, encoding="utf-8", errors="replace") as f:
            err = f.read()
        return os.waitstatus_to_exitcode(status), out, err, elapsed

    def ok(self, argv: list[str], want_json: bool = True):
        """Runs argv; fails loudly unless it exits 0 (and, in JSON mode, prints one JSON
        object that does not say `success: false`). Returns (parsed or text, seconds)."""
        code, out, err, elapsed = self.run(argv)
        if code != 0:
            raise CommandFailed(f"{' '.join(argv)}\n  exit {code}\n  stdout: {out[-2000:]}"
                                f"\n  stderr: {err[-2000:]}")
        if not want_json:
            return out, elapsed
        try:
            data = json.loads(out)
        except json.JSONDecodeError as e:
            raise CommandFailed(f"{' '.join(argv)}\n  stdout is not one JSON object ({e}):"
                                f" {out[:500]!r}\n  stderr: {err[-2000:]}") from None
        if isinstance(data, dict) and data.get("success") is False:
            raise CommandFailed(f"{' '.join(argv)}\n  reported failure: {out[:2000]}")
        return data, elapsed


def clean_env(home: str) -> dict:
    """The environment both tools run in: a scratch HOME (memoir-ai keeps its config, cloud
    login and repo-mode stores under ~), no inherited store, branch, LLM or cloud settings,
    and offline switches for the libraries memoir-ai imports."""
    keep = ("PATH", "LANG", "LC_ALL", "TZ", "TMPDIR")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env.update({
        "HOME": home,
        "XDG_CONFIG_HOME": os.path.join(home, ".config"),
        "XDG_CACHE_HOME": os.path.join(home, ".cache"),
        "XDG_DATA_HOME": os.path.join(home, ".local", "share"),
        "MEMOIR_AUTHOR": "bench",
        "NO_COLOR": "1",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@localhost",
        "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@localhost",
        # memoir-ai imports litellm, huggingface_hub and langchain: keep them off the network.
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "LANGCHAIN_TRACING_V2": "false",
        "DO_NOT_TRACK": "1",
    })
    return env


def venv_python(entry: str) -> str:
    """The interpreter of a console-script entry point (its #! line), else python next to it."""
    with open(entry, "rb") as f:
        first = f.readline().decode("utf-8", "replace").strip()
    if first.startswith("#!"):
        interp = first[2:].strip().split()[0]
        if os.path.isabs(interp) and os.access(interp, os.X_OK) and "python" in interp:
            return interp
    sibling = os.path.join(os.path.dirname(entry), "python")
    if os.access(sibling, os.X_OK):
        return sibling
    raise SystemExit(f"cannot find the Python interpreter of {entry}")


# ----------------------------------------------------------------------------------------
# Building the two stores

# Run by memoir-ai's interpreter: its store layer (what `remember -p` writes through),
# one commit per chunk. memoir-ai has no bulk import and runs ~0.4 s per `remember`, so
# thousands of CLI calls would take longer than the whole benchmark.
REFERENCE_IMPORT = r"""
import json, sys
from memoir.store.prolly_adapter import ProllyTreeStore
path, jsonl, chunk = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(jsonl, encoding="utf-8") as f:
    records = [json.loads(line) for line in f]
store = ProllyTreeStore(path=path, enable_versioning=True, auto_commit=False)
for start in range(0, len(records), chunk):
    part = records[start:start + chunk]
    for r in part:
        store.put((r["namespace"],), r["key"], r)
    store.commit(f"Import memories {start}..{start + len(part) - 1}")
print(json.dumps({"success": True, "imported": len(records)}))
"""


def build(tool: str, bin_path: str, runner: Runner, store: str, exp: Expected, chunk: int,
          scratch: str, ref_python: str | None) -> dict:
    t0 = time.perf_counter()
    runner.ok([bin_path, "--json", "new", store])
    files = []
    for c in range(exp.chunks):
        path = os.path.join(scratch, f"chunk{c}.jsonl")
        with open(path, "w", encoding="utf-8") as f:
            for i in range(c * chunk, min(exp.n, (c + 1) * chunk)):
                f.write(json.dumps(record(i), separators=(",", ":")) + "\n")
        files.append(path)
    if tool == "memoir":
        for path in files:
            runner.ok([bin_path, "--json", "-s", store, "import", path])
    else:
        everything = os.path.join(scratch, "all.jsonl")
        with open(everything, "w", encoding="utf-8") as out:
            for path in files:
                with open(path, encoding="utf-8") as f:
                    out.write(f.read())
        runner.ok([ref_python, "-c", REFERENCE_IMPORT, store, everything, str(chunk)])
    t1 = time.perf_counter()
    last = None
    for key, content in exp.history:
        last, _ = runner.ok([bin_path, "--json", "-s", store, "remember", content, "-p", key,
                             "--replace"])
    t2 = time.perf_counter()
    return {"import_s": round(t1 - t0, 3), "history_s": round(t2 - t1, 3),
            "last_remember": last}


# ----------------------------------------------------------------------------------------
# The commands


def paired_commands(exp: Expected) -> list[tuple[str, list[str]]]:
    h = len(exp.history)
    return [
        ("--version (process start)", ["--version"]),
        ("get (5 keys)", ["get", *exp.get_keys]),
        ("summarize", ["summarize"]),
        ("summarize --depth 1", ["summarize", "--depth", "1"]),
        ("summarize --depth 3", ["summarize", "--depth", "3"]),
        ("status", ["status"]),
        (f"diff HEAD~{h} HEAD ({len(exp.diff_history)} keys)",
         ["diff", f"HEAD~{h}", "HEAD"]),
        (f"diff HEAD~{h + 1} HEAD~{h} ({len(exp.diff_import)} keys)",
         ["diff", f"HEAD~{h + 1}", f"HEAD~{h}"]),
        ("blame", ["blame", exp.blame_key]),
        ("branch (list)", ["branch"]),
        ("proof", ["proof", exp.proof_key]),
    ]


def memoir_only_commands(exp: Expected) -> list[tuple[str, list[str]]]:
    return [
        ("log -n 20", ["log", "-n", "20"]),
        ("search (lexical)", ["search", "pytest"]),
        ("recall --mode lexical", ["recall", "pytest review", "--mode", "lexical"]),
        ("export (JSON Lines)", ["export"]),
    ]


def argv_for(bin_path: str, store: str, args: list[str]) -> list[str]:
    if args == ["--version"]:
        return [bin_path, "--version"]
    if args[0] == "export":  # JSON Lines on stdout, as agents and `import` use it
        return [bin_path, "-s", store, *args]
    return [bin_path, "--json", "-s", store, *args]


# ----------------------------------------------------------------------------------------
# Checks: both against the plan, where the contract says they agree


class Checks:
    def __init__(self):
        self.passed: list[str] = []
        self.failed: list[str] = []
        self.notes: list[str] = []  # known reference defects and field differences

    def expect(self, ok: bool, what: str):
        (self.passed if ok else self.failed).append(what)

    def note(self, what: str):
        if what not in self.notes:
            self.notes.append(what)


def same_record(value, key: str, exp: Expected) -> bool:
    if not isinstance(value, dict):
        return False
    if key in exp.imported:
        return value == exp.imported[key]
    active = [e for e in value.get("entries", []) if e.get("status") == "active"]
    return (value.get("content") == exp.contents[key] and value.get("key") == key
            and value.get("namespace") == "default" and len(active) == 1
            and active[0].get("content") == exp.contents[key])


def field_diff(checks: Checks, command: str, ref: dict, ours: dict):
    only_ref = sorted(set(ref) - set(ours))
    only_ours = sorted(set(ours) - set(ref))
    if only_ref:
        checks.note(f"`{command}` JSON: members only memoir-ai prints: {', '.join(only_ref)}")
    if only_ours:
        checks.note(f"`{command}` JSON: members only memoir prints: {', '.join(only_ours)}")


def verify(runner: Runner, bins: dict, stores: dict, exp: Expected, builds: dict) -> Checks:
    c = Checks()
    out = {}
    for tool in ("memoir-ai", "memoir"):
        r = {}
        for name, args in paired_commands(exp):
            if args == ["--version"]:
                continue
            r[name], _ = runner.ok(argv_for(bins[tool], stores[tool], args))
        out[tool] = r
    h = len(exp.history)
    diff_hist = f"diff HEAD~{h} HEAD ({len(exp.diff_history)} keys)"
    diff_imp = f"diff HEAD~{h + 1} HEAD~{h} ({len(exp.diff_import)} keys)"
    capped = exp.total > KNOWN_REF_LIST_CAP

    for tool, r in out.items():
        truncated_ok = tool == "memoir-ai" and capped

        st = r["status"]
        c.expect(st.get("commit_count") == exp.commit_count,
                 f"{tool} status commit_count {st.get('commit_count')} == {exp.commit_count}")
        c.expect(st.get("namespaces") == ["default"] and st.get("branch") == "main",
                 f"{tool} status namespaces {st.get('namespaces')} branch {st.get('branch')}")
        count = st.get("memory_count")
        if truncated_ok and count == KNOWN_REF_LIST_CAP:
            c.note(f"memoir-ai lists at most {KNOWN_REF_LIST_CAP} keys (prollytree "
                   f"VersionedKvStore.list_keys cap): its status memory_count, summarize "
                   f"totals and prefix counts cover {KNOWN_REF_LIST_CAP} of {exp.total} "
                   f"memories at this size, so its status/summarize timings are of a "
                   f"truncated read")
        else:
            c.expect(count == exp.total, f"{tool} status memory_count {count} == {exp.total}")

        g = r["get (5 keys)"]
        items = g.get("items", [])
        c.expect([i.get("key") for i in items] == exp.get_keys
                 and g.get("found_count") == 5 and g.get("count") == 5,
                 f"{tool} get: 5 keys found, in argument order")
        c.expect(all(same_record(i.get("value"), i.get("key"), exp) for i in items),
                 f"{tool} get: values are the records stored")

        for name, depth in (("summarize --depth 1", 1), ("summarize --depth 3", 3)):
            s = r[name]
            pc = (s.get("prefix_counts") or {}).get("default")
            total = s.get("total_memories")
            if truncated_ok and total == KNOWN_REF_LIST_CAP:
                c.expect(sum((pc or {}).values()) == KNOWN_REF_LIST_CAP,
                         f"{tool} {name}: prefix counts add up to the {KNOWN_REF_LIST_CAP} "
                         f"keys it lists")
            else:
                c.expect(total == exp.total, f"{tool} {name}: total_memories {total}")
                c.expect(pc == exp.prefix_counts(depth),
                         f"{tool} {name}: prefix_counts match the memories stored")
        s = r["summarize"]
        if not (truncated_ok and s.get("total_memories") == KNOWN_REF_LIST_CAP):
            c.expect(s.get("total_memories") == exp.total
                     and s.get("namespaces") == {"default": exp.total},
                     f"{tool} summarize: total_memories and namespaces")

        for name, want in ((diff_hist, exp.diff_history), (diff_imp, exp.diff_import)):
            changes = r[name].get("changes", [])
            got = sorted((x.get("namespace"), x.get("key"), x.get("operation")) for x in changes)
            c.expect(got == want, f"{tool} {name}: changed keys and operations")
        hist_ok = all(
            isinstance(x.get("new"), dict) and x["new"].get("content") == exp.contents[x["key"]]
            for x in r[diff_hist].get("changes", []))
        c.expect(hist_ok, f"{tool} {diff_hist}: new values are the current contents")
        imp_ok = all(
            isinstance(x.get("new"), dict) and x.get("old") is None
            and x["new"].get("content") == exp.last_chunk_contents[x["key"]]
            for x in r[diff_imp].get("changes", []))
        c.expect(imp_ok, f"{tool} {diff_imp}: added values")

        b = r["blame"]
        entries = b.get("entries", [])
        c.expect(len(entries) == exp.versions[exp.blame_key],
                 f"{tool} blame: {len(entries)} entries == {exp.versions[exp.blame_key]} "
                 f"commits that wrote the key")
        c.expect([e.get("message") for e in entries[:2]]
                 == [f"Store {exp.blame_key} in default"] * 2,
                 f"{tool} blame: newest first, messages of the remember commits")

        br = r["branch (list)"]
        c.expect(br.get("branches") == ["main"] and br.get("current") == "main",
                 f"{tool} branch list")

        p = r["proof"]
        c.expect(p.get("key") == exp.proof_key and bool(p.get("proof")),
                 f"{tool} proof: a proof for the key")

    # Contract differences seen (information, not failures).
    ref, ours = out["memoir-ai"], out["memoir"]
    for name in ("status", "get (5 keys)", "summarize", "summarize --depth 1", "blame",
                 "branch (list)", "proof"):
        field_diff(c, name.split(" (")[0], ref[name], ours[name])
    field_diff(c, "diff", ref[diff_hist], ours[diff_hist])
    rr, orr = builds["memoir-ai"]["last_remember"], builds["memoir"]["last_remember"]
    field_diff(c, "remember", rr, orr)
    for fld in ("commit_date", "commit_hash", "conflicts"):
        c.note(f"remember {fld}: memoir-ai {rr.get(fld)!r}, memoir {orr.get(fld)!r}")
    rb, ob = ref["blame"].get("entries", []), ours["blame"].get("entries", [])
    if rb and ob:
        field_diff(c, "blame entries[]", rb[0], ob[0])
        for fld in ("date", "commit", "author"):
            c.note(f"blame entries[0].{fld}: memoir-ai {rb[0].get(fld)!r}, "
                   f"memoir {ob[0].get(fld)!r}")
    if isinstance(ref["proof"].get("value"), dict) and not isinstance(ours["proof"].get("value"), dict):
        c.note("proof `value`: memoir-ai prints the record, memoir the value's object id "
               f"({str(ours['proof'].get('value'))[:16]}...)")
    return c


def verify_memoir_only(runner: Runner, bin_path: str, store: str, exp: Expected, c: Checks):
    log, _ = runner.ok(argv_for(bin_path, store, ["log", "-n", "20"]))
    c.expect(len(log.get("commits", [])) == min(20, exp.commit_count), "memoir log -n 20")
    text, _ = runner.ok(argv_for(bin_path, store, ["export"]), want_json=False)
    lines = [json.loads(x) for x in text.splitlines() if x.strip()]
    c.expect(len(lines) == exp.total
             and all(same_record(x, x.get("key"), exp) for x in lines),
             f"memoir export: {len(lines)} records, the memories stored")
    s, _ = runner.ok(argv_for(bin_path, store, ["search", "pytest"]))
    c.expect(s.get("count", 0) > 0, "memoir search finds 'pytest'")
    rc, _ = runner.ok(argv_for(bin_path, store, ["recall", "pytest review", "--mode", "lexical"]))
    c.expect(rc.get("count", 0) > 0, "memoir recall --mode lexical finds something")


# ----------------------------------------------------------------------------------------
# Timing


def med(xs: list[float]) -> float:
    return statistics.median(xs)


def paired(runner: Runner, name: str, ref_argv, our_argv, runs: int, warmup: int) -> dict:
    """ref_argv/our_argv: lists, or callables of the iteration number (for writes)."""
    def at(a, i):
        return a(i) if callable(a) else a
    for w in range(warmup):
        runner.ok(at(ref_argv, -1 - w), want_json=False)
        runner.ok(at(our_argv, -1 - w), want_json=False)
    ref_t, our_t, ref_cpu, our_cpu = [], [], [], []
    for i in range(runs):
        order = [("ref", ref_argv), ("ours", our_argv)]
        if i % 2:
            order.reverse()
        for side, argv in order:
            _, t = runner.ok(at(argv, i), want_json=False)
            (ref_t if side == "ref" else our_t).append(t)
            (ref_cpu if side == "ref" else our_cpu).append(runner.last_cpu)
    ratios = [r / o for r, o in zip(ref_t, our_t)]
    return {
        "command": name,
        "memoir_ai_ms": [round(t * 1000, 3) for t in ref_t],
        "memoir_ms": [round(t * 1000, 3) for t in our_t],
        "memoir_ai_median_ms": round(med(ref_t) * 1000, 3),
        "memoir_median_ms": round(med(our_t) * 1000, 3),
        "memoir_ai_cpu_median_ms": round(med(ref_cpu) * 1000, 3),
        "memoir_cpu_median_ms": round(med(our_cpu) * 1000, 3),
        "ratio_median_of_pairs": round(med(ratios), 1),
        "ratio_of_medians": round(med(ref_t) / med(our_t), 1),
        "cpu_ratio_of_medians": round(med(ref_cpu) / med(our_cpu), 1) if med(our_cpu) else None,
    }


def solo(runner: Runner, name: str, argv, runs: int, warmup: int) -> dict:
    for _ in range(warmup):
        runner.ok(argv, want_json=False)
    ts, cpu = [], []
    for _ in range(runs):
        ts.append(runner.ok(argv, want_json=False)[1])
        cpu.append(runner.last_cpu)
    return {"command": name, "memoir_ms": [round(t * 1000, 3) for t in ts],
            "memoir_median_ms": round(med(ts) * 1000, 3),
            "memoir_cpu_median_ms": round(med(cpu) * 1000, 3)}


# ----------------------------------------------------------------------------------------


def run_size(n: int, args, bins: dict, runner: Runner, base: str, ref_python: str) -> dict:
    exp = Expected(n, args.chunk)
    stores = {}
    builds = {}
    for tool in ("memoir-ai", "memoir"):
        scratch = os.path.join(base, f"{n}-{tool}-input")
        os.makedirs(scratch)
        stores[tool] = os.path.join(base, f"{n}-{tool}-store")
        log(args, f"[{n}] building the {tool} store")
        builds[tool] = build(tool, bins[tool], runner, stores[tool], exp, args.chunk, scratch,
                             ref_python)
    log(args, f"[{n}] checking both stores")
    checks = verify(runner, bins, stores, exp, builds)
    for b in builds.values():
        del b["last_remember"]
    verify_memoir_only(runner, bins["memoir"], stores["memoir"], exp, checks)
    if checks.failed:
        raise SystemExit(f"checks failed at {n} memories:\n  " + "\n  ".join(checks.failed))

    rows = []
    for name, cmd in paired_commands(exp):
        log(args, f"[{n}] timing {name}")
        rows.append(paired(runner, name, argv_for(bins["memoir-ai"], stores["memoir-ai"], cmd),
                           argv_for(bins["memoir"], stores["memoir"], cmd),
                           args.runs, args.warmup))
    log(args, f"[{n}] timing remember")

    def remember(tool):
        return lambda i: argv_for(bins[tool], stores[tool], [
            "remember", f"benchmark write {i}: prefers small commits", "-p",
            f"knowledge.benchwrite.w{i}" if i >= 0 else f"knowledge.benchwarm.w{-i}"])
    write = paired(runner, "remember (new key, a write)", remember("memoir-ai"),
                   remember("memoir"), args.runs, args.warmup)
    only = []
    for name, cmd in memoir_only_commands(exp):
        log(args, f"[{n}] timing memoir {name}")
        only.append(solo(runner, name, argv_for(bins["memoir"], stores["memoir"], cmd),
                         args.runs, args.warmup))
    return {
        "memories": n,
        "commits": exp.commit_count,
        "build": builds,
        "checks_passed": len(checks.passed),
        "checks": checks.passed,
        "notes": checks.notes,
        "paired": rows,
        "write": write,
        "memoir_only": only,
        "stores": stores if args.keep else None,
    }


def log(args, msg: str):
    if not args.quiet:
        print(msg, file=sys.stderr, flush=True)


def table(result: dict) -> str:
    lines = []
    w = 40
    head = (f"{'command':<{w}} {'memoir-ai':>10} {'memoir':>8} {'ratio':>8} {'ratio of':>9} "
            f"{'>=100x':>7} {'memoir-ai':>10} {'memoir':>7}")
    sub = (f"{'':<{w}} {'wall ms':>10} {'wall ms':>8} {'(pairs)':>8} {'medians':>9} "
           f"{'':>7} {'cpu ms':>10} {'cpu ms':>7}")
    for size in result["sizes"]:
        lines.append("")
        lines.append(f"== {size['memories']} memories, {size['commits']} commits; "
                     f"{result['runs']} paired runs; {size['checks_passed']} checks passed ==")
        lines.append(head)
        lines.append(sub)
        for r in size["paired"] + [size["write"]]:
            flag = "yes" if r["ratio_median_of_pairs"] >= 100 else "NO"
            if r["command"].startswith("--version") or r is size["write"]:
                flag = "(info)"
            lines.append(f"{r['command']:<{w}} {r['memoir_ai_median_ms']:>10.1f} "
                         f"{r['memoir_median_ms']:>8.2f} {r['ratio_median_of_pairs']:>7.1f}x "
                         f"{r['ratio_of_medians']:>8.1f}x {flag:>7} "
                         f"{r['memoir_ai_cpu_median_ms']:>10.1f} {r['memoir_cpu_median_ms']:>7.2f}")
        lines.append("memoir only (memoir-ai has no such command, or needs an LLM or embeddings):")
        for r in size["memoir_only"]:
            lines.append(f"  {r['command']:<{w - 2}} {'-':>10} {r['memoir_median_ms']:>8.2f} "
                         f"{'':>8} {'':>9} {'':>7} {'-':>10} {r['memoir_cpu_median_ms']:>7.2f}")
        if size["notes"]:
            lines.append("differences seen:")
            for note in size["notes"]:
                lines.append(f"  - {note}")
    return "\n".join(lines)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(os.path.dirname(here))
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--memoir", default=os.path.join(repo, "target", "release", "memoir"),
                   help="memoir binary (default: target/release/memoir)")
    p.add_argument("--memoir-ai", default=os.environ.get("MEMOIR_AI"),
                   help="memoir-ai 0.2.9's `memoir` entry point in its virtual environment "
                        "(default: $MEMOIR_AI)")
    p.add_argument("--sizes", default="1000,5000", help="store sizes (default 1000,5000)")
    p.add_argument("--runs", type=int, default=11, help="paired runs per command (default 11)")
    p.add_argument("--warmup", type=int, default=1,
                   help="unmeasured runs of each command per tool first (default 1)")
    p.add_argument("--chunk", type=int, default=1000,
                   help="memories per import commit (default 1000)")
    p.add_argument("--json", action="store_true", help="print the results as one JSON object")
    p.add_argument("--save", metavar="FILE", help="also write the JSON results to FILE")
    p.add_argument("--keep", action="store_true", help="keep the scratch directory")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    args = p.parse_args()
    if args.save:
        args.save = os.path.abspath(args.save)

    if not args.memoir_ai:
        raise SystemExit("pass --memoir-ai /path/to/venv/bin/memoir (memoir-ai 0.2.9; see README.md)")
    bins = {"memoir": os.path.abspath(args.memoir),
            "memoir-ai": os.path.abspath(args.memoir_ai)}
    for tool, path in bins.items():
        if not os.access(path, os.X_OK):
            raise SystemExit(f"{tool}: {path} is not an executable")
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    if args.runs < 1 or not sizes or min(sizes) < 10:
        raise SystemExit("--runs must be >= 1 and every size >= 10")
    ref_python = venv_python(bins["memoir-ai"])

    base = tempfile.mkdtemp(prefix="memoir-side-by-side-")
    home = os.path.join(base, "home")
    os.makedirs(home)
    os.chdir(base)  # neither tool runs inside a code repository
    runner = Runner(base, clean_env(home))
    try:
        versions = {}
        for tool, path in bins.items():
            text, _ = runner.ok([path, "--version"], want_json=False)
            versions[tool] = text.strip()
        if "0.2.9" not in versions["memoir-ai"]:
            raise SystemExit(f"--memoir-ai is not memoir-ai 0.2.9: {versions['memoir-ai']!r}")
        result = {
            "memoir": bins["memoir"], "memoir_ai": bins["memoir-ai"], "versions": versions,
            "runs": args.runs, "warmup": args.warmup, "chunk": args.chunk,
            "machine": {"python": platform.python_version(), "system": platform.platform(),
                        "cpus": os.cpu_count()},
            "timing": ("wall time of the whole process, posix_spawn to wait4; CPU = user+system "
                       "of the process and its children; medians in ms"),
            "sizes": [],
        }
        started = time.perf_counter()
        for n in sizes:
            try:
                result["sizes"].append(run_size(n, args, bins, runner, base, ref_python))
            except CommandFailed as e:
                raise SystemExit(f"a command failed at {n} memories; no numbers reported:\n{e}")
        result["elapsed_s"] = round(time.perf_counter() - started, 1)
        below = [f"{s['memories']}: {r['command']} ({r['ratio_median_of_pairs']}x)"
                 for s in result["sizes"] for r in s["paired"]
                 if r["ratio_median_of_pairs"] < 100 and not r["command"].startswith("--version")]
        result["reads_below_100x"] = below
    finally:
        if args.keep:
            print(f"scratch kept in {base}", file=sys.stderr)
        else:
            shutil.rmtree(base, ignore_errors=True)

    if args.save:
        with open(args.save, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=2)
            f.write("\n")
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"memoir:    {result['versions']['memoir']}  ({bins['memoir']})")
    print(f"memoir-ai: {result['versions']['memoir-ai']}  ({bins['memoir-ai']})")
    print(f"{result['machine']['system']}, {result['machine']['cpus']} CPUs, "
          f"Python {result['machine']['python']}; {result['timing']}")
    print(table(result))
    print()
    print("reads below 100x: " + ("; ".join(below) if below else "none"))
    print(f"total {result['elapsed_s']} s")


if __name__ == "__main__":
    main()
