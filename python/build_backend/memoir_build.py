"""Build backend of the memoir wheel: maturin, after staging the ``memoir`` command.

maturin builds the extension module (``memoir._memoir``) from ``python/Cargo.toml``. The
wheel also carries the real ``memoir`` command: this backend builds it with cargo from the
workspace's root crate and stages it as ``build/wheel-data/scripts/memoir``, which maturin
packs as a wheel script, so installers put the binary itself in the environment's ``bin/``
(no Python start-up in front of each command).

Environment:

- ``MEMOIR_WHEEL_BINARY``: a ``memoir`` binary already built, shipped instead of building one.
- ``MEMOIR_WHEEL_PROFILE``: the cargo profile of the command (default ``release``).
- ``CARGO_TARGET_DIR``: where cargo builds (default: the workspace's ``target/``).
- ``MATURIN_PEP517_ARGS``: extra ``maturin`` arguments, e.g. ``--profile dev``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import maturin
from maturin import (  # noqa: F401  (the PEP 517 hooks passed through)
    build_sdist,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
)

HERE = Path(__file__).resolve().parent.parent
ROOT = HERE.parent
STAGE = HERE / "build" / "wheel-data"
EXE = "memoir.exe" if os.name == "nt" else "memoir"


def _built_binary() -> Path:
    """The ``memoir`` binary to ship: the given one, else one cargo builds now."""
    given = os.environ.get("MEMOIR_WHEEL_BINARY")
    if given:
        path = Path(given).resolve()
        if not path.is_file():
            raise RuntimeError(f"MEMOIR_WHEEL_BINARY={given}: no such file")
        return path
    profile = os.environ.get("MEMOIR_WHEEL_PROFILE", "release")
    target = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")
    command = [
        "cargo", "build", "--locked", "--bin", "memoir",
        "--manifest-path", str(ROOT / "Cargo.toml"), "--profile", profile,
    ]
    print("Running `{}`".format(" ".join(command)), file=sys.stderr)
    # Its output goes to stderr: maturin's hook reads the wheel's name from stdout.
    subprocess.run(command, check=True, stdout=sys.stderr)
    return target / ("debug" if profile == "dev" else profile) / EXE


def _stage_binary() -> None:
    """Puts the command where maturin's ``data`` setting packs it as a script."""
    binary = _built_binary()
    shutil.rmtree(STAGE, ignore_errors=True)
    scripts = STAGE / "scripts"
    scripts.mkdir(parents=True)
    shutil.copy2(binary, scripts / EXE)
    os.chmod(scripts / EXE, 0o755)
    # The release profile keeps line tables for backtraces; the shipped copy sheds them.
    if shutil.which("strip") and os.name != "nt":
        subprocess.run(["strip", "--strip-debug", str(scripts / EXE)], check=False)


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    """The wheel's metadata. maturin checks that the ``data`` directory exists, so it is
    made here (empty: the command is staged by :func:`build_wheel`), as a fresh checkout
    has none."""
    STAGE.mkdir(parents=True, exist_ok=True)
    return maturin.prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    """Builds the command, then the wheel (extension module, Python files, command)."""
    _stage_binary()
    return maturin.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """An editable install, with the command built and installed too."""
    _stage_binary()
    return maturin.build_editable(wheel_directory, config_settings, metadata_directory)
