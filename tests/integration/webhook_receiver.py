"""A webhook receiver for tests: a real HTTP server on loopback that answers by script.

Each path has a list of answers, used in turn (the last one repeats): a status, headers,
and an optional hold (the answer waits until the test releases it, or a delay). Every
request is recorded with its headers and body.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Answer:
    """One scripted answer."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    hold: threading.Event | None = None


@dataclass(frozen=True)
class Received:
    """One request as the receiver saw it."""

    path: str
    headers: dict[str, str]
    body: str


class Receiver:
    """The scripts, and what arrived."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.host = host
        self.scripts: dict[str, list[Answer]] = {}
        self.received: list[Received] = []
        self.lock = threading.Lock()
        self.port = 0

    def url(self, path: str) -> str:
        """The URL of `path` on this receiver."""
        return f"http://{self.host}:{self.port}{path}"

    def script(self, path: str, *answers: Answer) -> str:
        """Answer requests to `path` with `answers` in turn; its URL."""
        self.scripts[path] = list(answers)
        return self.url(path)

    def at(self, path: str) -> list[Received]:
        """What arrived at `path`."""
        with self.lock:
            return [item for item in self.received if item.path == path]

    def wait_for(self, path: str, count: int, timeout_s: float = 20.0) -> list[Received]:
        """Poll until `count` requests arrived at `path` (or fail after `timeout_s`)."""
        deadline = time.monotonic() + timeout_s
        while len(found := self.at(path)) < count:
            assert time.monotonic() < deadline, f"{len(found)} of {count} requests to {path}"
            time.sleep(0.01)
        return found

    def next_answer(self, path: str) -> Answer:
        with self.lock:
            answers = self.scripts.get(path, [Answer(404)])
            return answers.pop(0) if len(answers) > 1 else answers[0]


def _handler(receiver: Receiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            body = self.rfile.read(length).decode()
            answer = receiver.next_answer(self.path)
            with receiver.lock:
                receiver.received.append(
                    Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                )
            if answer.hold is not None:
                answer.hold.wait(30)
            if answer.delay_s:
                time.sleep(answer.delay_s)
            self.send_response(answer.status)
            for name, value in answer.headers.items():
                self.send_header(name, value)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


@contextmanager
def receiver(host: str = "127.0.0.1") -> Iterator[Receiver]:
    """A receiver listening on a free port of `host` (a loopback address) while the block runs."""
    state = Receiver(host)
    server = ThreadingHTTPServer((host, 0), _handler(state))
    server.daemon_threads = True
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
