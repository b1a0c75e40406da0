"""Pickup latency of an idle PostgreSQL worker beside the raw asyncpg floor, with its CPU.

The pickup rounds of `python -m bench.postgres_processing` (`--processes ''` runs them
alone): an idle `backroom worker` picks up one job at a time (`App.submit` to the
handler's start), and one process with three connections does the least any
PostgreSQL queue can (INSERT + NOTIFY to a SKIP LOCKED claim), rounds alternating. A
backroom round also measures the CPU its pickups cost: the worker's (start-up
included) and its database's backends' (the submitter's too), in ms a pickup.
"""

from __future__ import annotations

import asyncio
import os
import statistics
from dataclasses import dataclass, field

from backroom import App
from bench.postgres_peers import raw_pickup
from bench.postgres_support import Server
from bench.postgres_throughput import backroom_pickup, latency_row, percentile
from bench.process_cpu import CpuUse, cpu_of


@dataclass
class Pickups:
    """Pickup latencies (ms) by row, and the CPU (ms) of each backroom pickup by round."""

    latencies: dict[str, list[float]]
    cpu: list[CpuUse] = field(default_factory=list)


async def pickups(server: Server, rounds: int, samples: int) -> Pickups:
    """Pickup latencies of an idle backroom worker and of the raw asyncpg floor (INSERT
    + NOTIFY to a SKIP LOCKED claim), `samples` of each a round, alternating, with the
    CPU a backroom pickup cost its worker and its database; each round's figures and
    the load average printed as it ends."""
    found = Pickups({PICKUP: [], FLOOR: []})
    async with server.scratch("proc_pickup") as url:
        async with App(url):
            pass  # create the schema
        for number in range(rounds):
            load = os.getloadavg()[0]
            mine, cpu = await asyncio.to_thread(_pickups_with_cpu, url, samples)
            floor = await raw_pickup(url, samples)
            found.latencies[PICKUP] += mine
            found.latencies[FLOOR] += floor
            found.cpu.append(cpu)
            print(
                f"pickup round {number + 1}: backroom p50 {statistics.median(mine):.2f} ms,"
                f" p99 {percentile(mine, 0.99):.2f} ms, CPU a pickup {_per_pickup(cpu)};"
                f" floor p50 {statistics.median(floor):.2f} ms, p99"
                f" {percentile(floor, 0.99):.2f} ms; load {load:.1f} -> {os.getloadavg()[0]:.1f}",
                flush=True,
            )
    return found


def _pickups_with_cpu(url: str, samples: int) -> tuple[list[float], CpuUse]:
    """`backroom_pickup`'s latencies, and the CPU per pickup (ms) of its worker (start-up
    included) and of its database's backends (the submitter's too)."""
    latencies: list[float] = []
    used = cpu_of(
        lambda: latencies.extend(asyncio.run(backroom_pickup(url, samples))),
        url.rsplit("/", 1)[1],
    )
    per_pickup = 1000 / len(latencies)
    return latencies, CpuUse(used.workers * per_pickup, used.backends * per_pickup)


def _per_pickup(cpu: CpuUse) -> str:
    return f"worker {cpu.workers:.2f} ms, database {cpu.backends:.2f} ms"


PICKUP = "backroom: `App.submit` to handler start, idle worker (LISTEN/NOTIFY)"
FLOOR = "raw asyncpg floor: INSERT + NOTIFY to a SKIP LOCKED claim, one process"


def pickup_report(found: Pickups) -> list[str]:
    """Markdown: p50, p99 and max of each pickup row, then the CPU a backroom pickup
    cost (the median of the rounds)."""
    lines = [
        "| pickup latency | p50 | p99 | max | samples |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    lines += [latency_row(name, values) for name, values in found.latencies.items()]
    median = CpuUse(
        statistics.median(cpu.workers for cpu in found.cpu),
        statistics.median(cpu.backends for cpu in found.cpu),
    )
    return [*lines, "", f"CPU a backroom pickup: {_per_pickup(median)}"]
