"""Which batch API serves a configured provider, and what a stored intent tells it: the
one seam a new provider's batch adapter is added to.

    batch = batch_provider(providers.get(config), clock)   # None: online only
    batch_id = await batch.find(await batch_intent(store, stored, hold_ms))
"""

from __future__ import annotations

from backroom.clock import Clock
from backroom.core.provider_batch import ProviderBatch
from backroom.llm.batch.provider import BatchIntent, BatchProvider
from backroom.llm.provider import Provider
from backroom.llm.providers.anthropic.batch import AnthropicBatches
from backroom.llm.providers.anthropic.batch_find import CLOCK_SKEW_MS
from backroom.llm.providers.anthropic.provider import AnthropicProvider
from backroom.llm.providers.openai.batch import OpenAIBatches
from backroom.llm.providers.openai.provider import OpenAIProvider
from backroom.llm.settings import ProviderConfig
from backroom.store.protocol import Store


def batch_capable(config: ProviderConfig) -> bool:
    """Whether jobs of the provider may go through its batch API: Anthropic's kind, or
    OpenAI's over the Responses API (not `chat_only`, not `background`)."""
    if config.kind == "anthropic":
        return True
    return config.kind == "openai" and not config.chat_only and not config.background


def batch_provider(provider: Provider, clock: Clock) -> BatchProvider | None:
    """The batch API of `provider` (through its own SDK client), or None."""
    if isinstance(provider, AnthropicProvider):
        return AnthropicBatches(
            provider.client, clock=clock, prompt_cache=provider.config.prompt_cache
        )
    if isinstance(provider, OpenAIProvider) and batch_capable(provider.config):
        return OpenAIBatches(provider.client, clock)
    return None


async def batch_intent(store: Store, batch: ProviderBatch, hold_ms: int) -> BatchIntent:
    """What the stored intent `batch` tells its provider to find its batch by: its name,
    when it was stored, its request count (the lines it holds, all sent at once), and
    the provider ids already adopted by batches stored around that time."""
    since = batch.created_at - hold_ms - 2 * CLOCK_SKEW_MS
    adopted = await store.adopted_batch_ids(batch.provider, since)
    return BatchIntent(
        name=batch.name,
        stored_at=batch.created_at,
        requests=batch.counts.total,
        created_by=batch.created_at + hold_ms,
        adopted=frozenset(adopted),
    )
