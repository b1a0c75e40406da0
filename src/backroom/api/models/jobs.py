"""The wire format: pydantic models of request bodies, responses and problems.

Requests are validated here (a bad field is a 422 naming it); responses are built by
`backroom.service.documents` and these models only describe them in the OpenAPI document.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StringConstraints,
    model_validator,
)
from pydantic.config import JsonDict

from backroom.api.models.provider_batches import JobBatchDocument
from backroom.core.errors import InvalidJson
from backroom.core.job import JobState, WaitReason
from backroom.core.plain_json import check_plain_json
from backroom.service.submit import Submission

MIN_TIMEOUT_S = 0.001
"""The shortest attempt timeout: jobs keep it in whole milliseconds."""


def _encodable(value: str) -> str:
    # A JSON string may hold a lone surrogate ("\ud800"), which no database can store.
    value.encode()
    return value


def _plain_json(value: Any) -> Any:
    # Python's JSON parser accepts NaN and Infinity, and lone surrogates in strings and
    # keys: refuse them here rather than store what no client can read back.
    try:
        check_plain_json(value, "the value")
    except InvalidJson as error:
        raise ValueError(error.reason) from None  # pydantic reports a ValueError as a 422
    return value


Name = Annotated[
    str,
    StringConstraints(min_length=1, max_length=200, pattern=r"^[^\x00-\x1f\x7f]+$"),
    AfterValidator(_encodable),
]
"""A task or queue name: 1-200 characters, no control characters."""

JsonValue = Annotated[Any, AfterValidator(_plain_json)]
"""Any JSON value without NaN, Infinity or lone surrogates."""

JsonObject = Annotated[dict[str, Any], AfterValidator(_plain_json)]
"""A JSON object whose keys are checked as strictly as its values."""


SUBMIT_EXAMPLE: JsonDict = {
    "task": "demo.summarize",
    "input": {"text": "Backroom runs slow work in the background."},
    "queue": "interactive",
    "priority": 0,
    "metadata": {"customer": "acme"},
}

JOB_EXAMPLE: JsonDict = {
    "id": 42,
    "task": "demo.summarize",
    "status": "succeeded",
    "tenant": "default",
    "queue": "interactive",
    "priority": 0,
    "attempts": 2,
    "max_attempts": 3,
    "created_at": "2026-12-01T12:00:00.000+00:00",
    "started_at": "2026-12-01T12:00:01.250+00:00",
    "finished_at": "2026-12-01T12:00:02.800+00:00",
    "next_attempt_at": None,
    "progress": 1.0,
    "partial": "Backroom runs slow work",
    "metadata": {"customer": "acme"},
    "result": {"summary": "Backroom runs slow work in the background.", "words": 7},
}


class SubmitRequest(BaseModel):
    """The body of `POST /v1/jobs`."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [SUBMIT_EXAMPLE]})

    task: Name = Field(description="The registered task to run.")
    input: JsonValue = Field(description="The task's input: any JSON value.")
    queue: Name | None = Field(None, description="The queue; the task's default if omitted.")
    # Strict: JSON `true` or `1.5` is not a priority, though Python would take them as 1.
    priority: StrictInt = Field(0, ge=-1000, le=1000, description="Higher runs first.")
    max_attempts: StrictInt | None = Field(
        None, ge=1, le=100, description="Attempts before failing."
    )
    timeout_s: float | None = Field(
        None,
        ge=MIN_TIMEOUT_S,
        le=86_400,
        allow_inf_nan=False,
        description="Limit of one attempt, in seconds (at least 0.001: timeouts are kept in ms).",
    )
    delay_s: float = Field(
        0, ge=0, le=31_536_000, allow_inf_nan=False, description="Wait before the first attempt."
    )
    metadata: JsonObject = Field(
        default_factory=dict, description="Free-form labels stored with the job."
    )
    webhook_url: Annotated[str, StringConstraints(min_length=8, max_length=2048)] | None = Field(
        None,
        description=(
            "An http(s) URL on a public address to POST the job's end to (succeeded, failed "
            "or cancelled), signed with the tenant's signing secret "
            "(GET /v1/webhooks/signing-secret)."
        ),
    )

    def to_submission(self, key: str | None, traceparent: str | None = None) -> Submission:
        """The framework-free form the service takes, with the request's Idempotency-Key
        and W3C `traceparent`."""
        return Submission(
            task=self.task,
            key=key,
            traceparent=traceparent,
            input=self.input,
            queue=self.queue,
            priority=self.priority,
            max_attempts=self.max_attempts,
            timeout_s=self.timeout_s,
            delay_s=self.delay_s,
            metadata=self.metadata,
            webhook_url=self.webhook_url,
        )


