"""The in-process API end to end on a real store: each operation, its JSON shape (the same
as `memoir --json` prints), history and reads at past revisions."""

from __future__ import annotations

import pytest

from conftest import AUTHOR, NOW
from memoir import Memoir
from memoir.errors import MemoirError


def test_remember_then_get(m):
    out = m.remember("Use pytest for tests", ["preferences.coding.testing"])
    assert out["success"] is True
    assert out["key"] == "preferences.coding.testing"
    assert out["full_keys"] == ["default:preferences.coding.testing"]
    assert out["commit_date"] == "2023-11-14T22:13:20+00:00"
    assert out["conflicts"] == []
    got = m.get(["preferences.coding.testing", "missing.key"])
    assert got["count"] == 2 and got["found_count"] == 1
    first, second = got["items"]
    assert first["found"] and first["value"]["content"] == "Use pytest for tests"
    assert first["value"]["schema_version"] == 2
    assert first["value"]["timestamp"] == float(NOW)
    assert second == {"key": "missing.key", "namespace": "default",
                      "full_key": "default:missing.key", "found": False, "value": None}


def test_results_are_the_cli_json(m, cli):
    """Every read returns what `memoir --json` prints for the same store (timings aside)."""
    m.remember("tabs, not spaces", ["preferences.editor.indent", "style.indent"])
    m.remember("deploy on fridays: never", ["workflow.deploy"], namespace="team")
    cases = [
        (lambda: m.get(["preferences.editor.indent", "team:workflow.deploy"]),
         ["get", "preferences.editor.indent", "team:workflow.deploy"]),
        (lambda: m.summarize(depth=2), ["summarize", "--depth", "2"]),
        (lambda: m.summarize(keys="preferences.*"), ["summarize", "--keys", "preferences.*"]),
        (lambda: m.search("indent"), ["search", "indent"]),
        (lambda: m.log(), ["log"]),
        (lambda: m.blame("style.indent"), ["blame", "style.indent"]),
        (lambda: m.diff(), ["diff"]),
        (lambda: m.branch(), ["branch"]),
        (lambda: m.status(), ["status"]),
    ]
    for call, args in cases:
        ours = call()
        code, theirs = cli(*args)
        assert code == 0, args
        for d in (ours, theirs):
            d.pop("timing_ms", None)
        assert ours == theirs, args


def test_summarize_counts_and_globs(m):
    for i in range(5):
        m.remember(f"fact {i}", [f"project.alpha.fact{i}"])
    m.remember("other", ["project.beta.x"])
    m.remember("elsewhere", ["notes.x"], namespace="work")
    s = m.summarize(depth=2)
    assert s["total_memories"] == 7
    assert s["namespaces"] == {"default": 6, "work": 1}
    assert s["prefix_counts"]["default"] == {"project.alpha": 5, "project.beta": 1}
    s = m.summarize(keys=["project.alpha.*"], namespace="default")
    assert s["matching_keys"] == {"default": [f"project.alpha.fact{i}" for i in range(5)]}


def test_search_and_recall_rank_lexically(m):
    m.remember("The database is PostgreSQL 16", ["infra.database"])
    m.remember("Tests run with pytest", ["preferences.testing"])
    hits = m.search("postgresql database")["hits"]
    assert [h["key"] for h in hits] == ["infra.database"]
    rec = m.recall("which database")
    assert rec["metadata"]["mode"] == "lexical"
    assert rec["memories"][0]["path"] == "infra.database"


def test_search_and_recall_take_modes_and_the_commands_models(m, tmp_path, monkeypatch):
    m.remember("The database is PostgreSQL 16", ["infra.database"])
    m.remember("Tests run with pytest", ["preferences.testing"])
    assert m.search("postgresql", mode="lexical")["hits"][0]["key"] == "infra.database"
    # Without an embedding model, ranking by meaning is refused and names the variable.
    with pytest.raises(MemoirError) as e:
        m.search("postgresql", mode="semantic")
    assert e.value.code == 1 and "MEMOIR_EMBED_MODEL" in str(e.value)
    with pytest.raises(MemoirError) as e:
        m.search("postgresql", mode="fuzzy")
    assert e.value.code == 1 and "lexical, semantic or hybrid" in str(e.value)
    # A language model configured as for the command: a scripted one that picks a key.
    model = tmp_path / "model.sh"
    model.write_text("cat >/dev/null\nprintf '{\"keys\": [\"default:preferences.testing\"]}'\n")
    monkeypatch.setenv("MEMOIR_LLM_COMMAND", f"sh {model}")
    h = Memoir.open(m.path, author=AUTHOR, now=NOW)
    rec = h.recall("how are tests run")
    assert rec["metadata"]["mode"] == "single", rec["metadata"]
    assert [r["path"] for r in rec["memories"]] == ["preferences.testing"]
    rec = h.recall("which database", mode="lexical")
    assert rec["metadata"]["mode"] == "lexical"
    assert rec["memories"][0]["path"] == "infra.database"
    with pytest.raises(MemoirError):
        h.recall("which database", mode="psychic")


