"""Anthropic behind the seam (`backroom.llm.provider.Provider`): the Messages API."""

from __future__ import annotations

import json
from collections.abc import Mapping

import anthropic
import httpx2

from backroom.clock import Clock
from backroom.core.errors import Permanent, Retryable
from backroom.llm.progress import DeltaCallback, StreamProgress
from backroom.llm.provider import Resume
from backroom.llm.providers.anthropic.errors import error_for_exception
from backroom.llm.providers.anthropic.messages import respond_with_messages
from backroom.llm.providers.http_client import provider_http_client
from backroom.llm.ratelimit_headers import RateLimitSnapshot, anthropic_rate_limits
from backroom.llm.request import LLMRequest, LLMResult
from backroom.llm.settings import ProviderConfig
from backroom.llm.stream_read import malformed

# The SDK wants a credential; a server that needs none (the mock) ignores it. Passing
# one also keeps the SDK from looking for credentials in the environment or on disk.
_NO_KEY = "no-key"


def make_client(
    provider: ProviderConfig, timeout_s: float, http_client: httpx2.AsyncClient | None = None
) -> anthropic.AsyncAnthropic:
    """An SDK client for `provider` that never retries and gives up after `timeout_s`
    (choose it below the job's lease, so a hung call ends before the lease does); only a
    request whose connection was lost unanswered is sent once more (`http_client`, by
    default `provider_http_client`).

    The SDK adds `/v1/...` to its base URL itself: a configured URL ending in `/v1`
    (as OpenAI-style URLs do) is taken without it.
    """
    return anthropic.AsyncAnthropic(
        api_key=provider.api_key or _NO_KEY,
        base_url=provider.base_url.rstrip("/").removesuffix("/v1"),
        max_retries=0,
        timeout=timeout_s,
        http_client=http_client or provider_http_client(timeout_s),
    )


class AnthropicProvider:
    """`config`'s calls through `client`: one `messages.create` per call."""

    kind = "anthropic"

    def __init__(self, config: ProviderConfig, client: anthropic.AsyncAnthropic) -> None:
        self.config = config
        self.client = client

    async def respond(
        self,
        request: LLMRequest,
        *,
        clock: Clock,
        on_delta: DeltaCallback | None = None,
        resume: Resume | None = None,
    ) -> LLMResult:
        """One call (Anthropic keeps no calls server-side: `resume` is ignored)."""
        progress = StreamProgress(clock, on_delta)
        try:
            return await respond_with_messages(
                self.client,
                request,
                progress,
                now=clock.now(),
                prompt_cache=self.config.prompt_cache,
            )
        except json.JSONDecodeError as error:  # a plain answer whose body does not parse
            raise malformed(error, "the provider's answer") from error
        except anthropic.AnthropicError as error:
            raise error_for_exception(error, now=clock.now()) from error

    def error_for(self, error: Exception, *, now: int) -> Retryable | Permanent:
        """The job error for an `anthropic` SDK exception (see `.errors`)."""
        if isinstance(error, anthropic.AnthropicError):
            return error_for_exception(error, now=now)
        return Permanent(f"{type(error).__name__}: {error}")

    def rate_limits(self, headers: Mapping[str, str], now: int) -> RateLimitSnapshot:
        """The `anthropic-ratelimit-*` headers and `retry-after`."""
        return anthropic_rate_limits(headers, now)

    def answered(self, error: BaseException) -> bool:
        """Whether the SDK raised for an HTTP error answer (not an error mid-stream)."""
        return isinstance(error, anthropic.APIStatusError) and error.status_code >= 400

    async def aclose(self) -> None:
        """Close the SDK client."""
        await self.client.close()
