"""`backroom serve` as a real process on a free loopback port, for the tests that need one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from backroom.clock import SystemClock

STARTUP_DEADLINE_MS = 20_000
CLI_STARTER = "from backroom.cli.main import main; main()"


@dataclass(frozen=True)
class Server:
    """A running `backroom serve`: its URL, the key it printed, its stderr file (its
    log, the access log included), and its process."""

    url: str
    key: str
    stderr: Path
    process: subprocess.Popen[str]

    @property
    def port(self) -> int:
        """The port it listens on."""
        return int(self.url.rsplit(":", 1)[1])

    def log_line_with(self, text: str) -> str:
        """The first line of the server's log that contains `text`, once it is written."""
        clock = SystemClock()
        deadline = clock.now() + STARTUP_DEADLINE_MS
        while clock.now() < deadline:
            found = [line for line in self.stderr.read_text().splitlines() if text in line]
            if found:
                return found[0]
            assert self.process.poll() is None, "the server exited"
            time.sleep(0.05)  # a real process writes its log: poll it, up to the deadline
        raise AssertionError(f"the server logged no line with {text!r}")


def _read_welcome(process: subprocess.Popen[str]) -> tuple[str, str]:
    """The URL and key lines the server prints first (EOF means it died)."""
    assert process.stdout is not None
    url = key = ""
    while not (url and key):
        line = process.stdout.readline()
        assert line, "the server exited before printing its URL and key"
        if line.startswith("backroom is serving "):
            url = line.split()[3]
        if "export BACKROOM_API_KEY=" in line:
            key = line.split("=", 1)[1].strip()
    return url, key


def _wait_until_healthy(url: str, process: subprocess.Popen[str]) -> None:
    clock = SystemClock()
    deadline = clock.now() + STARTUP_DEADLINE_MS
    while clock.now() < deadline:
        assert process.poll() is None, "the server exited during start-up"
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.05)  # a real process is starting: poll it, up to the deadline
    pytest.fail(f"the server at {url} did not become healthy in time")


@contextmanager
def serve_process(
    folder: Path, *options: str, env: Mapping[str, str] | None = None
) -> Iterator[Server]:
    """Run `backroom serve --port 0 OPTIONS`, logging to `folder`, with `env` added to the
    environment; SIGTERM it at the end and check that it exits cleanly."""
    command = [sys.executable, "-c", CLI_STARTER, "serve", "--port", "0", *options]
    stderr = folder / "stderr.txt"
    with stderr.open("w") as errors:
        process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
            env={**os.environ, **(env or {})},
        )
    try:
        url, key = _read_welcome(process)
        _wait_until_healthy(url, process)
        yield Server(url, key, stderr, process)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0, stderr.read_text()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()
