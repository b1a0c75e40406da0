"""One SDK client per provider, made on first use and kept, so connections are reused."""

from __future__ import annotations

import openai

from backroom.llm.call import make_client
from backroom.llm.config import ProviderConfig


class ProviderClients:
    """The SDK clients of one worker, by provider name; `aclose()` closes them all."""

    def __init__(self, timeout_s: float) -> None:
        self._timeout_s = timeout_s
        self._clients: dict[str, openai.AsyncOpenAI] = {}

    def client(self, provider: ProviderConfig) -> openai.AsyncOpenAI:
        """The client for `provider`, made the first time it is asked for."""
        client = self._clients.get(provider.name)
        if client is None:
            client = make_client(provider, self._timeout_s)
            self._clients[provider.name] = client
        return client

    async def aclose(self) -> None:
        """Close every client's connections; a later call makes fresh clients."""
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.close()
