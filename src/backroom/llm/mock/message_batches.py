"""The mock's Message Batches (Anthropic's batch API), on the injected clock.

    POST /v1/messages/batches                 create: {requests: [{custom_id, params}]},
                                              answered `create_delay_ms` after it is made
    GET  /v1/messages/batches                 list, newest first (limit, after_id)
    GET  /v1/messages/batches/{id}            retrieve: in_progress or ended
    POST /v1/messages/batches/{id}/cancel     cancel: lines not yet done are canceled,
                                              and the batch ends at once
    GET  /v1/messages/batches/{id}/results    the results, one JSON line per request

A batch's lines finish one after another over `delay_ms` (line i of n at
`created + delay_ms * (i + 1) / n`); the batch has ended when the last one has. With
`expiry_ms` shorter than that, the lines not done by then are `expired`; a cancel
marks the lines not done by then `canceled`. Each line is answered as
`POST /v1/messages` would answer its params (same text, usage and prompt cache), and a
fault directive in its prompt fails just that line: an HTTP status as an `errored`
result with the type Anthropic gives that status (`[fault:529]`: `overloaded_error`).
Lines use no online rate limit; a directive's `first=N` counts
online calls and lines alike.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from backroom.clock import Clock
from backroom.llm.mock.anthropic_shape import error_type
from backroom.llm.mock.faults import Fault, find_fault

JSON = dict[str, Any]
LineAnswer = Callable[[object], JSON]
"""Answers one line's params: `{"type": "succeeded", "message": ...}` or `errored`."""
DAY_MS = 86_400_000