class RedriveRequest(BaseModel):
    """The body of `POST /v1/dead-letters/redrive`: which failed jobs.

    Every failed job is a lot to send back by accident, so it takes `{"all": true}`;
    otherwise name a task or a queue (or both). An empty body is refused.
    """

    model_config = ConfigDict(extra="forbid")

    all: StrictBool = Field(False, description="Redrive every failed job (no filter).")
    task: Name | None = Field(None, description="Only this task's failed jobs.")
    queue: Name | None = Field(None, description="Only this queue's failed jobs.")

    @model_validator(mode="after")
    def _one_choice(self) -> RedriveRequest:
        filtered = self.task is not None or self.queue is not None
        if self.all and filtered:
            raise ValueError('send either {"all": true} or a task/queue filter, not both')
        if not (self.all or filtered):
            raise ValueError('name a task or a queue, or send {"all": true} to redrive every job')
        return self


class ErrorDocument(BaseModel):
    """The error an attempt ended with."""

    type: str
    message: str


class AttemptDocument(BaseModel):
    """One attempt of a job."""

    number: int
    worker_id: str
    started_at: datetime
    finished_at: datetime | None
    outcome: str | None
    error: ErrorDocument | None
    next_attempt_at: datetime | None
    lane: str | None = Field(
        None, description="The LLM lane (`provider/model`) its call went to, if any."
    )


class WaitingDocument(BaseModel):
    """Why a queued job that was due has not started yet, using no attempt meanwhile."""

    reason: WaitReason = Field(
        description="budget: its tenant's daily LLM budget is spent (until the next UTC "
        "day); lane: its LLM lane is full; rate_limit: its provider said wait; store: "
        "the store failed."
    )
    until: datetime = Field(description="When it tries again.")
    since: datetime = Field(description="When it was first due: how long it has waited.")


class JobDocument(BaseModel):
    """A job: what a poller needs to know. `result` is there once it succeeded,
    `error` ("failed after N attempts: ...") once it failed for good."""

    model_config = ConfigDict(json_schema_extra={"examples": [JOB_EXAMPLE]})

    id: int
    task: str
    status: JobState
    tenant: str
    queue: str
    priority: int
    attempts: int = Field(description="Attempts started so far.")
    max_attempts: int
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    next_attempt_at: datetime | None = None
    waiting: WaitingDocument | None = Field(
        None,
        description="Why a queued job that was due has not started (absent: it has not "
        "been held back).",
    )
    progress: float | None = Field(description="Coarse progress, 0 to 1.")
    partial: Any = Field(description="Partial output the task reported.")
    metadata: dict[str, Any]
    result: Any = None
    error: str | None = None
    last_error: ErrorDocument | None = None
    input: Any = Field(None, description="The task's input (single-job reads only).")
    idempotency_key: str | None = Field(
        None, description="The Idempotency-Key it was submitted with (single-job reads only)."
    )
    cancel_requested: bool | None = Field(
        None,
        description="A cancel is asked for and its worker has yet to stop it "
        "(single-job reads only).",
    )
    attempt_history: list[AttemptDocument] | None = Field(
        None, description="Every attempt, oldest first (single-job reads only)."
    )
    usage: dict[str, Any] | None = Field(None, description="LLM usage and cost, when tracked.")
    provider_batch: JobBatchDocument | None = Field(
        None, description="The provider batch it waits in, offloaded (single-job reads only)."
    )


class JobPage(BaseModel):
    """One page of jobs, newest first."""

    jobs: list[JobDocument]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page.")


class RedriveResult(BaseModel):
    """What a bulk redrive sent back to the queue."""

    redriven: int
    job_ids: list[int]


class Status(BaseModel):
    """A health answer."""

    status: str


class FieldError(BaseModel):
    """One invalid field of a request."""

    loc: list[str | int]
    msg: str
    type: str


class Problem(BaseModel):
    """An RFC 9457 problem: every error answer has this shape."""

    model_config = ConfigDict(extra="allow")

    type: str = Field(description="A URN naming the problem, or about:blank.")
    title: str
    status: int
    detail: str
    errors: list[FieldError] | None = Field(None, description="The invalid fields, on a 422.")
