"""OpenAI's Batch API behind `BatchProvider`: a JSONL file of Responses API calls.

    submit   upload the lines (Files API, purpose=batch), then `batches.create` with
             `metadata={"backroom_batch": name}` and the 24 h completion window
    find     list batches, newest first, for the one whose metadata names the intent
    poll     `batches.retrieve`: its status and request counts
    results  the output and error files, one `LineResult` per line
    cancel   `batches.cancel`

Each line's body is exactly what the online call sends (`create_arguments`) to
`/v1/responses`; a line's answer becomes the same `LLMResult`, read from the JSON
without the SDK's models (`batch_lines`), and a line's error is classified by the
online error map. Lines the batch never ran
(`batch_expired`, `batch_cancelled`) are UNFINISHED. Only the Responses API is
offloaded: a chat-only provider's jobs are called online.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import Any, Literal

import openai
from openai import Omit
from openai.types import Batch

from backroom.clock import Clock
from backroom.llm.batch.provider import (
    OPENAI_BATCH_LIMITS,
    BatchCounts,
    BatchIntent,
    BatchLimits,
    BatchLine,
    BatchState,
    BatchStatus,
    LineResult,
)
from backroom.llm.providers.openai.batch_lines import line_result
from backroom.llm.providers.openai.errors import error_for_exception
from backroom.llm.providers.openai.responses import create_arguments

NAME_KEY = "backroom_batch"
"""The metadata key naming a backroom batch on the provider."""
ENDPOINT: Literal["/v1/responses"] = "/v1/responses"
_FIND_PAGES = 10
_STATES = {
    "validating": BatchState.OPEN,
    "in_progress": BatchState.OPEN,
    "finalizing": BatchState.OPEN,
    "completed": BatchState.ENDED,
    "expired": BatchState.EXPIRED,
    "cancelling": BatchState.CANCELLING,
    "cancelled": BatchState.CANCELLED,
    "failed": BatchState.FAILED,
}


def line_body(line: BatchLine) -> dict[str, Any]:
    """The request line of the JSONL file: the online call's body, unstreamed."""
    arguments = create_arguments(line.request)
    extra = arguments.pop("extra_body", None) or {}
    arguments.pop("stream", None)
    body = {key: value for key, value in arguments.items() if not isinstance(value, Omit)}
    return {"custom_id": line.custom_id, "method": "POST", "url": ENDPOINT, "body": body | extra}


def batch_status(batch: Batch) -> BatchStatus:
    """An OpenAI batch as the neutral status."""
    counts = batch.request_counts
    tally = (
        BatchCounts()
        if counts is None
        else BatchCounts(counts.total, counts.completed, counts.failed)
    )
    return BatchStatus(batch.id, _STATES.get(batch.status, BatchState.OPEN), tally, batch.status)


class OpenAIBatches:
    """`BatchProvider` over an `openai.AsyncOpenAI` client (its own retries off)."""

    def __init__(self, client: openai.AsyncOpenAI, clock: Clock) -> None:
        self._client = client
        self._clock = clock

    @property
    def limits(self) -> BatchLimits:
        """50,000 requests and 200 MB per file."""
        return OPENAI_BATCH_LIMITS

    def line_bytes(self, line: BatchLine) -> int:
        """The bytes of the line in the JSONL file, its newline included."""
        return len(json.dumps(line_body(line)).encode()) + 1

    async def submit(self, name: str, lines: Sequence[BatchLine]) -> str:
        """Upload the lines and create the batch named `name`; its id."""
        content = "".join(json.dumps(line_body(line)) + "\n" for line in lines).encode()
        try:
            uploaded = await self._client.files.create(
                file=("batch.jsonl", content, "application/jsonl"), purpose="batch"
            )
            batch = await self._client.batches.create(
                input_file_id=uploaded.id,
                endpoint=ENDPOINT,
                completion_window="24h",
                metadata={NAME_KEY: name},
            )
        except openai.OpenAIError as error:
            raise error_for_exception(error, now=self._clock.now()) from error
        return batch.id

    async def find(self, intent: BatchIntent) -> str | None:
        """The newest batch whose metadata names `intent.name`, among the last 1,000."""
        name = intent.name
        try:
            page = await self._client.batches.list(limit=100)
            for _ in range(_FIND_PAGES):
                for batch in page.data:
                    if (batch.metadata or {}).get(NAME_KEY) == name:
                        return batch.id
                if not page.has_next_page():
                    return None
                page = await page.get_next_page()
        except openai.OpenAIError as error:
            raise error_for_exception(error, now=self._clock.now()) from error
        return None

    async def poll(self, batch_id: str) -> BatchStatus:
        """The batch's status and counts."""
        try:
            return batch_status(await self._client.batches.retrieve(batch_id))
        except openai.OpenAIError as error:
            raise error_for_exception(error, now=self._clock.now()) from error

    async def results(self, batch_id: str) -> AsyncIterator[LineResult]:
        """Every line of the batch's output and error files."""
        try:
            batch = await self._client.batches.retrieve(batch_id)
            files = [file for file in (batch.output_file_id, batch.error_file_id) if file]
            contents = [await self._client.files.content(file) for file in files]
        except openai.OpenAIError as error:
            raise error_for_exception(error, now=self._clock.now()) from error
        now = self._clock.now()
        for content in contents:
            # Bytes split on newlines: JSON escapes every newline inside a line's strings.
            for raw in content.content.split(b"\n"):
                if raw.strip():
                    yield line_result(raw, now)

    async def cancel(self, batch_id: str) -> BatchStatus:
        """Ask for the batch to be cancelled."""
        try:
            return batch_status(await self._client.batches.cancel(batch_id))
        except openai.OpenAIError as error:
            raise error_for_exception(error, now=self._clock.now()) from error
