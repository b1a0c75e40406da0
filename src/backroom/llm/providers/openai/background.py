"""One call through the Responses API in background mode: created, then polled.

    [providers.openai]
    background = true

The provider keeps a background response, under its id, after the request that
created it has ended. backroom records that id on the call's record as soon as the
create returns, before waiting for the answer (`on_created`); an attempt that dies
while waiting (its worker killed, its lease lost) leaves the id behind, and the job's
next attempt retrieves that response (`resume_id`) instead of creating, and paying
for, a second one. Background mode does not stream: the answer arrives whole.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace

import openai
from openai.types.responses import Response

from backroom.clock import Clock
from backroom.core.errors import Retryable
from backroom.llm.providers.openai.errors import error_for_exception
from backroom.llm.providers.openai.responses import create_arguments, response_result
from backroom.llm.request import LLMRequest, LLMResult

POLL_MS = 500
"""How often a background response is retrieved until it is done."""
_UNFINISHED = frozenset({"queued", "in_progress"})

ResponseCreated = Callable[[str], Awaitable[None]]
"""Told the id of a background response as soon as it exists."""


async def _created(
    client: openai.AsyncOpenAI, request: LLMRequest, on_created: ResponseCreated
) -> tuple[Response, Mapping[str, str]]:
    arguments = create_arguments(replace(request, stream=False))
    raw = await client.responses.with_raw_response.create(**arguments, background=True, store=True)
    response = raw.parse()
    await on_created(response.id)
    return response, raw.headers


async def _finished(client: openai.AsyncOpenAI, response: Response, clock: Clock) -> Response:
    while response.status in _UNFINISHED:
        await clock.sleep(POLL_MS)
        response = await client.responses.retrieve(response.id)
    if response.status not in {"completed", "incomplete"}:
        error = response.error
        detail = "no error given" if error is None else f"{error.code}: {error.message}"
        raise Retryable(f"background response {response.id} ended {response.status}: {detail}")
    return response


async def respond_in_background(
    client: openai.AsyncOpenAI,
    request: LLMRequest,
    *,
    clock: Clock,
    on_created: ResponseCreated,
    resume_id: str | None = None,
) -> LLMResult:
    """Create `request` as a background response, or take up `resume_id` (made by an
    earlier attempt), and poll it until it is done; `Retryable` or `Permanent`."""
    try:
        if resume_id is None:
            response, headers = await _created(client, request, on_created)
        else:
            response, headers = await client.responses.retrieve(resume_id), {}
        return response_result(await _finished(client, response, clock), headers)
    except openai.OpenAIError as error:
        raise error_for_exception(error, now=clock.now()) from error
