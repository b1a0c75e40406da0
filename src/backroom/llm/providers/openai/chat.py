"""One call through chat completions, for providers that offer no Responses API."""

from __future__ import annotations

import openai
from openai import AsyncStream, omit
from openai.types import CompletionUsage
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from backroom.llm.features import Finish, finish_from_reason
from backroom.llm.pricing import Usage
from backroom.llm.progress import StreamProgress
from backroom.llm.providers.openai.chat_params import (
    StreamedToolCalls,
    chat_message,
    chat_options,
    chat_reasoning_tokens,
    chat_tool_calls,
)
from backroom.llm.providers.openai.stream_read import ended_early, reading
from backroom.llm.ratelimit_headers import RateLimitSnapshot, parse_rate_limit_headers
from backroom.llm.request import LLMRequest, LLMResult


def _usage(usage: CompletionUsage | None) -> Usage:
    if usage is None:
        return Usage(reported=False)
    details = usage.prompt_tokens_details
    return Usage(
        input_tokens=usage.prompt_tokens or 0,
        cached_tokens=(details.cached_tokens or 0) if details else 0,
        output_tokens=usage.completion_tokens or 0,
    )


def _completion_result(completion: ChatCompletion, rate_limits: RateLimitSnapshot) -> LLMResult:
    choice = completion.choices[0] if completion.choices else None
    return LLMResult(
        (choice.message.content if choice else None) or "",
        completion.id,
        completion.model,
        _usage(completion.usage),
        rate_limits,
        finish=finish_from_reason(choice.finish_reason) if choice else Finish(),
        tool_calls=chat_tool_calls(choice.message) if choice else (),
        reasoning_tokens=chat_reasoning_tokens(completion.usage),
    )


async def _streamed_result(
    stream: AsyncStream[ChatCompletionChunk],
    progress: StreamProgress,
    rate_limits: RateLimitSnapshot,
) -> LLMResult:
    """Read the chunks to the end, passing text on to `progress`."""
    last: ChatCompletionChunk | None = None
    usage: CompletionUsage | None = None
    finish_reason: str | None = None
    calls = StreamedToolCalls()
    async with reading(stream, progress):
        async for chunk in stream:
            last = chunk
            # With include_usage the usage comes alone in a last chunk without choices.
            usage = chunk.usage or usage
            for choice in chunk.choices:
                finish_reason = choice.finish_reason or finish_reason
                calls.add(choice.delta.tool_calls)
                if choice.delta.content:
                    await progress.add(choice.delta.content)
    if last is None or finish_reason is None:
        raise ended_early("a chunk with a finish_reason", progress)
    return LLMResult(
        progress.text,
        last.id,
        last.model,
        _usage(usage),
        rate_limits,
        finish=finish_from_reason(finish_reason),
        tool_calls=calls.calls(),
        reasoning_tokens=chat_reasoning_tokens(usage),
    )


async def respond_with_chat(
    client: openai.AsyncOpenAI, request: LLMRequest, progress: StreamProgress
) -> LLMResult:
    """Make `request` through chat completions; SDK errors propagate unmapped."""
    raw = await client.chat.completions.with_raw_response.create(
        model=request.model,
        messages=[chat_message(turn) for turn in request.messages()],
        # max_tokens rather than max_completion_tokens: compatible servers know it.
        max_tokens=omit if request.max_output_tokens is None else request.max_output_tokens,
        temperature=omit if request.temperature is None else request.temperature,
        stream=request.stream,
        stream_options={"include_usage": True} if request.stream else omit,
        **chat_options(request),
    )
    rate_limits = parse_rate_limit_headers(raw.headers)
    parsed = raw.parse()
    if isinstance(parsed, AsyncStream):
        return await _streamed_result(parsed, progress, rate_limits)
    return _completion_result(parsed, rate_limits)
