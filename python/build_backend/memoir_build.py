"""Build backend of the memoir wheel: maturin, after staging the ``memoir`` command.

maturin builds the extension module (``memoir._memoir``) from ``python/Cargo.toml``. The
wheel also carries the real ``memoir`` command: this backend builds it with cargo from the
workspace's root crate and stages it as ``build/wheel-data/scripts/memoir``, which maturin
packs as a wheel script, so installers put the binary itself in the environment's ``bin/``
(no Python start-up in front of each command).

The two builds share one compilation of the memoir library and its dependencies: the command
is built with the binding crate selected too (so cargo resolves the features of both), and
maturin then builds the extension with the binding's ``command`` feature, which asks for the
library's command-line features; both therefore ask cargo for the same units, in the same
profile, and the second build compiles only the binding and PyO3.

Environment:

- ``MEMOIR_WHEEL_BINARY``: a ``memoir`` binary already built, shipped instead of building one.
- ``MEMOIR_WHEEL_PROFILE``: the cargo profile of the command (default: maturin's, which is
  ``release`` unless ``MATURIN_PEP517_ARGS`` says ``--profile``).
- ``CARGO_TARGET_DIR``: where cargo builds (default: the workspace's ``target/``).
- ``MATURIN_PEP517_ARGS``: extra ``maturin`` arguments, e.g. ``--profile dev``.
"""

from __future__ import annotations

import os
import shlex
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


def _maturin_args(config_settings) -> list:
    """The arguments given to maturin, as maturin reads them: the config setting
    ``maturin.build-args`` or ``build-args``, else ``MATURIN_PEP517_ARGS``."""
    settings = config_settings or {}
    args = settings.get("maturin.build-args", settings.get("build-args"))
    if args is None:
        args = os.environ.get("MATURIN_PEP517_ARGS", "")
    return shlex.split(args) if isinstance(args, str) else list(args)


def _profile(args: list) -> str:
    """The cargo profile maturin builds the extension in: ``--profile`` in ``args``, else
    ``release`` (``--release``/``-r`` included)."""
    for i, arg in enumerate(args):
        if arg == "--profile" and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith("--profile="):
            return arg.split("=", 1)[1]
    return "release"


def _built_binary(profile: str):
    """The ``memoir`` binary to ship, and whether this backend built it: the given one,
    else one cargo builds now in ``profile``."""
    given = os.environ.get("MEMOIR_WHEEL_BINARY")
    if given:
        path = Path(given).resolve()
        if not path.is_file():
            raise RuntimeError(f"MEMOIR_WHEEL_BINARY={given}: no such file")
        return path, False
    target = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")
    # The binding crate is selected as well, though only the command is built, so that
    # cargo resolves the dependencies' features as for the extension's build that follows.
    command = [
        "cargo", "build", "--locked", "--manifest-path", str(ROOT / "Cargo.toml"),
        "--package", "memoir-cli", "--package", "memoir-python", "--bin", "memoir",
        "--features", "memoir-python/command", "--profile", profile,
    ]
    print("Running `{}`".format(" ".join(shlex.quote(c) for c in command)), file=sys.stderr)
    # Its output goes to stderr: maturin's hook reads the wheel's name from stdout.
    subprocess.run(command, check=True, stdout=sys.stderr)
    return target / ("debug" if profile == "dev" else profile) / EXE, True


def _stage_binary(config_settings):
    """Puts the command where maturin's ``data`` setting packs it as a script, and returns
    the config settings for maturin's build of the extension."""
    args = _maturin_args(config_settings)
    binary, built = _built_binary(os.environ.get("MEMOIR_WHEEL_PROFILE") or _profile(args))
    shutil.rmtree(STAGE, ignore_errors=True)
    scripts = STAGE / "scripts"
    scripts.mkdir(parents=True)
    shutil.copy2(binary, scripts / EXE)
    os.chmod(scripts / EXE, 0o755)
    # A profile with debug info (dev, say) would ship it; the installed copy sheds it.
    if shutil.which("strip") and os.name != "nt":
        subprocess.run(["strip", "--strip-debug", str(scripts / EXE)], check=False)
    if built:
        # The features the command's build resolved, so the extension reuses its library.
        args = [*args, "--features", "command"]
    # `build-args`, which every maturin 1.x reads (newer ones prefer `maturin.build-args`).
    settings = {k: v for k, v in (config_settings or {}).items() if not k.endswith("build-args")}
    return {**settings, "build-args": shlex.join(args)}


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    """The wheel's metadata. maturin checks that the ``data`` directory exists, so it is
    made here (empty: the command is staged by :func:`build_wheel`), as a fresh checkout
    has none."""
    STAGE.mkdir(parents=True, exist_ok=True)
    return maturin.prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    """Builds the command, then the wheel (extension module, Python files, command)."""
    settings = _stage_binary(config_settings)
    return maturin.build_wheel(wheel_directory, settings, metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """An editable install, with the command built and installed too."""
    settings = _stage_binary(config_settings)
    return maturin.build_editable(wheel_directory, settings, metadata_directory)
