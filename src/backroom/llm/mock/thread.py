"""A mock server on a background thread, for tests and benchmarks in one process."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn

from backroom.clock import Clock, SystemClock
from backroom.llm.mock.server import MockConfig, create_mock_app

# A call scripted to time out keeps its request open until the client leaves; past
# this, shutting down stops waiting for such requests.
_SHUTDOWN_GRACE_S = 5
_JOIN_TIMEOUT_S = 30


@contextmanager
def running_mock(config: MockConfig, clock: Clock | None = None) -> Iterator[str]:
    """Serve a mock on an ephemeral 127.0.0.1 port; yields its base URL (`.../v1`).

    The socket listens before the server thread starts, so calls made at once wait in
    the backlog instead of failing. `clock` (default: the system clock) may be any
    Clock whose `now()` is safe to read from another thread.
    """
    app = create_mock_app(config, clock or SystemClock())
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            lifespan="off",
            log_level="warning",
            access_log=False,
            timeout_graceful_shutdown=_SHUTDOWN_GRACE_S,
        )
    )
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [listener]}, name="mock-llm", daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.should_exit = True
        thread.join(_JOIN_TIMEOUT_S)
        listener.close()
