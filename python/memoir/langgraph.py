"""A LangGraph long-term memory store kept in memoir: ``MemoirStore``.

Every ``put`` and ``delete`` is a memoir commit, so LangGraph memory gets memoir's history:
``log``, ``blame`` and ``diff`` of any item, and reads at any past revision
(``store.at("HEAD~3")``).

How items are kept
------------------

All items live in one memoir namespace (``"langgraph"`` unless told otherwise; LangGraph
forbids that word as a namespace's first label, so nothing collides with it). An item's
memoir key is its namespace labels followed by its key, one path segment each::

    ("users", "alice", "prefs"), key "food"   ->   langgraph:users.alice.prefs.food

Segments keep ASCII letters, digits, ``-`` and ``_`` as they are; every other character is
written as ``%XX`` per UTF-8 byte (``"a b" -> "a%20b"``, ``"é" -> "%C3%A9"``) and an empty
item key as ``%``, so any label or key round-trips and no segment holds a character the key
rules refuse. Limits follow memoir's: a namespace of at most 7 labels (8 segments with the
key), at most 64 bytes per encoded segment and 256 bytes per encoded path; beyond them a
``ValueError`` (``InvalidNamespaceError`` for the namespace) is raised before anything is
written.

The value is stored as the record's content: the dict as JSON with sorted keys, written
with the ``replace`` merge policy (one entry; older values stay in history). A record whose
content is not a JSON object (written by other means) reads as ``{"content": <text>}``.
``created_at`` and ``updated_at`` are both the time of the item's latest write (as in
LangGraph's ``InMemoryStore``, which also resets both on every put); the first write's time
is in ``blame``.

Operations
----------

- ``get``: one memoir ``get`` for all the batch's keys.
- ``put``: one commit per item (``Store <path> in langgraph``); ``put(..., None)`` and
  ``delete`` remove the item in a commit (``Delete <path> from langgraph``); deleting an
  absent item does nothing.
- ``search``: items under the namespace prefix, filtered by ``filter`` (equality, nested
  dicts, lists, and ``$eq $ne $gt $gte $lt $lte``), then ``offset``/``limit``. Without a
  ``query`` items come in key order; with one, memoir's lexical search ranks them (BM25 over
  the key's segments and the value's text), items without a matching word are left out,
  and ``score`` is set. A query of common words only matches nothing.
- ``list_namespaces``: the namespaces holding at least one item, sorted, with ``prefix`` and
  ``suffix`` conditions (``"*"`` matches any label), ``max_depth``, ``limit`` and ``offset``.

Reads in a batch see the store as it was before the batch's writes, and the last write of
an item in a batch wins (as in ``InMemoryStore``). TTLs and vector indexes are not
supported (``supports_ttl`` is false; ``index`` arguments of ``put`` are ignored).
"""

from __future__ import annotations

import asyncio
import json
import os
from datetime import datetime, timezone
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from memoir import Memoir
from memoir.errors import MemoirError, NotFoundError

__all__ = ["MemoirStore", "encode_segment", "decode_segment"]

_KEEP = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
_MAX_LABELS = 7
_MAX_SEGMENT_BYTES = 64
_MAX_PATH_BYTES = 256

Namespace = Tuple[str, ...]


def encode_segment(text: str) -> str:
    """One namespace label or item key as a memoir path segment (see the module's doc)."""
    if text == "":
        return "%"
    out = []
    for ch in text:
        if ch in _KEEP:
            out.append(ch)
        else:
            out.extend("%{:02X}".format(b) for b in ch.encode("utf-8"))
    return "".join(out)


def decode_segment(segment: str) -> str:
    """The label or key a path segment encodes (the inverse of ``encode_segment``)."""
    if segment == "%":
        return ""
    raw = bytearray()
    i = 0
    while i < len(segment):
        ch = segment[i]
        if ch == "%":
            raw.append(int(segment[i + 1 : i + 3], 16))
            i += 3
        else:
            raw.extend(ch.encode("utf-8"))
            i += 1
    return raw.decode("utf-8")


def _check_labels(namespace: Sequence[str]) -> None:
    """LangGraph's label rules: strings, not empty, no ``.``, no NUL."""
    for label in namespace:
        if not isinstance(label, str):
            raise InvalidNamespaceError(
                f"namespace labels must be strings, got {type(label).__name__} in {namespace}"
            )
        if not label:
            raise InvalidNamespaceError(f"namespace labels cannot be empty strings: {namespace}")
        if "." in label:
            raise InvalidNamespaceError(f"namespace labels cannot contain periods: {namespace}")
        if "\x00" in label:
            raise InvalidNamespaceError(f"namespace labels cannot contain NUL bytes: {namespace}")


def _time(record: Dict[str, Any]) -> datetime:
    return datetime.fromtimestamp(float(record.get("timestamp", 0.0)), tz=timezone.utc)


