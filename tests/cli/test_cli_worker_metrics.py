"""`backroom worker --metrics-port`: a worker process serves its own counters, labelled
by process, for Prometheus to scrape beside the API servers."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from backroom.clock import SystemClock

pytestmark = pytest.mark.slow

DEADLINE_MS = 30_000
_SERVING = re.compile(r"metrics of this process at (http://\S+/metrics)")


def _environment() -> dict[str, str]:
    hidden = ("BACKROOM_URL", "BACKROOM_API_KEY", "BACKROOM_DATABASE_URL")
    return {name: value for name, value in os.environ.items() if name not in hidden}


def _metrics_url(errors: Path, process: subprocess.Popen[str]) -> str:
    """The URL the worker logged, once it has (a real process: poll up to a deadline)."""
    clock = SystemClock()
    deadline = clock.now() + DEADLINE_MS
    while clock.now() < deadline:
        found = _SERVING.search(errors.read_text())
        if found:
            return found.group(1)
        assert process.poll() is None, errors.read_text()
        time.sleep(0.05)
    raise AssertionError("the worker logged no metrics URL")


def _succeeded(url: str, pid: int) -> float:
    """The worker's count of demo.noop attempts that succeeded (0 before any), from the
    series labelled with its own process."""
    text = httpx.get(url, timeout=5).text
    return sum(
        sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == "backroom_attempt_outcomes_total"
        and sample.labels["task"] == "demo.noop"
        and sample.labels["outcome"] == "succeeded"
        and sample.labels["process"].endswith(f":{pid}")
    )


def test_a_worker_serves_its_own_counters(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'worker.db'}"
    backroom = [sys.executable, "-m", "backroom"]
    env = _environment()
    subprocess.run([*backroom, "submit", "demo.noop", "1", "--db", db], check=True, env=env)
    errors = tmp_path / "stderr.txt"
    command = [*backroom, "worker", "--app", "backroom.builtin:app", "--db", db]
    with errors.open("w") as stderr:
        process = subprocess.Popen(
            [*command, "--metrics-port", "0"], stderr=stderr, text=True, env=env
        )
    try:
        url = _metrics_url(errors, process)
        clock = SystemClock()
        deadline = clock.now() + DEADLINE_MS
        while _succeeded(url, process.pid) < 1:
            assert clock.now() < deadline, "the worker's counters never showed the job"
            time.sleep(0.05)  # a real worker runs the job: poll its metrics, up to a deadline
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0, errors.read_text()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert url.startswith("http://127.0.0.1:")
