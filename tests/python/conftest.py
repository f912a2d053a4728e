"""Fixtures for driving the real `memoir` binary from Python: the binary comes from
MEMOIR_BIN (the Rust test that runs this suite sets it), each test gets a fresh store."""

import os
import re
import subprocess
import time

import pytest


def memoir_bin() -> str:
    path = os.environ.get("MEMOIR_BIN")
    if not path:
        raise RuntimeError("MEMOIR_BIN must name the memoir binary (cargo test sets it)")
    return path


def run(store: str, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, MEMOIR_AUTHOR="tester", MEMOIR_NOW="1767323045")
    return subprocess.run(
        [memoir_bin(), "-s", store, *args], capture_output=True, text=True, env=env, timeout=60
    )


@pytest.fixture
def store(tmp_path):
    path = str(tmp_path / "store")
    assert subprocess.run([memoir_bin(), "new", path], capture_output=True).returncode == 0
    for content, key in [
        ("prefers pytest over unittest", "preferences.coding.testing"),
        ("tabs are four spaces", "preferences.coding.style"),
        ("the staging database is postgres 16", "infra.database"),
    ]:
        r = run(path, "remember", content, "-p", key)
        assert r.returncode == 0, r.stderr
    return path


@pytest.fixture
def http_url(store):
    """`memoir mcp --http` on a free loopback port; yields its endpoint URL."""
    proc = subprocess.Popen(
        [memoir_bin(), "mcp", "--store", store, "--http", "127.0.0.1:0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.time() + 30
        url = None
        while time.time() < deadline and url is None:
            line = proc.stderr.readline()
            if not line:
                break
            m = re.search(r"listening on (http://\S+)", line)
            if m:
                url = m.group(1)
        assert url, "memoir mcp --http did not say where it listens"
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)
