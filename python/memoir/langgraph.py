"""A LangGraph long-term memory store kept in memoir: ``MemoirStore``.

Every write is a memoir commit, so LangGraph memory gets memoir's history: ``log``,
``blame`` and ``diff`` of any item, and reads at any past revision (``store.at("HEAD~3")``).

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
- ``put`` and ``delete``: all the writes of a batch are one commit (``Store <path> in
  langgraph`` for one item, ``Store N and delete M documents in langgraph`` for more);
  deleting an absent item does nothing. The last write of an item in a batch wins, and
  reads in a batch see the store as it was before the batch's writes.
- ``search``: memoir selects the items under the namespace prefix that match ``filter``
  and pages them (``offset``, ``limit``), so only the page comes back to Python. Filters
  take LangGraph's forms: equality, nested dicts, lists, dotted member paths
  (``{"user.access-level": "nested"}``) and ``$eq $ne $gt $gte $lt $lte``. Without a
  ``query`` items come in key order. With a ``query`` and an ``index`` (below), items are
  ranked by the cosine similarity of their vectors to the query's (``score``), best first;
  with a ``query`` and no index, memoir's lexical search ranks them (BM25 over the key's
  segments and the value's text; ``score`` is that). Either way items without a vector or
  without a matching word come after the ranked ones (``score`` None), so a top-k search
  returns k items when k match the filter.
- ``list_namespaces``: the namespaces holding at least one item, sorted, with ``prefix`` and
  ``suffix`` conditions (``"*"`` matches any label), ``max_depth``, ``limit`` and ``offset``.

Semantic search
---------------

``MemoirStore(..., index={"dims": 1536, "embed": embeddings, "fields": ["text"]})`` takes
LangGraph's ``IndexConfig`` (``text_fields``, SqliteStore's name, is read as ``fields``):
``embed`` is a LangChain ``Embeddings``, a function from texts to vectors (sync or async),
or a provider string. Each put embeds the texts at ``fields`` (``put(..., index=[...])``
names other fields for that item; ``index=False`` embeds nothing, so the item is never
ranked by similarity). The vectors are kept in memory by this ``MemoirStore`` object, like
``InMemoryStore``'s, not in the memoir store: items written by another process or before
this object was made have none until put again.

Concurrency
-----------

Operations of one process on one store take turns on a process-wide lock, so threads
never meet memoir's store lock (``StoreBusyError``) because of each other. Concurrent
``abatch`` calls (``aput``, ``aget``, ``asearch``, ... gathered in one event loop) are run as
one batch: their writes are one commit. When another process holds the store longer than
``lock_timeout``, the ``StoreBusyError`` names it (pid and command line, on Linux).
TTLs are not supported (``supports_ttl`` is false).
"""

from __future__ import annotations

