"""Failures raise the exception of the contract's exit code, with the partial outcome when
there is one; store work releases the GIL."""

from __future__ import annotations

import threading
import time

import pytest

import memoir
from conftest import AUTHOR, NOW
from memoir import (
    ConflictError, MemoirError, Memoir, NonFastForwardError, NotAStoreError, NotFoundError,
    StoreBusyError,
)
from memoir.errors import error_for_code


def test_exit_codes_and_classes():
    assert memoir.EXIT_CODES == {
        "OK": 0, "ERROR": 1, "NOT_FOUND": 2, "USAGE": 2, "NOT_A_STORE": 3, "CONFLICT": 4,
        "CORRUPT": 5, "NON_FAST_FORWARD": 6, "BUSY": 7,
    }
    for code in range(1, 8):
        assert error_for_code(code).code == code
        assert issubclass(error_for_code(code), MemoirError)
    assert issubclass(NotFoundError, LookupError)
    assert issubclass(StoreBusyError, TimeoutError)


def test_not_a_store(tmp_path):
    with pytest.raises(NotAStoreError) as e:
        Memoir.open(tmp_path).status()
    assert e.value.code == 3
    assert e.value.to_dict() == {"success": False, "error": str(e.value), "code": 3}


def test_single_missing_key_is_not_found_with_its_items(m):
    with pytest.raises(NotFoundError) as e:
        m.get("no.such.key")
    assert e.value.code == 2
    assert e.value.result["items"][0]["found"] is False
    d = e.value.to_dict()
    assert d["success"] is False and d["code"] == 2 and d["items"] == e.value.result["items"]


def test_forget_missing_and_unknown_revision(m):
    with pytest.raises(NotFoundError):
        m.forget("no.such.key")
    assert len(m.log()["commits"]) == 1  # nothing committed
    with pytest.raises(NotFoundError):
        m.get("a.b", at="no-such-branch")
    with pytest.raises(NotFoundError):
        m.summarize(depth=0)  # a usage error shares code 2


def test_invalid_input_is_code_1(m):
    for call in (
        lambda: m.remember("x", ["bad key with spaces"]),
        lambda: m.remember("x", ["a..b"]),
        lambda: m.summarize(keys="[unclosed"),
        lambda: m.remember("x", ["a.b"], merge_policy="no-such-policy"),
        lambda: m.summarize(namespace="nope"),
        lambda: m.branch("main"),  # exists
    ):
        with pytest.raises(MemoirError) as e:
            call()
        assert type(e.value) is MemoirError and e.value.code == 1
    with pytest.raises(TypeError):
        m.get(42)


def test_reject_policy_conflict_carries_the_conflicts(m):
    m.remember("old", ["pref.color"])
    with pytest.raises(ConflictError) as e:
        m.remember("new", ["pref.color", "pref.shape"], merge_policy="reject")
    assert e.value.code == 4
    conflicts = e.value.result["conflicts"]
    assert [(c["key"], c["existing_content"], c["incoming_content"]) for c in conflicts] == [
        ("pref.color", "old", "new")]
    # The free key of the same command was written.
    assert m.get("pref.shape")["items"][0]["value"]["content"] == "new"


def test_merge_conflict_and_non_fast_forward(m):
    m.remember("base", ["k.v"])
    m.branch("side")
    m.remember("main's", ["k.v"], replace=True)
    m.remember("side's", ["k.v"], replace=True, branch="side")
    head = m.log(limit=1)["commits"][0]["hash"]
    with pytest.raises(ConflictError) as e:
        m.merge("side")
    assert e.value.result["conflicts"] == ["default:k.v"]
    assert m.log(limit=1)["commits"][0]["hash"] == head  # nothing committed
    with pytest.raises(NonFastForwardError) as e:
        m.merge("side", ff_only=True)
    assert e.value.code == 6
    out = m.merge("side", strategy="theirs")
    assert out["success"] and m.get("k.v")["items"][0]["value"]["content"] == "side's"


def test_busy_store_and_the_gil_is_released(store_path):
    holder = Memoir.create(store_path, author=AUTHOR, now=NOW, keep_open=True)
    holder.status()  # opens and keeps the store
    waiter = Memoir.open(store_path, lock_timeout=1.0)
    caught = []

    def wait():
        try:
            waiter.status()
        except StoreBusyError as e:
            caught.append(e)

    t = threading.Thread(target=wait)
    started = time.monotonic()
    t.start()
    # While the other thread waits on the lock inside memoir, this one keeps running Python.
    spins = 0
    while t.is_alive():
        spins += 1
        time.sleep(0.001)
    t.join()
    assert time.monotonic() - started >= 0.9
    assert spins > 100
    assert len(caught) == 1 and caught[0].code == 7
    holder.close()
    assert waiter.status()["memory_count"] == 0


def test_threads_share_one_handle(m):
    errors = []

    def work(n):
        try:
            for i in range(5):
                m.remember(f"thread {n} fact {i}", [f"t{n}.f{i}"])
                assert m.get(f"t{n}.f{i}")["items"][0]["found"]
        except Exception as e:  # surfaced by the assertion below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert m.summarize()["total_memories"] == 20
    assert len(m.log()["commits"]) == 21
