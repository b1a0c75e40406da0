"""The closed set of ways an attempt can end; each maps to one store call."""

from __future__ import annotations

from dataclasses import dataclass

from backroom.core.job import JSON, ErrorInfo, WaitReason


@dataclass(frozen=True, slots=True)
class Succeeded:
    """The handler returned `result`."""

    result: JSON


@dataclass(frozen=True, slots=True)
class RetryAt:
    """The attempt failed; run again no earlier than `at`."""

    at: int
    error: ErrorInfo


@dataclass(frozen=True, slots=True)
class Failed:
    """The job failed for good: a permanent error, or no attempts left."""

    error: ErrorInfo


@dataclass(frozen=True, slots=True)
class Cancelled:
    """The job was cancelled while it ran."""

    reason: str = "cancelled"


@dataclass(frozen=True, slots=True)
class Released:
    """The worker gave the job back unfinished (shutdown); the attempt does not count."""

    reason: str = "worker shut down"


@dataclass(frozen=True, slots=True)
class Deferred:
    """The job could not start yet (its lane was busy, its tenant's budget spent, or
    its provider refused the call for a rate limit): run again no earlier than
    `run_at`; the attempt does not count.

    `error` is what the provider said, when it refused a call; `reason` is stored
    with the transition; `wait` is the kind of reason, shown on the queued job.
    """

    run_at: int
    reason: str = "deferred"
    error: ErrorInfo | None = None
    wait: WaitReason = WaitReason.LANE


Outcome = Succeeded | RetryAt | Failed | Cancelled | Released | Deferred
"""How one attempt ended."""
