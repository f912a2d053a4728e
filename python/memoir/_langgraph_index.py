"""Helpers of ``memoir.langgraph``: LangGraph filters as memoir's document conditions, and
the vectors of a store's semantic index.

The vectors are kept in memory, per ``MemoirStore`` object, as LangGraph's
``InMemoryStore`` keeps them: items put through the object are embedded (unless
``index=False``) and their vectors dropped when they are deleted or overwritten. They are
not written to the memoir store, so a new ``MemoirStore`` (another process, a restart) has
none until items are put again; items without vectors still come back from a search,
after the scored ones, with ``score`` None.
"""

from __future__ import annotations

import json
import math
import threading
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from langgraph.store.base import get_text_at_path, tokenize_path

Namespace = Tuple[str, ...]
#: One condition as the binding takes it: member path, operator, number operand, JSON operand.
Condition = Tuple[List[str], str, Optional[float], Optional[str]]

_OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")


def conditions(filter: Optional[Dict[str, Any]]) -> List[Condition]:
    """A LangGraph ``filter`` as conditions: keys are member paths (``"user.access-level"``
    reaches into nested objects), a value is matched for equality, a dict of ``$``
    operators compares, and a dict without operators matches member by member."""
    out: List[Condition] = []
    for key, wanted in (filter or {}).items():
        _add(out, str(key).split("."), wanted)
    return out


def _add(out: List[Condition], path: List[str], wanted: Any) -> None:
    if isinstance(wanted, dict) and any(str(k).startswith("$") for k in wanted):
        for op, arg in wanted.items():
            if op not in _OPERATORS:
                raise ValueError(
                    f"unsupported filter operator: {op} (supported: {' '.join(_OPERATORS)})"
                )
            out.append(_condition(path, op, arg))
    elif isinstance(wanted, dict):
        for k, v in wanted.items():
            _add(out, path + [str(k)], v)
    else:
        out.append(_condition(path, "$eq", wanted))


def _condition(path: List[str], op: str, arg: Any) -> Condition:
    if isinstance(arg, (int, float)) and not isinstance(arg, bool):
        try:
            number = float(arg)
        except OverflowError:
            number = math.inf if arg > 0 else -math.inf
        return (path, op, number, None)
    return (path, op, None, json.dumps(arg, ensure_ascii=False))


def fields_of(config: Dict[str, Any]) -> List[str]:
    """The fields an index config embeds: ``fields`` (or SqliteStore's ``text_fields``),
    else the whole value (``"$"``)."""
    return list(config.get("fields") or config.get("text_fields") or ["$"])


def texts_of(value: Dict[str, Any], fields: Sequence[str]) -> List[str]:
    """The texts of ``value`` at ``fields`` (a list field gives one text per element)."""
    out: List[str] = []
    for field in fields:
        path = field if field == "$" else tokenize_path(field)
        out.extend(t for t in get_text_at_path(value, path) if t is not None)
    return out


def cosine(a: Sequence[float], b: Sequence[float], b_norm: float) -> float:
    a_norm = math.sqrt(sum(x * x for x in a))
    if a_norm == 0 or b_norm == 0:
        return 0.0
    return sum(x * y for x, y in zip(a, b)) / (a_norm * b_norm)


class Vectors:
    """The vectors of items, by (namespace, key): each item has one per embedded text, and
    its score for a query is the best cosine similarity among them."""

    def __init__(self) -> None:
        self._by_item: Dict[Tuple[Namespace, str], List[Tuple[List[float], float]]] = {}
        self._lock = threading.Lock()

    def set(self, item: Tuple[Namespace, str], vectors: Iterable[Sequence[float]]) -> None:
        kept = [(list(v), math.sqrt(sum(x * x for x in v))) for v in vectors]
        with self._lock:
            if kept:
                self._by_item[item] = kept
            else:
                self._by_item.pop(item, None)

    def drop(self, item: Tuple[Namespace, str]) -> None:
        with self._lock:
            self._by_item.pop(item, None)

    def score(self, item: Tuple[Namespace, str], query: Sequence[float]) -> Optional[float]:
        """The item's similarity to ``query``; None when it has no vector."""
        with self._lock:
            vectors = self._by_item.get(item)
        if not vectors:
            return None
        return max(cosine(query, v, n) for v, n in vectors)
