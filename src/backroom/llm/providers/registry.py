"""The provider factory: one `Provider` per configured provider, chosen by its `kind`.

providers = Providers(timeout_s=600)
provider = providers.get(config.provider("claude"))   # made once, then kept
...
await providers.aclose()
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import httpx2

from backroom.llm.provider import Provider
from backroom.llm.providers.anthropic.provider import AnthropicProvider
from backroom.llm.providers.anthropic.provider import make_client as anthropic_client
from backroom.llm.providers.openai.call import make_client as openai_client
from backroom.llm.providers.openai.provider import OpenAIProvider
from backroom.llm.settings import ProviderConfig

HttpClientFactory = Callable[[], httpx2.AsyncClient]
"""Makes the HTTP client under one SDK client (a fresh one each time: closing the SDK
client closes it)."""


def make_provider(
    config: ProviderConfig, timeout_s: float, http_client: httpx2.AsyncClient | None = None
) -> Provider:
    """The implementation for `config.kind`, its SDK client giving up after `timeout_s`."""
    if config.kind == "anthropic":
        return AnthropicProvider(config, anthropic_client(config, timeout_s, http_client))
    return OpenAIProvider(config, openai_client(config, timeout_s, http_client))


class Providers:
    """The providers of one worker, by name; `aclose()` closes their clients.

    `http_clients` gives a provider's SDK client an HTTP client of its own, by provider
    name (the offline provider's, which answers in process).
    """

    def __init__(
        self, timeout_s: float, http_clients: Mapping[str, HttpClientFactory] | None = None
    ) -> None:
        self._timeout_s = timeout_s
        self._http_clients = dict(http_clients or {})
        self._providers: dict[str, Provider] = {}

    def get(self, config: ProviderConfig) -> Provider:
        """The provider for `config`, made the first time it is asked for."""
        provider = self._providers.get(config.name)
        if provider is None:
            factory = self._http_clients.get(config.name)
            provider = make_provider(
                config, self._timeout_s, None if factory is None else factory()
            )
            self._providers[config.name] = provider
        return provider

    async def aclose(self) -> None:
        """Close every provider's client; a later `get` makes fresh ones."""
        providers, self._providers = list(self._providers.values()), {}
        for provider in providers:
            await provider.aclose()
