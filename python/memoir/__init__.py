"""memoir: git for an AI agent's memory, in process.

``Memoir.open(path)`` gives a handle on a store; its methods are the commands of the
``memoir`` command line (``remember``, ``get``, ``summarize``, ``search``, ``recall``,
``forget``, ``log``, ``blame``, ``diff``, ``branch``, ``merge``, ``checkout``, ...) and
return the dicts ``memoir --json`` prints. Failures raise ``memoir.errors.MemoirError``
subclasses carrying the command's exit code. ``memoir.langgraph.MemoirStore`` is a LangGraph
long-term memory store over a handle. The wheel also installs the ``memoir`` command.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from typing import Optional

from memoir._memoir import EXIT_CODES, Memoir, __version__
from memoir.errors import (
    ConflictError,
    CorruptStoreError,
    MemoirError,
    NonFastForwardError,
    NotAStoreError,
    NotFoundError,
    StoreBusyError,
)

__all__ = [
    "Memoir",
    "MemoirError",
    "NotFoundError",
    "NotAStoreError",
    "ConflictError",
    "CorruptStoreError",
    "NonFastForwardError",
    "StoreBusyError",
    "EXIT_CODES",
    "binary",
    "__version__",
]


def binary() -> str:
    """The path of the ``memoir`` command this package installed (in the scripts directory
    of the environment it is installed in), else the first ``memoir`` on ``PATH``.

    Raises ``FileNotFoundError`` when there is none."""
    exe = "memoir.exe" if os.name == "nt" else "memoir"
    candidates = [os.path.join(os.path.dirname(sys.executable), exe)]
    for scheme in ("venv", "posix_prefix", "nt", "posix_user", "nt_user"):
        try:
            candidates.append(os.path.join(sysconfig.get_path("scripts", scheme), exe))
        except KeyError:
            continue
    for path in candidates:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    found: Optional[str] = shutil.which(exe)
    if found:
        return found
    raise FileNotFoundError("the memoir command is not installed")
