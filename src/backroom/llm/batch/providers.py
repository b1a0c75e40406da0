"""Which batch API serves a configured provider: the one seam a new provider's batch
adapter is added to (Anthropic's Message Batches, next to OpenAI's Batch API).

    batch = batch_provider(providers.get(config), clock)   # None: online only
"""

from __future__ import annotations

from backroom.clock import Clock
from backroom.llm.batch.provider import BatchProvider
from backroom.llm.provider import Provider
from backroom.llm.providers.openai.batch import OpenAIBatches
from backroom.llm.providers.openai.provider import OpenAIProvider
from backroom.llm.settings import ProviderConfig


def batch_capable(config: ProviderConfig) -> bool:
    """Whether jobs of the provider may go through its batch API: OpenAI's kind, over
    the Responses API (not `chat_only`, not `background`)."""
    return config.kind == "openai" and not config.chat_only and not config.background


def batch_provider(provider: Provider, clock: Clock) -> BatchProvider | None:
    """The batch API of `provider` (through its own SDK client), or None."""
    if isinstance(provider, OpenAIProvider) and batch_capable(provider.config):
        return OpenAIBatches(provider.client, clock)
    return None
