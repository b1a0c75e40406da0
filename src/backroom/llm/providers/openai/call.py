"""Calling an OpenAI-compatible provider: one client per provider, one `respond` per job.

backroom is the only retry layer: clients never retry by themselves, and every SDK
failure leaves `respond` as a `Retryable` or `Permanent` (see `.errors` beside this module).
"""

from __future__ import annotations

import json

import httpx2
import openai

from backroom.clock import Clock
from backroom.llm.config import ProviderConfig
from backroom.llm.progress import DeltaCallback, StreamProgress
from backroom.llm.providers.http_client import provider_http_client
from backroom.llm.providers.openai.chat import respond_with_chat
from backroom.llm.providers.openai.errors import error_for_exception
from backroom.llm.providers.openai.responses import respond_with_responses
from backroom.llm.providers.openai.stream_read import malformed
from backroom.llm.request import LLMRequest, LLMResult

# The SDK refuses to build a client without a key; servers that need none (a local
# model, the mock) ignore whatever is sent.
_NO_KEY = "no-key"


def make_client(
    provider: ProviderConfig, timeout_s: float, http_client: httpx2.AsyncClient | None = None
) -> openai.AsyncOpenAI:
    """An SDK client for `provider` that never retries and gives up after `timeout_s`.

    Choose `timeout_s` below the job's lease, so a hung call ends before the lease does.
    Only a request whose connection was lost unanswered is sent once more (by the
    default `provider_http_client`); `http_client` replaces it (the offline provider
    answers in process).
    """
    return openai.AsyncOpenAI(
        api_key=provider.api_key or _NO_KEY,
        base_url=provider.base_url,
        max_retries=0,
        timeout=timeout_s,
        http_client=http_client or provider_http_client(timeout_s),
    )


async def respond(
    client: openai.AsyncOpenAI,
    request: LLMRequest,
    *,
    chat_only: bool,
    clock: Clock,
    on_delta: DeltaCallback | None = None,
) -> LLMResult:
    """Make one LLM call; with `request.stream`, report the text so far to `on_delta`.

    `on_delta` gets the whole text streamed so far, about every 250 ms of `clock` time.
    Raises `Retryable` or `Permanent`, chained to the SDK's exception.
    """
    progress = StreamProgress(clock, on_delta)
    call = respond_with_chat if chat_only else respond_with_responses
    try:
        return await call(client, request, progress)
    except json.JSONDecodeError as error:  # a plain answer whose body does not parse
        raise malformed(error, "the provider's answer") from error
    except openai.OpenAIError as error:
        raise error_for_exception(error, now=clock.now()) from error
