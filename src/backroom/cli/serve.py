"""`backroom serve`: the HTTP API with in-process workers."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from backroom.app import load_app
from backroom.cli.options import (
    DbOption,
    ListenUrlOption,
    PollIntervalOption,
    PoolMaxOption,
    PoolMinOption,
)
from backroom.cli.targets import CliError
from backroom.config import HttpLimits, Settings, environment
from backroom.core.job import DEFAULT_QUEUES

_LIMITS = HttpLimits()


def serve_command(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port (0: any free one).")] = 8000,
    app_ref: Annotated[
        str | None,
        typer.Option("--app", help="The App to serve, as module:attr (the demo tasks by default)."),
    ] = None,
    workers: Annotated[int, typer.Option(min=0, help="In-process workers.")] = 1,
    no_worker: Annotated[
        bool, typer.Option("--no-worker", help="Run no worker here (`backroom worker` elsewhere).")
    ] = False,
    concurrency: Annotated[int, typer.Option(min=1, help="Jobs each worker runs at once.")] = 10,
    queues: Annotated[
        str,
        typer.Option(help="The lanes, most urgent first; workers serve them in this order."),
    ] = ",".join(DEFAULT_QUEUES),
    log_level: Annotated[str, typer.Option(help="uvicorn's log level.")] = "info",
    db: DbOption = None,
    llm_config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help="LLM providers (TOML) for llm.respond (env BACKROOM_CONFIG).",
            show_default=False,
        ),
    ] = None,
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
    """Serve the HTTP API (and run workers) until SIGINT or SIGTERM."""
    # Imported here: the web stack and the LLM SDK would slow every other command's start
    # (a `backroom worker` process starts in half the time without them).
    from backroom.api import ApiSettings  # noqa: PLC0415
    from backroom.api.server import ServeConfig, serve  # noqa: PLC0415
    from backroom.demo.tasks import demo_app  # noqa: PLC0415
    from backroom.llm.config import load_llm_config  # noqa: PLC0415

    settings = Settings.from_env()
    database = settings.store_url(
        db or settings.database_url, listen_url=listen_url, pool_min=pool_min, pool_max=pool_max
    )
    if app_ref is None:
        path = llm_config or (Path(settings.config_path) if settings.config_path else None)
        providers = load_llm_config(path, environment())
        if not providers.providers:
            _print_now(
                "no LLM provider configured (--config, BACKROOM_CONFIG or OPENAI_API_KEY): "
                "llm.respond answers from the offline simulated provider"
            )
        app = demo_app(database, llm=providers)
    else:
        app = load_app(app_ref)
        if app.database_url != database:
            app.use_database(database)
    config = ServeConfig(
        host=host,
        port=port,
        workers=0 if no_worker else workers,
        concurrency=concurrency,
        log_level=log_level,
        poll_interval_ms=max(1, round(poll_interval * 1000)),
        limits=HttpLimits(
            max_head_bytes=max_header_bytes,
            header_timeout_s=header_timeout,
            idle_timeout_s=idle_timeout,
            max_connections=max_connections,
        ),
    )
    queue_names = tuple(name.strip() for name in queues.split(",") if name.strip())
    if not queue_names:
        raise CliError("--queues needs at least one queue name")
    api_settings = replace(ApiSettings.from_settings(settings), queues=queue_names)
    asyncio.run(serve(app, api_settings, config, emit=_print_now))


def _print_now(line: str) -> None:
    # Flushed at once: the key and URLs must reach a pipe or a log before any request.
    print(line, flush=True)
