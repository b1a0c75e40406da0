"""The offline simulated provider: `llm.respond` with no provider configured.

`backroom serve` on a fresh machine has no API key and no network. Rather than fail
every `llm.respond` job, it answers them from the mock server (`mock_server`) mounted
in process: the SDK's HTTP client talks to the mock's ASGI app directly, with no socket.
Answers are deterministic echoes, with usage, limits and prices, so lanes, costs and
budgets behave as they would against a real provider.
"""

from __future__ import annotations

from decimal import Decimal

import httpx2

from backroom.clock import Clock
from backroom.llm.config import LLMConfig, ModelConfig, ProviderConfig
from backroom.llm.mock.server import MockConfig, create_mock_app
from backroom.llm.model_limits import ModelLimits
from backroom.llm.pricing import Prices

OFFLINE_PROVIDER = "offline"
OFFLINE_MODEL = "offline-mini"

# A reserved name (RFC 2606): nothing is ever sent to it, the transport intercepts all.
_OFFLINE_URL = "http://offline.invalid/v1"


def offline_config() -> LLMConfig:
    """A config whose only provider is the simulated one, with one priced model."""
    model = ModelConfig(
        OFFLINE_MODEL,
        limits=ModelLimits(max_concurrency=16, requests_per_minute=600, tokens_per_minute=200_000),
        prices=Prices(Decimal("0.15"), Decimal("0.075"), Decimal("0.60")),
    )
    provider = ProviderConfig(OFFLINE_PROVIDER, _OFFLINE_URL, models=(model,))
    return LLMConfig(providers=(provider,), default_provider=OFFLINE_PROVIDER)


def offline_http_client(clock: Clock, latency_ms: int = 300) -> httpx2.AsyncClient:
    """An HTTP client for the SDK that answers from the in-process mock, not the network."""
    mock = create_mock_app(MockConfig(latency_ms=latency_ms, stream_interval_ms=50), clock)
    return httpx2.AsyncClient(transport=httpx2.ASGITransport(app=mock))
