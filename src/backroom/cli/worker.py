"""`backroom worker`: run an app's jobs in this process until SIGTERM/SIGINT.

The options as typer reads them: for `--help`, for errors, and for command lines that
`backroom.cli.worker_args` leaves to typer. Either way `run_worker` does the work.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from backroom.cli.options import (
    DbOption,
    ListenUrlOption,
    LogJsonOption,
    LogLevelOption,
    PollIntervalOption,
    PoolMaxOption,
    PoolMinOption,
    WatchIntervalOption,
)
from backroom.cli.root import new_cli, run
from backroom.cli.worker_run import WorkerOptions, run_worker
from backroom.core.usage import OverBudget
from backroom.runtime.worker_config import DEFAULT_CONCURRENCY

AppOption = Annotated[
    str | None,
    typer.Option("--app", help="The App to run, as module:attr (found from the current folder)."),
]
BuiltinTasksOption = Annotated[
    bool,
    typer.Option(
        "--builtin-tasks", help="Also run the built-in tasks (llm.respond, demo.summarize, ...)."
    ),
]
LlmConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--config",
        help="LLM providers (TOML) for llm.respond (env BACKROOM_CONFIG).",
        show_default=False,
    ),
]


def worker(
    app_ref: AppOption = None,
    builtin_tasks: BuiltinTasksOption = False,
    db: DbOption = None,
    concurrency: Annotated[
        int, typer.Option(min=1, help="Jobs run at once (lower it for sync or CPU-heavy tasks).")
    ] = DEFAULT_CONCURRENCY,
    claim_batch: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Free slots a busy worker gathers before it claims (default: a tenth of "
            "--concurrency; an idle worker claims at once).",
            show_default=False,
        ),
    ] = None,
    queues: Annotated[
        list[str] | None, typer.Option("--queues", help="Queues to serve (all by default).")
    ] = None,
    lease: Annotated[float, typer.Option(min=0.01, help="Lease (visibility timeout), s.")] = 30.0,
    burst: Annotated[bool, typer.Option(help="Exit once nothing is queued or running.")] = False,
    over_budget: Annotated[
        OverBudget,
        typer.Option(help="What an LLM job does when its tenant's daily budget is spent."),
    ] = OverBudget.WAIT,
    llm_config: LlmConfigOption = None,
    listen_url: ListenUrlOption = None,
    pool_min: PoolMinOption = None,
    pool_max: PoolMaxOption = None,
    poll_interval: PollIntervalOption = 1.0,
    watch_interval: WatchIntervalOption = 0.05,
    log_level: LogLevelOption = "info",
    log_json: LogJsonOption = False,
    metrics_port: Annotated[
        int | None,
        typer.Option(
            min=0,
            max=65535,
            help="Serve this process's counters at /metrics on this port (0: any free one).",
            show_default=False,
        ),
    ] = None,
    metrics_host: Annotated[
        str, typer.Option(help="The address --metrics-port listens on.")
    ] = "127.0.0.1",
    processes: Annotated[
        int,
        typer.Option(
            min=1,
            max=64,
            help="Worker processes, forked after one import of the app: one per core. "
            "Each serves its counters on --metrics-port plus its index.",
        ),
    ] = 1,
) -> None:
    """Run jobs of an app's tasks until SIGTERM/SIGINT (or, with --burst, until idle)."""
    run_worker(
        WorkerOptions(
            app_ref=app_ref,
            builtin_tasks=builtin_tasks,
            db=db,
            concurrency=concurrency,
            claim_batch=claim_batch,
            queues=queues,
            lease=lease,
            burst=burst,
            over_budget=over_budget,
            llm_config=llm_config,
            listen_url=listen_url,
            pool_min=pool_min,
            pool_max=pool_max,
            poll_interval=poll_interval,
            watch_interval=watch_interval,
            log_level=log_level,
            log_json=log_json,
            metrics_port=metrics_port,
            metrics_host=metrics_host,
            processes=processes,
        )
    )


def run_worker_alone() -> None:
    """Run `backroom worker` from a CLI that has only this command (`backroom.cli.launch`):
    its usage, help and errors are those of the whole CLI's `worker`."""
    cli = new_cli()
    cli.command()(worker)
    run(cli)
