"""`backroom worker`: run an app's jobs in this process until SIGTERM/SIGINT."""

from __future__ import annotations

import asyncio
import gc
import logging
from importlib.metadata import version
from pathlib import Path
from typing import Annotated

import typer
from prometheus_client import start_http_server

from backroom.app import App
from backroom.cli.app_choice import AppChoice, Connection, choose_app
from backroom.cli.logs import LogJsonOption, LogLevelOption, configure_telemetry
from backroom.cli.options import (
    DbOption,
    ListenUrlOption,
    PollIntervalOption,
    PoolMaxOption,
    PoolMinOption,
    WatchIntervalOption,
)
from backroom.cli.root import new_cli, run
from backroom.config import Settings, redacted_url
from backroom.core.usage import OverBudget
from backroom.runtime.startup import opened_when_reachable
from backroom.runtime.worker_config import DEFAULT_CONCURRENCY, WorkerConfig
from backroom.webhooks.runtime import WebhookSettings, install_webhooks

log = logging.getLogger("backroom.cli")

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
) -> None:
    """Run jobs of an app's tasks until SIGTERM/SIGINT (or, with --burst, until idle)."""
    configure_telemetry(log_level, log_json)
    connection = Connection(listen_url, pool_min, pool_max)
    choice = AppChoice(app_ref, builtin_tasks, db, llm_config, connection)
    app = choose_app(choice, builtin_by_default=False)
    names = tuple(name for entry in queues or () for name in entry.split(",") if name)
    config = WorkerConfig(
        queues=names,
        concurrency=concurrency,
        claim_batch=claim_batch,
        lease_ms=round(lease * 1000),
        burst=burst,
        over_budget=over_budget,
        poll_interval_ms=max(1, round(poll_interval * 1000)),
        watch_ms=round(watch_interval * 1000),
    )

    async def run() -> None:
        async with opened_when_reachable(app):
            webhooks = install_webhooks(app, WebhookSettings.from_settings(Settings.from_env()))
            running = app.worker(config)
            running.install_signal_handlers()
            log_start("worker", app, config)
            if metrics_port is not None:
                serve_process_metrics(app, metrics_host, metrics_port)
            # What start-up made (modules, classes, the app) lives as long as the process:
            # out of the collector's sight, its oldest generation's passes no longer walk
            # it (3-4 us a job of no-op jobs went to them).
            gc.freeze()
            await webhooks.alongside(running.run())

    asyncio.run(run())


def serve_process_metrics(app: App, host: str, port: int) -> None:
    """Serve the counters of this process (`app.telemetry`) in the Prometheus text
    format from a thread, for a worker that runs no API server. The queues' own numbers
    come from an API server's `/metrics`, read from the store."""
    server, _ = start_http_server(port, addr=host, registry=app.telemetry.metrics.registry)
    log.info("metrics of this process at http://%s:%d/metrics", host, server.server_port)


def log_start(role: str, app: App, config: WorkerConfig) -> None:
    """The start line: version, store, queues, concurrency and tasks."""
    log.info(
        "backroom %s %s %s started: store %s, queues %s, concurrency %d, tasks %s",
        version("backroom"),
        role,
        config.worker_id,
        redacted_url(app.database_url),
        ",".join(config.queues) or "all",
        config.concurrency,
        ", ".join(app.tasks.names()) or "none",
    )


def run_worker_alone() -> None:
    """Run `backroom worker` from a CLI that has only this command (`backroom.cli.launch`):
    its usage, help and errors are those of the whole CLI's `worker`."""
    cli = new_cli()
    cli.command()(worker)
    run(cli)
