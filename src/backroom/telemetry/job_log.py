"""One structured log line per job transition and per pause of a queue or lane.

Each line is a readable sentence (`job 7 (summarize) succeeded on attempt 1/3 in
0.4 s`) carrying its facts as fields (`record.fields`): event, job id, tenant, task,
queue, attempt, outcome, error class, duration. `backroom.cli.logs` prints the fields
after the sentence, or as the keys of a JSON line with `--log-json`. Errors appear by
class and message; a job's input, result and metadata never reach the log.
"""

from __future__ import annotations

import logging
from typing import Any

from backroom.core.job import Job
from backroom.core.outcome import Deferred, Failed, Outcome, RetryAt
from backroom.telemetry.process_metrics import error_class, outcome_name

log = logging.getLogger("backroom.jobs")

FIELDS = "fields"
"""The attribute of a log record that holds its facts (a dict), for formatters."""


def _job_fields(job: Job, event: str, **more: Any) -> dict[str, Any]:
    fields = {
        "event": event,
        "job_id": job.id,
        "tenant": job.tenant,
        "task": job.task,
        "queue": job.queue,
        "attempt": job.attempt,
    }
    fields.update((key, value) for key, value in more.items() if value is not None)
    return fields


def _emit(level: int, message: str, fields: dict[str, Any]) -> None:
    # Made and handled directly: `Logger.log` would first walk the stack for the
    # caller's file and line, which no format here shows (two lines a job add up).
    if log.isEnabledFor(level):
        record = log.makeRecord(
            log.name, level, __file__, 0, message, (), None, extra={FIELDS: fields}
        )
        log.handle(record)


def _seconds(ms: int) -> str:
    return f"{max(0, ms) / 1000:.1f} s"


def log_started(job: Job) -> None:
    """A worker began an attempt of `job` (as claimed)."""
    waited = None if job.started_at is None else max(0, job.started_at - job.run_at)
    name = f"job {job.id} ({job.task}) attempt {job.attempt}/{job.max_attempts}"
    _emit(
        logging.INFO,
        f"{name} started after waiting {_seconds(waited or 0)}",
        _job_fields(job, "job.started", wait_ms=waited),
    )


def log_attempt_end(job: Job, outcome: Outcome, now: int) -> None:
    """The stored end of an attempt of `job` (as claimed), at `now`."""
    outcome_text = outcome_name(outcome)
    duration = None if job.started_at is None else max(0, now - job.started_at)
    fields = _job_fields(
        job,
        f"job.{outcome_text}",
        outcome=outcome_text,
        error_class=error_class(outcome) or None,
        duration_ms=duration,
    )
    level, message = _sentence(job, outcome, now, duration or 0)
    _emit(level, message, fields)


def _sentence(job: Job, outcome: Outcome, now: int, duration: int) -> tuple[int, str]:
    """The level and the words of an attempt's end."""
    name, tries = f"job {job.id} ({job.task})", f"{job.attempt}/{job.max_attempts}"
    if isinstance(outcome, RetryAt):
        retry = f"retrying in {_seconds(outcome.at - now)}"
        return logging.WARNING, f"{name} attempt {tries} failed, {retry}: {outcome.error}"
    if isinstance(outcome, Failed):
        return logging.ERROR, f"{name} failed for good after attempt {tries}: {outcome.error}"
    if isinstance(outcome, Deferred):
        reason = f"{outcome.reason}: {outcome.error}" if outcome.error else outcome.reason
        return (
            logging.INFO,
            f"{name} attempt {tries} deferred {_seconds(outcome.run_at - now)}: {reason}",
        )
    ended = outcome_name(outcome)
    if ended == "succeeded":
        return logging.INFO, f"{name} succeeded on attempt {tries} in {_seconds(duration)}"
    if ended == "released":
        return logging.INFO, f"{name} handed back to the queue at shutdown, attempt {tries}"
    return logging.INFO, f"{name} cancelled during attempt {tries}"


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
