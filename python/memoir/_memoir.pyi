"""Type stubs of the extension module ``memoir._memoir`` (see ``memoir.Memoir``)."""

from os import PathLike
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

__version__: str
#: The contract's exit codes by name (OK, ERROR, NOT_FOUND, USAGE, NOT_A_STORE, CONFLICT,
#: CORRUPT, NON_FAST_FORWARD, BUSY).
EXIT_CODES: Dict[str, int]

_Path = Union[str, "PathLike[str]"]
_Keys = Union[str, List[str]]
Json = Dict[str, Any]

class Memoir:
    """A handle on one memoir store; every method returns the dict ``memoir --json`` prints
    for the same command and raises ``memoir.errors.MemoirError`` subclasses carrying its
    exit code."""

    @staticmethod
    def open(
        path: _Path, *, author: Optional[str] = ..., source: Optional[str] = ...,
        actor: Optional[str] = ..., now: Optional[float] = ..., lock_timeout: Optional[float] = ...,
        keep_open: bool = ..., merge_policy: Optional[str] = ..., facet_cap: Optional[str] = ...,
    ) -> "Memoir":
        """A handle on the store at ``path`` (settings not given come from the environment
        the ``memoir`` command reads)."""
    @staticmethod
    def create(
        path: _Path, *, author: Optional[str] = ..., source: Optional[str] = ...,
        actor: Optional[str] = ..., now: Optional[float] = ..., lock_timeout: Optional[float] = ...,
        keep_open: bool = ..., merge_policy: Optional[str] = ..., facet_cap: Optional[str] = ...,
    ) -> "Memoir":
        """Creates a store (new or empty directory) with its first commit; a handle on it."""
    @property
    def path(self) -> "Path":
        """The store directory (absolute)."""
    @property
    def author(self) -> str:
        """The author this handle's writes record."""
    def close(self) -> None:
        """Closes a store kept open by ``keep_open=True``."""
    def set_embedder(
        self, embed: Callable[[List[str]], Sequence[Sequence[float]]], *, name: str, dims: int
    ) -> None:
        """Makes ``embed`` the embedding model of search and recall by meaning."""
    def status(self) -> Json:
        """``memoir status``."""
    def remember(
        self, content: str, paths: _Keys, *, namespace: Optional[str] = ...,
        merge_policy: Optional[str] = ..., replace: bool = ..., confidence: Optional[float] = ...,
        allow_secrets: bool = ..., branch: Optional[str] = ..., author: Optional[str] = ...,
        source: Optional[str] = ..., actor: Optional[str] = ...,
    ) -> Json:
        """``memoir remember CONTENT -p PATH ...``: one commit."""
    def get(
        self, keys: _Keys, *, namespace: Optional[str] = ..., at: Optional[str] = ...,
        branch: Optional[str] = ...,
    ) -> Json:
        """``memoir get KEY ...``; one missing key asked alone raises ``NotFoundError``."""
    def summarize(
        self, kind: str = ..., *, namespace: Optional[str] = ..., keys: Optional[_Keys] = ...,
        depth: Optional[int] = ..., at: Optional[str] = ..., branch: Optional[str] = ...,
    ) -> Json:
        """``memoir summarize [KIND] [--keys GLOB] [--depth N]``."""
    def search(
        self, query: str, *, namespace: Optional[str] = ..., keys: Optional[_Keys] = ...,
        limit: int = ..., since: Optional[str] = ..., until: Optional[str] = ...,
        sort: str = ..., at: Optional[str] = ..., branch: Optional[str] = ...,
        mode: Optional[str] = ...,
    ) -> Json:
        """``memoir search QUERY [--mode lexical|semantic|hybrid]``: ranked search."""
    def recall(
        self, query: str, *, namespace: Optional[str] = ..., limit: int = ...,
        threshold: Optional[float] = ..., at: Optional[str] = ..., branch: Optional[str] = ...,
        mode: Optional[str] = ..., model: Optional[str] = ...,
    ) -> Json:
        """``memoir recall QUERY [--mode ...] [--model NAME]``, with the models configured as
        for the command."""
    def find_documents(
        self, namespace: str, prefix: List[str], *,
        conditions: List[Tuple[List[str], str, Optional[float], Optional[str]]] = ...,
        words: Optional[str] = ..., offset: int = ..., limit: Optional[int] = ...,
        keys_only: bool = ..., at: Optional[str] = ..., branch: Optional[str] = ...,
    ) -> Json:
        """JSON documents under a path prefix that satisfy ``conditions``, ranked by
        ``words``, one page: ``{"items": [{"key", "score", "content", "timestamp"}], "total"}``."""
    def write_documents(
        self, namespace: str, writes: List[Tuple[str, Optional[str]]], *,
        allow_secrets: bool = ..., branch: Optional[str] = ..., author: Optional[str] = ...,
        source: Optional[str] = ..., actor: Optional[str] = ...,
    ) -> Json:
        """Stores (``(path, json_text)``) and deletes (``(path, None)``) documents in one
        commit: ``{"commit", "stored", "deleted"}``."""
    def forget(
        self, key: str, *, namespace: Optional[str] = ..., purge: bool = ...,
        branch: Optional[str] = ..., author: Optional[str] = ..., source: Optional[str] = ...,
        actor: Optional[str] = ...,
    ) -> Json:
        """``memoir forget KEY``; a missing key raises ``NotFoundError``."""
    def memory_command(
        self, command: str, *, namespace: Optional[str] = ..., branch: Optional[str] = ...,
        author: Optional[str] = ..., source: Optional[str] = ..., actor: Optional[str] = ...,
    ) -> Json:
        """One command of Anthropic's memory tool, as JSON; ``text`` is its answer."""
    def log(
        self, rev: Optional[str] = ..., *, limit: Optional[int] = ...,
        namespace: Optional[str] = ..., keys: Optional[_Keys] = ..., branch: Optional[str] = ...,
    ) -> Json:
        """``memoir log [REV or A..B]``."""
    def blame(
        self, key: str, *, namespace: Optional[str] = ..., limit: Optional[int] = ...,
        lines: bool = ..., at: Optional[str] = ..., branch: Optional[str] = ...,
    ) -> Json:
        """``memoir blame KEY [--lines]``."""
    def diff(
        self, from_rev: Optional[str] = ..., to_rev: Optional[str] = ..., *,
        namespace: Optional[str] = ..., keys: Optional[_Keys] = ..., stat: bool = ...,
        patch: bool = ...,
    ) -> Json:
        """``memoir diff [A] [B]``."""
    def branch(self, name: Optional[str] = ..., *, from_rev: Optional[str] = ...) -> Json:
        """``memoir branch [NAME] [--from REV]``: list, or create."""
    def delete_branch(self, name: str, *, force: bool = ...) -> Json:
        """``memoir branch -d NAME`` (``-D`` with ``force``)."""
    def checkout(self, target: str, *, create: bool = ...) -> Json:
        """``memoir checkout TARGET [-b]``."""
    def merge(
        self, source: str, *, into: Optional[str] = ..., strategy: Optional[str] = ...,
        ff_only: bool = ..., author: Optional[str] = ..., actor: Optional[str] = ...,
    ) -> Json:
        """``memoir merge SOURCE``; unresolved conflicts raise ``ConflictError``."""
    def import_lines(
        self, lines: str, *, namespace: Optional[str] = ..., allow_secrets: bool = ...,
        branch: Optional[str] = ..., author: Optional[str] = ..., source: Optional[str] = ...,
        actor: Optional[str] = ...,
    ) -> Json:
        """``memoir import``: JSON Lines records in one commit."""
    def export(
        self, *, namespace: Optional[str] = ..., at: Optional[str] = ...,
        branch: Optional[str] = ...,
    ) -> Json:
        """``memoir export``: every record at a read point."""
