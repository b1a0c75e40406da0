"""One call through the Messages API (`client.messages.create`), streamed or not.

Anthropic counts `input_tokens` without the prompt cache's reads and writes; the
result's usage counts all three as input, the reads as `cached_tokens` and the writes
as `cache_write_tokens`, as the neutral `Usage` has it. A stream's text is passed on
as it grows; its usage comes in `message_start` and grows in `message_delta`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

import anthropic
import httpx2
from anthropic import AsyncStream
from anthropic.types import (
    InputJSONDelta,
    Message,
    MessageDeltaUsage,
    RawContentBlockDeltaEvent,
    RawContentBlockStartEvent,
    RawMessageDeltaEvent,
    RawMessageStartEvent,
    RawMessageStopEvent,
    RawMessageStreamEvent,
    TextDelta,
    ToolUseBlock,
    Usage,
)

from backroom.llm.features import Finish, ToolCall, finish_from_reason
from backroom.llm.pricing import Usage as TokenUsage
from backroom.llm.progress import StreamProgress
from backroom.llm.providers.anthropic.params import message_arguments
from backroom.llm.ratelimit_headers import RateLimitSnapshot, anthropic_rate_limits
from backroom.llm.request import LLMRequest, LLMResult
from backroom.llm.stream_read import ended_early, reading

# How a stop reason reads as chat completions' finish_reason (others: "stop").
_FINISH_REASONS = {
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
    "tool_use": "tool_calls",
}


def finish_for(stop_reason: str | None) -> Finish:
    """How an answer that stopped for `stop_reason` ended, in the neutral terms."""
    return finish_from_reason(_FINISH_REASONS.get(stop_reason or "", "stop"))


def _counts(uncached: int, read: int, written: int, output: int) -> TokenUsage:
    return TokenUsage(
        input_tokens=uncached + read + written,
        cached_tokens=read,
        output_tokens=output,
        cache_write_tokens=written,
    )


def token_usage(usage: Usage) -> TokenUsage:
    """Anthropic's usage as the neutral one (cache reads and writes counted as input)."""
    return _counts(
        usage.input_tokens,
        usage.cache_read_input_tokens or 0,
        usage.cache_creation_input_tokens or 0,
        usage.output_tokens,
    )


def _thinking_tokens(usage: Usage | MessageDeltaUsage) -> int:
    details = usage.output_tokens_details
    return 0 if details is None else details.thinking_tokens


def message_result(message: Message, rate_limits: RateLimitSnapshot) -> LLMResult:
    """A finished message as the call's result."""
    text = "".join(block.text for block in message.content if block.type == "text")
    calls = tuple(
        ToolCall(block.id, block.name, json.dumps(block.input))
        for block in message.content
        if isinstance(block, ToolUseBlock)
    )
    return LLMResult(
        output_text=text,
        response_id=message.id,
        model=message.model,
        usage=token_usage(message.usage),
        rate_limits=rate_limits,
        finish=finish_for(message.stop_reason),
        tool_calls=calls,
        reasoning_tokens=_thinking_tokens(message.usage),
    )


@dataclass
class _Streamed:
    """What a stream told so far."""

    start: Message | None = None
    usage: MessageDeltaUsage | None = None
    stop_reason: str | None = None
    tools: dict[int, tuple[str, str, list[str]]] = field(default_factory=dict)

    def take(self, event: RawMessageStreamEvent) -> None:
        """Note a non-text event."""
        if isinstance(event, RawMessageStartEvent):
            self.start = event.message
        elif isinstance(event, RawContentBlockStartEvent):
            block = event.content_block
            if isinstance(block, ToolUseBlock):
                self.tools[event.index] = (block.id, block.name, [])
        elif isinstance(event, RawContentBlockDeltaEvent):
            if isinstance(event.delta, InputJSONDelta) and event.index in self.tools:
                self.tools[event.index][2].append(event.delta.partial_json)
        elif isinstance(event, RawMessageDeltaEvent):
            self.stop_reason = event.delta.stop_reason or self.stop_reason
            self.usage = event.usage

    def result(self, text: str, rate_limits: RateLimitSnapshot) -> LLMResult:
        """The call's result, once the stream has ended with `message_stop`."""
        assert self.start is not None
        usage = _final_usage(self.start.usage, self.usage)
        calls = tuple(
            ToolCall(call_id, name, "".join(parts) or "{}")
            for _, (call_id, name, parts) in sorted(self.tools.items())
        )
        return LLMResult(
            text,
            self.start.id,
            self.start.model,
            usage,
            rate_limits,
            finish=finish_for(self.stop_reason),
            tool_calls=calls,
            reasoning_tokens=_thinking_tokens(self.usage or self.start.usage),
        )


def _final_usage(start: Usage, last: MessageDeltaUsage | None) -> TokenUsage:
    """The start's counts, each replaced by the last `message_delta`'s (cumulative)."""
    if last is None:
        return token_usage(start)

    def latest(new: int | None, old: int | None) -> int:
        return (old if new is None else new) or 0

    return _counts(
        latest(last.input_tokens, start.input_tokens),
        latest(last.cache_read_input_tokens, start.cache_read_input_tokens),
        latest(last.cache_creation_input_tokens, start.cache_creation_input_tokens),
        last.output_tokens,
    )


async def _streamed_result(
    stream: AsyncStream[RawMessageStreamEvent],
    progress: StreamProgress,
    rate_limits: RateLimitSnapshot,
) -> LLMResult:
    """Read the events to `message_stop`, passing text on to `progress`."""
    streamed = _Streamed()
    # The SDK passes the transport's own errors through mid-stream.
    timeouts = (anthropic.APITimeoutError, httpx2.TimeoutException)
    cut = (anthropic.APIConnectionError, httpx2.TransportError)
    async with reading(stream, progress, timeout_error=timeouts, connection_error=cut):
        async for event in stream:
            if isinstance(event, RawContentBlockDeltaEvent) and isinstance(event.delta, TextDelta):
                await progress.add(event.delta.text)
            elif isinstance(event, RawMessageStopEvent) and streamed.start is not None:
                return streamed.result(progress.text, rate_limits)
            else:
                streamed.take(event)
    raise ended_early("message_start and message_stop", progress)


async def respond_with_messages(
    client: anthropic.AsyncAnthropic,
    request: LLMRequest,
    progress: StreamProgress,
    *,
    now: int,
    prompt_cache: bool = False,
) -> LLMResult:
    """Make `request` through the Messages API; SDK errors propagate unmapped.

    `now` (ms since the epoch, when sent) dates the rate-limit resets; `prompt_cache`
    marks the prompt for the provider's cache.
    """
    arguments = message_arguments(request, prompt_cache=prompt_cache)
    raw = await client.messages.with_raw_response.create(**arguments)
    # An answer's retry-after means nothing: only a refusal's wait is read.
    rate_limits = replace(anthropic_rate_limits(raw.headers, now), retry_after_ms=None)
    parsed = await raw.parse()
    if isinstance(parsed, AsyncStream):
        return await _streamed_result(parsed, progress, rate_limits)
    return message_result(parsed, rate_limits)
