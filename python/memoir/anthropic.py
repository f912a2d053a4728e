"""Anthropic's memory tool (``memory_20250818``) backed by memoir.

``MemoirMemoryTool`` is a subclass of the ``anthropic`` SDK's ``BetaAbstractMemoryTool``:
hand it to the SDK's tool runner and Claude's ``/memories`` directory lives in a memoir
store. Directories are key prefixes and files are memories (``/memories/notes/todo.md`` is
the key ``notes.todo%2Emd``: a dot in a name is written ``%2E``, a ``%`` as ``%25``), so
``memoir log``, ``blame``, ``diff`` and ``--at`` work on what Claude wrote, and every change
is one commit recording its actor. The commands' answers and error texts are the SDK's
reference tool's; the work (paths, listings, edits) is done by memoir itself, the same as
for the MCP server's ``memoir_memory`` tool.

    from anthropic import Anthropic
    from memoir.anthropic import MemoirMemoryTool

    memory = MemoirMemoryTool("./memory", actor="claude")
    runner = Anthropic().beta.messages.tool_runner(
        model="claude-sonnet-4-5", max_tokens=1024, tools=[memory],
        messages=[{"role": "user", "content": "Remember that I like green tea."}],
    )

Needs the ``anthropic`` package (``pip install 'memoir[anthropic]'``).
"""

from __future__ import annotations

import json
import os
from typing import Any, Optional, Union

from anthropic.lib.tools import BetaAbstractMemoryTool, ToolError
from anthropic.types.beta import (
    BetaCacheControlEphemeralParam,
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

from memoir._memoir import Memoir
from memoir.errors import MemoirError

__all__ = ["MemoirMemoryTool"]


class MemoirMemoryTool(BetaAbstractMemoryTool):
    """The memory tool over a memoir store.

    ``store`` is a ``Memoir`` handle or a store path (opened with ``Memoir.open``; the store
    must exist). ``namespace`` holds the files (default ``default``); ``branch`` writes and
    reads that branch without moving HEAD (created from HEAD on the first change);
    ``actor``, ``source`` and ``author`` are recorded on every commit and entry (``source``
    defaults to ``memory-tool``; ``author`` to the handle's). A refused command raises the
    SDK's ``ToolError`` with the tool's error text, which the tool runner hands back to the
    model as an error result.
    """

    def __init__(
        self,
        store: Union[Memoir, str, "os.PathLike[str]"],
        *,
        namespace: Optional[str] = None,
        branch: Optional[str] = None,
        actor: Optional[str] = "claude",
        source: Optional[str] = "memory-tool",
        author: Optional[str] = None,
        cache_control: Optional[BetaCacheControlEphemeralParam] = None,
    ) -> None:
        super().__init__(cache_control=cache_control)
        self.memoir = store if isinstance(store, Memoir) else Memoir.open(os.fspath(store))
        self.namespace = namespace
        self.branch = branch
        self.actor = actor
        self.source = source
        self.author = author

    def run(self, command: Any) -> str:
        """Runs one command (an SDK command object or the dict the model sent) and returns
        the tool's answer; a refusal raises ``ToolError``."""
        if isinstance(command, dict):
            payload = command
        else:
            payload = command.to_dict(exclude_none=True)
        try:
            out = self.memoir.memory_command(
                json.dumps(payload),
                namespace=self.namespace,
                branch=self.branch,
                author=self.author,
                source=self.source,
                actor=self.actor,
            )
        except MemoirError as err:
            raise ToolError(err.message) from err
        return out["text"]

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return self.run(command)

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return self.run(command)

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return self.run(command)

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return self.run(command)

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return self.run(command)

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return self.run(command)
