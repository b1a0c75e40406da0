"""Running one command's work on the local database (`--db`, else the environment's)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from backroom.app import App
from backroom.config import Settings

T = TypeVar("T")


def with_app(db: str | None, action: Callable[[App], Awaitable[T]]) -> T:
    """Open the database (migrating it, as every command does), run `action`, close."""

    async def run() -> T:
        settings = Settings.from_env()
        async with App(settings.store_url(db or settings.database_url)) as app:
            return await action(app)

    return asyncio.run(run())
