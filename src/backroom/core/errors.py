"""Every exception backroom raises or understands, under one base class.

BackroomError
├── IllegalTransition      the core refused a state change
├── IdempotencyConflict    a key was reused with a different payload
├── QueueFull              the tenant has as many active jobs as its cap allows
├── JobNotFound            no such job (or not the caller's)
├── LeaseLost              the worker no longer holds the job's lease
├── Offloaded              the handler handed its job to a provider batch
├── ConfigError            bad settings, URL or task reference
│   └── WebhookTargetRefused  a webhook URL that may not be called (scheme, address)
├── InvalidJson            a submission's input or metadata is not plain JSON
├── InputRefused           a task refused a submission's input (a model not configured)
├── InvalidTenantName      a tenant name outside the pattern, or a reserved one
├── StoreError             the store failed
│   └── StoreUnavailable   the store cannot be reached right now
└── JobError               raised by a handler to say how its attempt ended
    ├── Retryable          try again (no earlier than `after_ms`, if given)
    │   └── LaneLimited    the lane's provider refused the call: wait, no attempt used
    ├── BudgetRefused      the tenant's LLM budget cannot hold the call: wait, or fail
    └── Permanent          never try again: the job fails at once
        ├── OnceUncertain  a `ctx.once` effect began but its end was never recorded
        └── CostCapReached the next call could take the job past its `max_cost_usd`
"""

from __future__ import annotations

from collections.abc import Mapping


class BackroomError(Exception):
    """Base class of every backroom exception."""


class IllegalTransition(BackroomError):
    """A state change that the job lifecycle does not allow."""


class IdempotencyConflict(BackroomError):
    """An idempotency key was reused with a different payload."""

    def __init__(self, key: str, job_id: int) -> None:
        super().__init__(
            f"idempotency key {key!r} was already used for job {job_id} with a different payload"
        )
        self.key = key
        self.job_id = job_id


class QueueFull(BackroomError):
    """The tenant already has `cap` jobs queued or running; nothing was stored."""

    def __init__(self, tenant: str, cap: int) -> None:
        super().__init__(f"tenant {tenant!r} has {cap} jobs queued or running, its cap")
        self.tenant = tenant
        self.cap = cap


class JobNotFound(BackroomError):
    """No job with this id is visible to the caller."""

    def __init__(self, job_id: int) -> None:
        super().__init__(f"job {job_id} not found")
        self.job_id = job_id


class LeaseLost(BackroomError):
    """The job's lease expired or was taken over; this worker may not write to it."""


class Offloaded(BackroomError):
    """Raised by a handler that handed its job to a provider batch (stored as such).

    The worker lets go of the job and stores nothing: the job stays running, holding
    no worker and no lease that can expire, until the batch's poller finishes it.
    """


class ConfigError(BackroomError):
    """Invalid configuration: a setting, a database URL, or an `--app` reference."""


class InvalidJson(BackroomError):
    """A value that is not plain JSON: NaN, Infinity, a lone surrogate in a string or a
    key, or a Python object JSON has no form for. Nothing was stored."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field} is not plain JSON: {reason}")
        self.field = field
        self.reason = reason


class InputRefused(BackroomError):
    """A task's check refused a submission's input before anything was stored.

    `field` is the path inside the input (`("model",)`), `reason` says why, and
    `details` carries what a client needs to fix it (the configured models, say); the
    HTTP API answers a 422 with them.
    """

    def __init__(
        self, field: tuple[str | int, ...], reason: str, details: Mapping[str, object] | None = None
    ) -> None:
        where = ".".join(str(part) for part in ("input", *field))
        super().__init__(f"{where}: {reason}")
        self.field = field
        self.reason = reason
        self.details = dict(details or {})


class InvalidTenantName(BackroomError):
    """A tenant name outside the pattern (`backroom.core.tenant_names`), or a reserved one."""


class StoreError(BackroomError):
    """The store failed to carry out an operation."""


class StoreUnavailable(StoreError):
    """The store cannot be reached right now; the operation may succeed later."""


class JobError(BackroomError):
    """Raised by a handler to say how its attempt ended."""


class Retryable(JobError):
    """The attempt failed but may succeed later.

    `after_ms` is the least wait the failure asks for (a server's Retry-After): the next
    attempt is never scheduled earlier than that.
    """

    def __init__(self, message: str = "", *, after_ms: int | None = None) -> None:
        super().__init__(message)
        self.after_ms = after_ms


class LaneLimited(Retryable):
    """A call was refused for its lane's rate limit, not for anything the job did.

    Raised by a task whose jobs run in a lane (an LLM provider's 429): the job goes
    back to the queue for `after_ms` (or a moment) without using an attempt.
    """


class BudgetRefused(JobError):
    """The tenant's daily LLM budget cannot hold the call's worst-case cost.

    Raised before the call is sent, so nothing was spent and no attempt is used. With
    `until_next_day`, only the next UTC day makes room: the job waits for it, or fails
    if the worker is set so. Without, the calls in flight hold the room: once they
    settle (usually below their reservations) it may fit, so the job waits a moment.
    """

    def __init__(self, message: str, *, until_next_day: bool) -> None:
        super().__init__(message)
        self.until_next_day = until_next_day


class Permanent(JobError):
    """The attempt failed and no retry can succeed: the job fails at once."""


class OnceUncertain(Permanent):
    """A `ctx.once` effect was begun by an earlier attempt that never recorded its end.

    The effect may or may not have happened; running it again could repeat it, so the
    job fails at once (to the dead-letter list) unless the handler catches this. Its
    message tells a person what to check and how to run the effect again: a redrive
    forgets the unfinished effect, so it runs again.
    """

    def __init__(self, name: str, job_id: int) -> None:
        super().__init__(
            f"effect {name!r} of job {job_id} began in an earlier attempt that ended "
            "before recording whether it finished, so it may or may not have happened; "
            "the job fails rather than risk doing it twice. Check whether "
            f"{name!r} took effect; if it did not, redrive the job "
            f"(`backroom redrive {job_id}` or POST /v1/dead-letters/{job_id}/redrive) "
            "and the effect runs again"
        )
        self.name = name
        self.job_id = job_id


class CostCapReached(Permanent):
    """The job's next call could cost more than its `max_cost_usd` leaves: it fails.

    Its stored error kind is `cost-cap-reached` (`error_kind`), and its message says
    what the job has spent.
    """

    error_kind = "cost-cap-reached"


class WebhookTargetRefused(ConfigError):
    """A webhook URL that backroom will not call: not http(s), or not a public address."""
