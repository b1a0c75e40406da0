"""The mock's OpenAI Batch API state: uploaded files and the batches run from them.

A batch is `validating` when created, `in_progress` at once after, and `completed`
`delay_ms` after its creation (`BatchMockConfig`); its output and error files are
written then, from each line's body, as `POST /v1/responses` would answer it (the
same deterministic text, usage and scripted faults: a line whose prompt carries
`[fault:503]` fails with a 503 in the error file). With `expire_ms` set below the
delay, a batch expires instead: its first half of lines are answered and the rest
get `batch_expired`. A cancelled batch answers no line. Time comes from the clock.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any

from backroom.clock import Clock
from backroom.llm.mock.faults import FaultCounter, find_fault
from backroom.llm.mock.prompt import prompt_from_responses
from backroom.llm.mock.reply import compose_reply, prompt_key
from backroom.llm.mock.responses import response_body

JSON = Any


@dataclass(frozen=True, slots=True)
class BatchMockConfig:
    """How the mock's batches behave: when they complete, or expire instead."""

    delay_ms: int = 0
    """How long after its creation a batch completes."""
    expire_ms: int | None = None
    """With a value below `delay_ms`: batches expire that long after creation."""
    create_delay_ms: int = 0
    """How long `POST /v1/batches` takes to answer, the batch already created."""


@dataclass(slots=True)
class MockBatch:
    """One batch as the mock holds it."""

    id: str
    input_file_id: str
    endpoint: str
    metadata: dict[str, str]
    created_s: int
    due_ms: int
    expires_ms: int | None
    total: int
    status: str = "in_progress"
    counts: tuple[int, int] = (0, 0)
    output_file_id: str | None = None
    error_file_id: str | None = None
    ended_s: int | None = None

    def body(self) -> JSON:
        """The batch in the API's shape."""
        completed, failed = self.counts
        return {
            "id": self.id,
            "object": "batch",
            "endpoint": self.endpoint,
            "errors": None,
            "input_file_id": self.input_file_id,
            "completion_window": "24h",
            "status": self.status,
            "output_file_id": self.output_file_id,
            "error_file_id": self.error_file_id,
            "created_at": self.created_s,
            "in_progress_at": self.created_s,
            "completed_at": self.ended_s if self.status == "completed" else None,
            "expired_at": self.ended_s if self.status == "expired" else None,
            "cancelled_at": self.ended_s if self.status == "cancelled" else None,
            "request_counts": {"total": self.total, "completed": completed, "failed": failed},
            "metadata": self.metadata,
        }


def _error_line(custom: str, number: int, status: int, body: JSON) -> str:
    response = {"status_code": status, "request_id": f"req_{number}", "body": body}
    line = {"id": f"batch_req_{number}", "custom_id": custom, "response": response}
    return json.dumps(line | {"error": None})


@dataclass(slots=True)
class MockBatchApi:
    """Files and batches, held in memory; `refresh` moves batches on by the clock."""

    config: BatchMockConfig
    clock: Clock
    files: dict[str, bytes] = field(default_factory=dict)
    batches: dict[str, MockBatch] = field(default_factory=dict)
    faults: FaultCounter = field(default_factory=FaultCounter)
    _numbers: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def add_file(self, content: bytes) -> str:
        """Store an uploaded file; its id."""
        file_id = f"file-{next(self._numbers)}"
        self.files[file_id] = content
        return file_id

    def create(self, input_file_id: str, endpoint: str, metadata: dict[str, str]) -> MockBatch:
        """A new batch of the file's lines (KeyError for an unknown file)."""
        lines = self.files[input_file_id].splitlines()
        now = self.clock.now()
        expires = self.config.expire_ms
        batch = MockBatch(
            id=f"batch_{next(self._numbers)}",
            input_file_id=input_file_id,
            endpoint=endpoint,
            metadata=dict(metadata),
            created_s=now // 1000,
            due_ms=now + self.config.delay_ms,
            expires_ms=None if expires is None else now + expires,
            total=len(lines),
        )
        self.batches[batch.id] = batch
        return batch

    def refresh(self, batch: MockBatch) -> MockBatch:
        """Complete or expire the batch if its time has come."""
        now = self.clock.now()
        if batch.status != "in_progress":
            return batch
        if batch.expires_ms is not None and batch.expires_ms < batch.due_ms:
            if now >= batch.expires_ms:
                self._end(batch, "expired", answered=batch.total // 2)
        elif now >= batch.due_ms:
            self._end(batch, "completed", answered=batch.total)
        return batch

    def cancel(self, batch: MockBatch) -> MockBatch:
        """Cancel a batch not yet ended: none of its lines is answered."""
        self.refresh(batch)
        if batch.status == "in_progress":
            self._end(batch, "cancelled", answered=0)
        return batch

    def _end(self, batch: MockBatch, status: str, *, answered: int) -> None:
        outputs: list[str] = []
        errors: list[str] = []
        for index, raw in enumerate(self.files[batch.input_file_id].splitlines()):
            line = json.loads(raw)
            number = next(self._numbers)
            if index >= answered:
                errors.append(_unanswered(line["custom_id"], number, status))
            else:
                ok, text = self._answer(line, number)
                (outputs if ok else errors).append(text)
        batch.counts = (len(outputs), len(errors))
        batch.status = status
        batch.ended_s = self.clock.now() // 1000
        if outputs:
            batch.output_file_id = self.add_file("\n".join(outputs).encode() + b"\n")
        if errors:
            batch.error_file_id = self.add_file("\n".join(errors).encode() + b"\n")

    def _answer(self, line: JSON, number: int) -> tuple[bool, str]:
        custom = line["custom_id"]
        try:
            prompt = prompt_from_responses(line["body"])
            fault = find_fault(prompt.text)
        except (ValueError, KeyError) as error:
            return False, _error_line(custom, number, 400, _error_body(f"Invalid request: {error}"))
        key = prompt_key(prompt)
        if fault is not None and fault.applies_to(prompt.model) and self.faults.fires(fault, key):
            message = f"Scripted fault: HTTP {fault.status} for this request."
            return False, _error_line(custom, number, fault.status, _error_body(message))
        created_s = self.clock.now() // 1000
        reply = compose_reply(prompt, number=number, created_s=created_s, cached=False)
        response = {"status_code": 200, "request_id": f"req_{number}", "body": response_body(reply)}
        line_out = {"id": f"batch_req_{number}", "custom_id": custom, "response": response}
        return True, json.dumps(line_out | {"error": None})


def _error_body(message: str) -> JSON:
    return {"error": {"message": message, "type": "invalid_request_error", "code": None}}


def _unanswered(custom: str, number: int, status: str) -> str:
    code = "batch_expired" if status == "expired" else "batch_cancelled"
    message = f"This request could not be executed before the batch was {status}."
    error = {"code": code, "message": message}
    line = {"id": f"batch_req_{number}", "custom_id": custom, "response": None}
    return json.dumps(line | {"error": error})
