"""memoir.langgraph.MemoirStore against LangGraph's BaseStore semantics: a differential
test against LangGraph's own InMemoryStore, then each operation, the key mapping, the
async forms, and the history every write leaves."""

from __future__ import annotations

import asyncio
import json
import random

import pytest
from langgraph.store.base import (
    GetOp, InvalidNamespaceError, ListNamespacesOp, MatchCondition, PutOp, SearchOp,
)
from langgraph.store.memory import InMemoryStore

from conftest import AUTHOR, NOW
from memoir import Memoir
from memoir.langgraph import MemoirStore, decode_segment, encode_segment


@pytest.fixture
def store(m) -> MemoirStore:
    return MemoirStore(m)


def _items(results):
    return sorted((r.namespace, r.key, json.dumps(r.value, sort_keys=True)) for r in results)


def test_same_results_as_the_in_memory_store(store):
    """Random puts, overwrites and deletes, then every read compared with InMemoryStore."""
    rng = random.Random(7)
    ref = InMemoryStore()
    spaces = [("users", "alice"), ("users", "bob"), ("users", "alice", "notes"), ("docs",),
              ("a b", "ünï", "x:y")]
    keys = ["k1", "k2", "pref-3", "with space", ""]
    for step in range(60):
        ns, key = rng.choice(spaces), rng.choice(keys)
        if rng.random() < 0.2:
            ref.delete(ns, key)
            store.delete(ns, key)
        else:
            value = {"n": rng.randint(0, 5), "tag": rng.choice(["red", "blue"]), "step": step}
            ref.put(ns, key, value)
            store.put(ns, key, value)
    for ns in spaces:
        for key in keys:
            a, b = ref.get(ns, key), store.get(ns, key)
            assert (a is None) == (b is None), (ns, key)
            if a is not None:
                assert (b.namespace, b.key, b.value) == (a.namespace, a.key, a.value)
    for prefix in [(), ("users",), ("users", "alice"), ("docs",), ("nope",)]:
        for flt in [None, {"tag": "red"}, {"n": {"$gte": 3}}, {"n": {"$ne": 2}, "tag": "blue"}]:
            a = ref.search(prefix, filter=flt, limit=1000)
            b = store.search(prefix, filter=flt, limit=1000)
            assert _items(b) == _items(a), (prefix, flt)
    # Namespaces that still hold items (InMemoryStore also lists emptied ones).
    live = {i.namespace for i in ref.search((), limit=1000)}
    for kw in [{}, {"prefix": ("users",)}, {"suffix": ("alice",)}, {"prefix": ("users", "*")},
               {"max_depth": 1}, {"prefix": ("users",), "max_depth": 2}]:
        expected = [ns for ns in ref.list_namespaces(limit=1000, **kw)
                    if any(lv[: len(ns)] == ns for lv in live)]
        assert store.list_namespaces(limit=1000, **kw) == expected, kw


def test_put_get_delete(store, m):
    assert store.get(("users", "alice"), "prefs") is None
    store.put(("users", "alice"), "prefs", {"food": "pizza", "n": 1})
    item = store.get(("users", "alice"), "prefs")
    assert item.value == {"food": "pizza", "n": 1}
    assert item.namespace == ("users", "alice") and item.key == "prefs"
    assert item.created_at.timestamp() == NOW and item.updated_at.timestamp() == NOW
    store.put(("users", "alice"), "prefs", {"food": "sushi"})
    assert store.get(("users", "alice"), "prefs").value == {"food": "sushi"}
    store.delete(("users", "alice"), "prefs")
    assert store.get(("users", "alice"), "prefs") is None
    store.delete(("users", "alice"), "prefs")  # absent: nothing happens, nothing committed
    messages = [c["message"] for c in m.log()["commits"]]
    assert messages == [
        "Delete users.alice.prefs from langgraph",
        "Store users.alice.prefs in langgraph",
        "Store users.alice.prefs in langgraph",
        "Initialize memoir store",
    ]


def test_the_record_is_the_value_as_json(store, m):
    store.put(("users", "alice"), "prefs", {"b": 2, "a": [1, "x"]})
    rec = m.get("langgraph:users.alice.prefs")["items"][0]["value"]
    assert rec["content"] == '{"a":[1,"x"],"b":2}'
    assert len(rec["entries"]) == 1
    # A record written by other means reads as {"content": text}.
    m.remember("plain words", ["users.alice.note"], namespace="langgraph")
    assert store.get(("users", "alice"), "note").value == {"content": "plain words"}


def test_key_mapping_round_trips_every_label():
    for text in ["plain", "with space", "ünïcödé", "a:b", "*?[]{}\\", "%", "", "x/y", "😀", "-_"]:
        seg = encode_segment(text)
        assert decode_segment(seg) == text
        assert all(c.isascii() and (c.isalnum() or c in "-_%") for c in seg)
    assert encode_segment("a b") == "a%20b"
    assert encode_segment("é") == "%C3%A9"
    assert encode_segment("") == "%"


