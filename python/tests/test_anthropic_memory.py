"""memoir.anthropic: the anthropic SDK's memory tool class with memoir behind it, driven the
way the SDK's tool runner drives it (``tool.call(input)`` with the model's JSON), through a
session of all six commands and their error cases; the store's log shows one commit per
change, each recording its actor."""

from __future__ import annotations

import pytest
from anthropic.lib.tools import BetaAbstractMemoryTool, ToolError

from memoir import NotFoundError
from memoir.anthropic import MemoirMemoryTool

FILE = "/memories/project/notes.md"


@pytest.fixture
def tool(m):
    return MemoirMemoryTool(m, actor="claude")


def commits(m) -> int:
    return len(m.log(limit=1000)["commits"])


def test_the_tool_is_the_sdks_memory_tool(tool):
    assert isinstance(tool, BetaAbstractMemoryTool)
    assert tool.to_dict() == {"type": "memory_20250818", "name": "memory"}


def test_a_session_of_all_six_commands(tool, m, cli):
    start = commits(m)
    assert tool.call({"command": "view", "path": "/memories"}) == (
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n"
        "0B\t/memories"
    )
    assert tool.call({"command": "create", "path": FILE, "file_text": "alpha\nbeta\n"}) == (
        f"File created successfully at: {FILE}"
    )
    assert tool.call(
        {"command": "str_replace", "path": FILE, "old_str": "beta", "new_str": "gamma"}
    ) == (
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
        "     1\talpha\n     2\tgamma\n     3\t"
    )
    assert tool.call(
        {"command": "insert", "path": FILE, "insert_line": 1, "insert_text": "between\n"}
    ) == f"The file {FILE} has been edited."
    assert tool.call({"command": "view", "path": FILE, "view_range": [2, -1]}) == (
        f"Here's the content of {FILE} with line numbers:\n"
        "     2\tbetween\n     3\tgamma\n     4\t"
    )
    assert tool.call({"command": "create", "path": "/memories/todo.txt", "file_text": "ship it"}) == (
        "File created successfully at: /memories/todo.txt"
    )
    assert tool.call({"command": "view", "path": "/memories"}) == (
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n"
        "27B\t/memories\n"
        "20B\t/memories/project/\n"
        "20B\t/memories/project/notes.md\n"
        "7B\t/memories/todo.txt"
    )
    assert tool.call(
        {"command": "rename", "old_path": "/memories/project", "new_path": "/memories/archive/2026"}
    ) == "Successfully renamed /memories/project to /memories/archive/2026"
    assert tool.call({"command": "delete", "path": "/memories/todo.txt"}) == (
        "Successfully deleted /memories/todo.txt"
    )

    # The files are memories: readable by key, with the actor and source on each entry.
    got = m.get(["archive.2026.notes%2Emd"])["items"][0]
    assert got["value"]["content"] == "alpha\nbetween\ngamma\n"
    assert got["value"]["entries"][0]["actor"] == "claude"
    assert got["value"]["entries"][0]["source"] == "memory-tool"

    # One commit per change (create, str_replace, insert, create, rename, delete), none for
    # a view; each names the actor.
    log = m.log(limit=1000)["commits"]
    assert len(log) == start + 6
    code, out = cli("log", "-n", "6")
    assert code == 0
    messages = [c["message"] for c in out["commits"]]
    assert messages == [
        "Delete todo%2Etxt from default",
        "Rename project to archive.2026 in default",
        "Store todo%2Etxt in default",
        "Store project.notes%2Emd in default",
        "Store project.notes%2Emd in default",
        "Store project.notes%2Emd in default",
    ]
    # History keeps every version: blame lists the file's changes.
    code, blame = cli("blame", "archive.2026.notes%2Emd")
    assert code == 0 and len(blame["entries"]) == 1


ERRORS = [
    ({"command": "view", "path": "/etc/passwd"}, "Path must start with /memories, got: /etc/passwd"),
    ({"command": "view", "path": "/memoriesx"}, "Path must start with /memories, got: /memoriesx"),
    (
        {"command": "create", "path": "/memories/../secrets.md", "file_text": "x"},
        "Path /memories/../secrets.md would escape /memories directory",
    ),
    (
        {"command": "view", "path": "/memories/missing.md"},
        "The path /memories/missing.md does not exist. Please provide a valid path.",
    ),
    ({"command": "create", "path": FILE, "file_text": "again"}, f"File {FILE} already exists"),
    (
        {"command": "str_replace", "path": FILE, "old_str": "zeta", "new_str": "x"},
        f"No replacement was performed, old_str `zeta` did not appear verbatim in {FILE}.",
    ),
    (
        {"command": "str_replace", "path": FILE, "old_str": "a", "new_str": "x"},
        "No replacement was performed. Multiple occurrences of old_str `a` in lines: 1, 1, 2, 2, 2. "
        "Please ensure it is unique",
    ),
    (
        {"command": "str_replace", "path": "/memories/project", "old_str": "a", "new_str": "b"},
        "The path /memories/project is not a file.",
    ),
    (
        {"command": "insert", "path": FILE, "insert_line": 9, "insert_text": "x"},
        "Invalid `insert_line` parameter: 9. It should be within the range [0, 2].",
    ),
    (
        {"command": "insert", "path": "/memories/none.md", "insert_line": 0, "insert_text": "x"},
        "The path /memories/none.md does not exist. Please provide a valid path.",
    ),
    ({"command": "delete", "path": "/memories"}, "Cannot delete the /memories directory itself"),
    ({"command": "delete", "path": "/memories/none.md"}, "The path /memories/none.md does not exist"),
    (
        {"command": "rename", "old_path": "/memories", "new_path": "/memories/x"},
        "Cannot rename the /memories directory itself",
    ),
    (
        {"command": "rename", "old_path": FILE, "new_path": FILE},
        f"The destination {FILE} already exists",
    ),
    (
        {"command": "rename", "old_path": "/memories/none.md", "new_path": "/memories/y.md"},
        "The path /memories/none.md does not exist",
    ),
]


@pytest.mark.parametrize("command,message", ERRORS, ids=[f"{c['command']}-{i}" for i, (c, _) in enumerate(ERRORS)])
def test_refusals_carry_the_tools_error_texts_and_change_nothing(tool, m, command, message):
    tool.call({"command": "create", "path": FILE, "file_text": "alpha\nbanana\n"})
    before = commits(m)
    with pytest.raises(ToolError) as caught:
        tool.call(command)
    assert str(caught.value) == message
    assert commits(m) == before


def test_names_outside_the_key_rules_are_refused(tool, m):
    before = commits(m)
    for path in ["/memories/my notes.md", "/memories/a*b", "/memories/" + "/".join(["d"] * 9)]:
        with pytest.raises(ToolError) as caught:
            tool.call({"command": "create", "path": path, "file_text": "x"})
        assert str(caught.value).startswith(f"Path {path} is not a valid memory path: "), caught.value
    assert commits(m) == before


def test_a_branch_and_namespace_keep_the_files_apart(m):
    tool = MemoirMemoryTool(m, namespace="claude", branch="agent")
    tool.call({"command": "create", "path": "/memories/a.md", "file_text": "on the branch"})
    assert m.get(["claude:a%2Emd"], branch="agent")["items"][0]["found"]
    with pytest.raises(NotFoundError):
        m.get(["claude:a%2Emd"])
    assert m.status()["branch"] == "main"
