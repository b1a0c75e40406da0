"""The wire format of `POST /v1/jobs:batch`: the request's jobs and the answer's results."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints
from pydantic.config import JsonDict

from backroom.api.headers import KEY_HEADER_PATTERN, MAX_KEY_LENGTH
from backroom.api.models.jobs import JobDocument, Problem, SubmitRequest
from backroom.service.submit import Submission
from backroom.service.submit_batch import MAX_BATCH

BATCH_EXAMPLE: JsonDict = {
    "jobs": [
        {"task": "demo.summarize", "input": {"text": "first"}, "idempotency_key": "doc-1"},
        {"task": "demo.summarize", "input": {"text": "second"}, "idempotency_key": "doc-2"},
    ]
}


class BatchJob(SubmitRequest):
    """One job of a batch: the fields of `POST /v1/jobs`, and its own idempotency key."""

    idempotency_key: (
        Annotated[
            str,
            StringConstraints(min_length=1, max_length=MAX_KEY_LENGTH, pattern=KEY_HEADER_PATTERN),
        ]
        | None
    ) = Field(
        None,
        description=(
            "1-255 printable ASCII characters: what the Idempotency-Key header is to a "
            "single submission. Send one with every job, so that a retried batch "
            "creates nothing twice."
        ),
    )

    def submission(self) -> Submission:
        """The framework-free form the service takes, with this job's key."""
        return self.to_submission(self.idempotency_key)


class BatchRequest(BaseModel):
    """The body of `POST /v1/jobs:batch`.

    Each job is validated on its own: one with a bad field gets a 422 of its own in the
    answer, and the others are submitted.
    """

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [BATCH_EXAMPLE]})

    jobs: list[dict[str, Any]] = Field(
        min_length=1,
        max_length=MAX_BATCH,
        description=f"1 to {MAX_BATCH:,} jobs, each a `BatchJob`.",
        json_schema_extra={"items": {"$ref": "#/components/schemas/BatchJob"}},
    )


class BatchResult(BaseModel):
    """What became of one job of a batch, as a single submission would have answered."""

    status: int = Field(
        description="202 created, 200 the job its key already named, or a problem's status."
    )
    job: JobDocument | None = Field(None, description="The job, on a 202 or a 200.")
    problem: Problem | None = Field(None, description="Why the job was refused (422, 429).")
    retry_after_s: int | None = Field(
        None, description="On a 429: when to submit that job again, in seconds."
    )


class BatchAnswer(BaseModel):
    """The answer to `POST /v1/jobs:batch`: one result per job, in the request's order."""

    results: list[BatchResult]