def test_odd_labels_and_keys_are_stored_and_listed(store, m):
    ns = ("über", "a b", "x:y*")
    store.put(ns, "key with spaces & ünicode", {"v": 1})
    store.put(ns, "", {"v": 2})
    assert store.get(ns, "key with spaces & ünicode").value == {"v": 1}
    assert store.get(ns, "").value == {"v": 2}
    assert store.list_namespaces() == [ns]
    assert store.key_of(ns, "") == "langgraph:%C3%BCber.a%20b.x%3Ay%2A.%"
    assert m.summarize(namespace="langgraph")["total_memories"] == 2


def test_namespace_rules(store):
    for bad in [(), ("",), ("a.b",), ("langgraph", "x"), ("a", "b\x00")]:
        with pytest.raises(InvalidNamespaceError):
            store.put(bad, "k", {"v": 1})
    with pytest.raises(InvalidNamespaceError):
        store.put(tuple("abcdefgh"), "k", {"v": 1})  # 8 labels: memoir paths have 8 segments
    with pytest.raises(InvalidNamespaceError):
        store.put(("x" * 65,), "k", {"v": 1})
    with pytest.raises(ValueError):
        store.put(("a",), "é" * 30, {"v": 1})  # 180 bytes encoded
    store.put(tuple("abcdefg"), "k", {"v": 1})
    assert store.get(tuple("abcdefg"), "k").value == {"v": 1}
    with pytest.raises(InvalidNamespaceError):
        store.batch([GetOp(("a.b",), "k")])


def test_search_filter_order_limit_offset(store):
    for i in range(6):
        store.put(("docs", f"d{i % 2}"), f"item{i}", {"i": i, "even": i % 2 == 0})
    found = store.search(("docs",), limit=10)
    assert [(r.namespace[-1], r.key) for r in found] == [
        ("d0", "item0"), ("d0", "item2"), ("d0", "item4"),
        ("d1", "item1"), ("d1", "item3"), ("d1", "item5")]
    assert all(r.score is None for r in found)
    page = store.search(("docs",), limit=2, offset=3)
    assert [r.key for r in page] == ["item1", "item3"]
    assert [r.key for r in store.search(("docs",), filter={"even": True})] == [
        "item0", "item2", "item4"]
    assert [r.key for r in store.search(("docs",), filter={"i": {"$gt": 1, "$lt": 4}})] == [
        "item2", "item3"]
    assert store.search(("docs", "d0"), filter={"i": 1}) == []
    assert [r.key for r in store.search(("docs", "d1"), limit=1)] == ["item1"]


def test_search_with_a_query_ranks_lexically(store):
    store.put(("mem",), "db", {"text": "The database is PostgreSQL 16"})
    store.put(("mem",), "tests", {"text": "Tests run with pytest"})
    store.put(("mem",), "db2", {"text": "database backups run nightly", "kind": "ops"})
    store.put(("other",), "db", {"text": "database elsewhere"})
    hits = store.search(("mem",), query="postgresql database")
    # Matches first, best first, scored; the item without a matching word after them.
    assert [h.key for h in hits] == ["db", "db2", "tests"]
    assert hits[0].score >= hits[1].score > 0 and hits[2].score is None
    assert [h.key for h in store.search(("mem",), query="database", filter={"kind": "ops"})] == [
        "db2"]
    assert [h.key for h in store.search(("mem",), query="database", limit=1)] == ["db"]
    assert [h.key for h in store.search(("mem",), query="database", limit=2, offset=1)] == [
        "db2", "tests"]
    assert {h.namespace for h in store.search((), query="database")} == {("mem",), ("other",)}
    # Only common words: nothing to rank by, so key order.
    assert [h.key for h in store.search(("mem",), query="the of and")] == ["db", "db2", "tests"]
    assert store.search(("empty",), query="database") == []


def test_list_namespaces(store):
    for ns in [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f"),
               ("a", "c", "f")]:
        store.put(ns, "k", {"v": 1})
    assert store.list_namespaces(prefix=("a", "b"), max_depth=3) == [
        ("a", "b", "c"), ("a", "b", "d"), ("a", "b", "f")]
    assert store.list_namespaces(suffix=("f",)) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(prefix=("a", "*", "f")) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(max_depth=2) == [("a", "b"), ("a", "c")]
    assert store.list_namespaces(limit=2, offset=1) == [("a", "b", "d", "e"), ("a", "b", "d", "i")]


def test_empty_store_reads(store):
    assert store.search(()) == []
    assert store.list_namespaces() == []
    assert store.get(("x",), "y") is None


