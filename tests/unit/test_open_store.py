"""`open_store` picks the backend a URL names; `memory://` opens a private memory store."""

from __future__ import annotations

import pytest

from backroom.core.errors import ConfigError
from backroom.core.job import NewJob
from backroom.store import open_store
from backroom.store.memory import MemoryStore


async def test_memory_url_opens_a_private_empty_memory_store() -> None:
    first, second = open_store("memory://"), open_store("memory://")
    assert isinstance(first, MemoryStore) and isinstance(second, MemoryStore)

    submitted = await first.submit(NewJob(task="t", input={}, run_at=0), now=0)

    assert await first.get(submitted.job.id) == submitted.job
    assert await second.get(submitted.job.id) is None


@pytest.mark.parametrize("url", ["memory://shared", "memory:", "mysql://db"])
def test_an_unknown_url_is_a_config_error(url: str) -> None:
    with pytest.raises(ConfigError):
        open_store(url)
