"""backroom: a durable background-job service for slow LLM work.

Submit a job with an idempotency key and get its id at once; a worker runs it under a
lease with retries, backoff and a dead-letter list; poll it, or be called back.

The HTTP client's errors (`ApiError`, `Unauthorized`, `NotFound`, ...) are here too; its
429 is `backroom.client.QueueFull` (`backroom.QueueFull` is the library's own).
"""

from typing import TYPE_CHECKING

from backroom.app import App, load_app
from backroom.clock import Clock, SimClock, SystemClock
from backroom.context import JobContext
from backroom.core.errors import (
    BackroomError,
    ConfigError,
    IdempotencyConflict,
    IllegalTransition,
    InputRefused,
    InvalidJson,
    InvalidTenantName,
    JobError,
    JobNotFound,
    LeaseLost,
    OnceUncertain,
    Permanent,
    QueueFull,
    Retryable,
    StoreError,
    StoreUnavailable,
)
from backroom.core.job import (
    Attempt,
    ErrorInfo,
    Job,
    JobEvent,
    JobState,
    Lease,
    NewJob,
    SubmitResult,
)
from backroom.core.job_batch import NewJobs, SubmittedJobs
from backroom.core.retry import ErrorClassifier, Jitter, RetryPolicy, Schedule, backoff_ms
from backroom.runtime.retention import RetentionPolicy
from backroom.runtime.worker import Worker
from backroom.runtime.worker_config import WorkerConfig
from backroom.store import JobFilter, RedriveFilter, Store, open_store
from backroom.tasks import Task, TaskRegistry
from backroom.testing import run_until_idle

if TYPE_CHECKING:
    from backroom.client import (
        ApiError,
        AsyncClient,
        Client,
        Conflict,
        IdempotencyKeyReused,
        InvalidRequest,
        JobRequest,
        NotFound,
        PayloadTooLarge,
        ServerError,
        ServerUnreachable,
        Unauthorized,
        WaitTimeout,
    )

_CLIENT_NAMES = frozenset(
    {
        "ApiError",
        "AsyncClient",
        "Client",
        "Conflict",
        "IdempotencyKeyReused",
        "InvalidRequest",
        "JobRequest",
        "NotFound",
        "PayloadTooLarge",
        "ServerError",
        "ServerUnreachable",
        "Unauthorized",
        "WaitTimeout",
    }
)

__all__ = [
    "ApiError",
    "App",
    "AsyncClient",
    "Attempt",
    "BackroomError",
    "Client",
    "Clock",
    "ConfigError",
    "Conflict",
    "ErrorClassifier",
    "ErrorInfo",
    "IdempotencyConflict",
    "IdempotencyKeyReused",
    "IllegalTransition",
    "InputRefused",
    "InvalidJson",
    "InvalidRequest",
    "InvalidTenantName",
    "Jitter",
    "Job",
    "JobContext",
    "JobError",
    "JobEvent",
    "JobFilter",
    "JobNotFound",
    "JobRequest",
    "JobState",
    "Lease",
    "LeaseLost",
    "NewJob",
    "NewJobs",
    "NotFound",
    "OnceUncertain",
    "PayloadTooLarge",
    "Permanent",
    "QueueFull",
    "RedriveFilter",
    "RetentionPolicy",
    "RetryPolicy",
    "Retryable",
    "Schedule",
    "ServerError",
    "ServerUnreachable",
    "SimClock",
    "Store",
    "StoreError",
    "StoreUnavailable",
    "SubmitResult",
    "SubmittedJobs",
    "SystemClock",
    "Task",
    "TaskRegistry",
    "Unauthorized",
    "WaitTimeout",
    "Worker",
    "WorkerConfig",
    "backoff_ms",
    "load_app",
    "open_store",
    "run_until_idle",
]


def __getattr__(name: str) -> object:
    """The HTTP client's names, imported when first asked for: its httpx loads rich, click
    and pygments (~100 ms of CPU), which a worker process, importing `backroom` for its
    `App`, would pay for at start-up and never use."""
    if name in _CLIENT_NAMES:
        from backroom import client  # noqa: PLC0415

        return getattr(client, name)
    raise AttributeError(f"module 'backroom' has no attribute {name!r}")
