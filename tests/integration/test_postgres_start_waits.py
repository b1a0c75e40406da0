"""`backroom worker` and `backroom serve` started while PostgreSQL cannot be reached.

They wait, saying so in one log line per try (without the URL's password), and start
once it can: the test puts a port of its own between them and PostgreSQL that refuses
connections at first, then forwards them.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from postgres_schemas import scratch_schema

from backroom import App, JobState
from backroom.clock import SystemClock

pytestmark = [pytest.mark.slow, pytest.mark.postgres]
HERE = Path(__file__).parent
POSTGRES = ("127.0.0.1", 5432)
PASSWORD = "s3cret-never-logged"
DEADLINE_MS = 90_000
"""A real process starting and retrying: generous, for a loaded machine (it failed at
30 s at load average 9, the process merely slow to start and log its second try)."""


class RefusingThenForwarding:
    """A loopback port that refuses connections until `open()`, then forwards each
    one to PostgreSQL."""

    def __init__(self) -> None:
        # Bound but not listening: a connect is refused, and no one else can take the port.
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self.port: int = self._socket.getsockname()[1]
        self._open: list[socket.socket] = []

    def open(self) -> None:
        self._socket.listen()
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        for connection in [self._socket, *self._open]:
            connection.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._socket.accept()
            except OSError:
                return  # closed
            server = socket.create_connection(POSTGRES)
            self._open += [client, server]
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=_pipe, args=(source, sink), daemon=True).start()


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65_536):
            sink.sendall(data)
        sink.shutdown(socket.SHUT_WR)
    except OSError:
        pass  # the other side closed


@pytest.fixture
def db_url(postgres_url: str) -> Iterator[str]:
    """A PostgreSQL schema of this test's own, migrated."""
    with scratch_schema(postgres_url) as url:

        async def migrate() -> None:
            async with App(url):
                pass

        asyncio.run(migrate())
        yield url


@pytest.fixture
def proxy() -> Iterator[RefusingThenForwarding]:
    forwarder = RefusingThenForwarding()
    yield forwarder
    forwarder.close()


def through(proxy: RefusingThenForwarding, db_url: str) -> str:
    """`db_url` reached through the proxy, with a password (trust auth ignores it)."""
    direct = f"postgres@{POSTGRES[0]}:{POSTGRES[1]}"
    assert direct in db_url
    return db_url.replace(direct, f"postgres:{PASSWORD}@127.0.0.1:{proxy.port}")


def wait_until(predicate: Callable[[], bool], what: str) -> None:
    clock = SystemClock()
    deadline = clock.now() + DEADLINE_MS
    while not predicate():
        assert clock.now() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)  # a real process: poll it, up to the deadline


def start(log: Path, *arguments: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(HERE)}
    with log.open("w") as errors:
        return subprocess.Popen(
            [sys.executable, "-m", "backroom", *arguments],
            env=env,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
        )


def stop(process: subprocess.Popen[str]) -> int:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        return process.wait(timeout=30)
    finally:
        if process.stdout is not None:
            process.stdout.close()


def job_state(db_url: str, job_id: int) -> JobState | None:
    async def read() -> JobState | None:
        async with App(db_url) as app:
            return (await app.get(job_id)).state

    return asyncio.run(read())


def wait_for_two_tries(process: subprocess.Popen[str], log: Path) -> None:
    """Until the process logged two tries; it must not exit meanwhile."""

    def tried_twice_or_exited() -> bool:
        return process.poll() is not None or log.read_text().count("waiting for the store") >= 2

    wait_until(tried_twice_or_exited, "two tries")
    assert process.poll() is None, log.read_text()


def assert_waited_and_said_so(log: Path, proxy: RefusingThenForwarding) -> None:
    """At least two tries were logged, naming the store without its password."""
    text = log.read_text()
    waits = [line for line in text.splitlines() if "waiting for the store" in line]
    assert len(waits) >= 2, text
    assert f"127.0.0.1:{proxy.port}" in waits[0]
    assert PASSWORD not in text


def test_a_worker_started_before_postgres_is_reachable_waits_and_runs_jobs(
    db_url: str, proxy: RefusingThenForwarding, tmp_path: Path
) -> None:
    async def submit() -> int:
        async with App(db_url) as app:
            return (await app.submit("noop", None)).job.id

    job_id = asyncio.run(submit())
    log = tmp_path / "worker.log"
    worker = start(log, "worker", "--app", "crash_app:app", "--db", through(proxy, db_url))
    try:
        wait_for_two_tries(worker, log)
        proxy.open()
        wait_until(lambda: job_state(db_url, job_id) is JobState.SUCCEEDED, "the job to run")
    finally:
        code = stop(worker)
    assert code == 0, log.read_text()
    assert_waited_and_said_so(log, proxy)


def test_serve_started_before_postgres_is_reachable_waits_and_serves(
    db_url: str, proxy: RefusingThenForwarding, tmp_path: Path
) -> None:
    log = tmp_path / "serve.log"
    arguments = ["serve", "--port", "0", "--no-worker", "--db", through(proxy, db_url)]
    server = start(log, *arguments)
    try:
        wait_for_two_tries(server, log)
        proxy.open()
        assert server.stdout is not None
        url = ""
        while not url:  # the welcome comes once the store is open (EOF: it died)
            line = server.stdout.readline()
            assert line, log.read_text()
            if line.startswith("backroom is serving "):
                url = line.split()[3]
        wait_until(lambda: httpx.get(f"{url}/readyz").status_code == 200, "readiness")
    finally:
        code = stop(server)
    assert code == 0, log.read_text()
    assert_waited_and_said_so(log, proxy)
