"""LLM calls through OpenAI-compatible and Anthropic providers (one seam, `Provider`):
config, calls, errors, usage and cost.

The mock provider (`backroom mock-llm`) lives in `backroom.llm.mock.server`, and
`backroom.llm.mock.thread.running_mock` serves one in-process for tests.
"""

from __future__ import annotations

from backroom.llm.config import LLMConfig, ModelConfig, ProviderConfig, load_llm_config
from backroom.llm.model_limits import ModelLimits
from backroom.llm.pricing import Prices, Usage, cost_usd
from backroom.llm.progress import DeltaCallback
from backroom.llm.provider import Provider
from backroom.llm.providers.openai.call import make_client, respond
from backroom.llm.providers.openai.errors import (
    RateLimited,
    error_for_exception,
    error_for_response,
)
from backroom.llm.providers.registry import Providers, make_provider
from backroom.llm.ratelimit_headers import RateLimitSnapshot, RateLimitWindow
from backroom.llm.request import LLMRequest, LLMResult, Message, Role
from backroom.llm.task import CallReport, CallSink, RespondTask, register_llm_tasks
from backroom.llm.tokens import estimate_tokens

__all__ = [
    "CallReport",
    "CallSink",
    "DeltaCallback",
    "LLMConfig",
    "LLMRequest",
    "LLMResult",
    "Message",
    "ModelConfig",
    "ModelLimits",
    "Prices",
    "Provider",
    "ProviderConfig",
    "Providers",
    "RateLimitSnapshot",
    "RateLimitWindow",
    "RateLimited",
    "RespondTask",
    "Role",
    "Usage",
    "cost_usd",
    "error_for_exception",
    "error_for_response",
    "estimate_tokens",
    "load_llm_config",
    "make_client",
    "make_provider",
    "register_llm_tasks",
    "respond",
]
