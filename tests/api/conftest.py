"""Fixtures of the API tests: an app on a fresh SQLite file, its API, an HTTP client."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from api_support import ADMIN_KEY, Keys, create_tenants, register_tasks
from fastapi import FastAPI

from backroom import App
from backroom.api import ApiSettings, create_api
from backroom.store.sqlite.store import SqliteStore


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[App]:
    """An open app with the test tasks, on its own SQLite file."""
    # Durability is not under test here: skipping fsync keeps the set-up fast.
    opened = App(store=SqliteStore(str(tmp_path / "api.db"), synchronous="OFF"))
    register_tasks(opened)
    async with opened:
        yield opened


@pytest.fixture
async def keys(app: App) -> Keys:
    """The test tenants' keys."""
    return await create_tenants(app)


@pytest.fixture
def api(app: App) -> FastAPI:
    """The API over `app`, with an admin key from the settings."""
    return create_api(app, ApiSettings(admin_key=ADMIN_KEY))


@pytest.fixture
async def http(api: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client that calls `api` in-process."""
    transport = httpx.ASGITransport(api)
    async with httpx.AsyncClient(transport=transport, base_url="http://backroom.test") as client:
        yield client