def test_batch_reads_see_the_store_before_its_writes(store, m):
    store.put(("n",), "k", {"v": 0})
    before = len(m.log()["commits"])
    results = store.batch([
        PutOp(("n",), "k", {"v": 1}),
        GetOp(("n",), "k"),
        PutOp(("n",), "k", {"v": 2}),
        PutOp(("n",), "gone", None),
        SearchOp(("n",)),
        ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("n",)),)),
    ])
    assert results[0] is None and results[2] is None and results[3] is None
    assert results[1].value == {"v": 0}
    assert [r.value for r in results[4]] == [{"v": 0}]
    assert results[5] == [("n",)]
    assert store.get(("n",), "k").value == {"v": 2}
    assert len(m.log()["commits"]) == before + 1  # the last write of the item wins


def test_async_forms(store):
    async def run():
        await store.aput(("users", "u1"), "a", {"x": 1})
        await store.aput(("users", "u2"), "b", {"x": 2})
        got = await store.aget(("users", "u1"), "a")
        found = await store.asearch(("users",), filter={"x": 2})
        spaces = await store.alist_namespaces(prefix=("users",))
        both = await asyncio.gather(store.aget(("users", "u1"), "a"),
                                    store.aget(("users", "u2"), "b"))
        await store.adelete(("users", "u1"), "a")
        after = await store.aget(("users", "u1"), "a")
        batch = await store.abatch([GetOp(("users", "u2"), "b")])
        return got, found, spaces, both, after, batch

    got, found, spaces, both, after, batch = asyncio.run(run())
    assert got.value == {"x": 1}
    assert [r.key for r in found] == ["b"]
    assert spaces == [("users", "u1"), ("users", "u2")]
    assert [b.value for b in both] == [{"x": 1}, {"x": 2}]
    assert after is None
    assert batch[0].value == {"x": 2}


def test_history_blame_diff_and_time_travel(store, m):
    ns = ("users", "alice")
    store.put(ns, "prefs", {"food": "pizza"})
    first = m.log(limit=1)["commits"][0]["hash"]
    store.put(ns, "prefs", {"food": "sushi"})
    store.delete(ns, "prefs")
    key = store.key_of(ns, "prefs")
    assert key == "langgraph:users.alice.prefs"
    blame = m.blame(key)["entries"]
    assert [e["commit"] for e in blame][-1] == first and len(blame) == 3
    change = m.diff(first, "HEAD~1")["changes"][0]
    assert (change["key"], change["operation"]) == ("users.alice.prefs", "modified")
    assert json.loads(change["new"]["content"]) == {"food": "sushi"}
    assert store.get(ns, "prefs") is None
    past = store.at(first)
    assert past.get(ns, "prefs").value == {"food": "pizza"}
    assert store.at("HEAD~1").search(("users",))[0].value == {"food": "sushi"}
    assert past.list_namespaces() == [ns]
    with pytest.raises(Exception):
        past.put(ns, "prefs", {"food": "anything"})


def test_branch_and_path_constructor(store_path, m):
    side = MemoirStore(str(store_path), branch="agent-1", author="agent", now=NOW)
    side.put(("t",), "k", {"v": "on the branch"})
    assert MemoirStore(m).get(("t",), "k") is None
    assert side.get(("t",), "k").value == {"v": "on the branch"}
    assert m.log(branch="agent-1", limit=1)["commits"][0]["author"] == "agent"


def test_create_on_first_use(tmp_path):
    s = MemoirStore(tmp_path / "fresh", create=True, author=AUTHOR, now=NOW)
    s.put(("a",), "b", {"c": 1})
    again = MemoirStore(tmp_path / "fresh", create=True)
    assert again.get(("a",), "b").value == {"c": 1}
    assert isinstance(again.memoir, Memoir)


def test_secrets_are_refused_unless_allowed(m):
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    with pytest.raises(Exception) as e:
        MemoirStore(m).put(("creds",), "gh", {"token": token})
    assert getattr(e.value, "code", None) == 1
    MemoirStore(m, allow_secrets=True).put(("creds",), "gh", {"token": token})
    assert MemoirStore(m).get(("creds",), "gh").value == {"token": token}


