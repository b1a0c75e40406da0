"""Webhook delivery to a loopback receiver, on SQLite and on PostgreSQL, one worker loop.

    python -m bench.webhook_delivery [--jobs 2000] [--paced 200] [--rate 50]
        [--concurrency 200] [--backend sqlite|postgres|both]
        [--server postgresql://postgres@127.0.0.1:5432] [--admin-db test]

One process runs what `backroom worker` runs: one worker loop with the webhook
dispatcher beside it (`install_webhooks`, `alongside`), sending to a receiver process
(`bench.hook_sink`, httptools, answers 204) through a tenant's subscription to
`job.succeeded`. Two phases on each backend, in a fresh database (SQLite: a temporary
file; PostgreSQL: a scratch database, dropped after):
- burst: `--jobs` no-op jobs submitted at once, then the worker started; deliveries/s
  from the first request received to the last, and the job-finished to received latency
  (which here includes waiting behind the whole backlog);
- paced: `--paced` jobs submitted one at a time at `--rate` per second to the idle,
  running worker; the job-finished to received latency a receiver sees in steady state
  (`--paced 0`: no paced phase).
Latency is the job's stored `finished_at` (ms) against the receiver's wall clock at the
request's last byte: one machine, one clock, so it is good to about a millisecond.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backroom import App, JobContext
from backroom.runtime.worker_config import WorkerConfig
from backroom.service.callers import Caller
from backroom.service.webhooks import SubscriptionRequest, create_subscription
from backroom.webhooks.runtime import WebhookSettings, install_webhooks
from backroom.webhooks.targets import TargetPolicy
from bench.postgres_support import BULK, ROOT, Server

LOOPBACK = TargetPolicy.from_setting("127.0.0.1")
TENANT = "bench"
WAIT_S = 300.0


class Receiver:
    """The receiver process, and the (job id, received ns) pairs it has reported.

    Its reports are read on the event loop being measured, not in a thread: a thread
    woken by every report took the interpreter lock from the loop (~15% of its samples).
    """

    def __init__(self, process: asyncio.subprocess.Process, port: int) -> None:
        self._process = process
        self.port = port
        self.received: dict[int, int] = {}
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def start(cls) -> Receiver:
        """Start the receiver process; once it listens, the receiver."""
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bench.hook_sink",
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert process.stdout is not None
        port = int((await process.stdout.readline()).split()[1])
        return cls(process, port)

    async def _read(self) -> None:
        assert self._process.stdout is not None
        async for line in self._process.stdout:
            job_id, received = line.split()
            self.received[int(job_id)] = int(received)

    async def wait_for(self, job_ids: list[int]) -> None:
        """Until every job's webhook has arrived (a deadline, not a sleep, bounds it)."""
        deadline = time.monotonic() + WAIT_S
        while missing := sum(job_id not in self.received for job_id in job_ids):
            if time.monotonic() > deadline:
                raise SystemExit(f"{missing} of {len(job_ids)} webhooks never arrived")
            await asyncio.sleep(0.05)

    async def stop(self) -> None:
        """Close its stdin: it stops listening and exits."""
        assert self._process.stdin is not None
        self._process.stdin.close()
        await asyncio.wait_for(self._process.wait(), 30)
        await asyncio.wait_for(self._reader, 30)


@dataclass(frozen=True)
class Phase:
    """What one phase measured."""

    name: str
    deliveries: int
    rate: float
    latencies_ms: list[float]

    def row(self, backend: str) -> str:
        """A markdown table row."""
        cuts = statistics.quantiles(self.latencies_ms, n=100, method="inclusive")
        return (
            f"| {backend} | {self.name} | {self.deliveries:,} | {self.rate:,.0f} "
            f"| {cuts[49]:.0f} | {cuts[98]:.0f} | {max(self.latencies_ms):.0f} |"
        )


async def noop(ctx: JobContext, payload: Any) -> None:
    """Do nothing: the benchmark measures the deliveries, not the work."""


