"""One structured log line per job transition and per pause of a queue or lane.

Each line is a readable sentence (`job 7 (summarize) succeeded on attempt 1/3 in
0.4 s`) carrying its facts as fields (`record.fields`): event, job id, tenant, task,
queue, attempt, outcome, error class, duration. `backroom.cli.logs` prints the fields
after the sentence, or as the keys of a JSON line with `--log-json`. Errors appear by
class and message; a job's input, result and metadata never reach the log.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Callable
from typing import Any

from backroom.clock import SystemClock
from backroom.core.job import Job
from backroom.core.outcome import Deferred, Failed, Outcome, RetryAt, Succeeded
from backroom.telemetry.process_metrics import error_class, outcome_name

log = logging.getLogger("backroom.jobs")

FIELDS = "fields"
"""The attribute of a log record that holds its facts (a dict), for formatters."""

FieldsLineWriter = Callable[[int, int, str, str, dict[str, Any]], bool]
"""A handler's way to write a line without its record: (time in ms, level, logger
name, message, fields) -> written (False: make the record)."""


def _job_fields(job: Job, event: str) -> dict[str, Any]:
    return {
        "event": event,
        "job_id": job.id,
        "tenant": job.tenant,
        "task": job.task,
        "queue": job.queue,
        "attempt": job.attempt,
    }


_WALL = SystemClock()
"""A record's time is the wall clock's, whatever clock the worker runs on."""
_shared: tuple[int, dict[str, Any]] = (-1, {})
"""A record's attributes that stay the same in one thread of one process (its pid,
thread and process names, ...), taken from a record made the standard way."""


def _forget_shared() -> None:
    global _shared  # noqa: PLW0603  # a forked child has another pid
    _shared = (-1, {})


os.register_at_fork(after_in_child=_forget_shared)


def _record(level: int, message: str, fields: dict[str, Any]) -> logging.LogRecord:
    """A record as `Logger.makeRecord` makes it, for a fraction of its cost.

    Made directly (not through `Logger.log`, which first walks the stack for the
    caller's file and line, which no format here shows), and from the attributes this
    thread shares (`LogRecord.__init__` looks up the thread, the process and its name
    for every record: two records a job add up). A custom record factory is honoured.
    """
    global _shared  # noqa: PLW0603  # refreshed per thread
    if logging.getLogRecordFactory() is not logging.LogRecord:
        made = log.makeRecord(log.name, level, __file__, 0, message, (), None)
        made.fields = fields
        return made
    key = threading.get_ident()
    if _shared[0] != key:
        made = log.makeRecord(log.name, level, __file__, 0, message, (), None)
        _shared = (key, dict(made.__dict__))
    base = _shared[1]
    record = logging.LogRecord.__new__(logging.LogRecord)
    record.__dict__.update(base)
    now = _WALL.now()  # ms: what every format shows
    record.created = now / 1000
    record.msecs = now % 1000 + 0.0
    record.relativeCreated = base["relativeCreated"] + (now - base["created"] * 1000)
    record.msg, record.levelno, record.levelname = message, level, logging.getLevelName(level)
    record.fields = fields
    if "taskName" in base:  # Python 3.12+: the asyncio task, as `LogRecord` names it
        record.taskName = _task_name()
    return record


def _task_name() -> str | None:
    try:
        task = asyncio.current_task()
    except RuntimeError:
        return None
    return None if task is None else task.get_name()


def _emit(level: int, message: str, fields: dict[str, Any]) -> None:
    if log.isEnabledFor(level):
        _write(level, message, fields)


def _write(level: int, message: str, fields: dict[str, Any]) -> None:
    """`_emit` once `level` is known to be enabled."""
    write = _only_writer()
    if write is None or not write(_WALL.now(), level, log.name, message, fields):
        log.handle(_record(level, message, fields))


def _only_writer() -> FieldsLineWriter | None:
    """The `write_fields_line` of the one handler a line of this logger reaches, if it
    has one (`backroom.cli.logs` sets such a handler up): it writes the line without a
    `LogRecord` and logging's dispatch (half a line's cost). None, so the record is
    made, when anything could see a record: a filter, another handler (pytest's
    `caplog`, say), a custom record factory."""
    if log.disabled or log.filters or logging.getLogRecordFactory() is not logging.LogRecord:
        return None
    found: logging.Handler | None = None
    logger: logging.Logger | None = log
    while logger is not None:
        for handler in logger.handlers:
            if found is not None:
                return None
            found = handler
        logger = logger.parent if logger.propagate else None
    return getattr(found, "write_fields_line", None)


def _seconds(ms: int) -> str:
    return f"{max(0, ms) / 1000:.1f} s"


def log_started(job: Job) -> None:
    """A worker began an attempt of `job` (as claimed)."""
    if not log.isEnabledFor(logging.INFO):
        return
    fields = _job_fields(job, "job.started")
    waited = 0
    if job.started_at is not None:
        waited = fields["wait_ms"] = max(0, job.started_at - job.run_at)
    name = f"job {job.id} ({job.task}) attempt {job.attempt}/{job.max_attempts}"
    _write(logging.INFO, f"{name} started after waiting {waited / 1000:.1f} s", fields)


def log_attempt_end(job: Job, outcome: Outcome, now: int) -> None:
    """The stored end of an attempt of `job` (as claimed), at `now`."""
    level = _level(outcome)
    if not log.isEnabledFor(level):
        return
    outcome_text = outcome_name(outcome)
    fields = _job_fields(job, f"job.{outcome_text}")
    fields["outcome"] = outcome_text
    if error := error_class(outcome):
        fields["error_class"] = error
    duration = 0
    if job.started_at is not None:
        duration = fields["duration_ms"] = max(0, now - job.started_at)
    _write(level, _sentence(job, outcome, now, duration), fields)


def _level(outcome: Outcome) -> int:
    """How severe an attempt's end is: a retry warns, a failure for good is an error."""
    if isinstance(outcome, RetryAt):
        return logging.WARNING
    return logging.ERROR if isinstance(outcome, Failed) else logging.INFO


