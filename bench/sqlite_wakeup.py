"""Pickup latency across processes on SQLite, and what an idle worker costs, side by side.

    python -m bench.sqlite_wakeup [--samples 200] [--baseline-samples 20] [--rounds 3]
        [--idle-s 10]

A `backroom worker` process waits on a SQLite file; this process submits one `pickup`
job at a time with `App.submit` and reads when its handler started (the handler
returns `time.perf_counter_ns()`, CLOCK_MONOTONIC, shared by every process on Linux).
Three set-ups, round by round, in alternating order:
- "datagram": the defaults: the submitting process's datagram wakes the worker;
- "watch only": the submitter sends no datagram (as a process of another user could
  not), so the worker notices the commit by its `PRAGMA data_version` check (50 ms);
- "poll only": no datagram and `--watch-interval 0`: the worker finds the job at its
  1 s poll (backroom before issue 13).
- "in-process worker (the floor)": the worker runs in the submitting process and is
  woken directly: what a pickup costs here without crossing processes.
Idle CPU: the worker's user+system time (from /proc/PID/stat) over `--idle-s` seconds
with nothing queued, as a share of one core. The load average is printed with the
figures, since the machine may be shared.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from backroom import App
from backroom.clock import SystemClock
from backroom.runtime.worker_config import WorkerConfig
from backroom.store.sqlite.store import SqliteStore
from bench.noop_app import pickup
from bench.postgres_throughput import percentile

ROOT = Path(__file__).resolve().parent.parent
FLOOR = "in-process worker (the floor)"
VARIANTS = {
    "datagram": ([], True),
    "watch only": ([], False),
    "poll only": (["--watch-interval", "0"], False),
    FLOOR: ([], True),
}
"""Each set-up: the worker's options, and whether the submitter sends datagrams."""


def start_worker(db: Path, options: list[str]) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "backroom", "worker", "--app", "bench.noop_app:app"]
    return subprocess.Popen(
        [*command, "--db", f"sqlite:///{db}", "--concurrency", "10", *options],
        cwd=ROOT,
        stderr=subprocess.DEVNULL,
    )


async def pickups(app: App, samples: int) -> list[float]:
    """Milliseconds from `App.submit` to the handler's start, `samples` times."""
    clock = SystemClock()
    latencies: list[float] = []
    for _ in range(samples + 1):
        await clock.sleep(20)  # let the worker fall idle again
        submitted = time.perf_counter_ns()
        job = (await app.submit("pickup", None)).job
        while (stored := await app.get(job.id)) is None or stored.result is None:
            await clock.sleep(5)
        latencies.append((stored.result - submitted) / 1e6)
    return latencies[1:]  # the first waited for the worker to start


def cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds the process has used."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def in_process(db: Path, samples: int) -> list[float]:
    """Pickup latencies with the worker in the submitting process (woken directly): the
    floor of a SQLite pickup on this machine, two commits (submit, claim) and a hop."""
    app = App(store=SqliteStore(str(db)))
    app.task("pickup")(pickup)
    async with app:
        worker = app.worker(WorkerConfig(concurrency=10))
        running = asyncio.create_task(worker.run())
        try:
            return await pickups(app, samples)
        finally:
            worker.stop()
            await running


async def measure(db: Path, name: str, samples: int, idle_s: float) -> tuple[list[float], float]:
    """(pickup latencies in ms, idle CPU share of one core) for one set-up."""
    if name == FLOOR:
        return await in_process(db, samples), 0.0
    options, datagrams = VARIANTS[name]
    worker = start_worker(db, options)
    try:
        store = SqliteStore(str(db))
        if not datagrams:
            store._wake_sockets = None  # the submitter stays silent, as before issue 13
        async with App(store=store) as app:
            latencies = await pickups(app, samples)
        before, started = cpu_seconds(worker.pid), time.perf_counter()
        await SystemClock().sleep(idle_s * 1000)
        idle = (cpu_seconds(worker.pid) - before) / (time.perf_counter() - started)
    finally:
        worker.terminate()
        worker.wait()
    return latencies, idle


async def run(samples: int, baseline_samples: int, rounds: int, idle_s: float) -> None:
    latencies: dict[str, list[float]] = {name: [] for name in VARIANTS}
    idle: dict[str, list[float]] = {name: [] for name in VARIANTS}
    p50s: dict[str, list[float]] = {name: [] for name in VARIANTS}
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "jobs.db"
        async with App(f"sqlite:///{db}"):
            pass  # create the schema
        for round_number in range(rounds):
            order = list(VARIANTS) if round_number % 2 == 0 else list(reversed(VARIANTS))
            for name in order:
                count = baseline_samples if name == "poll only" else samples
                found, share = await measure(db, name, count, idle_s)
                latencies[name] += found
                idle[name].append(share)
                p50s[name].append(statistics.median(found))
    print(f"load average {os.getloadavg()[0]:.2f}, {rounds} rounds, alternating")
    print()
    print("| worker | pickup p50 | p99 | max | samples | idle CPU (median) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, values in latencies.items():
        idle_share = "n/a" if name == FLOOR else f"{100 * statistics.median(idle[name]):.2f}%"
        print(
            f"| {name} | {statistics.median(values):.2f} ms | {percentile(values, 0.99):.2f} ms"
            f" | {max(values):.2f} ms | {len(values)} | {idle_share} |"
        )
    ratio = statistics.median(latencies["poll only"]) / statistics.median(latencies["datagram"])
    print()
    print(f"pickup p50, poll only / datagram: {ratio:.0f}x; per-round p50s: {p50s}")


def main() -> None:
    """Measure both workers and print a markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--baseline-samples", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--idle-s", type=float, default=10.0)
    args = parser.parse_args()
    asyncio.run(run(args.samples, args.baseline_samples, args.rounds, args.idle_s))


if __name__ == "__main__":
    main()