def test_filters_run_in_memoir_on_dotted_paths(store, m):
    store.put(("docs",), "a", {"user": {"access-level": "nested", "n": 3}, "tags": ["x"]})
    store.put(("docs",), "b", {"user": {"access-level": "flat", "n": 7}, "tags": ["y"]})
    store.put(("docs", "deep"), "c", {"user": {"n": 5}})
    assert [r.key for r in store.search(("docs",), filter={"user.access-level": "nested"})] == [
        "a"]
    assert [r.key for r in store.search(("docs",), filter={"user.n": {"$gte": 5}})] == ["b", "c"]
    assert [r.key for r in store.search(("docs",), filter={"user": {"n": {"$lt": 4}}})] == ["a"]
    assert [r.key for r in store.search(("docs",), filter={"tags": ["y"]})] == ["b"]
    assert [r.key for r in store.search(("docs",), filter={"user.n": {"$ne": 3}})] == ["b", "c"]
    with pytest.raises(ValueError):
        store.search(("docs",), filter={"user.n": {"$in": [3]}})
    # memoir selects and pages: only the page comes back, with the count of all that match.
    page = m.find_documents("langgraph", ["docs"], conditions=[(["user", "n"], "$gt", 0.0, None)],
                            offset=1, limit=1)
    assert page["total"] == 3 and [i["key"] for i in page["items"]] == ["docs.b"]


def test_a_batch_of_writes_is_one_commit(store, m):
    before = len(m.log()["commits"])
    store.batch([PutOp(("n",), f"k{i}", {"v": i}) for i in range(5)] + [PutOp(("n",), "k0", None)])
    log = m.log()["commits"]
    assert len(log) == before + 1
    assert log[0]["message"] == "Store 4 and delete 0 documents in langgraph"
    assert [r.key for r in store.search(("n",))] == ["k1", "k2", "k3", "k4"]


def test_concurrent_async_writes_share_one_commit(store, m):
    before = len(m.log()["commits"])

    async def run():
        await asyncio.gather(*(store.aput(("c",), f"k{i}", {"i": i}) for i in range(40)),
                             *(store.aget(("c",), f"k{i}") for i in range(5)))

    asyncio.run(run())
    assert len(m.log()["commits"]) == before + 1
    assert len(store.search(("c",), limit=100)) == 40


def test_threads_of_one_process_never_meet_the_store_lock(store_path, m):
    import threading

    stores = [MemoirStore(str(store_path), lock_timeout=0.05, author=AUTHOR) for _ in range(4)]
    failures = []

    def work(n):
        try:
            for i in range(10):
                stores[n].put(("t", str(n)), f"k{i}", {"i": i})
                stores[n].search(("t",), limit=5)
        except Exception as e:  # the test fails below with what went wrong
            failures.append(e)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert len(stores[0].search(("t",), limit=100)) == 40


def test_a_busy_store_names_the_process_holding_it(store_path, m):
    import subprocess
    import sys

    from memoir.errors import StoreBusyError

    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import fcntl, sys, time\n"
         "f = open(sys.argv[1], 'a')\n"
         "fcntl.flock(f, fcntl.LOCK_EX)\n"
         "print('held', flush=True)\n"
         "time.sleep(30)\n",
         str(store_path / "LOCK")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        busy = MemoirStore(str(store_path), lock_timeout=0.1, author=AUTHOR)
        with pytest.raises(StoreBusyError) as e:
            busy.put(("x",), "k", {"v": 1})
        assert f"held by process {holder.pid}" in str(e.value)
    finally:
        holder.kill()
        holder.wait()


def _embed(texts):
    """Vectors of letter counts: texts sharing letters are similar."""
    return [[float(t.lower().count(c)) for c in "abcdefghijklmnopqrstuvwxyz"] for t in texts]


def test_semantic_search_ranks_by_cosine_and_keeps_k(m):
    store = MemoirStore(m, index={"dims": 26, "embed": _embed, "fields": ["text"]})
    assert store.index_config["fields"] == ["text"] and store.index_config["dims"] == 26
    store.put(("s",), "zoo", {"text": "zzz zoo"})
    store.put(("s",), "abc", {"text": "abc abc"})
    store.put(("s",), "plain", {"text": "abc abc"}, index=False)
    store.put(("s",), "other", {"text": "ignored", "title": "zzz"}, index=["title"])
    hits = store.search(("s",), query="zz", limit=4)
    assert [h.key for h in hits[:2]] in (["other", "zoo"], ["zoo", "other"])
    assert hits[0].score == pytest.approx(1.0) and hits[2].key == "abc"
    assert hits[3].key == "plain" and hits[3].score is None  # never embedded: ranked last
    assert [h.key for h in store.search(("s",), query="zz", limit=2, offset=2)] == ["abc", "plain"]
    store.delete(("s",), "zoo")
    assert "zoo" not in [h.key for h in store.search(("s",), query="zz")]


def test_an_async_embedder_serves_the_async_forms(m):
    async def embed(texts):
        return _embed(texts)

    store = MemoirStore(m, index={"dims": 26, "embed": embed, "fields": ["text"]})

    async def run():
        await asyncio.gather(store.aput(("s",), "a", {"text": "aaa"}),
                             store.aput(("s",), "b", {"text": "bbb"}))
        return await store.asearch(("s",), query="bb")

    hits = asyncio.run(run())
    assert [h.key for h in hits] == ["b", "a"] and hits[0].score == pytest.approx(1.0)
