"""The LLM config as backroom uses it: providers, their kind and models, and defaults.

`backroom.llm.config` reads it from a TOML file and the environment; these are the
plain values it builds, which tests and embedding programs may also build by hand.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from backroom.core.errors import ConfigError
from backroom.llm.model_limits import ModelLimits
from backroom.llm.price_table import builtin_prices
from backroom.llm.pricing import Prices

ProviderKind = Literal["openai", "anthropic"]
"""The API a provider speaks: OpenAI's (and compatible servers') or Anthropic's."""


@dataclass(frozen=True, slots=True)
class ModelConfig:
    """One model of a provider: its limits, and its prices if they are known."""

    name: str
    limits: ModelLimits = field(default_factory=ModelLimits)
    prices: Prices | None = None


@dataclass(frozen=True, slots=True)
class ProviderConfig:
    """A provider's endpoint, the API it speaks (`kind`), and the models backroom
    knows about on it. `chat_only` and `background` concern only OpenAI's kind."""

    name: str
    base_url: str
    # Kept out of repr so that logging a config never prints a secret.
    api_key: str | None = field(default=None, repr=False)
    chat_only: bool = False
    models: tuple[ModelConfig, ...] = ()
    builtin_prices: bool = True
    background: bool = False  # see `backroom.llm.providers.openai.background`
    any_model: bool = False
    """Accept models that `models` does not list (with no limits and no prices)."""
    kind: ProviderKind = "openai"
    prompt_cache: bool = False
    """Anthropic: mark each request for prompt caching (its top-level `cache_control`):
    the first call writes the prompt to the cache (at the cache-write price), repeats
    within minutes read it (at the cached price)."""

    def model(self, name: str) -> ModelConfig:
        """The configured model `name`, or one with no limits and the built-in prices."""
        return self.configured_model(name) or self._unlisted(name)

    def configured_model(self, name: str) -> ModelConfig | None:
        """The model `name` as `models` lists it, or None."""
        for model in self.models:
            if model.name == name:
                return model
        return None

    def model_names(self) -> list[str]:
        """The names of the listed models, in the order configured."""
        return [model.name for model in self.models]

    def allowed_model(self, name: str) -> ModelConfig:
        """The model `name` if a job may use it here; `ConfigError` naming the listed
        models if this provider neither lists it nor takes `any_model`."""
        model = self.configured_model(name)
        if model is not None:
            return model
        if self.any_model:
            return self._unlisted(name)
        listed = ", ".join(self.model_names()) or "none"
        raise ConfigError(
            f"model {name!r} is not configured for LLM provider {self.name!r} "
            f"(configured: {listed}; set any_model = true on the provider to allow any)"
        )

    def _unlisted(self, name: str) -> ModelConfig:
        return ModelConfig(name, prices=builtin_prices(name) if self.builtin_prices else None)


@dataclass(frozen=True, slots=True)
class LLMConfig:
    """Every configured provider, and which one a job gets when it names none."""

    providers: tuple[ProviderConfig, ...] = ()
    default_provider: str | None = None
    fallback_after_pause_ms: int = 30_000
    """A job with fallbacks moves on when its lane will have no room for longer."""
    fallback_after_attempts: int = 2
    """... or when this many of its attempts in the lane failed (a job may say otherwise)."""
    batch: Mapping[str, Any] = field(default_factory=dict)
    """The file's `[batch]` table: which jobs go through batch APIs (see `llm.batch.config`)."""

    def provider(self, name: str | None = None) -> ProviderConfig:
        """The provider called `name`, or the default one; ConfigError if there is none."""
        wanted = name or self.default_provider
        if wanted is None:
            if len(self.providers) == 1:
                return self.providers[0]
            raise ConfigError(
                "no LLM provider named and no default: configure one provider, "
                "set default_provider, or pass a provider"
            )
        for provider in self.providers:
            if provider.name == wanted:
                return provider
        known = ", ".join(provider.name for provider in self.providers) or "none"
        raise ConfigError(f"unknown LLM provider {wanted!r} (configured: {known})")