async def measure(app: App, receiver: Receiver, job_ids: list[int], name: str) -> Phase:
    """Wait for every job's webhook, then compare stored finish times with receipts."""
    await receiver.wait_for(job_ids)
    latencies = []
    for job_id in job_ids:
        finished = (await app.get(job_id)).finished_at
        assert finished is not None
        latencies.append(receiver.received[job_id] / 1e6 - finished)
    receipts = [receiver.received[job_id] for job_id in job_ids]
    span_s = (max(receipts) - min(receipts)) / 1e9
    rate = (len(job_ids) - 1) / span_s if span_s > 0 else float("nan")
    return Phase(name, len(job_ids), rate, latencies)


async def burst(app: App, jobs: int) -> list[int]:
    """Submit `jobs` no-op jobs in bulk; their ids."""
    ids = []
    for first in range(0, jobs, BULK):
        last = min(first + BULK, jobs)
        batch = [app.new_job("noop", n, tenant=TENANT) for n in range(first, last)]
        ids += [result.job.id for result in await app.submit_many(batch)]
    return ids


async def paced(app: App, jobs: int, rate: float) -> list[int]:
    """Submit `jobs` no-op jobs one at a time, `rate` per second; their ids."""
    ids = []
    for n in range(jobs):
        ids.append((await app.submit("noop", n, tenant=TENANT)).job.id)
        await asyncio.sleep(1 / rate)
    return ids


async def run(url: str, args: argparse.Namespace) -> list[Phase]:
    """Both phases against the database at `url`."""
    receiver = await Receiver.start()
    app = App(url)
    app.task("noop")(noop)
    try:
        async with app:
            hooks = install_webhooks(app, WebhookSettings(policy=LOOPBACK))
            target = SubscriptionRequest(
                f"http://127.0.0.1:{receiver.port}/hook", ["job.succeeded"]
            )
            reply = await create_subscription(app, Caller(TENANT), target, LOOPBACK)
            assert reply.status == 201, reply.body
            burst_ids = await burst(app, args.jobs)
            worker = app.worker(WorkerConfig(concurrency=args.concurrency))
            running = asyncio.create_task(hooks.alongside(worker.run()))
            try:
                phases = [await measure(app, receiver, burst_ids, "burst")]
                if args.paced > 0:
                    paced_ids = await paced(app, args.paced, args.rate)
                    phase = await measure(app, receiver, paced_ids, f"paced {args.rate:g}/s")
                    phases.append(phase)
            finally:
                worker.stop()
                await running
    finally:
        await receiver.stop()
    return phases


async def on_sqlite(args: argparse.Namespace) -> list[Phase]:
    """Both phases on a fresh SQLite file."""
    with tempfile.TemporaryDirectory() as folder:
        return await run(f"sqlite:///{Path(folder) / 'bench.db'}", args)


async def on_postgres(args: argparse.Namespace) -> list[Phase]:
    """Both phases on a scratch PostgreSQL database."""
    async with Server(args.server, args.admin_db).scratch("bench_webhooks") as url:
        return await run(url, args)


def main() -> None:
    """Run the chosen backends and print a markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2_000)
    parser.add_argument("--paced", type=int, default=200)
    parser.add_argument("--rate", type=float, default=50.0)
    parser.add_argument("--concurrency", type=int, default=200)
    parser.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--server", default="postgresql://postgres@127.0.0.1:5432")
    parser.add_argument("--admin-db", default="test")
    args = parser.parse_args()
    results: list[tuple[str, Phase]] = []
    if args.backend in ("sqlite", "both"):
        results += [("SQLite", phase) for phase in asyncio.run(on_sqlite(args))]
    if args.backend in ("postgres", "both"):
        results += [("PostgreSQL", phase) for phase in asyncio.run(on_postgres(args))]
    print(f"webhook deliveries, 1 worker loop, concurrency {args.concurrency}\n")
    print("| backend | phase | deliveries | deliveries/s | p50 ms | p99 ms | max ms |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for backend, phase in results:
        print(phase.row(backend))


if __name__ == "__main__":
    main()
