"""An OpenAI-compatible provider behind the seam (`backroom.llm.provider.Provider`).

The Responses API, or chat completions for a `chat_only` provider, or the Responses
API's background mode for a `background` one: each as before the seam, through
`respond`, `respond_in_background` and `error_for_exception` beside this module.
"""

from __future__ import annotations

from collections.abc import Mapping

import openai

from backroom.clock import Clock
from backroom.core.errors import Permanent, Retryable
from backroom.llm.progress import DeltaCallback
from backroom.llm.provider import Resume
from backroom.llm.providers.openai.background import respond_in_background
from backroom.llm.providers.openai.call import respond
from backroom.llm.providers.openai.errors import error_for_exception
from backroom.llm.ratelimit_headers import RateLimitSnapshot, openai_rate_limits
from backroom.llm.request import LLMRequest, LLMResult
from backroom.llm.settings import ProviderConfig


class OpenAIProvider:
    """`config`'s calls through `client` (see `backroom.llm.providers.openai.call`)."""

    kind = "openai"

    def __init__(self, config: ProviderConfig, client: openai.AsyncOpenAI) -> None:
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
        """One call; in background mode (with `resume`), created or taken up and polled."""
        config = self.config
        if config.background and not config.chat_only and resume is not None:
            return await respond_in_background(
                self.client,
                request,
                clock=clock,
                on_created=resume.on_created,
                resume_id=resume.resume_id,
            )
        return await respond(
            self.client, request, chat_only=config.chat_only, clock=clock, on_delta=on_delta
        )

    def error_for(self, error: Exception, *, now: int) -> Retryable | Permanent:
        """The job error for an `openai` SDK exception (see `.errors`)."""
        if isinstance(error, openai.OpenAIError):
            return error_for_exception(error, now=now)
        return Permanent(f"{type(error).__name__}: {error}")

    def rate_limits(self, headers: Mapping[str, str], now: int) -> RateLimitSnapshot:
        """The `x-ratelimit-*` headers, and their proxy-relayed copies."""
        return openai_rate_limits(headers, now)

    def answered(self, error: BaseException) -> bool:
        """Whether the SDK raised for an HTTP error answer."""
        return isinstance(error, openai.APIStatusError)

    async def aclose(self) -> None:
        """Close the SDK client."""
        await self.client.close()
