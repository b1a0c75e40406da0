"""Waiting on real processes: poll a condition until it holds, with a deadline; and a
loopback server in a thread for an ASGI app (a mock the test wraps)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

from backroom.clock import SystemClock


def wait_until(predicate: Callable[[], bool], what: str, seconds: float = 60) -> None:
    """Poll `predicate` until it holds, or fail naming `what` after `seconds`."""
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


async def until(condition: Callable[[], Awaitable[bool]], what: str, seconds: float = 60) -> None:
    """Poll the async `condition` until it holds, or fail naming `what` after `seconds`."""
    clock = SystemClock()
    deadline = clock.now() + seconds * 1000
    while not await condition():
        if clock.now() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await clock.sleep(50)


@contextmanager
def serving(app: Any) -> Iterator[str]:
    """Serve the ASGI `app` on a loopback port in a thread; yields its base URL (`.../v1`)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    server = uvicorn.Server(uvicorn.Config(app, lifespan="off", log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    finally:
        server.should_exit = True
        thread.join(30)
        listener.close()
