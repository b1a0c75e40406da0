"""`backroom serve --log-json` as a real process: JSON log lines on stderr, a start line
that says what runs where, and no secret in any of them."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from backroom.clock import SystemClock

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

PASSWORD = "not-for-the-log-7Q2"
ADMIN_KEY = "br_admin-key-not-for-the-log"


def _welcome(process: subprocess.Popen[str]) -> tuple[str, str]:
    """The URL and key the server prints (the key is the welcome's last line of interest)."""
    assert process.stdout is not None
    url = ""
    for line in process.stdout:
        if line.startswith("backroom is serving "):
            url = line.split()[3]
        if "export BACKROOM_API_KEY=" in line:
            return url, line.split("=", 1)[1].strip()
    pytest.fail("the server exited before printing its key")


def _wait_until_healthy(url: str) -> None:
    """Poll a real process that is starting, up to a deadline."""
    clock = SystemClock()
    deadline = clock.now() + 20_000
    while clock.now() < deadline:
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.05)
    pytest.fail(f"{url} did not become healthy in time")


def test_serve_logs_json_lines_without_a_password_or_key(postgres_url: str, tmp_path: Path) -> None:
    # Trust authentication ignores the password, which therefore reaches the URL only.
    url = postgres_url.replace("postgres@", f"postgres:{PASSWORD}@", 1)
    command = [sys.executable, "-m", "backroom", "serve", "--port", "0", "--db", url]
    command += ["--log-json", "--app", "backroom.builtin:app", "--concurrency", "7"]
    errors = tmp_path / "stderr.txt"
    env = {"BACKROOM_ADMIN_KEY": ADMIN_KEY, "PATH": "/usr/bin:/bin"}
    with errors.open("w") as stderr:
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=stderr, text=True, env=env
        )
    try:
        base_url, key = _welcome(process)
        _wait_until_healthy(base_url)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0, errors.read_text()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()

    text = errors.read_text()
    entries = [json.loads(line) for line in text.splitlines()]
    messages = [entry["message"] for entry in entries]
    redacted = url.replace(PASSWORD, "***")
    assert f"database {redacted} (from --db)" in messages
    (start,) = [message for message in messages if message.startswith("backroom ")]
    queues = "queues interactive,batch,webhooks"
    assert f"store {redacted}, 1 worker(s), {queues}, concurrency 7" in start
    assert "tasks demo.noop, demo.summarize, llm.respond" in start
    assert "stopped: 0 job(s) handed back to the queue" in messages
    for secret in (PASSWORD, ADMIN_KEY, key):
        assert secret not in text
