"""`serve_mock` runs the mock under uvicorn in its own process, on the port it is given."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import httpx
import pytest

pytestmark = pytest.mark.slow

SERVE = (
    "from backroom.llm.mock.server import MockConfig, serve_mock; "
    "serve_mock(MockConfig(requests_per_minute=60), '127.0.0.1', {port})"
)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _first_answer(url: str, seconds: float = 30) -> httpx.Response:
    """Poll until the server answers, within `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return httpx.post(url, json={"model": "mock-1", "input": "ready?"}, timeout=5)
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def test_serve_mock_answers_on_its_port() -> None:
    port = _free_port()
    command = [sys.executable, "-c", SERVE.format(port=port)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        response = _first_answer(f"http://127.0.0.1:{port}/v1/responses")
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=30)
    assert response.status_code == 200, stderr.decode()
    assert response.json()["output"][0]["content"][0]["text"].endswith("] ready?")
    assert response.headers["x-ratelimit-limit-requests"] == "60"
    # uvicorn shuts down cleanly, then re-raises SIGTERM, so the exit code is -15.
    assert "Finished server process" in stderr.decode()