def _time(ms: int) -> str:
    return (
        datetime.fromtimestamp(ms / 1000, UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


@dataclass
class _Batch:
    """One batch: its lines (custom id, params), timing, and the answers given."""

    batch_id: str
    created: int
    lines: list[tuple[str, object]]
    delay_ms: int
    expiry_ms: int | None
    cancelled_at: int | None = None
    answers: dict[int, JSON] = field(default_factory=dict)

    def done_at(self, index: int) -> int:
        """When line `index` finishes, if nothing stops the batch before."""
        return self.created + self.delay_ms * (index + 1) // max(len(self.lines), 1)

    def cut_at(self) -> int | None:
        """When the batch stops taking lines: its expiry or its cancel, the earlier."""
        cuts = [moment for moment in (self.cancelled_at, self._expires()) if moment is not None]
        return min(cuts) if cuts else None

    def _expires(self) -> int | None:
        return None if self.expiry_ms is None else self.created + self.expiry_ms

    def ended_at(self) -> int:
        """When the batch has ended: its last line, its expiry or its cancel."""
        last = self.done_at(len(self.lines) - 1) if self.lines else self.created
        cut = self.cut_at()
        return last if cut is None else min(last, cut)


class MessageBatches:
    """Every batch of one mock server, and the endpoints' answers."""

    def __init__(
        self,
        clock: Clock,
        answer: LineAnswer,
        *,
        delay_ms: int,
        expiry_ms: int | None,
        create_delay_ms: int = 0,
    ) -> None:
        self._clock = clock
        self._answer = answer
        self._delay_ms = delay_ms
        self._expiry_ms = expiry_ms
        self.create_delay_ms = create_delay_ms
        """How long a create takes to answer, the batch already made (a crash window)."""
        self._batches: dict[str, _Batch] = {}

    def create(self, body: object) -> Response:
        """A new batch of the body's requests; 400 for a body that is not one."""
        requests = body.get("requests") if isinstance(body, dict) else None
        if not isinstance(requests, list) or not requests:
            return _invalid("requests: a non-empty list of {custom_id, params} is required")
        lines = [
            (str(item.get("custom_id")), item.get("params"))
            for item in requests
            if isinstance(item, dict)
        ]
        if len({custom_id for custom_id, _ in lines}) != len(requests):
            return _invalid("requests: each needs a custom_id of its own")
        batch_id = f"msgbatch_mock{len(self._batches) + 1:08d}"
        now = self._clock.now()
        batch = _Batch(batch_id, now, lines, self._delay_ms, self._expiry_ms)
        self._batches[batch_id] = batch
        return JSONResponse(self._document(batch, now))

    @property
    def clock(self) -> Clock:
        """The mock's clock."""
        return self._clock

    def retrieve(self, batch_id: str) -> Response:
        """The batch as it stands."""
        batch = self._batches.get(batch_id)
        if batch is None:
            return _not_found(batch_id)
        return JSONResponse(self._document(batch, self._clock.now()))

    def cancel(self, batch_id: str) -> Response:
        """Cancel the batch: its lines not done now will not run."""
        batch = self._batches.get(batch_id)
        if batch is None:
            return _not_found(batch_id)
        now = self._clock.now()
        if batch.cancelled_at is None and now < batch.ended_at():
            batch.cancelled_at = now
        return JSONResponse(self._document(batch, now))

    def listing(self, limit: int, after_id: str | None) -> Response:
        """The batches, newest first, `limit` after the one named `after_id`."""
        newest = sorted(self._batches.values(), key=lambda batch: batch.batch_id, reverse=True)
        if after_id is not None:
            newest = [batch for batch in newest if batch.batch_id < after_id]
        page = newest[:limit]
        now = self._clock.now()
        return JSONResponse(
            {
                "data": [self._document(batch, now) for batch in page],
                "has_more": len(newest) > len(page),
                "first_id": page[0].batch_id if page else None,
                "last_id": page[-1].batch_id if page else None,
            }
        )

    def results(self, batch_id: str) -> Response:
        """The results of an ended batch, one JSON line per request."""
        batch = self._batches.get(batch_id)
        if batch is None:
            return _not_found(batch_id)
        now = self._clock.now()
        if now < batch.ended_at():
            return _invalid(f"batch {batch_id} is still in progress: no results yet")
        lines = [
            json.dumps({"custom_id": custom_id, "result": self._result(batch, index)})
            for index, (custom_id, _) in enumerate(batch.lines)
        ]
        return Response("\n".join(lines) + "\n", media_type="application/binary")

    def _result(self, batch: _Batch, index: int) -> JSON:
        cut = batch.cut_at()
        if cut is not None and batch.done_at(index) > cut:
            expired = batch.cancelled_at is None or cut != batch.cancelled_at
            return {"type": "expired" if expired else "canceled"}
        if index not in batch.answers:
            batch.answers[index] = self._answer(batch.lines[index][1])
        return batch.answers[index]

    def _document(self, batch: _Batch, now: int) -> JSON:
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        ended = now >= batch.ended_at()
        for index in range(len(batch.lines)):
            if not ended and batch.done_at(index) > now:
                counts["processing"] += 1
            else:
                counts[self._result(batch, index)["type"]] += 1
        return {
            "id": batch.batch_id,
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": counts,
            "created_at": _time(batch.created),
            "expires_at": _time(batch.created + (batch.expiry_ms or DAY_MS)),
            "ended_at": _time(batch.ended_at()) if ended else None,
            "cancel_initiated_at": None
            if batch.cancelled_at is None
            else _time(batch.cancelled_at),
            "archived_at": None,
            "results_url": f"/v1/messages/batches/{batch.batch_id}/results" if ended else None,
        }


def line_fault(text: str, fires: Callable[[Fault], bool] = lambda _: True) -> JSON | None:
    """The errored result a fault directive in a line's prompt asks for, or None (also
    when `fires` says it does not apply this time: `first=N` counted online and in
    batches alike)."""
    try:
        fault = find_fault(text)
    except ValueError as error:
        return errored(400, f"Invalid request: {error}")
    if fault is None or not fault.name.isdigit() or not fires(fault):
        return None
    return errored(fault.status, f"Scripted fault: HTTP {fault.status} for this line.")


def errored(status: int, message: str) -> JSON:
    """An `errored` line result, its error typed as Anthropic types `status`."""
    error = {"type": error_type(status), "message": message}
    return {"type": "errored", "error": {"type": "error", "error": error}}


def _invalid(message: str) -> JSONResponse:
    error = {"type": "invalid_request_error", "message": message}
    return JSONResponse({"type": "error", "error": error}, status_code=400)


def _not_found(batch_id: str) -> JSONResponse:
    error = {"type": "not_found_error", "message": f"no message batch {batch_id}"}
    return JSONResponse({"type": "error", "error": error}, status_code=404)


def mount_message_batches(app: FastAPI, batches: MessageBatches) -> None:
    """Add the Message Batches endpoints to the mock's `app`."""

    @app.post("/v1/messages/batches")
    async def create_batch(request: Request) -> Response:
        """Create a batch."""
        try:
            body = await request.json()
        except ValueError as error:
            return _invalid(f"the body is not JSON: {error}")
        created = batches.create(body)
        if batches.create_delay_ms:
            await batches.clock.sleep(batches.create_delay_ms)
        return created

    @app.get("/v1/messages/batches")
    async def list_batches(limit: int = 20, after_id: str | None = None) -> Response:
        """The batches, newest first."""
        return batches.listing(max(1, min(limit, 1000)), after_id)

    @app.get("/v1/messages/batches/{batch_id}")
    async def retrieve_batch(batch_id: str) -> Response:
        """One batch as it stands."""
        return batches.retrieve(batch_id)

    @app.post("/v1/messages/batches/{batch_id}/cancel")
    async def cancel_batch(batch_id: str) -> Response:
        """Cancel a batch."""
        return batches.cancel(batch_id)

    @app.get("/v1/messages/batches/{batch_id}/results")
    async def batch_results(batch_id: str) -> Response:
        """An ended batch's results, as JSON lines."""
        return batches.results(batch_id)
