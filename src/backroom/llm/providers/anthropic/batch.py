"""Anthropic's Message Batches behind the batch seam (`backroom.llm.batch.provider`).

    batches = AnthropicBatches(client, clock=clock)
    batch_id = await batches.submit(name, lines)      # messages.batches.create
    status = await batches.poll(batch_id)             # messages.batches.retrieve
    async for line in batches.results(batch_id):      # messages.batches.results (JSONL)
        ...
    await batches.cancel(batch_id)                    # messages.batches.cancel

Each line's `params` is what the online call would send (`params.message_arguments`,
never streamed) and each answer reads back as the online one does
(`messages.message_result`). A line's error goes through the same classification as
an online call's: `overloaded_error`, `api_error`, `rate_limit_error` and
`timeout_error` are `Retryable`, every other type `Permanent`. Canceled and expired
lines are `UNFINISHED`.

Message Batches carry no metadata, so a batch's name travels in its lines' custom ids:
each is sent as `TAG_custom_id`, TAG the first 12 hex digits of the name's SHA-256,
and read back without it. A batch still in progress shows no lines, so `find(intent)`
recognises it by its creation time and request count (see `batch_find`), and an
ended one by the tag of its first line.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

import anthropic
import httpx2
from anthropic.types.messages import MessageBatch, MessageBatchIndividualResponse

from backroom.clock import Clock
from backroom.core.errors import Permanent, Retryable
from backroom.llm.batch.provider import (
    ANTHROPIC_BATCH_LIMITS,
    BatchCounts,
    BatchIntent,
    BatchLimits,
    BatchLine,
    BatchState,
    BatchStatus,
    LineOutcome,
    LineResult,
)
from backroom.llm.providers.anthropic.batch_find import find_batch
from backroom.llm.providers.anthropic.errors import error_for_exception, error_for_type
from backroom.llm.providers.anthropic.messages import message_result
from backroom.llm.providers.anthropic.params import message_arguments
from backroom.llm.providers.anthropic.provider import make_client
from backroom.llm.ratelimit_headers import RateLimitSnapshot
from backroom.llm.settings import ProviderConfig

TAG_CHARS = 12


def name_tag(name: str) -> str:
    """The tag a batch named `name` puts before its lines' custom ids.

    >>> name_tag("backroom-batch-7")
    '0053a3cc31f5'
    """
    return hashlib.sha256(name.encode()).hexdigest()[:TAG_CHARS]


def batch_params(line: BatchLine, *, prompt_cache: bool = False) -> dict[str, Any]:
    """The `params` of `line` in a Message Batch: its online call's arguments, unstreamed."""
    arguments = message_arguments(line.request, prompt_cache=prompt_cache)
    extra: dict[str, Any] = arguments.pop("extra_body", {})
    arguments.pop("stream", None)
    return arguments | extra


def _state(batch: MessageBatch) -> BatchState:
    if batch.processing_status == "in_progress":
        return BatchState.OPEN
    if batch.processing_status == "canceling":
        return BatchState.CANCELLING
    if batch.cancel_initiated_at is not None:
        return BatchState.CANCELLED
    return BatchState.EXPIRED if batch.request_counts.expired else BatchState.ENDED


def batch_status(batch: MessageBatch) -> BatchStatus:
    """A Message Batch as the neutral status."""
    counts = batch.request_counts
    total = counts.processing + counts.succeeded + counts.errored + counts.canceled + counts.expired
    return BatchStatus(
        batch.id,
        _state(batch),
        BatchCounts(total, counts.succeeded, counts.errored),
        batch.processing_status,
    )


def line_result(response: MessageBatchIndividualResponse) -> LineResult:
    """One line of a batch's results, its custom id without the name's tag."""
    tagged = response.custom_id
    custom_id = tagged.partition("_")[2] or tagged
    result = response.result
    if result.type == "succeeded":
        answer = message_result(result.message, RateLimitSnapshot())
        return LineResult(custom_id, LineOutcome.SUCCEEDED, result=answer)
    if result.type == "errored":
        error = result.error.error
        return LineResult(
            custom_id, LineOutcome.ERRORED, error=error_for_type(error.type, error.message)
        )
    return LineResult(custom_id, LineOutcome.UNFINISHED)


