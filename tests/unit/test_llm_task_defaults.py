"""What `llm.respond` is given without being told: its retry policy, its SDK clients."""

from __future__ import annotations

from backroom import App
from backroom.llm.config import LLMConfig, ModelConfig, ProviderConfig
from backroom.llm.providers.openai.clients import ProviderClients
from backroom.llm.task import RESPOND_RETRY, register_llm_tasks
from backroom.store.sqlite.store import SqliteStore


async def test_llm_jobs_get_attempts_for_an_incident_of_minutes() -> None:
    app = App(store=SqliteStore.from_url("sqlite://:memory:"))
    provider = ProviderConfig("mock", "http://127.0.0.1:9/v1", models=(ModelConfig("m"),))
    register_llm_tasks(app, LLMConfig((provider,)))
    async with app:
        job = (await app.submit("llm.respond", {"model": "m", "input": "hi"})).job
    assert job.max_attempts == RESPOND_RETRY.max_attempts == 8
    # Before jitter, the waits between them add up to minutes, not seconds.
    waits = [RESPOND_RETRY.raw_delay_ms(n) for n in range(1, RESPOND_RETRY.max_attempts)]
    assert sum(waits) >= 5 * 60_000


async def test_one_client_per_provider_until_closed() -> None:
    clients = ProviderClients(timeout_s=5)
    one, other = (
        ProviderConfig("one", "http://127.0.0.1:1/v1"),
        ProviderConfig("other", "http://127.0.0.1:2/v1"),
    )
    first = clients.client(one)
    assert clients.client(one) is first
    assert clients.client(other) is not first
    await clients.aclose()
    assert clients.client(one) is not first
    await clients.aclose()
