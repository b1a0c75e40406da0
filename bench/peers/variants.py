"""backroom's own worker at its defaults beside variants of its options, as the peers run it.

    python -m bench.peers.variants [--jobs 10000] [--rounds 3] [--stores postgres,sqlite]
        [--variants defaults,tuned,...] [--out build/peers-variants]

Where a gap between `backroom worker` at its defaults and a tuned worker goes: each
variant is the same worker command with some options changed (the log level or format,
the concurrency), started on a queue of `--jobs` no-op jobs enqueued in bulk beforehand,
its handlers marking their start as in `bench.peers.run`. The variants take turns in an
order rotated round by round; printed: each variant's median rate (first handler start
to last) and spread, its median same-round ratio to the defaults, the bytes it logged
per job, and the load average.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import tempfile
from pathlib import Path

from backroom import App
from bench.peers import marks
from bench.peers.measure import start_worker, stop_worker, wait_for
from bench.peers.system import BIN, System, chunks, seconds_async
from bench.postgres_support import BULK, ROOT, Server, execute
from bench.postgres_throughput import BACKROOM_TABLES

VARIANTS: dict[str, list[str]] = {
    "defaults": [],
    "warning": ["--log-level", "warning"],
    "json": ["--log-json"],
    "c10": ["--concurrency", "10"],
    "c200": ["--concurrency", "200"],
    "tuned": ["--concurrency", "200", "--log-level", "warning"],
    "c500": ["--concurrency", "500"],
    "c1000": ["--concurrency", "1000"],
    "before": [],
}
"""Each variant's options; "before" runs the defaults of the code at `--before` instead."""


class Variant(System):
    """`backroom worker` on one store with `options` added to its command."""

    name = "backroom"

    def __init__(self, store: str, url: str, options: list[str], source: str) -> None:
        self.store, self.url, self.options, self.source = store, url, options, source

    def worker(self) -> list[str]:
        app = ["--app", "bench.peers.backroom_app:app"]
        command = [str(BIN / "backroom"), "worker", *app, "--db", self.url, *self.options]
        # The runner sets PYTHONPATH for the bench package: the source goes before it.
        return ["env", f"PYTHONPATH={self.source}:{ROOT}", *command] if self.source else command

    async def enqueue(self, jobs: int, *, bulk: bool) -> float:
        return await seconds_async(lambda: fill(self.url, jobs, fresh=True))


async def fill(url: str, jobs: int, *, fresh: bool) -> None:
    """Submit `jobs` no-op jobs in bulk, into an emptied store if `fresh`."""
    file = url.removeprefix("sqlite:///") if url.startswith("sqlite") else None
    for suffix in ("", "-wal", "-shm") if fresh and file else ():
        Path(f"{file}{suffix}").unlink(missing_ok=True)
    async with App(url) as app:
        if fresh and file is None:
            await execute(url, BACKROOM_TABLES)
        for count in chunks(jobs, BULK):
            await app.submit_many(app.new_jobs("noop", range(count)))


async def one_run(variant: Variant, jobs: int, folder: Path) -> tuple[float, float]:
    """(jobs/s from the first handler start to the last, log bytes per job)."""
    await variant.enqueue(jobs, bulk=True)
    ran, logged = await drain(variant, jobs, folder)
    return jobs / max((max(ran) - min(ran)) / 1e9, 1e-9), logged


async def drain(variant: Variant, jobs: int, folder: Path) -> tuple[list[int], float]:
    """Start the variant's worker on what is queued; the handlers' start times (ns) of
    `jobs` jobs, and the bytes it logged per job."""
    marks_file, log = folder / "variant.marks", folder / "variant.log"
    marks_file.unlink(missing_ok=True)
    log.unlink(missing_ok=True)
    worker = start_worker(variant, marks_file, log)
    try:
        await wait_for(marks_file, jobs, max(300.0, jobs / 5), worker, log)
        ran = marks.read(marks_file)[:jobs]
    finally:
        stop_worker(worker)
    return ran, log.stat().st_size / jobs


async def stores(
    stack: contextlib.AsyncExitStack, args: argparse.Namespace, name: str
) -> tuple[Path, dict[str, str]]:
    """A scratch folder and the URL of each store (a SQLite file in the folder, a scratch
    PostgreSQL database), removed when `stack` closes."""
    folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix=f"{name}-")))
    urls = {"sqlite": f"sqlite:///{folder / f'{name}.db'}"}
    if "postgres" in args.stores:
        server = Server(args.server, args.admin_db)
        urls["postgres"] = await stack.enter_async_context(server.scratch(f"peers_{name}"))
    return folder, urls


def store_options(parser: argparse.ArgumentParser) -> None:
    """The options of the stores and of the code the worker runs."""
    parser.add_argument("--stores", default="postgres,sqlite")
    parser.add_argument("--source", default="", help="run this copy of src/ (default: installed)")
    parser.add_argument("--server", default="postgresql://postgres@127.0.0.1:5432")
    parser.add_argument("--admin-db", default="test")


async def run(args: argparse.Namespace) -> None:
    """Every round of every variant on every store, then the table."""
    chosen = {name: VARIANTS[name] for name in args.variants.split(",")}
    rates: dict[tuple[str, str], list[float]] = {}
    logged: dict[tuple[str, str], float] = {}
    loads: list[float] = []
    async with contextlib.AsyncExitStack() as stack:
        folder, urls = await stores(stack, args, "variants")
        names = list(chosen)
        for round_number in range(args.rounds):
            shift = round_number % len(names)
            for store in args.stores.split(","):
                for name in names[shift:] + names[:shift]:
                    loads.append(os.getloadavg()[0])
                    source = args.before if name == "before" else args.source
                    variant = Variant(store, urls[store], chosen[name], source)
                    rate, per_job = await one_run(variant, args.jobs, folder)
                    rates.setdefault((store, name), []).append(rate)
                    logged[(store, name)] = per_job
                    print(f"round {round_number + 1} {store} {name}: {rate:,.0f} jobs/s")
    report(rates, logged, loads, args)


def report(
    rates: dict[tuple[str, str], list[float]],
    logged: dict[tuple[str, str], float],
    loads: list[float],
    args: argparse.Namespace,
) -> None:
    """The markdown table: median, spread, ratio to the defaults of the same round."""
    load = f"{statistics.median(loads):.1f} ({min(loads):.1f}-{max(loads):.1f})"
    print(f"\n{args.jobs:,} jobs, {args.rounds} round(s), load average (1 min) {load}\n")
    print("| store | variant | jobs/s (median) | min - max | vs defaults, same round | log B/job |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for (store, name), values in rates.items():
        base = rates.get((store, "defaults"), values)
        ratio = statistics.median(value / ref for value, ref in zip(values, base, strict=False))
        print(
            f"| {store} | {name} | {statistics.median(values):,.0f} | {min(values):,.0f} - "
            f"{max(values):,.0f} | {ratio:.2f}x | {logged[(store, name)]:.0f} |"
        )


def main() -> None:
    """Parse the options and run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--before", default="", help="the src/ the 'before' variant runs")
    store_options(parser)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    os.chdir(ROOT)
    main()
