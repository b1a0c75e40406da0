"""One SDK client per provider, made on first use and kept, so connections are reused.

The OpenAI clients of `backroom.llm.providers.registry.Providers`, for callers that
talk to the SDK themselves (benchmarks, tests).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import openai

from backroom.llm.config import ProviderConfig
from backroom.llm.providers.openai.provider import OpenAIProvider
from backroom.llm.providers.registry import HttpClientFactory, Providers

__all__ = ["HttpClientFactory", "ProviderClients"]


class ProviderClients:
    """The SDK clients of one worker, by provider name; `aclose()` closes them all.

    `http_clients` gives a provider's SDK client an HTTP client of its own, by provider
    name (the offline provider's, which answers in process).
    """

    def __init__(
        self, timeout_s: float, http_clients: Mapping[str, HttpClientFactory] | None = None
    ) -> None:
        self._providers = Providers(timeout_s, http_clients)

    def client(self, provider: ProviderConfig) -> openai.AsyncOpenAI:
        """The client for `provider`, made the first time it is asked for."""
        made = self._providers.get(replace(provider, kind="openai"))
        assert isinstance(made, OpenAIProvider)
        return made.client

    async def aclose(self) -> None:
        """Close every client's connections; a later call makes fresh clients."""
        await self._providers.aclose()
