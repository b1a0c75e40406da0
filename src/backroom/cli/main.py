"""The `backroom` command: argument parsing only; the work is done by the library.

The commands live by topic: jobs in `cli_jobs` (local database or, with `--url`, a
server), tenants in `cli_tenants`, `serve` in `cli_serve`, `migrate` and `prune` in
`cli_admin`, `mock-llm` in `cli_llm`, `worker` in `cli.worker`; the demo is here.
"""

from __future__ import annotations

import sys
from importlib.metadata import version
from typing import Annotated

import typer

from backroom.cli import admin, jobs, mock_llm
from backroom.cli.queues import lanes, queues
from backroom.cli.serve import serve_command
from backroom.cli.targets import CliError
from backroom.cli.tenants import tenants
from backroom.cli.webhooks import webhooks
from backroom.cli.worker import worker
from backroom.cli.workers import workers
from backroom.core.errors import BackroomError
from backroom.demo.timeline import run_demo

cli = typer.Typer(
    name="backroom",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _print_version(wanted: bool) -> None:
    if wanted:
        print(f"backroom {version('backroom')}")
        raise typer.Exit()


@cli.callback()
def _options(
    _version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """A durable background-job service for slow LLM work."""


cli.command("serve")(serve_command)
cli.command()(jobs.submit)
cli.command()(jobs.status)
cli.command()(jobs.jobs)
cli.command("dead-letters")(jobs.dead_letters)
cli.command()(jobs.redrive)
cli.command()(jobs.cancel)
cli.add_typer(tenants, name="tenants")
cli.add_typer(webhooks, name="webhooks")
cli.add_typer(queues, name="queues")
cli.add_typer(lanes, name="lanes")
cli.add_typer(workers, name="workers")
cli.command()(admin.migrate)
cli.command()(admin.prune)
cli.command("mock-llm")(mock_llm.mock_llm)
cli.command()(worker)


@cli.command()
def demo(
    max_attempts: Annotated[int, typer.Option(min=1, help="Attempts per job.")] = 3,
    per_tick: Annotated[int, typer.Option(min=1, help="Jobs the worker takes per tick.")] = 1,
) -> None:
    """Run the seeds' example through the real worker and store under simulated time."""
    run_demo(max_attempts=max_attempts, per_tick=per_tick, emit=print)


def main() -> None:
    """Entry point: run the CLI, turning errors into one readable line."""
    try:
        # Standalone: usage errors print one line and exit 2, Ctrl-C exits 1.
        cli()
    except (BackroomError, CliError, ValueError, OSError) as error:
        print(f"backroom: error: {error}", file=sys.stderr)
        raise SystemExit(1) from None
