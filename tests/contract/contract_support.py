"""What the contract tests share: a `Backend` to open stores, and builders of jobs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from backroom.core.idempotency import fingerprint
from backroom.core.job import ErrorInfo, Job, NewJob
from backroom.store.protocol import Store

T0 = 1_700_000_000_000
"""The time every contract test starts at (epoch milliseconds)."""

LEASE_MS = 30_000
WORKER = "worker-1"
BOOM = ErrorInfo("RuntimeError", "boom")


class Backend:
    """Opens stores on the one database a contract test uses, and closes them after."""

    def __init__(self, factory: Callable[[], Store]) -> None:
        self._factory = factory
        self._opened: list[Store] = []

    async def open(self) -> Store:
        """Another store on the test's database, migrated."""
        store = self._factory()
        self._opened.append(store)
        await store.migrate()
        return store

    async def close_all(self) -> None:
        """Close every store this backend opened."""
        for store in self._opened:
            await store.close()


def new_job(
    task: str = "summarize", payload: Any = None, *, run_at: int = T0, **options: Any
) -> NewJob:
    """A submission of `task`; with a `key`, fingerprinted from task and payload."""
    payload = {"doc": 1} if payload is None else payload
    key = options.pop("key", None)
    return NewJob(
        task=task,
        input=payload,
        run_at=run_at,
        idempotency_key=key,
        fingerprint=None if key is None else fingerprint(task, payload),
        **options,
    )


async def submit(store: Store, now: int = T0, **fields: Any) -> Job:
    """Submit one new job (see `new_job`) and return it."""
    result = await store.submit(new_job(**fields), now)
    return result.job


async def running(store: Store, now: int = T0, **fields: Any) -> Job:
    """Submit one job and claim it at `now`; the only queued job must be it."""
    job = await submit(store, now, **fields)
    (claimed,) = await store.claim([], 1, WORKER, LEASE_MS, now)
    assert claimed.id == job.id
    return claimed
