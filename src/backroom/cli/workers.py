"""`backroom workers list`: every worker process from its heartbeats, and what it runs.

Works on the local database (`--db`, as an admin) or, with `--url`, on a server (an
admin key), as `backroom queues list` does.
"""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer
from rich.table import Table

from backroom.cli.console import out, print_json
from backroom.cli.options import ApiKeyOption, DbOption, UrlOption
from backroom.cli.targets import Document, LocalSide, Target, open_side, reply_body
from backroom.service.workers import list_workers as service_list_workers

workers = typer.Typer(help="Workers: the processes alive, lost or stopped, and their jobs.")
workers.info.no_args_is_help = True

JsonOption = Annotated[bool, typer.Option("--json", help="Print the list as JSON.")]


def _found(target: Target) -> list[Document]:
    async def run() -> list[Document]:
        async with open_side(target) as side:
            if isinstance(side, LocalSide):
                return list(
                    reply_body(await service_list_workers(side.app, side.caller))["workers"]
                )
            return await side.workers()

    return asyncio.run(run())


def _running_text(worker: Document) -> str:
    jobs = [f"#{job['id']} {job['task']}" for job in worker["running"]]
    return ", ".join(jobs) if jobs else "idle"


@workers.command("list")
def list_workers(
    as_json: JsonOption = False,
    db: DbOption = None,
    url: UrlOption = None,
    api_key: ApiKeyOption = None,
) -> None:
    """List the workers: state (alive, lost, stopped), host and pid, queues, the jobs
    each runs, and its last heartbeat."""
    found = _found(Target(db, url, api_key))
    if as_json:
        print_json(found)
        return
    table = Table("worker", "state", "host", "pid", "queues", "running", "heartbeat")
    table.columns[0].overflow = "fold"  # a worker id wraps, never cut short
    for worker in found:
        queues = worker["queues"]
        table.add_row(
            worker["id"],
            worker["state"],
            worker["hostname"] or "-",
            "-" if worker["pid"] is None else str(worker["pid"]),
            "-" if queues is None else ", ".join(queues) or "every",
            _running_text(worker),
            worker["heartbeat_at"] or "-",
        )
    out.print(table)
