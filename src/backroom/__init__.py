"""backroom: a durable background-job service for slow LLM work.

Submit a job with an idempotency key and get its id at once; a worker runs it under a
lease with retries, backoff and a dead-letter list; poll it, or be called back.
"""

from backroom.app import App, load_app
from backroom.client import AsyncClient, Client
from backroom.clock import Clock, SimClock, SystemClock
from backroom.context import JobContext
from backroom.core.errors import (
    BackroomError,
    ConfigError,
    IdempotencyConflict,
    IllegalTransition,
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
from backroom.core.retry import ErrorClassifier, Jitter, RetryPolicy, Schedule, backoff_ms
from backroom.runtime.retention import RetentionPolicy
from backroom.runtime.worker import Worker
from backroom.runtime.worker_config import WorkerConfig
from backroom.store import JobFilter, RedriveFilter, Store, open_store
from backroom.tasks import Task, TaskRegistry
from backroom.testing import run_until_idle

__all__ = [
    "App",
    "AsyncClient",
    "Attempt",
    "BackroomError",
    "Client",
    "Clock",
    "ConfigError",
    "ErrorClassifier",
    "ErrorInfo",
    "IdempotencyConflict",
    "IllegalTransition",
    "InvalidJson",
    "InvalidTenantName",
    "Jitter",
    "Job",
    "JobContext",
    "JobError",
    "JobEvent",
    "JobFilter",
    "JobNotFound",
    "JobState",
    "Lease",
    "LeaseLost",
    "NewJob",
    "OnceUncertain",
    "Permanent",
    "QueueFull",
    "RedriveFilter",
    "RetentionPolicy",
    "RetryPolicy",
    "Retryable",
    "Schedule",
    "SimClock",
    "Store",
    "StoreError",
    "StoreUnavailable",
    "SubmitResult",
    "SystemClock",
    "Task",
    "TaskRegistry",
    "Worker",
    "WorkerConfig",
    "backoff_ms",
    "load_app",
    "open_store",
    "run_until_idle",
]
