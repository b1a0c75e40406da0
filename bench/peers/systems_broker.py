"""The systems on a broker: Celery and Dramatiq on RabbitMQ (their default broker), RQ,
arq and SAQ on Redis (their only one). Each Redis system has a database number of its
own, emptied with FLUSHDB before each enqueue."""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import AsyncIterator
from typing import Any

import redis
from arq import create_pool
from arq.connections import RedisSettings
from rq import Queue as RqQueue
from saq import Queue as SaqQueue

from bench.peers.env import REDIS
from bench.peers.marks import mark
from bench.peers.system import BIN, Submit, System, chunks, seconds, seconds_async
from bench.postgres_support import BULK

REDIS_SERVER = "redis://127.0.0.1:6379"


class SyncClientSystem(System):
    """A system whose client is synchronous: `send()` enqueues one job."""

    def send(self) -> object:
        """Enqueue one no-op job."""
        raise NotImplementedError

    def empty(self) -> None:
        """Drop every queued job."""
        raise NotImplementedError

    def send_many(self, count: int) -> None:
        """Enqueue `count` jobs in one call (systems with `bulk`)."""
        raise NotImplementedError

    async def enqueue(self, jobs: int, *, bulk: bool) -> float:
        self.empty()

        def enqueue_all() -> None:
            if bulk:
                for count in chunks(jobs, BULK):
                    self.send_many(count)
                return
            for _ in range(jobs):
                self.send()

        return seconds(enqueue_all)

    @contextlib.asynccontextmanager
    async def client(self) -> AsyncIterator[Submit]:
        async def submit() -> None:
            self.send()

        yield submit


class CelerySystem(SyncClientSystem):
    """Celery: `celery worker` at its defaults (prefork, one child per core)."""

    name, store = "Celery", "RabbitMQ"
    module: Any = None

    def worker(self) -> list[str]:
        return [str(BIN / "celery"), "-A", "bench.peers.celery_app", "worker"]

    async def prepare(self) -> None:
        self.module = importlib.import_module("bench.peers.celery_app")

    def empty(self) -> None:
        self.module.app.control.purge()

    def send(self) -> object:
        return self.module.noop.delay()


class DramatiqSystem(SyncClientSystem):
    """Dramatiq: `dramatiq` at its defaults (a process per core, 8 threads each)."""

    name, store = "Dramatiq", "RabbitMQ"
    module: Any = None

    def worker(self) -> list[str]:
        return [str(BIN / "dramatiq"), "bench.peers.dramatiq_app"]

    async def prepare(self) -> None:
        self.module = importlib.import_module("bench.peers.dramatiq_app")

    def empty(self) -> None:
        # A fresh connection each round: the runner does not serve pika's heartbeats
        # between rounds, so RabbitMQ closes an idle one.
        broker = self.module.broker
        broker.close()
        del broker.connection
        broker.flush_all()

    def send(self) -> object:
        return self.module.noop.send()


class RqSystem(SyncClientSystem):
    """RQ: `rq worker` at its defaults (a forked work horse per job); bulk is
    `Queue.enqueue_many`."""

    name, store, bulk = "RQ", "Redis", True

    def __init__(self, database: int) -> None:
        self.url = f"{REDIS_SERVER}/{database}"
        self.redis: Any = redis.Redis.from_url(self.url)
        self.queue: Any = RqQueue(connection=self.redis)

    def worker(self) -> list[str]:
        return [str(BIN / "rq"), "worker", "--url", self.url]

    def empty(self) -> None:
        self.redis.flushdb()

    def send(self) -> object:
        return self.queue.enqueue(mark)

    def send_many(self, count: int) -> None:
        self.queue.enqueue_many([RqQueue.prepare_data(mark) for _ in range(count)])

    async def close(self) -> None:
        self.redis.close()


class RedisAsyncSystem(System):
    """A system with an asyncio client on a Redis database of its own (no bulk call)."""

    store = "Redis"
    redis: Any = None
    """The client's Redis connection, while `client()` is open."""

    def __init__(self, database: int) -> None:
        self.url = f"{REDIS_SERVER}/{database}"

    def env(self) -> dict[str, str]:
        return {REDIS: self.url}

    async def enqueue(self, jobs: int, *, bulk: bool) -> float:
        async with self.client() as submit:
            await self.redis.flushdb()

            async def enqueue_all() -> None:
                for _ in range(jobs):
                    await submit()

            return await seconds_async(enqueue_all)


class ArqSystem(RedisAsyncSystem):
    """arq: the `arq` worker at its defaults (10 jobs at once, a 0.5 s poll)."""

    name = "arq"

    def worker(self) -> list[str]:
        return [str(BIN / "arq"), "bench.peers.arq_app.WorkerSettings"]

    @contextlib.asynccontextmanager
    async def client(self) -> AsyncIterator[Submit]:
        pool = self.redis = await create_pool(RedisSettings.from_dsn(self.url))
        try:
            yield lambda: pool.enqueue_job("noop")
        finally:
            await pool.aclose()


class SaqSystem(RedisAsyncSystem):
    """SAQ: the `saq` worker at its defaults (10 jobs at once)."""

    name = "SAQ"

    def worker(self) -> list[str]:
        return [str(BIN / "saq"), "bench.peers.saq_app.settings"]

    @contextlib.asynccontextmanager
    async def client(self) -> AsyncIterator[Submit]:
        queue = SaqQueue.from_url(self.url)
        await queue.connect()
        self.redis = queue.redis
        try:
            yield lambda: queue.enqueue("noop")
        finally:
            await queue.disconnect()
