"""Plain-data views of jobs, shared by the CLI and the HTTP API."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from backroom.core.job import Attempt, ErrorInfo, Job, JobState, NewJob
from backroom.core.usage import UsageTotals, usd


# The jobs of one batch, or of one listing, mostly share their times: a few hundred
# recent answers spare most of the formatting.
@lru_cache(maxsize=512)
def iso(ms: int | None) -> str | None:
    """An epoch-millisecond time as ISO 8601 in UTC (None stays None)."""
    if ms is None:
        return None
    return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec="milliseconds")


def error_document(error: ErrorInfo | None) -> dict[str, str] | None:
    """An attempt's error as {type, message}."""
    if error is None:
        return None
    return {"type": error.kind, "message": error.message}


def attempt_document(attempt: Attempt) -> dict[str, Any]:
    """One attempt as plain data."""
    return {
        "number": attempt.number,
        "worker_id": attempt.worker_id,
        "started_at": iso(attempt.started_at),
        "finished_at": iso(attempt.finished_at),
        "outcome": None if attempt.outcome is None else str(attempt.outcome),
        "error": error_document(attempt.error),
        "next_attempt_at": iso(attempt.next_attempt_at),
        "lane": attempt.lane,
    }


def usd_text(amount_pico_usd: int) -> str:
    """Pico-dollars as an exact decimal string of dollars, without trailing zeros.

    >>> usd_text(10_650_000), usd_text(0), usd_text(2_500_000_000_000)
    ('0.00001065', '0', '2.5')
    """
    return f"{usd(amount_pico_usd).normalize():f}"


def usage_document(totals: UsageTotals) -> dict[str, Any]:
    """LLM calls, tokens and cost: an exact decimal string of US dollars, or None when a
    call had no price (a model without prices: its cost is unknown, not zero)."""
    cost = totals.known_cost_pico_usd
    return {
        "calls": totals.calls,
        "input_tokens": totals.input_tokens,
        "cached_tokens": totals.cached_tokens,
        "cache_write_tokens": totals.cache_write_tokens,
        "output_tokens": totals.output_tokens,
        "cost_usd": None if cost is None else usd_text(cost),
        "unpriced_calls": totals.unpriced_calls,
        "estimated_calls": totals.estimated_calls,
    }


def waiting_document(job: Job) -> dict[str, Any] | None:
    """Why a queued job that was due has not started: `{reason, until, since}`, the
    reason a `WaitReason` (`budget`: its tenant's daily LLM budget is spent; `lane`,
    `rate_limit`: its LLM lane is full or its provider said wait). None otherwise."""
    if job.state is not JobState.QUEUED or job.wait_reason is None:
        return None
    return {
        "reason": str(job.wait_reason),
        "until": iso(job.run_at),
        "since": iso(job.waiting_since),
    }


def job_document(
    job: Job, attempts: list[Attempt] | None = None, usage: UsageTotals | None = None
) -> dict[str, Any]:
    """A job as plain data: what a poller needs to know; with `attempts` (a single-job
    read) also its input, idempotency key, a pending cancel and its attempt history; and
    what its LLM calls used (`usage`, for a job in a lane)."""
    document: dict[str, Any] = {
        "id": job.id,
        "task": job.task,
        "status": str(job.state),
        "tenant": job.tenant,
        "queue": job.queue,
        "priority": job.priority,
        "attempts": job.attempt,
        "max_attempts": job.max_attempts,
        "created_at": iso(job.created_at),
        "started_at": iso(job.started_at),
        "finished_at": iso(job.finished_at),
        "next_attempt_at": iso(job.run_at) if job.state is JobState.QUEUED else None,
        "progress": job.progress,
        "partial": job.partial,
        "metadata": job.metadata,
    }
    waiting = waiting_document(job)
    if waiting is not None:
        document["waiting"] = waiting
    if job.state is JobState.SUCCEEDED:
        document["result"] = job.result
    if job.error is not None:
        document["last_error"] = error_document(job.error)
    if job.state is JobState.FAILED:
        document["error"] = f"failed after {job.attempt} attempts: {job.error or 'unknown'}"
    if attempts is not None:
        # A single-job read: also what was asked for, under which key, and a pending cancel.
        document["input"] = job.input
        document["idempotency_key"] = job.idempotency_key
        document["cancel_requested"] = job.cancel_requested
        document["attempt_history"] = [attempt_document(a) for a in attempts]
    if usage is not None:
        document["usage"] = usage_document(usage)
    return document


def queued_document(job_id: int, new: NewJob, now: int) -> dict[str, Any]:
    """`job_document` of the job `new` became when stored at `now` with `job_id`, built
    without the `Job` (a batch answers a thousand of them)."""
    return {
        "id": job_id,
        "task": new.task,
        "status": "queued",
        "tenant": new.tenant,
        "queue": new.queue,
        "priority": new.priority,
        "attempts": 0,
        "max_attempts": new.max_attempts,
        "created_at": iso(now),
        "started_at": None,
        "finished_at": None,
        "next_attempt_at": iso(new.run_at),
        "progress": None,
        "partial": None,
        "metadata": new.metadata,
    }
