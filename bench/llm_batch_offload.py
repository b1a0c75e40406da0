"""Batch offload: 10,000 `llm.respond` jobs of the `batch` queue through the Batch API.

    python -m bench.llm_batch_offload [--jobs 10000] [--database URL ...]
        [--server postgresql://postgres@127.0.0.1:5432] [--admin-db test]

One worker (in this process, concurrency 256) offloads every job to the mock's Batch
API (in a thread of this process); the batcher flushes at 1,000 jobs or 60 s, the
poller starts at 0.5 s. The mock's batches complete only once every job is in flight
(its clock is moved on then). Printed: the provider requests by kind (file uploads,
batch creations, polls, result downloads) and per 1,000 jobs; what the jobs cost at
the batch price against the same usage at the online price; this process's RSS growth
while every job is in flight (worker, batcher and the mock's copy of the uploaded
files: an upper bound of the batcher's own); and the write-back throughput: jobs ended
per second while the poller ends batches (download, parse, settle and finish, summed
over batches), and the hand-off throughput: jobs handed to the batcher per second until
every one is in a provider batch. Without `--database`, a scratch PostgreSQL database on
`--server`, then a scratch SQLite file.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from decimal import Decimal
from typing import Any

import httpx2

from backroom import App, WorkerConfig
from backroom.clock import SystemClock
from backroom.core.job import JobState
from backroom.llm.config import LLMConfig, ModelConfig, ProviderConfig
from backroom.llm.mock.batch_jobs import BatchMockConfig
from backroom.llm.mock.server import MockConfig
from backroom.llm.mock.thread import running_mock
from backroom.llm.pricing import Prices, Usage, cost_usd
from backroom.llm.task import RESPOND_TASK, register_llm_tasks
from backroom.store.protocol import JobFilter
from bench.postgres_support import BULK, Server

PRICES = Prices(Decimal("0.15"), Decimal("0.075"), Decimal("0.60"))  # gpt-4o-mini's
MOCK_DELAY_MS = 3_600_000
BATCH = {"default": "batch-queue", "flush_jobs": 1_000, "flush_after_s": 60}
BATCH |= {"poll_first_s": Decimal("0.5"), "poll_max_s": 2, "hold_s": 300}


def rss_kib() -> int:
    """This process's resident memory, KiB."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def request_kind(request: httpx2.Request) -> str:
    """What a provider request was for."""
    path, method = request.url.path, request.method
    if path.endswith("/files"):
        return "file uploads"
    if path.endswith("/content"):
        return "result downloads"
    if path.endswith("/batches"):
        return "batch creations" if method == "POST" else "batch lists"
    return "cancels" if path.endswith("/cancel") else "polls"


class LateClock(SystemClock):
    """The system clock, moved on by `skip_ms` at will: the mock's batches complete when
    the benchmark says so, once every job is in flight."""

    def __init__(self) -> None:
        self.skip_ms = 0

    def now(self) -> int:
        """The system time plus what was skipped."""
        return super().now() + self.skip_ms


def timed_finish(poller: Any, spans: list[float]) -> None:
    """Time each batch the poller ends (results read, jobs ended, batch closed)."""
    finish: Callable[..., Awaitable[None]] = poller._finish

    async def timed(*args: Any) -> None:
        started = time.perf_counter()
        await finish(*args)
        spans.append(time.perf_counter() - started)

    poller._finish = timed


