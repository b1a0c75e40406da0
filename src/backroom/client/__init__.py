"""A Python client for a backroom server: `Client` (blocking), `AsyncClient`, and their errors.

`Client` and `AsyncClient` run the same plans (`backroom.client.plans`); the errors are
the typed exceptions of `backroom.client.errors`.
"""

from backroom.client.async_client import AsyncClient
from backroom.client.batch_plans import JobRequest
from backroom.client.blocking_client import Client
from backroom.client.errors import (
    ApiError,
    Conflict,
    IdempotencyKeyReused,
    InvalidRequest,
    NotFound,
    PayloadTooLarge,
    QueueFull,
    ServerError,
    ServerUnreachable,
    Unauthorized,
    WaitTimeout,
)
from backroom.client.plans import ClientConfig, JobPage, RemoteJob, Submitted

__all__ = [
    "ApiError",
    "AsyncClient",
    "Client",
    "ClientConfig",
    "Conflict",
    "IdempotencyKeyReused",
    "InvalidRequest",
    "JobPage",
    "JobRequest",
    "NotFound",
    "PayloadTooLarge",
    "QueueFull",
    "RemoteJob",
    "ServerError",
    "ServerUnreachable",
    "Submitted",
    "Unauthorized",
    "WaitTimeout",
]
