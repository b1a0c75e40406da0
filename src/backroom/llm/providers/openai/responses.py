"""One call through the Responses API (`client.responses.create`), streamed or not."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import openai
from openai import AsyncStream, omit
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseErrorEvent,
    ResponseFailedEvent,
    ResponseIncompleteEvent,
    ResponseStreamEvent,
    ResponseTextDeltaEvent,
)

from backroom.core.errors import Permanent, Retryable
from backroom.llm.pricing import Usage
from backroom.llm.progress import StreamProgress
from backroom.llm.providers.openai.errors import error_for_stream_failure
from backroom.llm.providers.openai.responses_params import (
    responses_finish,
    responses_input,
    responses_options,
    responses_reasoning_tokens,
    responses_tool_calls,
)
from backroom.llm.providers.openai.stream_read import ended_early, reading
from backroom.llm.ratelimit_headers import parse_rate_limit_headers
from backroom.llm.request import LLMRequest, LLMResult


def _usage(response: Response) -> Usage:
    usage = response.usage
    if usage is None:
        return Usage(reported=False)
    # Compatible servers may leave out the details object; the SDK then gives None.
    details = usage.input_tokens_details
    return Usage(
        input_tokens=usage.input_tokens or 0,
        cached_tokens=(details.cached_tokens or 0) if details else 0,
        output_tokens=usage.output_tokens or 0,
    )


def _failure(event: ResponseFailedEvent | ResponseErrorEvent) -> Retryable | Permanent:
    if isinstance(event, ResponseErrorEvent):
        return error_for_stream_failure(event.code, event.message)
    error = event.response.error
    if error is None:
        return error_for_stream_failure(None, "the response failed without an error")
    return error_for_stream_failure(error.code, error.message)


async def _final_response(
    stream: AsyncStream[ResponseStreamEvent], progress: StreamProgress
) -> Response:
    """Read the stream to its end, passing text on to `progress`; the finished response."""
    async with reading(stream, progress):
        async for event in stream:
            if isinstance(event, ResponseTextDeltaEvent):
                await progress.add(event.delta)
            elif isinstance(event, ResponseCompletedEvent | ResponseIncompleteEvent):
                return event.response
            elif isinstance(event, ResponseFailedEvent | ResponseErrorEvent):
                raise _failure(event)
    raise ended_early("response.completed, response.incomplete or response.failed", progress)


def create_arguments(request: LLMRequest) -> dict[str, Any]:
    """The arguments of `client.responses.create` for `request`."""
    return {
        "model": request.model,
        "input": responses_input(request),
        "instructions": omit if request.instructions is None else request.instructions,
        "max_output_tokens": (
            omit if request.max_output_tokens is None else request.max_output_tokens
        ),
        "temperature": omit if request.temperature is None else request.temperature,
        "stream": request.stream,
        **responses_options(request),
    }


def response_result(response: Response, headers: Mapping[str, str]) -> LLMResult:
    """A finished response as the call's result; `headers` came with the create."""
    calls = responses_tool_calls(response)
    return LLMResult(
        output_text=response.output_text,
        response_id=response.id,
        model=response.model,
        usage=_usage(response),
        rate_limits=parse_rate_limit_headers(headers),
        finish=responses_finish(response, calls=bool(calls)),
        tool_calls=calls,
        reasoning_tokens=responses_reasoning_tokens(response),
    )


async def respond_with_responses(
    client: openai.AsyncOpenAI, request: LLMRequest, progress: StreamProgress
) -> LLMResult:
    """Make `request` through the Responses API; SDK errors propagate unmapped."""
    raw = await client.responses.with_raw_response.create(**create_arguments(request))
    parsed = raw.parse()
    response = (
        await _final_response(parsed, progress) if isinstance(parsed, AsyncStream) else parsed
    )
    return response_result(response, raw.headers)