def _value(record: Dict[str, Any]) -> Dict[str, Any]:
    content = record.get("content", "")
    try:
        value = json.loads(content)
    except ValueError:
        return {"content": content}
    return value if isinstance(value, dict) else {"content": content}


def _matches(value: Dict[str, Any], filter: Optional[Dict[str, Any]]) -> bool:
    if not filter:
        return True
    return all(_compare(value.get(k), v) for k, v in filter.items())


def _compare(item_value: Any, wanted: Any) -> bool:
    if isinstance(wanted, dict):
        if any(k.startswith("$") for k in wanted):
            return all(_operator(item_value, op, arg) for op, arg in wanted.items())
        if not isinstance(item_value, dict):
            return False
        return all(_compare(item_value.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, (list, tuple)):
        return (
            isinstance(item_value, (list, tuple))
            and len(item_value) == len(wanted)
            and all(_compare(a, b) for a, b in zip(item_value, wanted))
        )
    return item_value == wanted


def _operator(value: Any, op: str, arg: Any) -> bool:
    if op == "$eq":
        return value == arg
    if op == "$ne":
        return value != arg
    if op in ("$gt", "$gte", "$lt", "$lte"):
        try:
            a, b = float(value), float(arg)
        except (TypeError, ValueError):
            return False
        return {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op]
    raise ValueError(f"unsupported filter operator: {op}")


def _condition_holds(condition: MatchCondition, namespace: Namespace) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path))
    else:
        raise ValueError(f"unsupported match type: {condition.match_type}")
    return all(p == "*" or n == p for n, p in pairs)


