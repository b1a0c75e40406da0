"""`backroom serve`: the HTTP API with in-process workers."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Annotated

import typer

from backroom.cli.app_choice import AppChoice, Connection, choose_app
from backroom.cli.logs import configure_telemetry
from backroom.cli.options import (
    DbOption,
    ListenUrlOption,
    LogJsonOption,
    LogLevelOption,
    PollIntervalOption,
    PoolMaxOption,
    PoolMinOption,
)
from backroom.cli.root import CliError
from backroom.cli.worker import AppOption, BuiltinTasksOption, LlmConfigOption
from backroom.config import HttpLimits, Settings
from backroom.core.job import DEFAULT_QUEUES
from backroom.runtime.processes import run_processes
from backroom.runtime.startup import import_store_code
from backroom.runtime.worker_config import DEFAULT_CONCURRENCY
from backroom.webhooks.runtime import WebhookSettings

_LIMITS = HttpLimits()


def serve_command(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port (0: any free one).")] = 8000,
    app_ref: AppOption = None,
    builtin_tasks: BuiltinTasksOption = False,
    workers: Annotated[int, typer.Option(min=0, help="In-process workers.")] = 1,
    processes: Annotated[
        int,
        typer.Option(
            min=1,
            help="Server processes on the one port, each with its --workers: one per core.",
        ),
    ] = 1,
    no_worker: Annotated[
        bool, typer.Option("--no-worker", help="Run no worker here (`backroom worker` elsewhere).")
    ] = False,
    concurrency: Annotated[
        int, typer.Option(min=1, help="Jobs each worker runs at once.")
    ] = DEFAULT_CONCURRENCY,
    queues: Annotated[
        str,
        typer.Option(
            help="Queues, most urgent first; the queues the app's tasks name are added after."
        ),
    ] = ",".join(DEFAULT_QUEUES),
    log_level: LogLevelOption = "info",
    log_json: LogJsonOption = False,
    db: DbOption = None,
    llm_config: LlmConfigOption = None,
    listen_url: ListenUrlOption = None,
    pool_min: PoolMinOption = None,
    pool_max: PoolMaxOption = None,
    poll_interval: PollIntervalOption = 1.0,
    max_connections: Annotated[
        int, typer.Option(min=1, help="Open connections at most; more get 503.")
    ] = _LIMITS.max_connections,
    max_header_bytes: Annotated[
        int, typer.Option(min=1024, help="Request line and headers at most; more get 431.")
    ] = _LIMITS.max_head_bytes,
    header_timeout: Annotated[
        float,
        typer.Option(min=0.1, help="Seconds for a request's headers to arrive; else 408."),
    ] = _LIMITS.header_timeout_s,
    idle_timeout: Annotated[
        int, typer.Option(min=1, help="Seconds an idle keep-alive connection stays open.")
    ] = _LIMITS.idle_timeout_s,
) -> None:
    """Serve the HTTP API (and run workers) until SIGINT or SIGTERM.

    Without --app it runs the built-in tasks (llm.respond, demo.summarize, demo.noop).
    """
    # Imported here: the web stack would slow every other command's start (a `backroom
    # worker` process starts in half the time without it).
    from backroom.api import ApiSettings  # noqa: PLC0415
    from backroom.api.processes import shared_listener  # noqa: PLC0415
    from backroom.api.server import ServeConfig, listen, serve  # noqa: PLC0415

    configure_telemetry(log_level, log_json)
    connection = Connection(listen_url, pool_min, pool_max)
    choice = AppChoice(app_ref, builtin_tasks, db, llm_config, connection)
    app = choose_app(choice, builtin_by_default=True)
    config = ServeConfig(
        host=host,
        port=port,
        workers=0 if no_worker else workers,
        concurrency=concurrency,
        poll_interval_ms=max(1, round(poll_interval * 1000)),
        limits=HttpLimits(
            max_head_bytes=max_header_bytes,
            header_timeout_s=header_timeout,
            idle_timeout_s=idle_timeout,
            max_connections=max_connections,
        ),
        webhooks=WebhookSettings.from_settings(Settings.from_env()),
    )
    listed = tuple(name.strip() for name in queues.split(",") if name.strip())
    if not listed:
        raise CliError("--queues needs at least one queue name")
    api_settings = replace(ApiSettings.from_settings(Settings.from_env()), queues=listed)
    if processes == 1:
        asyncio.run(serve(app, api_settings, config, emit=_print_now))
        return
    listener = shared_listener(listen(config), processes)

    def child(index: int) -> None:
        # The first process creates the first key and prints the welcome, once.
        welcome = index == 0
        listener.serve_as(index)
        asyncio.run(
            serve(app, api_settings, config, _print_now, listener=listener, welcome=welcome)
        )

    import_store_code(app)  # once here, not in each child
    raise typer.Exit(run_processes(processes, child))


def _print_now(line: str) -> None:
    # Flushed at once: the key and URLs must reach a pipe or a log before any request.
    print(line, flush=True)