def _sentence(job: Job, outcome: Outcome, now: int, duration: int) -> str:
    """The words of an attempt's end."""
    if type(outcome) is Succeeded:  # the usual end, first
        return (
            f"job {job.id} ({job.task}) succeeded on attempt {job.attempt}/{job.max_attempts}"
            f" in {max(0, duration) / 1000:.1f} s"
        )
    name, tries = f"job {job.id} ({job.task})", f"{job.attempt}/{job.max_attempts}"
    if isinstance(outcome, RetryAt):
        retry = f"retrying in {_seconds(outcome.at - now)}"
        return f"{name} attempt {tries} failed, {retry}: {outcome.error}"
    if isinstance(outcome, Failed):
        return f"{name} failed for good after attempt {tries}: {outcome.error}"
    if isinstance(outcome, Deferred):
        reason = f"{outcome.reason}: {outcome.error}" if outcome.error else outcome.reason
        return f"{name} attempt {tries} deferred {_seconds(outcome.run_at - now)}: {reason}"
    ended = outcome_name(outcome)
    if ended == "succeeded":
        return f"{name} succeeded on attempt {tries} in {_seconds(duration)}"
    if ended == "released":
        return f"{name} handed back to the queue at shutdown, attempt {tries}"
    return f"{name} cancelled during attempt {tries}"


def log_job_change(job: Job, event: str, words: str) -> None:
    """A change a caller made to `job` through the service: submitted, cancelled,
    cancel requested, redriven (`event` names it: `job.submitted`, ...)."""
    _emit(logging.INFO, f"job {job.id} ({job.task}) {words}", _job_fields(job, event))


def log_pause(kind: str, name: str, paused: bool, *, by: str, for_ms: int | None = None) -> None:
    """A queue or lane paused or resumed by `by` (a person: `admin`; a provider's 429:
    `provider`, for `for_ms`)."""
    action = "paused" if paused else "resumed"
    fields: dict[str, Any] = {"event": f"{kind}.{action}", kind: name, "by": by}
    words = f"{kind} {name} {action} by {by}"
    if for_ms is not None:
        fields["pause_ms"] = for_ms
        words += f" for {_seconds(for_ms)}"
    _emit(logging.WARNING if paused else logging.INFO, words, fields)
