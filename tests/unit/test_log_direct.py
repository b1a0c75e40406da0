"""A job's line written straight by the one handler it reaches (no `LogRecord`) is the
line its record would have made, in both formats; anything else that could see a
record (another handler, a filter, a record factory) gets the record."""

from __future__ import annotations

import io
import logging
import sys

import pytest

from backroom.cli.logs import configure_logging
from backroom.clock import SimClock
from backroom.core.job import ErrorInfo, Job, JobState
from backroom.core.outcome import Deferred, Failed, Released, RetryAt, Succeeded
from backroom.telemetry import job_log

T0 = 1_700_000_000_123
KEY = "br_Zx81kq-secret-key-value"


def _job(**changes: object) -> Job:
    fields: dict[str, object] = {
        "id": 7,
        "tenant": "acme",
        "task": "summarize",
        "queue": "batch",
        "priority": 0,
        "state": JobState.RUNNING,
        "input": {"token": KEY},
        "attempt": 2,
        "max_attempts": 5,
        "timeout_ms": None,
        "run_at": T0 - 900,
        "created_at": T0 - 900,
        "updated_at": T0,
        "started_at": T0,
    }
    fields.update(changes)
    return Job(**fields)  # type: ignore[arg-type]


def _write_every_kind() -> None:
    error = ErrorInfo("HTTPStatusError", f"401 for Authorization: Bearer {KEY}")
    job_log.log_started(_job())
    job_log.log_started(_job(started_at=None))
    job_log.log_attempt_end(_job(), Succeeded(None), T0 + 1_234)
    job_log.log_attempt_end(_job(), RetryAt(T0 + 5_000, error), T0 + 600)
    job_log.log_attempt_end(_job(), Failed(error), T0 + 600)
    job_log.log_attempt_end(_job(), Deferred(T0 + 9_000, "lane", None), T0 + 600)
    job_log.log_attempt_end(_job(), Released(), T0 + 600)
    job_log.log_job_change(_job(), "job.submitted", "submitted")
    job_log.log_pause("queue", "batch", True, by="admin")


def _lines(monkeypatch: pytest.MonkeyPatch, *, json_lines: bool, direct: bool) -> str:
    configure_logging("info", json_lines=json_lines)
    root = logging.getLogger()
    (ours,) = [handler for handler in root.handlers if hasattr(handler, "write_fields_line")]
    # pytest's own capture handlers are left out; a second handler forces the record.
    others: list[logging.Handler] = [] if direct else [logging.NullHandler()]
    monkeypatch.setattr(root, "handlers", [ours, *others])
    monkeypatch.setattr(job_log, "_WALL", SimClock(T0 + 77))
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    assert (job_log._only_writer() is not None) is direct
    _write_every_kind()
    ours.flush()
    return err.getvalue()


@pytest.mark.parametrize("json_lines", [False, True])
def test_a_line_written_without_its_record_is_the_same_line(
    monkeypatch: pytest.MonkeyPatch, json_lines: bool
) -> None:
    direct = _lines(monkeypatch, json_lines=json_lines, direct=True)
    recorded = _lines(monkeypatch, json_lines=json_lines, direct=False)

    assert direct == recorded
    assert direct.count("\n") == 9 and KEY not in direct
    assert "job 7 (summarize) succeeded on attempt 2/5 in 1.2 s" in direct


def test_a_filter_or_a_record_factory_gets_the_record(monkeypatch: pytest.MonkeyPatch) -> None:
    configure_logging("info", json_lines=False)
    root = logging.getLogger()
    (ours,) = [handler for handler in root.handlers if hasattr(handler, "write_fields_line")]
    monkeypatch.setattr(root, "handlers", [ours])
    assert job_log._only_writer() is not None

    seen: list[logging.LogRecord] = []

    def keep(record: logging.LogRecord) -> bool:
        seen.append(record)
        return True

    monkeypatch.setattr(job_log.log, "filters", [keep])
    assert job_log._only_writer() is None
    job_log.log_started(_job())
    assert seen and seen[0].getMessage().startswith("job 7 (summarize) attempt 2/5 started")

    monkeypatch.setattr(job_log.log, "filters", [])

    class Recorded(logging.LogRecord):
        """A record factory of the user's own."""

    monkeypatch.setattr(logging, "_logRecordFactory", Recorded)
    assert job_log._only_writer() is None


def test_a_handler_with_a_filter_or_another_formatter_makes_the_record(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    configure_logging("info", json_lines=False)
    root = logging.getLogger()
    (ours,) = [handler for handler in root.handlers if hasattr(handler, "write_fields_line")]
    monkeypatch.setattr(root, "handlers", [ours])
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(ours, "formatter", logging.Formatter("%(levelname)s|%(message)s"))

    job_log.log_started(_job())
    ours.flush()

    assert err.getvalue().startswith("INFO|job 7 (summarize) attempt 2/5 started")