import asyncio
import json
import os
from datetime import datetime, timezone
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from langgraph.store.base import (
    BaseStore,
    IndexConfig,
    ensure_embeddings,
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
from memoir._langgraph_index import Vectors, conditions, fields_of, texts_of
from memoir._store_lock import IdleCloser, busy, lock_for
from memoir.errors import MemoirError, NotFoundError, StoreBusyError

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


#: A batch's embeddings: the vector of each search query, and the vectors of each item put.
_Embedded = Tuple[Dict[str, List[float]], Dict[Tuple[Namespace, str], List[List[float]]]]


def _grouped(owners: List[Tuple[Namespace, str]], vectors: Sequence[Sequence[float]]
             ) -> Dict[Tuple[Namespace, str], List[List[float]]]:
    """Vectors by the item each belongs to."""
    if len(vectors) != len(owners):
        raise ValueError(f"the embedder gave {len(vectors)} vectors for {len(owners)} texts")
    out: Dict[Tuple[Namespace, str], List[List[float]]] = {}
    for owner, vector in zip(owners, vectors):
        out.setdefault(owner, []).append(list(vector))
    return out


def _list_namespaces(spaces: set, op: ListNamespacesOp) -> List[Namespace]:
    """The namespaces of ``spaces`` a listing asks for, sorted and paged."""
    if op.match_conditions:
        spaces = {s for s in spaces if all(_condition_holds(c, s) for c in op.match_conditions)}
    if op.max_depth is not None:
        spaces = {s[: op.max_depth] for s in spaces}
    return sorted(spaces)[op.offset : op.offset + op.limit]


class MemoirStore(BaseStore):
    """A LangGraph ``BaseStore`` whose items are memoir records, every batch of writes a
    commit.

    ``store`` is a ``memoir.Memoir`` handle or the path of a store (opened with
    ``open_options``; ``create=True`` makes the store if the path holds none; unless
    ``keep_open`` is given, the store is kept open across a burst of operations and closed
    50 ms after it, or after a second of continuous use, so other processes get their turn).
    ``namespace``
    is the memoir namespace the items live in; ``branch`` the branch read and written (HEAD's
    when none); ``allow_secrets`` lets values that look like credentials be stored (refused
    by default, as everywhere in memoir); ``index`` is LangGraph's ``IndexConfig`` for
    semantic search; ``lock_wait`` is how long (seconds) an operation waits for another
    thread of this process using the store. See the module's doc.
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
        index: Optional[IndexConfig] = None,
        lock_wait: float = 300.0,
        _at: Optional[str] = None,
        _vectors: Optional[Vectors] = None,
        **open_options: Any,
    ) -> None:
        closes_idle = False
        if isinstance(store, Memoir):
            self.memoir = store
        else:
            # A burst of operations opens the store once; it is closed when the burst ends.
            closes_idle = "keep_open" not in open_options
            open_options.setdefault("keep_open", True)
            if create and not os.path.exists(os.path.join(os.fspath(store), "FORMAT")):
                self.memoir = Memoir.create(store, **open_options)
            else:
                self.memoir = Memoir.open(store, **open_options)
        self.namespace = namespace
        self.branch = branch
        self.allow_secrets = allow_secrets
        self.lock_wait = lock_wait
        self._at = _at
        self._lock = lock_for(self.memoir.path)
        self._closer = IdleCloser(self.memoir, self._lock) if closes_idle else None
        self._vectors = _vectors if _vectors is not None else Vectors()
        self._pending: Dict[asyncio.AbstractEventLoop, List[Tuple[List[Op], asyncio.Future]]] = {}
        self._draining: set = set()
        if index:
            self.index_config: Optional[Dict[str, Any]] = dict(index)
            self.embeddings = ensure_embeddings(index.get("embed"))
            self._fields = fields_of(self.index_config)
        else:
            self.index_config = None
            self.embeddings = None
            self._fields = []

    def setup(self) -> None:
        """Nothing to prepare: a memoir store needs no tables. Kept so that code written for
        ``SqliteStore`` or ``PostgresStore``, which create theirs here, runs unchanged."""

    # -- memoir's view -------------------------------------------------------------------

    def at(self, rev: str) -> "MemoirStore":
        """A read-only view of the items as they were at revision ``rev`` (``HEAD~2``, a
        commit id, a branch, ``main@{yesterday}``); its writes raise ``MemoirError``."""
        view = MemoirStore(
            self.memoir, namespace=self.namespace, branch=self.branch, _at=rev,
            allow_secrets=self.allow_secrets, index=self.index_config, _vectors=self._vectors,
            lock_wait=self.lock_wait,
        )
        view._closer = self._closer
        return view

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

    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """One memoir operation, holding the process-wide lock of the store."""
        with self._lock.held(str(self.memoir.path), self.lock_wait):
            self._lock.close_others(self._closer)
            try:
                return getattr(self.memoir, method)(*args, **kwargs)
            except StoreBusyError as e:
                raise busy(e, self.memoir.path) from None
            finally:
                if self._closer is not None:
                    self._closer.used()

    # -- the batch ---------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> List[Result]:
        """Runs the operations: reads first (they see the store before this batch's writes),
        then the writes, last write of an item winning, all in one commit."""
        ops = list(ops)
        self._check(ops)
        return self._run(ops, self._embed(ops))

    def _to_embed(self, ops: List[Op]) -> Tuple[List[str], List[str], List[Tuple[Namespace, str]]]:
        """What a batch embeds: its search queries, and the texts of its puts with the item
        each belongs to (none without an index)."""
        if self.embeddings is None:
            return [], [], []
        queries = sorted({op.query for op in ops if isinstance(op, SearchOp) and op.query})
        last: Dict[Tuple[Namespace, str], PutOp] = {}
        for op in ops:
            if isinstance(op, PutOp):
                last[(tuple(op.namespace), str(op.key))] = op
        texts: List[str] = []
        owners: List[Tuple[Namespace, str]] = []
        for item, op in last.items():
            if op.value is None or op.index is False:
                continue
            fields = self._fields if op.index is None else list(op.index)
            for text in texts_of(op.value, fields):
                texts.append(text)
                owners.append(item)
        return queries, texts, owners

    def _embed(self, ops: List[Op]) -> "_Embedded":
        queries, texts, owners = self._to_embed(ops)
        if self.embeddings is None:
            return {}, {}
        by_query = {q: self.embeddings.embed_query(q) for q in queries}
        vectors = self.embeddings.embed_documents(texts) if texts else []
        return by_query, _grouped(owners, vectors)

    async def _aembed(self, ops: List[Op]) -> "_Embedded":
        queries, texts, owners = self._to_embed(ops)
        if self.embeddings is None:
            return {}, {}
        found = await asyncio.gather(*(self.embeddings.aembed_query(q) for q in queries))
        vectors = await self.embeddings.aembed_documents(texts) if texts else []
        return dict(zip(queries, found)), _grouped(owners, vectors)

    def _run(self, ops: List[Op], embedded: "_Embedded") -> List[Result]:
        """Runs checked operations, given their embeddings."""
        results: List[Result] = [None] * len(ops)
        gets: List[Tuple[int, str]] = []
        writes: Dict[Tuple[Namespace, str], PutOp] = {}
        for i, op in enumerate(ops):
            if isinstance(op, GetOp):
                gets.append((i, self.path_of(op.namespace, op.key)))
            elif isinstance(op, PutOp):
                writes[(tuple(op.namespace), str(op.key))] = op
        if gets:
            found = self._get_paths([p for _, p in gets])
            for i, path in gets:
                results[i] = found.get(path)
        # Equal searches of a batch (concurrent callers asking the same) are run once, and
        # the namespaces are read once for all its listings.
        searches: Dict[Tuple[Any, ...], List[SearchItem]] = {}
        spaces: Optional[set] = None
        for i, op in enumerate(ops):
            if isinstance(op, SearchOp):
                same = (tuple(op.namespace_prefix), op.query, op.limit, op.offset,
                        json.dumps(op.filter, sort_keys=True, default=repr))
                if same not in searches:
                    searches[same] = self._search(op, embedded[0])
                results[i] = list(searches[same])
            elif isinstance(op, ListNamespacesOp):
                if spaces is None:
                    spaces = {self._item_of(p)[0] for p in self._keys(None)}
                results[i] = _list_namespaces(spaces, op)
        if writes:
            self._write(writes, embedded[1])
        return results

    def _check(self, ops: List[Op]) -> None:
        """Refuses a batch with a bad operation before anything runs."""
        for op in ops:
            if isinstance(op, GetOp):
                self.path_of(op.namespace, op.key)
            elif isinstance(op, SearchOp):
                _check_labels(op.namespace_prefix)
                conditions(op.filter)
            elif isinstance(op, ListNamespacesOp):
                for c in op.match_conditions or ():
                    _check_labels(c.path)
            elif isinstance(op, PutOp):
                self.path_of(op.namespace, op.key)
            else:
                raise ValueError(f"unknown operation: {type(op).__name__}")
        if self._at is not None and any(isinstance(op, PutOp) for op in ops):
            raise MemoirError(f"this store is a read-only view at {self._at!r}")

    async def abatch(self, ops: Iterable[Op]) -> List[Result]:
        """``batch`` on a worker thread; calls made while one runs (``asyncio.gather`` of
        ``aput``s) wait for it and then run together as one batch, one commit."""
        ops = list(ops)
        self._check(ops)
        loop = asyncio.get_running_loop()
        done: asyncio.Future = loop.create_future()
        self._pending.setdefault(loop, []).append((ops, done))
        if loop not in self._draining:
            self._draining.add(loop)
            loop.create_task(self._drain(loop))
        return await done

    async def _drain(self, loop: asyncio.AbstractEventLoop) -> None:
        """Runs the calls waiting on ``loop``: all of them as one batch, again until none
        wait. A failed joint batch is run call by call, so each caller gets its own error."""
        await asyncio.sleep(0)  # calls made in the same turn of the loop join this batch
        try:
            while True:
                taken = self._pending.pop(loop, [])
                calls = [(ops, fut) for ops, fut in taken if not fut.done()]
                if not calls:
                    return
                await self._run_calls(loop, calls)
        finally:
            self._draining.discard(loop)

    async def _run_calls(self, loop: asyncio.AbstractEventLoop,
                         calls: List[Tuple[List[Op], asyncio.Future]]) -> None:
        joint = [op for ops, _ in calls for op in ops]
        try:
            embedded = await self._aembed(joint)
            results = await loop.run_in_executor(None, self._run, joint, embedded)
        except Exception as e:
            if len(calls) == 1:
                if not calls[0][1].done():
                    calls[0][1].set_exception(e)
                return
            for call in calls:  # each caller gets its own result or error
                await self._run_calls(loop, [call])
            return
        at = 0
        for ops, fut in calls:
            if not fut.done():
                fut.set_result(results[at : at + len(ops)])
            at += len(ops)

    # -- the operations ------------------------------------------------------------------

    def _get_paths(self, paths: List[str]) -> Dict[str, Item]:
        unique = sorted(set(paths))
        try:
            out = self._call("get", unique, namespace=self.namespace, **self._reads())
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
            out = self._call(
                "summarize", namespace=self.namespace, keys=[glob or "*"], **self._reads()
            )
        except MemoirError as e:
            if e.code == 1 and "not found" in e.message:
                return []  # no item was ever stored: the namespace does not exist yet
            raise
        return (out.get("matching_keys") or {}).get(self.namespace, [])

    def _find(self, op: SearchOp, **kwargs: Any) -> Dict[str, Any]:
        return self._call(
            "find_documents", self.namespace, [encode_segment(s) for s in op.namespace_prefix],
            conditions=conditions(op.filter), **kwargs, **self._reads(),
        )

    def _search(self, op: SearchOp, queries: Dict[str, List[float]]) -> List[SearchItem]:
        if op.query and self.embeddings is not None:
            return self._semantic(op, queries[op.query])
        page = self._find(op, words=op.query or None, offset=op.offset, limit=op.limit)
        out = []
        for hit in page["items"]:
            item = self._item(hit["key"], hit)
            out.append(SearchItem(namespace=item.namespace, key=item.key, value=item.value,
                                  created_at=item.created_at, updated_at=item.updated_at,
                                  score=hit["score"]))
        return out

    def _semantic(self, op: SearchOp, query: List[float]) -> List[SearchItem]:
        """Ranks the items that match the filter by their vectors' similarity to the query's;
        those without vectors follow, in key order. Only the page's items are read."""
        keys = [h["key"] for h in self._find(op, keys_only=True)["items"]]
        scored, unscored = [], []
        for path in keys:
            score = self._vectors.score(self._item_of(path), query)
            (unscored if score is None else scored).append((score, path))
        scored.sort(key=lambda sp: -sp[0])  # stable: ties keep key order
        ranked = scored + unscored
        page = ranked[op.offset : op.offset + op.limit]
        items = self._get_paths([p for _, p in page])
        out = []
        for score, path in page:
            item = items.get(path)
            if item is not None:
                out.append(SearchItem(namespace=item.namespace, key=item.key, value=item.value,
                                      created_at=item.created_at, updated_at=item.updated_at,
                                      score=score))
        return out

    def _write(self, writes: Dict[Tuple[Namespace, str], PutOp],
               embedded: Dict[Tuple[Namespace, str], List[List[float]]]) -> None:
        """The batch's writes as one commit; then the vectors of the items written."""
        batch = []
        for (namespace, key), op in writes.items():
            path = self.path_of(namespace, key)
            if op.value is None:
                batch.append((path, None))
            else:
                batch.append((path, json.dumps(dict(op.value), sort_keys=True,
                                               ensure_ascii=False, separators=(",", ":"))))
        self._call("write_documents", self.namespace, batch, allow_secrets=self.allow_secrets,
                   branch=self.branch)
        for item in writes:
            self._vectors.set(item, embedded.get(item, []))
