"""The `backroom` command: argument parsing only; the work is done by the library.

The commands live by topic: jobs in `cli_jobs` (local database or, with `--url`, a
server), tenants in `cli_tenants`, `serve` in `cli_serve`, `migrate` and `prune` in
`cli_admin`, `mock-llm` in `cli_llm`; the demo and the worker are here.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Annotated

import typer

from backroom.app import load_app
from backroom.cli import admin, jobs, mock_llm
from backroom.cli.options import (
    DbOption,
    ListenUrlOption,
    PollIntervalOption,
    PoolMaxOption,
    PoolMinOption,
)
from backroom.cli.serve import serve_command
from backroom.cli.targets import CliError
from backroom.cli.tenants import tenants
from backroom.config import Settings
from backroom.core.errors import BackroomError
from backroom.core.usage import OverBudget
from backroom.demo.timeline import run_demo
from backroom.runtime.startup import opened_when_reachable
from backroom.runtime.worker_config import WorkerConfig

cli = typer.Typer(
    name="backroom",
    help="A durable background-job service for slow LLM work.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
cli.command("serve")(serve_command)
cli.command()(jobs.submit)
cli.command()(jobs.status)
cli.command()(jobs.jobs)
cli.command("dead-letters")(jobs.dead_letters)
cli.command()(jobs.redrive)
cli.command()(jobs.cancel)
cli.add_typer(tenants, name="tenants")
cli.command()(admin.migrate)
cli.command()(admin.prune)
cli.command("mock-llm")(mock_llm.mock_llm)


@cli.command()
def demo(
    max_attempts: Annotated[int, typer.Option(min=1, help="Attempts per job.")] = 3,
    per_tick: Annotated[int, typer.Option(min=1, help="Jobs the worker takes per tick.")] = 1,
) -> None:
    """Run the seeds' example through the real worker and store under simulated time."""
    run_demo(max_attempts=max_attempts, per_tick=per_tick, emit=print)


@cli.command()
def worker(
    app_ref: Annotated[str, typer.Option("--app", help="The App to run, as module:attr.")],
    db: DbOption = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Jobs run at once.")] = 10,
    queues: Annotated[
        list[str] | None, typer.Option("--queues", help="Queues to serve (all by default).")
    ] = None,
    lease: Annotated[float, typer.Option(min=0.01, help="Lease (visibility timeout), s.")] = 30.0,
    burst: Annotated[bool, typer.Option(help="Exit once nothing is queued or running.")] = False,
    over_budget: Annotated[
        OverBudget,
        typer.Option(help="What an LLM job does when its tenant's daily budget is spent."),
    ] = OverBudget.WAIT,
    listen_url: ListenUrlOption = None,
    pool_min: PoolMinOption = None,
    pool_max: PoolMaxOption = None,
    poll_interval: PollIntervalOption = 1.0,
) -> None:
    """Run jobs of an app's tasks until SIGTERM/SIGINT (or, with --burst, until idle)."""
    app = load_app(app_ref)
    settings = Settings.from_env()
    database = settings.store_url(
        db or settings.database_url, listen_url=listen_url, pool_min=pool_min, pool_max=pool_max
    )
    if app.database_url != database:
        app.use_database(database)
    names = tuple(name for entry in queues or () for name in entry.split(",") if name)
    config = WorkerConfig(
        queues=names,
        concurrency=concurrency,
        lease_ms=round(lease * 1000),
        burst=burst,
        over_budget=over_budget,
        poll_interval_ms=max(1, round(poll_interval * 1000)),
    )

    async def run() -> None:
        async with opened_when_reachable(app):
            running = app.worker(config)
            running.install_signal_handlers()
            await running.run()

    asyncio.run(run())


def main() -> None:
    """Entry point: run the CLI, turning errors into one readable line."""
    try:
        # Standalone: usage errors print one line and exit 2, Ctrl-C exits 1.
        cli()
    except (BackroomError, CliError, ValueError, OSError) as error:
        print(f"backroom: error: {error}", file=sys.stderr)
        raise SystemExit(1) from None