async def run(database: str, jobs: int) -> None:
    """Offload `jobs` jobs on `database` and print what it took."""
    requests: Counter[str] = Counter()

    async def count(request: httpx2.Request) -> None:
        requests[request_kind(request)] += 1

    clock = LateClock()
    batches = BatchMockConfig(delay_ms=MOCK_DELAY_MS)
    with running_mock(MockConfig(batches=batches), clock) as url:
        config = LLMConfig(
            (ProviderConfig("mock", url, models=(ModelConfig("mini", prices=PRICES),)),),
            batch=BATCH,
        )
        app = App(database)
        clients = {"mock": lambda: httpx2.AsyncClient(event_hooks={"request": [count]})}
        respond = register_llm_tasks(app, config, http_clients=clients)
        assert respond.offload is not None
        spans: list[float] = []
        timed_finish(respond.offload.poller, spans)
        async with app:
            for first in range(0, jobs, BULK):
                payloads = [
                    {"model": "mini", "input": f"Summarise ticket {n}: " + "the printer jams " * 8}
                    for n in range(first, min(first + BULK, jobs))
                ]
                await app.submit_many(
                    [app.new_job(RESPOND_TASK, p, tenant="acme", queue="batch") for p in payloads]
                )
            before = rss_kib()
            peak = before
            worker = app.worker(WorkerConfig(concurrency=256, poll_interval_ms=50))
            started = time.perf_counter()
            running = asyncio.create_task(worker.run())
            while await in_flight(app) < jobs:
                await asyncio.sleep(0.2)
                peak = max(peak, rss_kib())
            handed = time.perf_counter() - started
            clock.skip_ms = MOCK_DELAY_MS  # every batch completes now
            # Counting the jobs left reads the whole jobs table: only once the poller has
            # ended as many batches as were created, so as not to slow the write-back.
            while len(spans) < requests["batch creations"] or await left(app):
                await asyncio.sleep(0.2)
            elapsed = time.perf_counter() - started
            worker.stop()
            await running
            done = await app.list_jobs(JobFilter(limit=jobs))
        rate, load = jobs / handed, os.getloadavg()[0]
        print(f"every job handed off in {handed:.1f} s: {rate:,.0f} jobs/s, load {load:.1f}")
        report(done, requests, spans, peak - before, elapsed)


async def in_flight(app: App) -> int:
    """How many jobs wait in batches the provider has."""
    batches = await app.store.provider_batches()
    return sum(batch.counts.total for batch in batches if batch.provider_batch_id)


async def left(app: App) -> int:
    """How many jobs are not finished."""
    counts = await app.store.job_counts(app.clock.now())
    return sum(count.jobs for count in counts if not count.state.terminal)


def report(
    done: list[Any], requests: Counter[str], spans: list[float], grown: int, s: float
) -> None:
    """Print the figures of one run."""
    jobs = len(done)
    states = Counter(str(job.state) for job in done)
    usage = [job.result["usage"] for job in done if job.state is JobState.SUCCEEDED]
    paid = sum(Decimal(u["cost_usd"]) for u in usage)
    online = sum(
        cost_usd(Usage(u["input_tokens"], u["cached_tokens"], u["output_tokens"]), PRICES)
        for u in usage
    )
    print(f"{jobs} jobs in {s:.1f} s: {dict(states)}; load average {os.getloadavg()[0]:.1f}")
    for kind, number in sorted(requests.items()):
        print(f"  {kind:18} {number:6}  ({number * 1000 / jobs:.2f} per 1,000 jobs)")
    print(f"  cost: ${paid:f} at the batch price, ${online:f} online: {paid / online:.3f}x")
    print(f"  RSS growth with every job in flight: {grown / 1024:.1f} MiB")
    spent = sum(spans)
    print(f"  write-back: {jobs / spent:,.0f} jobs/s ({len(spans)} batches, {spent:.2f} s)")


def main() -> None:
    """Parse the arguments and run."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument(
        "--database",
        action="append",
        help="a database URL, repeatable (default: scratch PostgreSQL, then scratch SQLite)",
    )
    parser.add_argument("--server", default="postgresql://postgres@127.0.0.1:5432")
    parser.add_argument("--admin-db", default="test")
    args = parser.parse_args()
    for url in args.database or ():
        asyncio.run(run(url, args.jobs))
    if args.database:
        return

    async def scratch() -> None:
        async with Server(args.server, args.admin_db).scratch("bench_batch") as url:
            print("PostgreSQL")
            await run(url, args.jobs)
        with tempfile.TemporaryDirectory() as directory:
            print("SQLite")
            await run(f"sqlite:///{directory}/bench.db", args.jobs)

    asyncio.run(scratch())


if __name__ == "__main__":
    main()