class AnthropicBatches:
    """Message Batches through `client` (retries off); every SDK failure leaves as a
    `Retryable` or `Permanent`, dated by `clock`."""

    def __init__(
        self, client: anthropic.AsyncAnthropic, *, clock: Clock, prompt_cache: bool = False
    ) -> None:
        self._client = client
        self._clock = clock
        self._prompt_cache = prompt_cache

    @classmethod
    def for_provider(
        cls,
        provider: ProviderConfig,
        *,
        clock: Clock,
        timeout_s: float,
        http_client: httpx2.AsyncClient | None = None,
    ) -> AnthropicBatches:
        """The batches of a configured `anthropic` provider, through a client of their
        own (close it with `aclose`)."""
        client = make_client(provider, timeout_s, http_client)
        return cls(client, clock=clock, prompt_cache=provider.prompt_cache)

    async def aclose(self) -> None:
        """Close the SDK client."""
        await self._client.close()

    @property
    def limits(self) -> BatchLimits:
        """100,000 requests and 256 MB per batch."""
        return ANTHROPIC_BATCH_LIMITS

    def line_bytes(self, line: BatchLine) -> int:
        """The bytes `line` adds to the batch's request body."""
        request = {
            "custom_id": f"{'0' * TAG_CHARS}_{line.custom_id}",
            "params": batch_params(line, prompt_cache=self._prompt_cache),
        }
        return len(json.dumps(request).encode()) + 1

    async def submit(self, name: str, lines: Sequence[BatchLine]) -> str:
        """Create one batch of `lines`, their custom ids tagged with `name`'s tag."""
        tag = name_tag(name)
        requests: list[Any] = [
            {
                "custom_id": f"{tag}_{line.custom_id}",
                "params": batch_params(line, prompt_cache=self._prompt_cache),
            }
            for line in lines
        ]
        try:
            batch = await self._client.messages.batches.create(requests=requests)
        except anthropic.AnthropicError as error:
            raise self._error(error) from error
        return batch.id

    async def find(self, intent: BatchIntent) -> str | None:
        """The batch sent for `intent`, recognised by time, size and tag (`batch_find`)."""
        tag = name_tag(intent.name)
        try:
            return await find_batch(self._client, intent, lambda found: self._tagged(found, tag))
        except anthropic.AnthropicError as error:
            raise self._error(error) from error

    async def _tagged(self, batch_id: str, tag: str) -> bool | None:
        """Whether the batch's first result line carries `tag` (None: it has no line).
        The rest is not read: the results stream, and are closed after that line."""
        results = await self._client.messages.batches.results(batch_id)
        try:
            async for response in results:
                return response.custom_id.startswith(f"{tag}_")
            return None
        finally:
            await results.close()

    async def poll(self, batch_id: str) -> BatchStatus:
        """The batch's state and counts now."""
        try:
            return batch_status(await self._client.messages.batches.retrieve(batch_id))
        except anthropic.AnthropicError as error:
            raise self._error(error) from error

    async def results(self, batch_id: str) -> AsyncIterator[LineResult]:
        """Every line's result of an ended batch, as the results file lists them."""
        try:
            responses = await self._client.messages.batches.results(batch_id)
        except anthropic.AnthropicError as error:
            raise self._error(error) from error
        try:
            async for response in responses:
                yield line_result(response)
        except anthropic.AnthropicError as error:
            raise self._error(error) from error
        except httpx2.TransportError as error:  # the SDK lets these through mid-stream
            raise Retryable(f"the results of {batch_id} were cut off: {error!r}") from error
        finally:
            await responses.close()

    async def cancel(self, batch_id: str) -> BatchStatus:
        """Ask for the batch to be cancelled; its state after the ask."""
        try:
            return batch_status(await self._client.messages.batches.cancel(batch_id))
        except anthropic.AnthropicError as error:
            raise self._error(error) from error

    def _error(self, error: anthropic.AnthropicError) -> Retryable | Permanent:
        return error_for_exception(error, now=self._clock.now())
