"""The wheel's `memoir` command and the in-process API on one store: each sees the other's
commits, and the command runs while a Python handle is open."""

from __future__ import annotations

import subprocess

import memoir
from conftest import NOW


def test_the_wheel_installs_the_command():
    out = subprocess.run([memoir.binary(), "--version"], capture_output=True, text=True)
    assert out.returncode == 0
    assert out.stdout.startswith("memoir ")


def test_cli_write_seen_by_an_open_handle(m, cli):
    assert m.summarize()["total_memories"] == 0
    code, out = cli("remember", "written by the command", "-p", "from.cli")
    assert code == 0 and out["success"]
    got = m.get("from.cli")["items"][0]
    assert got["value"]["content"] == "written by the command"
    assert m.log(limit=1)["commits"][0]["author"] == "cli"
    # And the other way round: the command reads what the handle wrote.
    m.remember("written in process", ["from.python"])
    code, out = cli("get", "from.python")
    assert code == 0 and out["items"][0]["value"]["content"] == "written in process"


def test_interleaved_writers_keep_every_commit(m, cli):
    for i in range(5):
        m.remember(f"py {i}", [f"py.k{i}"])
        code, _ = cli("remember", f"cli {i}", "-p", f"cli.k{i}", now=NOW + i)
        assert code == 0
    assert m.summarize(depth=1)["prefix_counts"]["default"] == {"cli": 5, "py": 5}
    assert len(m.log()["commits"]) == 11


def test_cli_exit_codes_match_the_exceptions(m, cli):
    code, out = cli("get", "no.such")
    assert code == 2 and out["code"] == 2
    try:
        m.get("no.such")
    except memoir.NotFoundError as e:
        assert e.code == code
        assert e.to_dict()["error"] == out["error"]
    else:
        raise AssertionError("get of a missing key did not raise")
