"""`backroom mock-llm` serves the official SDK over loopback."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import openai
import pytest

pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def started(port: int, *options: str, log_path: Path) -> subprocess.Popen[bytes]:
    with log_path.open("wb") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "backroom", "mock-llm", "--port", str(port), *options],
            stdout=log,
            stderr=subprocess.STDOUT,
        )


def first_answer(client: openai.OpenAI, **request: Any) -> Any:
    """The first call's answer, once the server listens (polled with a deadline)."""
    deadline = time.monotonic() + 30
    while True:
        try:
            return client.responses.create(model="mock", **request)
        except openai.APIConnectionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def test_the_sdk_gets_an_answer_and_a_real_429(tmp_path: Path) -> None:
    port = free_port()
    server = started(port, "--rpm", "1", log_path=tmp_path / "mock.log")
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="x", max_retries=0)
    try:
        answer = first_answer(client, input="hello")
        assert "hello" in answer.output_text
        with pytest.raises(openai.RateLimitError) as limited:
            client.responses.create(model="mock", input="again")
        assert int(limited.value.response.headers["retry-after"]) >= 1
    finally:
        client.close()
        server.terminate()
        server.wait(timeout=20)


def test_charged_at_admission_the_max_output_counts_and_stays_counted(tmp_path: Path) -> None:
    port = free_port()
    options = ("--tpm", "300", "--charge-at", "admission")
    server = started(port, *options, log_path=tmp_path / "mock.log")
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="x", max_retries=0)
    try:
        answer = first_answer(client, input="hi", max_output_tokens=200)
        # A short answer, but all 200 reserved output tokens stay charged.
        assert answer.usage is not None and answer.usage.output_tokens < 20
        with pytest.raises(openai.RateLimitError) as limited:
            client.responses.create(model="mock", input="hi again", max_output_tokens=200)
        assert int(limited.value.response.headers["x-ratelimit-remaining-tokens"]) < 100
    finally:
        client.close()
        server.terminate()
        server.wait(timeout=20)
