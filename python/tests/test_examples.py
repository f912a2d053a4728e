"""The examples run as a user runs them, and do what they say."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from memoir import Memoir

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run(name: str, store: Path) -> str:
    proc = subprocess.run([sys.executable, str(EXAMPLES / name), str(store)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_sdk_tour(tmp_path):
    out = run("sdk_tour.py", tmp_path / "tour")
    assert "search 'database': ['project.infra.database']" in out
    assert "error: NotFoundError code 2" in out
    assert out.rstrip().endswith("5 memories, 6 commits")
    m = Memoir.open(tmp_path / "tour")
    assert m.status()["branch"] == "main"
    assert m.get("project.infra.local_db")["items"][0]["found"]


def test_langgraph_agent(tmp_path):
    out = run("langgraph_agent.py", tmp_path / "agent")
    assert "recalled: ['city: Alice lives in Lisbon', 'food: Alice likes sushi']" in out
    assert "before the last write: ['food']" in out
    m = Memoir.open(tmp_path / "agent")
    assert [c["message"] for c in m.log()["commits"]] == [
        "Store users.alice.facts.city in langgraph",
        "Store users.alice.facts.food in langgraph",
        "Initialize memoir store",
    ]
    assert m.get("langgraph:users.alice.facts.city")["items"][0]["value"]["content"] == (
        '{"fact":"Alice lives in Lisbon"}')
