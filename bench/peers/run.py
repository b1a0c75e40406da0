"""backroom beside PgQueuer, Procrastinate, Celery, Dramatiq, SAQ, arq, RQ and huey.

    make bench-peers          (python -m bench.peers.run --docs in build/peers-venv)
    python -m bench.peers.run [--jobs 10000] [--rounds 3] [--samples 100] [--only NAME,...]
        [--out build/peers] [--docs] [--check]

Each system at its defaults, its worker started by its own command in processes of its
own: backroom, PgQueuer and Procrastinate on PostgreSQL (a scratch database each),
backroom's embedded mode and huey on SQLite files, Celery and Dramatiq on RabbitMQ
(their default broker), RQ, arq and SAQ on Redis. In each round every system, in an
order rotated round by round: enqueues `--jobs` no-op jobs in bulk (where it has a call
for that, 1,000 a call), then one by one; its worker starts and runs them (the handler
appends its start time to a file, the same few microseconds in every system); then,
the worker idle, `--samples` jobs are submitted one at a time for the pickup latency.
Written: the figures of every round (results.json), the markdown section and the
chart; with --docs into docs/benchmarks.md and docs/benchmarks-peers.png. With
--check, exit 1 unless every system produced every figure (the CI smoke run).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import tempfile
from pathlib import Path

from bench.peers.measure import measure
from bench.peers.report import missing, write_outputs
from bench.peers.system import System
from bench.peers.systems_broker import ArqSystem, CelerySystem, DramatiqSystem, RqSystem, SaqSystem
from bench.peers.systems_sql import (
    BackroomPostgres,
    BackroomSqlite,
    HueySqlite,
    PgQueuerSystem,
    ProcrastinateSystem,
)
from bench.postgres_support import ROOT, Server

Results = dict[str, list[dict[str, float | None]]]
SYSTEMS = 10


async def systems(stack: contextlib.AsyncExitStack, server: Server, folder: Path) -> list[System]:
    """Every system, each on its own scratch database, file or Redis database number."""
    return [
        BackroomPostgres(await stack.enter_async_context(server.scratch("peers_backroom"))),
        BackroomSqlite(folder),
        PgQueuerSystem(await stack.enter_async_context(server.scratch("peers_pgqueuer"))),
        ProcrastinateSystem(await stack.enter_async_context(server.scratch("peers_procr"))),
        CelerySystem(),
        DramatiqSystem(),
        RqSystem(13),
        ArqSystem(14),
        SaqSystem(15),
        HueySqlite(folder),
    ]


def chosen_by(only: str, name: str) -> bool:
    """Whether `--only` (names or parts of names, comma-separated; empty: all) picks `name`."""
    parts = [part.strip().lower() for part in only.split(",") if part.strip()]
    return not parts or any(part in name.lower() for part in parts)


def label(system: System) -> str:
    """How a system is named in the results: `backroom (PostgreSQL)`."""
    return f"{system.name} ({system.store})"


async def run(args: argparse.Namespace, out: Path) -> Results:
    """Every round of every system; the results file rewritten after each."""
    results: Results = {}
    async with contextlib.AsyncExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="peers-")))
        chosen = [
            system
            for system in await systems(stack, Server(args.server, args.admin_db), folder)
            if chosen_by(args.only, label(system))
        ]
        for system in chosen:
            await system.prepare()
        for round_number in range(args.rounds):
            shift = round_number % len(chosen)
            for system in chosen[shift:] + chosen[:shift]:
                print(f"round {round_number + 1}: {label(system)}", file=sys.stderr, flush=True)
                try:
                    figures = await measure(system, args.jobs, args.samples, out)
                except Exception as error:  # the other systems go on
                    print(f"  {label(system)} failed: {error!r}", file=sys.stderr, flush=True)
                    continue
                results.setdefault(label(system), []).append(figures.as_dict())
                write_results(out, args, results)
        for system in chosen:
            await system.close()
    return results


def write_results(out: Path, args: argparse.Namespace, results: Results) -> None:
    settings = {"jobs": args.jobs, "rounds": args.rounds, "samples": args.samples}
    text = json.dumps({"settings": settings, "results": results}, indent=1)
    (out / "results.json").write_text(text + "\n")


def main() -> None:
    """Run the rounds, then write the section and the chart."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--samples", type=int, default=100, help="pickup samples per round")
    parser.add_argument(
        "--only",
        default="",
        help="run only the systems whose name has one of these (comma-separated)",
    )
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "peers")
    parser.add_argument("--docs", action="store_true", help="write docs/benchmarks.md and PNG")
    parser.add_argument("--check", action="store_true", help="exit 1 if a figure is missing")
    parser.add_argument("--server", default="postgresql://postgres@127.0.0.1:5432")
    parser.add_argument("--admin-db", default="test")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    results = asyncio.run(run(args, args.out))
    write_outputs(results, args.jobs, args.samples, args.out, docs=args.docs)
    expected = len(results) if args.only else SYSTEMS
    if args.check and (gaps := missing(results, args.rounds, expected)):
        raise SystemExit("missing figures: " + "; ".join(gaps))


if __name__ == "__main__":
    main()
