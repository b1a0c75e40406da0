"""One system, one round: enqueue, bulk enqueue, processing and idle pickup latency, with
the system's worker started as its users start it, in processes of its own."""

from __future__ import annotations

import contextlib
import os
import signal
import statistics
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from backroom.clock import SystemClock
from bench.peers import marks
from bench.peers.system import System
from bench.postgres_support import ROOT
from bench.postgres_throughput import percentile

PICKUP_GAP_MS = 50
"""The pause before each pickup sample, so that the worker is idle when the job comes."""


@dataclass
class Figures:
    """One system's figures in one round: rates in jobs/s, latencies in ms."""

    enqueue: float
    bulk: float | None
    process: float
    process_wall: float
    p50: float
    p99: float
    load: float

    def as_dict(self) -> dict[str, float | None]:
        """The figures by name, for the results file."""
        return asdict(self)


def start_worker(system: System, marks_file: Path, log: Path) -> subprocess.Popen[bytes]:
    """The system's worker, in a process group of its own, logging to `log`."""
    env = {**os.environ, **system.env(), marks.ENV: str(marks_file), "PYTHONPATH": str(ROOT)}
    with log.open("ab") as output:
        return subprocess.Popen(
            system.worker(),
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )


def stop_worker(worker: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the worker's process group (its children too), SIGKILL after 20 s."""
    if worker.poll() is None:
        os.killpg(worker.pid, signal.SIGTERM)
        try:
            worker.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()
    with contextlib.suppress(ProcessLookupError):  # a child outlived its parent
        os.killpg(worker.pid, signal.SIGKILL)


async def wait_for(
    marks_file: Path, target: int, deadline_s: float, worker: subprocess.Popen[bytes], log: Path
) -> None:
    """Wait until `target` handlers have started; fail if the worker dies or time runs out."""
    clock, poll_ms = SystemClock(), 1 if target < 50 else 20
    deadline = time.perf_counter() + deadline_s
    while marks.count(marks_file) < target:
        if worker.poll() is not None:
            raise RuntimeError(f"the worker exited ({worker.returncode}): see {log}")
        if time.perf_counter() > deadline:
            found = marks.count(marks_file)
            raise RuntimeError(f"{found} of {target} jobs ran in {deadline_s:.0f} s: see {log}")
        await clock.sleep(poll_ms)


async def pickups(
    system: System, first: int, samples: int, worker: subprocess.Popen[bytes], paths: list[Path]
) -> list[float]:
    """Milliseconds from calling the client's submit to the handler's start, one at a time."""
    marks_file, log = paths
    clock, latencies = SystemClock(), []
    async with system.client() as submit:
        for _ in range(samples):
            await clock.sleep(PICKUP_GAP_MS)
            # Counted now, not from `first`: a peer that ran a job of the backlog twice
            # (SAQ has, under load) wrote more marks than it had jobs.
            before = max(first, marks.count(marks_file))
            submitted = time.perf_counter_ns()
            await submit()
            await wait_for(marks_file, before + 1, 60, worker, log)
            started = marks.read(marks_file, before)[0]
            latencies.append((started - submitted) / 1e6)
    return latencies


async def measure(system: System, jobs: int, samples: int, folder: Path) -> Figures:
    """Every figure of `system` in one round; its worker stopped at the end."""
    load = os.getloadavg()[0]
    bulk = jobs / await system.enqueue(jobs, bulk=True) if system.bulk else None
    enqueue = jobs / await system.enqueue(jobs, bulk=False)  # leaves `jobs` queued
    marks_file = folder / f"{system.name}-{system.store}.marks"
    log = folder / f"{system.name}-{system.store}.log"
    marks_file.unlink(missing_ok=True)
    started = time.perf_counter_ns()
    worker = start_worker(system, marks_file, log)
    try:
        await wait_for(marks_file, jobs, max(300.0, jobs / 5), worker, log)
        ran = marks.read(marks_file)[:jobs]
        latencies = await pickups(system, jobs, samples, worker, [marks_file, log])
    finally:
        stop_worker(worker)
    return Figures(
        enqueue=enqueue,
        bulk=bulk,
        process=jobs / max((max(ran) - min(ran)) / 1e9, 1e-9),
        process_wall=jobs / ((max(ran) - started) / 1e9),
        p50=statistics.median(latencies),
        p99=percentile(latencies, 0.99),
        load=load,
    )
