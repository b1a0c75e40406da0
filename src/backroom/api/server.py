"""`backroom serve`: the HTTP API under uvicorn, with workers in the same process.

On a fresh database the first start creates tenant `default` and prints its key,
once, with the URL of the API docs and a curl example that submits a job and
polls it. SIGINT or SIGTERM stops the server and lets the workers finish their jobs
within their grace period.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import logging
import shlex
import signal
import socket
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import uvicorn

from backroom.api import ApiSettings, create_api
from backroom.api.access_log import redact_access_log
from backroom.api.connection_guard import uvicorn_options
from backroom.app import App
from backroom.config import HttpLimits, redacted_url
from backroom.core.job import DEFAULT_TENANT
from backroom.runtime.startup import opened_when_reachable
from backroom.runtime.worker_config import DEFAULT_CONCURRENCY, WorkerConfig
from backroom.service.api_keys import issue_key, list_tenants
from backroom.version import __version__
from backroom.webhooks.runtime import WebhookSettings, install_webhooks, with_webhook_queue

Emit = Callable[[str], None]
log = logging.getLogger("backroom.api.server")


@dataclass(frozen=True, slots=True)
class ServeConfig:
    """Where to listen, the limits on clients, and how many in-process workers to run
    (0: none)."""

    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = 1
    concurrency: int = DEFAULT_CONCURRENCY
    poll_interval_ms: int = 1_000
    limits: HttpLimits = field(default_factory=HttpLimits)
    webhooks: WebhookSettings = field(default_factory=WebhookSettings)


class _Server(uvicorn.Server):
    """uvicorn's server, whose SIGINT/SIGTERM also stop the in-process workers.

    uvicorn re-raises a caught signal once it has shut down, which for SIGTERM would
    end the process before the workers drain; this one only asks everything to stop.
    """

    def __init__(self, config: uvicorn.Config, on_exit: Callable[[], None]) -> None:
        super().__init__(config)
        self._on_exit = on_exit

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """Turn SIGINT and SIGTERM into a graceful stop while the server runs."""
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, self._stop)
        try:
            yield
        finally:
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(signum)

    def _stop(self) -> None:
        self.should_exit = True
        self._on_exit()


def listen(config: ServeConfig) -> socket.socket:
    """The bound listening socket (port 0 picks a free port).

    Bound here rather than by uvicorn so the real port is known before serving. The
    socket is made with its protocol number (IPPROTO_TCP, from getaddrinfo): asyncio
    sets TCP_NODELAY only on connections of such sockets, and without it every answer
    waits out the client's delayed ACK (about 40 ms).
    """
    family, kind, protocol, _, address = socket.getaddrinfo(
        config.host, config.port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    listener = socket.socket(family, kind, protocol)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(address)
        listener.listen(socket.SOMAXCONN)
    except OSError:
        listener.close()
        raise
    return listener


def _example_task(app: App) -> tuple[str, object]:
    if "demo.summarize" in app.tasks:
        return "demo.summarize", {"text": "Backroom runs slow work in the background."}
    names = app.tasks.names()
    return (names[0] if names else "my.task"), {}


def print_welcome(app: App, base_url: str, key: str | None, emit: Emit) -> None:
    """Print where the docs are and a curl example that submits a job and polls it."""
    task, payload = _example_task(app)
    body = json.dumps({"task": task, "input": payload})
    auth = '-H "Authorization: Bearer $BACKROOM_API_KEY"'
    emit(f"backroom is serving {base_url}  (API docs: {base_url}/docs)")
    if key is not None:
        emit(f"Created tenant {DEFAULT_TENANT!r}. Its API key, shown only this once:")
        emit(f"  export BACKROOM_API_KEY={key}")
    else:
        emit(
            f"Tenant {DEFAULT_TENANT!r} exists already. Lost its key? "
            f"`backroom tenants keys create {DEFAULT_TENANT}` prints a new one."
        )
    emit("Submit a job, then poll it (the id is in the answer and its Location header):")
    emit(
        f"  curl -s {base_url}/v1/jobs {auth} -H 'Content-Type: application/json' "
        f"-H 'Idempotency-Key: first-job' -d {shlex.quote(body)}"
    )
    emit(f"  curl -s {base_url}/v1/jobs/1 {auth}")


async def first_start_key(app: App) -> str | None:
    """On a store without tenants, create `default` and return its new key."""
    if await list_tenants(app):
        return None
    _, key = await issue_key(app, DEFAULT_TENANT)
    return key


async def serve(
    app: App,
    api_settings: ApiSettings,
    config: ServeConfig,
    emit: Emit,
    *,
    listener: socket.socket | None = None,
    welcome: bool = True,
) -> None:
    """Open `app`, serve its API and run its workers until SIGINT or SIGTERM.

    On `listener` if given (a socket `listen` bound, shared by several processes), and
    without creating the first key or printing the welcome unless `welcome`.
    """
    listener = listener or listen(config)
    host, port = listener.getsockname()[:2]
    async with opened_when_reachable(app):
        key = await first_start_key(app) if welcome else None
        webhooks = install_webhooks(app, config.webhooks)
        queues = with_webhook_queue(api_settings.queues_with(app.tasks))
        worker_config = WorkerConfig(
            queues=queues, concurrency=config.concurrency, poll_interval_ms=config.poll_interval_ms
        )
        workers = [app.worker(worker_config) for _ in range(config.workers)]

        def stop_workers() -> None:
            for worker in workers:
                worker.stop()

        # log_config=None: uvicorn's records go through the process's logging set-up.
        uvicorn_config = uvicorn.Config(
            create_api(app, api_settings), log_config=None, **uvicorn_options(config.limits)
        )
        redact_access_log()  # after uvicorn.Config, which may configure its loggers
        server = _Server(uvicorn_config, on_exit=stop_workers)
        # One dispatcher for the process, beside however many worker loops it runs.
        running = asyncio.create_task(
            webhooks.alongside(asyncio.gather(*(worker.run() for worker in workers)))
        )
        base_url = f"http://{host}:{port}"
        _log_serving(app, base_url, len(workers), queues, config)
        if welcome:
            print_welcome(app, base_url, key, emit)
        gc.freeze()  # start-up's objects outlive requests: no full collection walks them
        try:
            await server.serve(sockets=[listener])
        finally:
            stop_workers()
            await running


def _log_serving(
    app: App, base_url: str, workers: int, queues: Sequence[str], config: ServeConfig
) -> None:
    log.info(
        "backroom %s serving %s: store %s, %d worker(s), queues %s, concurrency %d, tasks %s",
        __version__,
        base_url,
        redacted_url(app.database_url),
        workers,
        ",".join(queues),
        config.concurrency,
        ", ".join(app.tasks.names()) or "none",
    )
