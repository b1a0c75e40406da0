"""The log's formats: a job transition's facts as `key=value` or JSON keys, and no
secret in any line, whatever the message quotes."""

from __future__ import annotations

import json
import logging

import pytest

from backroom.cli.logs import configure_logging
from backroom.core.job import ErrorInfo, Job, JobState
from backroom.core.outcome import RetryAt
from backroom.telemetry.job_log import log_attempt_end, log_pause

T0 = 1_700_000_000_000
KEY = "br_Zx81kq-secret-key-value"


def _job() -> Job:
    return Job(
        id=7,
        tenant="acme",
        task="summarize",
        queue="batch",
        priority=0,
        state=JobState.RUNNING,
        input={"token": KEY},
        attempt=2,
        max_attempts=5,
        timeout_ms=None,
        run_at=T0,
        created_at=T0,
        updated_at=T0,
        started_at=T0 + 100,
    )


def _lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return capsys.readouterr().err.splitlines()


def test_a_transition_is_one_json_object_with_its_facts(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("info", json_lines=True)
    error = ErrorInfo("HTTPStatusError", f"401 for Authorization: Bearer {KEY}")

    log_attempt_end(_job(), RetryAt(T0 + 5_000, error), T0 + 600)

    (line,) = _lines(capsys)
    entry = json.loads(line)
    assert entry["level"] == "warning" and entry["logger"] == "backroom.jobs"
    assert {key: entry[key] for key in ("event", "job_id", "tenant", "task", "queue")} == {
        "event": "job.retried",
        "job_id": 7,
        "tenant": "acme",
        "task": "summarize",
        "queue": "batch",
    }
    assert (entry["attempt"], entry["outcome"], entry["error_class"]) == (
        2,
        "retried",
        "HTTPStatusError",
    )
    assert entry["duration_ms"] == 500
    assert KEY not in line and "Bearer ***" in entry["message"]


def test_a_readable_line_ends_with_its_facts_and_hides_secrets(
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure_logging("info", json_lines=False)

    log_pause("lane", "openai/gpt-4o", True, by="provider", for_ms=2_000)
    logging.getLogger("backroom.x").warning(
        "cannot reach postgresql://backroom:hunter2@db:5432/jobs with %s or %s",
        KEY,
        "sk-proj-abcdef123456",
    )

    pause, warning = _lines(capsys)
    assert pause.endswith(
        "lane openai/gpt-4o paused by provider for 2.0 s "
        "[lane=openai/gpt-4o by=provider pause_ms=2000]"
    )
    assert "hunter2" not in warning and "postgresql://backroom:***@db:5432/jobs" in warning
    assert KEY not in warning and "abcdef123456" not in warning