class MemoirStore(BaseStore):
    """A LangGraph ``BaseStore`` whose items are memoir records, every write a commit.

    ``store`` is a ``memoir.Memoir`` handle or the path of a store (opened with
    ``open_options``; ``create=True`` makes the store if the path holds none). ``namespace``
    is the memoir namespace the items live in; ``branch`` the branch read and written (HEAD's
    when none); ``allow_secrets`` lets values that look like credentials be stored (refused
    by default, as everywhere in memoir). See the module's doc for the key mapping.
    """

    supports_ttl = False

    def __init__(
        self,
        store: Union[Memoir, str, "os.PathLike[str]"],
        *,
        namespace: str = "langgraph",
        branch: Optional[str] = None,
        allow_secrets: bool = False,
        create: bool = False,
        _at: Optional[str] = None,
        **open_options: Any,
    ) -> None:
        if isinstance(store, Memoir):
            self.memoir = store
        elif create and not os.path.exists(os.path.join(os.fspath(store), "FORMAT")):
            self.memoir = Memoir.create(store, **open_options)
        else:
            self.memoir = Memoir.open(store, **open_options)
        self.namespace = namespace
        self.branch = branch
        self.allow_secrets = allow_secrets
        self._at = _at

    # -- memoir's view -------------------------------------------------------------------

    def at(self, rev: str) -> "MemoirStore":
        """A read-only view of the items as they were at revision ``rev`` (``HEAD~2``, a
        commit id, a branch, ``main@{yesterday}``); its writes raise ``MemoirError``."""
        return MemoirStore(
            self.memoir, namespace=self.namespace, branch=self.branch, _at=rev,
            allow_secrets=self.allow_secrets,
        )

    def path_of(self, namespace: Sequence[str], key: str) -> str:
        """The memoir path (no namespace) of an item."""
        _check_labels(namespace)
        labels = list(namespace)
        if len(labels) > _MAX_LABELS:
            raise InvalidNamespaceError(
                f"a namespace has at most {_MAX_LABELS} labels in memoir, got {len(labels)}"
            )
        raws = labels + [str(key)]
        segments = [encode_segment(s) for s in raws]
        for n, (raw, seg) in enumerate(zip(raws, segments)):
            if len(seg) > _MAX_SEGMENT_BYTES:
                error = InvalidNamespaceError if n < len(labels) else ValueError
                raise error(
                    f"{raw!r} is {len(seg)} bytes encoded; memoir allows {_MAX_SEGMENT_BYTES}"
                )
        path = ".".join(segments)
        if len(path) > _MAX_PATH_BYTES:
            raise ValueError(f"the item's path is {len(path)} bytes; memoir allows {_MAX_PATH_BYTES}")
        return path

    def key_of(self, namespace: Sequence[str], key: str) -> str:
        """The full memoir key (``ns:path``) of an item, for ``blame``, ``log`` and ``get``."""
        return f"{self.namespace}:{self.path_of(namespace, key)}"

    def _item_of(self, path: str) -> Tuple[Namespace, str]:
        segments = [decode_segment(s) for s in path.split(".")]
        return tuple(segments[:-1]), segments[-1]

    def _reads(self) -> Dict[str, Any]:
        return {"at": self._at, "branch": None if self._at else self.branch}

    # -- the batch ---------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> List[Result]:
        """Runs the operations: reads first (they see the store before this batch's writes),
        then the writes, last write of an item winning, each a commit."""
        ops = list(ops)
        results: List[Result] = [None] * len(ops)
        gets: List[Tuple[int, str]] = []
        writes: Dict[Tuple[Namespace, str], PutOp] = {}
        for i, op in enumerate(ops):
            if isinstance(op, GetOp):
                gets.append((i, self.path_of(op.namespace, op.key)))
            elif isinstance(op, SearchOp):
                _check_labels(op.namespace_prefix)
            elif isinstance(op, ListNamespacesOp):
                for c in op.match_conditions or ():
                    _check_labels(c.path)
            elif isinstance(op, PutOp):
                self.path_of(op.namespace, op.key)
                writes[(tuple(op.namespace), str(op.key))] = op
            else:
                raise ValueError(f"unknown operation: {type(op).__name__}")
        if gets:
            found = self._get_paths([p for _, p in gets])
            for i, path in gets:
                results[i] = found.get(path)
        for i, op in enumerate(ops):
            if isinstance(op, SearchOp):
                results[i] = self._search(op)
            elif isinstance(op, ListNamespacesOp):
                results[i] = self._list_namespaces(op)
        if writes and self._at is not None:
            raise MemoirError(f"this store is a read-only view at {self._at!r}")
        for (namespace, key), op in writes.items():
            self._write(namespace, key, op.value)
        return results

    async def abatch(self, ops: Iterable[Op]) -> List[Result]:
        """``batch`` on a worker thread (memoir releases the GIL while it works)."""
        ops = list(ops)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, self.batch, ops)

    # -- the operations ------------------------------------------------------------------

    def _get_paths(self, paths: List[str]) -> Dict[str, Item]:
        unique = sorted(set(paths))
        try:
            out = self.memoir.get(unique, namespace=self.namespace, **self._reads())
        except NotFoundError as e:
            if e.result is None or "items" not in e.result:
                raise
            out = e.result
        except MemoirError as e:
            if e.code == 1 and "not found" in e.message:
                return {}  # no item was ever stored: the namespace does not exist yet
            raise
        found = {}
        for entry in out["items"]:
            if entry["found"]:
                found[entry["key"]] = self._item(entry["key"], entry["value"])
        return found

    def _item(self, path: str, record: Dict[str, Any]) -> Item:
        namespace, key = self._item_of(path)
        when = _time(record)
        return Item(value=_value(record), key=key, namespace=namespace,
                    created_at=when, updated_at=when)

    def _keys(self, glob: Optional[str]) -> List[str]:
        """The paths of the items under a glob (all items: none), sorted."""
        try:
            out = self.memoir.summarize(
                namespace=self.namespace, keys=[glob or "*"], **self._reads()
            )
        except MemoirError as e:
            if e.code == 1 and "not found" in e.message:
                return []  # no item was ever stored: the namespace does not exist yet
            raise
        return (out.get("matching_keys") or {}).get(self.namespace, [])

    def _search(self, op: SearchOp) -> List[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        glob = ".".join(encode_segment(s) for s in prefix) + ".*" if prefix else None
        if op.query:
            paths = self._keys(glob)
            if not paths:
                return []
            try:
                out = self.memoir.search(
                    op.query, namespace=self.namespace, keys=glob, limit=len(paths),
                    **self._reads(),
                )
            except NotFoundError:
                return []  # a query of common words only: nothing to rank by
            ranked = [(h["key"], h["score"]) for h in out["hits"]]
        else:
            ranked = [(p, None) for p in self._keys(glob)]
        if not ranked:
            return []
        items = self._get_paths([p for p, _ in ranked])
        kept = []
        for path, score in ranked:
            item = items.get(path)
            if item is not None and _matches(item.value, op.filter):
                kept.append(SearchItem(namespace=item.namespace, key=item.key, value=item.value,
                                       created_at=item.created_at,
                                       updated_at=item.updated_at, score=score))
        return kept[op.offset : op.offset + op.limit]

    def _list_namespaces(self, op: ListNamespacesOp) -> List[Namespace]:
        spaces = {self._item_of(p)[0] for p in self._keys(None)}
        if op.match_conditions:
            spaces = {s for s in spaces if all(_condition_holds(c, s) for c in op.match_conditions)}
        if op.max_depth is not None:
            spaces = {s[: op.max_depth] for s in spaces}
        return sorted(spaces)[op.offset : op.offset + op.limit]

    def _write(self, namespace: Namespace, key: str, value: Optional[Dict[str, Any]]) -> None:
        path = self.path_of(namespace, key)
        if value is None:
            try:
                self.memoir.forget(path, namespace=self.namespace, branch=self.branch)
            except NotFoundError:
                pass  # deleting an absent item does nothing
            return
        content = json.dumps(dict(value), sort_keys=True, ensure_ascii=False,
                             separators=(",", ":"))
        self.memoir.remember(content, [path], namespace=self.namespace, merge_policy="replace",
                             allow_secrets=self.allow_secrets, branch=self.branch)
