"""`backroom mock-llm` serves the official SDK over loopback."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import openai
import pytest

pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_the_sdk_gets_an_answer_and_a_real_429(tmp_path) -> None:  # type: ignore[no-untyped-def]
    port = free_port()
    with (tmp_path / "mock.log").open("wb") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "backroom", "mock-llm", "--port", str(port), "--rpm", "1"],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="x", max_retries=0)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                answer = client.responses.create(model="mock", input="hello")
                break
            except openai.APIConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        assert "hello" in answer.output_text
        with pytest.raises(openai.RateLimitError) as limited:
            client.responses.create(model="mock", input="again")
        assert int(limited.value.response.headers["retry-after"]) >= 1
    finally:
        client.close()
        server.terminate()
        server.wait(timeout=20)
