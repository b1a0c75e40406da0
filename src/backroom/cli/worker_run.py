"""What `backroom worker` does once its options are read, without typer.

`backroom.cli.worker` declares the command's options for typer; an ordinary command
line is read by `backroom.cli.worker_args` instead, so a worker process (often one of
several started together) starts without typer or pydantic. Both run `run_worker`.
"""

from __future__ import annotations

import asyncio
import gc
import logging
from dataclasses import dataclass, replace
from pathlib import Path

from backroom.app import App
from backroom.cli.app_choice import AppChoice, Connection, choose_app
from backroom.cli.logs import configure_telemetry
from backroom.config import Settings, redacted_url
from backroom.core.usage import OverBudget
from backroom.runtime.processes import run_processes
from backroom.runtime.startup import import_store_code, opened_when_reachable
from backroom.runtime.worker_config import DEFAULT_CONCURRENCY, WorkerConfig
from backroom.version import __version__
from backroom.webhooks.runtime import WebhookSettings, install_webhooks

log = logging.getLogger("backroom.cli")


@dataclass(frozen=True, slots=True)
class WorkerOptions:
    """`backroom worker`'s options, one field per option, with the command's defaults."""

    app_ref: str | None = None
    builtin_tasks: bool = False
    db: str | None = None
    concurrency: int = DEFAULT_CONCURRENCY
    claim_batch: int | None = None
    queues: list[str] | None = None
    lease: float = 30.0
    burst: bool = False
    over_budget: OverBudget = OverBudget.WAIT
    llm_config: Path | None = None
    listen_url: str | None = None
    pool_min: int | None = None
    pool_max: int | None = None
    poll_interval: float = 1.0
    watch_interval: float = 0.05
    log_level: str = "info"
    log_json: bool = False
    metrics_port: int | None = None
    metrics_host: str = "127.0.0.1"
    processes: int = 1


def run_worker(options: WorkerOptions) -> None:
    """Run jobs of an app's tasks until SIGTERM/SIGINT (or, with --burst, until idle).

    With `processes` above 1, the app is imported once and that many worker processes
    are forked from here (`backroom.runtime.processes`), each a worker of its own: its
    own id, connections and slots, its counters on `metrics_port` plus its index.
    """
    configure_telemetry(options.log_level, options.log_json)
    connection = Connection(options.listen_url, options.pool_min, options.pool_max)
    choice = AppChoice(
        options.app_ref, options.builtin_tasks, options.db, options.llm_config, connection
    )
    app = choose_app(choice, builtin_by_default=False)
    if options.processes == 1:
        asyncio.run(_run(app, options))
        return

    def child(index: int) -> None:
        port = options.metrics_port
        asyncio.run(_run(app, replace(options, metrics_port=port and port + index)))

    import_store_code(app)
    # What the parent imported lives in every child: out of the collector's sight (see
    # `_run`), its pages are not copied by the first collection that walks them.
    gc.freeze()
    status = run_processes(options.processes, child, stop_together=not options.burst)
    if status:
        raise SystemExit(status)


def worker_config(options: WorkerOptions) -> WorkerConfig:
    """The worker's configuration; its id is made here, so call it in its own process."""
    names = tuple(name for entry in options.queues or () for name in entry.split(",") if name)
    return WorkerConfig(
        queues=names,
        concurrency=options.concurrency,
        claim_batch=options.claim_batch,
        lease_ms=round(options.lease * 1000),
        burst=options.burst,
        over_budget=options.over_budget,
        poll_interval_ms=max(1, round(options.poll_interval * 1000)),
        watch_ms=round(options.watch_interval * 1000),
    )


async def _run(app: App, options: WorkerOptions) -> None:
    config = worker_config(options)
    async with opened_when_reachable(app):
        webhooks = install_webhooks(app, WebhookSettings.from_settings(Settings.from_env()))
        running = app.worker(config)
        running.install_signal_handlers()
        log_start("worker", app, config)
        if options.metrics_port is not None:
            serve_process_metrics(app, options.metrics_host, options.metrics_port)
        # What start-up made (modules, classes, the app) lives as long as the process:
        # out of the collector's sight, its oldest generation's passes no longer walk
        # it (3-4 us a job of no-op jobs went to them).
        gc.freeze()
        await webhooks.alongside(running.run())


def serve_process_metrics(app: App, host: str, port: int) -> None:
    """Serve the counters of this process (`app.telemetry`) in the Prometheus text
    format from a thread, for a worker that runs no API server. The queues' own numbers
    come from an API server's `/metrics`, read from the store."""
    # Imported here: the exposition module pulls in http.server, which most workers
    # never serve from.
    from prometheus_client import start_http_server  # noqa: PLC0415

    server, _ = start_http_server(port, addr=host, registry=app.telemetry.metrics.registry)
    log.info("metrics of this process at http://%s:%d/metrics", host, server.server_port)


def log_start(role: str, app: App, config: WorkerConfig) -> None:
    """The start line: version, store, queues, concurrency and tasks."""
    log.info(
        "backroom %s %s %s started: store %s, queues %s, concurrency %d, tasks %s",
        __version__,
        role,
        config.worker_id,
        redacted_url(app.database_url),
        ",".join(config.queues) or "all",
        config.concurrency,
        ", ".join(app.tasks.names()) or "none",
    )