def test_a_python_callable_is_the_embedding_model(m):
    m.remember("The database is PostgreSQL 16", ["infra.database"])
    m.remember("Tests run with pytest", ["preferences.testing"])
    m.remember("Lunch is usually ramen", ["habits.lunch"])
    topics = [("database", "postgresql", "datastore"), ("tests", "pytest", "qa"),
              ("lunch", "ramen", "meal")]
    calls = []

    def embed(texts):
        calls.append(list(texts))
        return [[1.0 + 10 * sum(w in t.lower() for w in words) for words in topics]
                for t in texts]

    m.set_embedder(embed, name="topics", dims=3)
    # "datastore" is in no memory: only its meaning finds the database.
    hits = m.search("which datastore", mode="semantic")["hits"]
    assert hits[0]["key"] == "infra.database"
    assert sorted(h["key"] for h in hits) == ["habits.lunch", "infra.database",
                                             "preferences.testing"]
    assert ["which datastore"] in calls
    assert sorted(t for c in calls for t in c if t != "which datastore") == sorted([
        "The database is PostgreSQL 16", "Tests run with pytest", "Lunch is usually ramen"])
    rec = m.recall("a meal", mode="semantic")
    assert rec["memories"][0]["path"] == "habits.lunch"
    # What the callable gets wrong fails the search, naming what.
    m.set_embedder(lambda texts: [[1.0, 2.0]] * len(texts), name="short", dims=3)
    with pytest.raises(MemoirError) as e:
        m.search("anything", mode="semantic")
    assert e.value.code == 1 and "dims is 3" in str(e.value)

    def broken(texts):
        raise RuntimeError("no model today")

    m.set_embedder(broken, name="broken", dims=3)
    with pytest.raises(MemoirError) as e:
        m.search("anything", mode="semantic")
    assert e.value.code == 1 and "no model today" in str(e.value)
    with pytest.raises(TypeError):
        m.set_embedder("not callable", name="x", dims=3)
    with pytest.raises(MemoirError):
        m.set_embedder(embed, name="x", dims=0)


def test_forget_log_blame_diff_and_time_travel(m):
    first = m.remember("v1", ["a.b"])["commit_hash"]
    m.remember("v2", ["a.b"], replace=True, author="someone else")
    gone = m.forget("a.b")
    assert gone["message"] == "Delete a.b from default" and gone["key"] == "a.b"
    log = m.log(limit=3)["commits"]
    assert [c["message"] for c in log] == [
        "Delete a.b from default", "Store a.b in default", "Store a.b in default"]
    assert log[1]["author"] == "someone else" and log[2]["author"] == AUTHOR
    blame = m.blame("a.b")["entries"]
    assert len(blame) == 3 and blame[-1]["commit"] == first
    # Reads at a past revision: the value as it was, HEAD untouched.
    assert m.get("a.b", at=first)["items"][0]["value"]["content"] == "v1"
    assert m.get("a.b", at="HEAD~1")["items"][0]["value"]["content"] == "v2"
    assert m.summarize(at="HEAD~1")["total_memories"] == 1
    d = m.diff(first, "HEAD")["changes"]
    assert [(c["key"], c["operation"]) for c in d] == [("a.b", "removed")]
    d = m.diff("HEAD~2", "HEAD~1", patch=True)["changes"]
    assert d[0]["operation"] == "modified"
    assert d[0]["old"]["content"] == "v1" and d[0]["new"]["content"] == "v2"


def test_branches_merge_and_checkout(m):
    m.remember("base", ["shared.fact"])
    assert m.branch("experiment")["branch"] == "experiment"
    m.remember("only on the branch", ["exp.idea"], branch="experiment")
    assert m.branch()["branches"] == ["experiment", "main"]
    with pytest.raises(Exception):
        m.get("exp.idea")  # not on main
    assert m.get("exp.idea", branch="experiment")["items"][0]["found"]
    merged = m.merge("experiment")
    assert merged["success"] and merged["target_branch"] == "main"
    assert m.get("exp.idea")["items"][0]["found"]
    out = m.checkout("experiment")
    assert out["branch"] == "experiment"
    assert m.status()["branch"] == "experiment"
    m.checkout("main")
    assert m.delete_branch("experiment")["deleted"] == "experiment"


def test_import_and_export_round_trip(m, tmp_path):
    m.remember("one", ["k.one"])
    m.remember("two", ["k.two"], namespace="ns2")
    records = m.export()["records"]
    assert sorted(r["key"] for r in records) == ["k.one", "k.two"]
    other = Memoir.create(tmp_path / "copy", author=AUTHOR, now=NOW)
    import json
    out = other.import_lines("\n".join(json.dumps(r) for r in records))
    assert out["imported"] == 2
    assert other.summarize()["namespaces"] == {"default": 1, "ns2": 1}


def test_handle_settings(store_path):
    Memoir.create(store_path, author="creator", now=NOW)
    h = Memoir.open(store_path, author="writer", actor="agent-7", source="unit", now=NOW + 60)
    assert h.author == "writer"
    assert str(h.path) == str(store_path.resolve())
    out = h.remember("x", ["p.q"])
    assert out["commit_date"] == "2023-11-14T22:14:20+00:00"
    c = h.log(limit=1)["commits"][0]
    assert c["author"] == "writer"
    assert c["metadata"] == {"actor": "agent-7", "source": "unit"}


def test_author_defaults_to_the_environment(store_path, monkeypatch):
    monkeypatch.setenv("MEMOIR_AUTHOR", "from-env")
    monkeypatch.setenv("MEMOIR_NOW", str(NOW))
    h = Memoir.create(store_path)
    assert h.author == "from-env"
    assert h.log()["commits"][0]["author"] == "from-env"
    assert h.log()["commits"][0]["timestamp"] == NOW


def test_keep_open_and_close(store_path):
    h = Memoir.create(store_path, author=AUTHOR, now=NOW, keep_open=True)
    for i in range(3):
        h.remember(f"v{i}", [f"k.k{i}"])
    assert h.summarize()["total_memories"] == 3
    h.close()
    other = Memoir.open(store_path, lock_timeout=0)
    assert other.summarize()["total_memories"] == 3
