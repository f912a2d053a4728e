"""The exceptions of memoir, one class per exit code of the command-line contract.

Every failure raises a ``MemoirError``; its ``code`` is the exit code ``memoir`` exits
with for the same failure, and its subclass names that code:

====  ==========================  ==================================================
code  class                       when
====  ==========================  ==================================================
1     ``MemoirError``             any other error: an invalid key, namespace, glob or
                                  option, a refused secret, an I/O failure
2     ``NotFoundError``           a single requested key, a branch or a revision does
                                  not exist; usage errors (``depth=0``, a query of
                                  common words only)
3     ``NotAStoreError``          the path is not a store
4     ``ConflictError``           a conflict left unresolved (``merge_policy="reject"``,
                                  a merge without a strategy)
5     ``CorruptStoreError``       an object is missing or damaged
6     ``NonFastForwardError``     a branch cannot be fast-forwarded
7     ``StoreBusyError``          another process held the store past ``lock_timeout``
====  ==========================  ==================================================

A partial failure (one missing key of ``get``, the conflicts of ``remember``) keeps the
operation's outcome in ``result``; ``to_dict()`` gives the JSON ``memoir --json`` prints.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Type

__all__ = [
    "MemoirError",
    "NotFoundError",
    "NotAStoreError",
    "ConflictError",
    "CorruptStoreError",
    "NonFastForwardError",
    "StoreBusyError",
    "error_for_code",
]


class MemoirError(Exception):
    """A memoir operation failed; ``code`` is the contract's exit code (1 here)."""

    code: int = 1

    def __init__(self, message: str, code: Optional[int] = None, result: Optional[Dict[str, Any]] = None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        #: The outcome of a partial failure (the command's JSON), else None.
        self.result = result

    def to_dict(self) -> Dict[str, Any]:
        """The failure as ``memoir --json`` prints it: the partial outcome's members, if
        any, with ``success: false``, ``error`` and ``code``."""
        out: Dict[str, Any] = dict(self.result) if self.result else {}
        out.update({"success": False, "error": self.message, "code": self.code})
        return out


class NotFoundError(MemoirError, LookupError):
    """Exit 2: a key, branch or revision does not exist, or a usage error."""

    code = 2


class NotAStoreError(MemoirError):
    """Exit 3: the path is not a memoir store."""

    code = 3


class ConflictError(MemoirError):
    """Exit 4: a conflict was left unresolved; ``result`` lists the conflicts."""

    code = 4


class CorruptStoreError(MemoirError):
    """Exit 5: the store is corrupt (an object missing or damaged)."""

    code = 5


class NonFastForwardError(MemoirError):
    """Exit 6: a branch cannot be fast-forwarded."""

    code = 6


class StoreBusyError(MemoirError, TimeoutError):
    """Exit 7: another process held the store's lock longer than ``lock_timeout``."""

    code = 7


_BY_CODE: Dict[int, Type[MemoirError]] = {
    cls.code: cls
    for cls in (
        NotFoundError,
        NotAStoreError,
        ConflictError,
        CorruptStoreError,
        NonFastForwardError,
        StoreBusyError,
    )
}


def error_for_code(code: int) -> Type[MemoirError]:
    """The exception class of an exit code (``MemoirError`` for 1 and unknown codes)."""
    return _BY_CODE.get(code, MemoirError)
