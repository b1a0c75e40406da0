"""The systems on a database: backroom (PostgreSQL and SQLite), PgQueuer, Procrastinate
and huey's SQLite storage."""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
from pgqueuer import AsyncpgDriver, Queries

from backroom import App
from bench.peers.env import POSTGRES, SQLITE
from bench.peers.system import BIN, Submit, System, chunks, seconds, seconds_async
from bench.postgres_peers import pgqueuer_enqueue, pgqueuer_install
from bench.postgres_support import BULK, execute
from bench.postgres_throughput import backroom_enqueue

BACKROOM_WORKER = ["worker", "--app", "bench.peers.backroom_app:app", "--db"]


class BackroomPostgres(System):
    """backroom on PostgreSQL: `backroom worker` at its defaults."""

    name, store, bulk = "backroom", "PostgreSQL", True

    def __init__(self, url: str) -> None:
        self.url = url

    def worker(self) -> list[str]:
        return [str(BIN / "backroom"), *BACKROOM_WORKER, self.url]

    async def prepare(self) -> None:
        async with App(self.url):
            pass  # create the schema

    async def enqueue(self, jobs: int, *, bulk: bool) -> float:
        return await backroom_enqueue(self.url, jobs, bulk=bulk)

    @contextlib.asynccontextmanager
    async def client(self) -> AsyncIterator[Submit]:
        async with App(self.url) as app:
            yield lambda: app.submit("noop", None)


class BackroomSqlite(BackroomPostgres):
    """backroom's embedded mode: a SQLite file, `backroom worker` at its defaults."""

    store = "SQLite"

    def __init__(self, folder: Path) -> None:
        self.file = folder / "backroom.db"
        super().__init__(f"sqlite:///{self.file}")

    async def enqueue(self, jobs: int, *, bulk: bool) -> float:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{self.file}{suffix}").unlink(missing_ok=True)
        async with App(self.url) as app:

            async def submit_all() -> None:
                if not bulk:
                    for n in range(jobs):
                        await app.submit("noop", n)
                    return
                for count in chunks(jobs, BULK):
                    await app.submit_many(app.new_jobs("noop", range(count)))

            return await seconds_async(submit_all)


class PgQueuerSystem(System):
    """PgQueuer: `pgq run` at its defaults."""

    name, store, bulk = "PgQueuer", "PostgreSQL", True

    def __init__(self, url: str) -> None:
        self.url = url

    def worker(self) -> list[str]:
        return [sys.executable, "-m", "bench.peers.pgqueuer_app"]

    def env(self) -> dict[str, str]:
        return {POSTGRES: self.url}

    async def prepare(self) -> None:
        await pgqueuer_install(self.url)

    async def enqueue(self, jobs: int, *, bulk: bool) -> float:
        return await pgqueuer_enqueue(self.url, jobs, bulk=bulk)

    @contextlib.asynccontextmanager
    async def client(self) -> AsyncIterator[Submit]:
        connection = await asyncpg.connect(self.url)
        queries = Queries(AsyncpgDriver(connection))
        try:
            yield lambda: queries.enqueue("noop", None)
        finally:
            await connection.close()


class ProcrastinateSystem(System):
    """Procrastinate: `procrastinate worker` at its defaults; bulk is `batch_defer_async`."""

    name, store, bulk = "Procrastinate", "PostgreSQL", True
    module: Any = None

    def __init__(self, url: str) -> None:
        self.url = url

    def worker(self) -> list[str]:
        return [str(BIN / "procrastinate"), "--app=bench.peers.procrastinate_app.app", "worker"]

    def env(self) -> dict[str, str]:
        return {POSTGRES: self.url}

    async def prepare(self) -> None:
        os.environ[POSTGRES] = self.url
        self.module = importlib.import_module("bench.peers.procrastinate_app")
        async with self.module.app.open_async():
            await self.module.app.schema_manager.apply_schema_async()

    async def enqueue(self, jobs: int, *, bulk: bool) -> float:
        await execute(self.url, "TRUNCATE procrastinate_jobs CASCADE")
        noop = self.module.noop
        async with self.module.app.open_async():

            async def defer_all() -> None:
                if not bulk:
                    for _ in range(jobs):
                        await noop.defer_async()
                    return
                for count in chunks(jobs, BULK):
                    await noop.batch_defer_async(*({} for _ in range(count)))

            return await seconds_async(defer_all)

    @contextlib.asynccontextmanager
    async def client(self) -> AsyncIterator[Submit]:
        async with self.module.app.open_async():
            yield self.module.noop.defer_async


class HueySqlite(System):
    """huey's SqliteHuey: `huey_consumer` at its defaults (no bulk enqueue call)."""

    name, store = "huey", "SQLite"
    module: Any = None

    def __init__(self, folder: Path) -> None:
        self.file = folder / "huey.db"

    def worker(self) -> list[str]:
        return [str(BIN / "huey_consumer"), "bench.peers.huey_app.huey"]

    def env(self) -> dict[str, str]:
        return {SQLITE: str(self.file)}

    async def prepare(self) -> None:
        os.environ[SQLITE] = str(self.file)
        self.module = importlib.import_module("bench.peers.huey_app")

    async def enqueue(self, jobs: int, *, bulk: bool) -> float:
        self.module.huey.flush()
        noop = self.module.noop

        def enqueue_all() -> None:
            for _ in range(jobs):
                noop()

        return seconds(enqueue_all)

    @contextlib.asynccontextmanager
    async def client(self) -> AsyncIterator[Submit]:
        async def submit() -> None:
            self.module.noop()

        yield submit
