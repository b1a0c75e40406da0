"""The app's store: opened on first use, and never silently swapped for another."""

from __future__ import annotations

from pathlib import Path

import pytest

from backroom import App
from backroom.core.errors import ConfigError
from backroom.store.sqlite import SqliteStore


async def test_an_app_opened_from_a_url_reopens_the_same_database(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'jobs.db'}"
    async with App(url) as app:
        job = (await app.submit("echo", {"n": 1})).job
    async with app:
        assert (await app.get(job.id)).id == job.id


async def test_an_app_given_a_store_refuses_to_reopen_after_close(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    app = App(store=SqliteStore(str(tmp_path / "jobs.db")))
    async with app:
        await app.submit("echo", {"n": 1})
    with pytest.raises(ConfigError, match="closed with the app"):
        _ = app.store
    assert not (tmp_path / "backroom.db").exists()
