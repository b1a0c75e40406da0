"""An attempt with nothing to trace leaves OpenTelemetry's API unimported: once it is
imported a tracer provider may be installed, so every later attempt asks the API for
it (~1 us a job, an environment lookup that raises inside the API)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROBE = """
import sys
from backroom.clock import SystemClock
from backroom.core.job import Job, JobState
from backroom.core.outcome import Succeeded
from backroom.telemetry import Telemetry

job = Job(
    id=1, tenant="t", task="noop", queue="q", priority=0, state=JobState.RUNNING,
    input=None, attempt=1, max_attempts=3, timeout_ms=None, run_at=0, created_at=0,
    updated_at=0, started_at=0,
)
with Telemetry().attempt(job, SystemClock()) as span:
    span.ended(Succeeded(None))
print("opentelemetry.trace" in sys.modules)
"""


@pytest.mark.slow
def test_an_untraced_attempt_leaves_the_tracing_api_unimported() -> None:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    imported = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, env=environment
    ).stdout.strip()
    assert imported == "False"
