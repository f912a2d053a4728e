"""A LangGraph agent loop whose long-term memory is a memoir store.

A scripted chat model (no network) answers each turn; the graph recalls what the store knows
about the user before answering and files any fact the model states (lines starting with
``REMEMBER key: fact``) into the store. Every fact is a commit, so the agent's memory has a
log, blame and diff, and can be read as it was at any earlier turn.

    python examples/langgraph_agent.py [STORE_DIR]     # default: a temporary directory
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import List, TypedDict

from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore

from memoir.langgraph import MemoirStore

USER = ("users", "alice", "facts")

# What the model says, turn by turn: it states facts to remember, then uses them.
SCRIPT = [
    "Nice to meet you, Alice!\nREMEMBER food: Alice likes sushi",
    "Noted.\nREMEMBER city: Alice lives in Lisbon",
    "You like sushi and you live in Lisbon, so try the place on Rua Augusta.",
]
TURNS = [
    "Hi, I'm Alice and I love sushi.",
    "I moved to Lisbon last month.",
    "Where should I have dinner tonight?",
]


class State(TypedDict):
    question: str
    memories: List[str]
    answer: str


model = FakeListChatModel(responses=SCRIPT)


def recall(state: State, *, store: BaseStore) -> dict:
    """Everything the store holds about the user (a search with the question's words would
    rank them; the user's namespace is small enough to take whole)."""
    items = store.search(USER, limit=20)
    return {"memories": [f"{i.key}: {i.value['fact']}" for i in items]}


def respond(state: State) -> dict:
    system = "Known about the user:\n" + "\n".join(state["memories"] or ["(nothing yet)"])
    reply = model.invoke([SystemMessage(content=system), HumanMessage(content=state["question"])])
    return {"answer": str(reply.content)}


def remember(state: State, *, store: BaseStore) -> dict:
    for line in state["answer"].splitlines():
        if line.startswith("REMEMBER "):
            key, fact = line[len("REMEMBER "):].split(":", 1)
            store.put(USER, key.strip(), {"fact": fact.strip()})
    return {}


def build(store: BaseStore):
    graph = StateGraph(State)
    graph.add_node("recall", recall)
    graph.add_node("respond", respond)
    graph.add_node("remember", remember)
    graph.add_edge(START, "recall")
    graph.add_edge("recall", "respond")
    graph.add_edge("respond", "remember")
    graph.add_edge("remember", END)
    return graph.compile(store=store)


def main() -> None:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()) / "mem"
    store = MemoirStore(root, create=True, author="agent", now=1_700_000_000)
    app = build(store)
    for turn in TURNS:
        out = app.invoke({"question": turn, "memories": [], "answer": ""})
        print(f"user: {turn}")
        print(f"  recalled: {out['memories']}")
        print(f"  agent: {out['answer'].splitlines()[0]}")

    m = store.memoir
    print("memory log:", [c["message"] for c in m.log()["commits"]])
    key = store.key_of(USER, "food")
    print(f"blame {key}:", [e["message"] for e in m.blame(key)["entries"]])
    before = store.at("HEAD~1")
    print("before the last write:", [i.key for i in before.search(USER)])
    print("now:", [i.key for i in store.search(USER)])


if __name__ == "__main__":
    main()
