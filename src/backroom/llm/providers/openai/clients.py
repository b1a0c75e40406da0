"""One SDK client per provider, made on first use and kept, so connections are reused."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import httpx2
import openai

from backroom.llm.config import ProviderConfig
from backroom.llm.providers.openai.call import make_client

HttpClientFactory = Callable[[], httpx2.AsyncClient]
"""Makes the HTTP client under one SDK client (a fresh one each time: closing the SDK
client closes it)."""


class ProviderClients:
    """The SDK clients of one worker, by provider name; `aclose()` closes them all.

    `http_clients` gives a provider's SDK client an HTTP client of its own, by provider
    name (the offline provider's, which answers in process).
    """

    def __init__(
        self, timeout_s: float, http_clients: Mapping[str, HttpClientFactory] | None = None
    ) -> None:
        self._timeout_s = timeout_s
        self._http_clients = dict(http_clients or {})
        self._clients: dict[str, openai.AsyncOpenAI] = {}

    def client(self, provider: ProviderConfig) -> openai.AsyncOpenAI:
        """The client for `provider`, made the first time it is asked for."""
        client = self._clients.get(provider.name)
        if client is None:
            factory = self._http_clients.get(provider.name)
            http_client = None if factory is None else factory()
            client = make_client(provider, self._timeout_s, http_client)
            self._clients[provider.name] = client
        return client

    async def aclose(self) -> None:
        """Close every client's connections; a later call makes fresh clients."""
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.close()
