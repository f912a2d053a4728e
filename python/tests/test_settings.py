"""The settings files (`memoir config`): a handle reads the store's and the user's as the
command does, behind the environment and any argument given."""

from __future__ import annotations

import pytest

import memoir
from memoir import Memoir

from conftest import NOW


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A user whose settings live under tmp_path, with no author variable set."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    for name in ("MEMOIR_AUTHOR", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "MEMOIR_LOCK_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "xdg" / "memoir").mkdir(parents=True)
    return tmp_path / "xdg" / "memoir" / "config.toml"


def last_author(m: Memoir) -> str:
    return m.log(limit=1)["commits"][0]["author"]


def test_the_store_file_wins_over_the_user_file_and_arguments_win_over_both(home, tmp_path, monkeypatch):
    path = tmp_path / "store"
    Memoir.create(path, author="creator", now=NOW)
    home.write_text('author = "User <u@x>"\n')
    Memoir.open(path, now=NOW).remember("one", ["a.one"])
    assert last_author(Memoir.open(path)) == "User <u@x>"

    (path / "config.toml").write_text('author = "Store <s@x>"\n')
    Memoir.open(path, now=NOW).remember("two", ["a.two"])
    assert last_author(Memoir.open(path)) == "Store <s@x>"

    monkeypatch.setenv("MEMOIR_AUTHOR", "Env <e@x>")
    Memoir.open(path, now=NOW).remember("three", ["a.three"])
    assert last_author(Memoir.open(path)) == "Env <e@x>"
    Memoir.open(path, now=NOW, author="Arg <a@x>").remember("four", ["a.four"])
    assert last_author(Memoir.open(path)) == "Arg <a@x>"


def test_a_settings_file_that_does_not_read_fails_the_open(home, tmp_path):
    path = tmp_path / "store"
    Memoir.create(path, author="creator", now=NOW)
    (path / "config.toml").write_text("lock_timeout = -1\n")
    with pytest.raises(memoir.MemoirError) as e:
        Memoir.open(path)
    assert e.value.code == 1
    assert "lock_timeout" in str(e.value) and "config.toml" in str(e.value)
