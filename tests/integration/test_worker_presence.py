"""A worker's row in the registry: beats while idle, then says it stopped; a worker in
virtual time beats only while it holds jobs; a busy worker's beat and lease heartbeat
are one SQLite transaction."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from deadline_polls import until

from backroom import App, JobContext, SimClock, WorkerConfig, run_until_idle
from backroom.core.job import NewJob
from backroom.core.workers import WorkerState
from backroom.runtime.presence import Presence
from backroom.store.memory import MemoryStore
from backroom.store.sqlite.store import SqliteStore

START = 1_700_000_000_000


async def test_an_idle_worker_beats_every_interval_until_it_stops() -> None:
    app = App(store=MemoryStore())
    worker = app.worker(WorkerConfig(worker_id="idle", lease_ms=60, poll_interval_ms=50))
    running = asyncio.create_task(worker.run())

    async def beaten_twice() -> bool:
        records = await app.store.workers()
        return bool(records) and records[0].heartbeat_at >= records[0].info.started_at + 40

    async with app:
        try:
            await until(beaten_twice, "two heartbeats of an idle worker")
            (alive,) = await app.store.workers()
            assert alive.state(app.clock.now()) is WorkerState.ALIVE
            assert alive.info.heartbeat_ms == 20  # a third of the lease
        finally:
            worker.stop()
            await running
        (stopped,) = await app.store.workers()

    assert stopped.state(app.clock.now()) is WorkerState.STOPPED


def test_a_simulated_worker_registers_and_stops_without_ticking_idle() -> None:
    clock = SimClock(START)
    app = App(store=MemoryStore(), clock=clock)

    @app.task("nap")
    async def nap(ctx: JobContext, _: Any) -> None:
        await ctx.clock.sleep(25_000)

    async def scenario() -> tuple[int, int | None]:
        async with app:
            await app.submit("nap", None)
            await run_until_idle(app, WorkerConfig(worker_id="sim", lease_ms=30_000))
            (record,) = await app.store.workers()
            return record.heartbeat_at, record.stopped_at

    heartbeat_at, stopped_at = clock.run(scenario())

    # One beat at start, one 10 s heartbeat interval into the 25 s job, one at 20 s.
    assert heartbeat_at == START + 20_000
    assert stopped_at is not None and stopped_at >= START + 25_000


async def test_a_busy_workers_beat_and_lease_heartbeat_are_one_sqlite_commit(
    tmp_path: Path,
) -> None:
    store = SqliteStore(str(tmp_path / "presence.db"), synchronous="OFF")
    app = App(store=store)
    presence = Presence(store, app.clock, WorkerConfig(worker_id="busy"))
    commits: list[int] = []
    async with app:
        await store.submit(NewJob(task="nap", input=None, run_at=0), app.clock.now())
        (job,) = await store.claim([], 1, "busy", 30_000, app.clock.now())
        store._database.on_commit(lambda: commits.append(1))

        extend = store.heartbeat([job.lease], 30_000, app.clock.now())
        result = await presence.beat_beside(extend)

        (record,) = await store.workers()
    assert result is not None and not result.lost
    assert record.info.worker_id == "busy"
    assert len(commits) == 1
